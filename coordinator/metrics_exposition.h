#ifndef DBLOAD_COORDINATOR_METRICS_EXPOSITION_H_
#define DBLOAD_COORDINATOR_METRICS_EXPOSITION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace dbload {

// Prometheus native histograms: sparse exponential buckets, one series per histogram however
// many buckets it has. Schema s puts 2^s buckets in each power of two (s from -4 to 8): bucket k
// holds the values in (2^((k-1)/2^s), 2^(k/2^s)], so its bounds are 2^(2^-s) apart (+2.2 % at
// s = 5, +0.27 % at 8), and histogram_quantile() over it answers within the bucket that holds
// the true quantile. Values of exactly 0 are counted in the zero bucket.
inline constexpr int kMinNativeSchema = -4;
inline constexpr int kMaxNativeSchema = 8;
inline constexpr int kDefaultNativeSchema = 5;
// The zero bucket's half-width, seconds: the smallest Prometheus clients use. Only zero lies in
// it (dbload's smallest non-zero value is 1 ns), but a native histogram needs one.
inline constexpr double kNativeZeroThreshold = 2.938735877055719e-39;  // 2^-128

// The bucket of `value` under `schema`; `value` is a normal positive double (dbload's are 1 ns
// to 73 minutes).
int32_t NativeBucketIndex(double value, int schema);
// The upper bound of bucket `index` under `schema`: 2^(index/2^schema).
double NativeBucketUpperBound(int32_t index, int schema);

struct NativeHistogram {
  int schema = kDefaultNativeSchema;
  uint64_t zero_count = 0;
  std::vector<std::pair<int32_t, uint64_t>> buckets;  // (index, count > 0), index ascending
};

// `--metrics-native-schema`: a schema from kMinNativeSchema to kMaxNativeSchema, or "off"
// (nullopt: only classic histograms, and only the text exposition).
absl::StatusOr<std::optional<int>> ParseNativeSchema(std::string_view spec);

// What a scrape exposes: the metric families, and for every histogram series its native
// histogram when there is one. native[f] is empty or holds one entry per families[f].metric.
struct Exposition {
  std::vector<prometheus::MetricFamily> families;
  std::vector<std::vector<NativeHistogram>> native;
};

// The text exposition (format 0.0.4): classic histograms only, as prometheus-cpp writes it.
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";
std::string PrometheusText(const prometheus::Collectable& collectable);

// The protobuf exposition (io.prometheus.client.MetricFamily, length-delimited), the only one
// that carries native histograms (Prometheus 2.40 on, --enable-feature=native-histograms).
// Histograms carry their classic buckets too, for a Prometheus that keeps both. Families
// without series are left out (Prometheus refuses an empty one).
inline constexpr char kProtobufContentType[] =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
    "encoding=delimited";
std::string PrometheusProtobuf(const Exposition& exposition);

// A rendered /metrics page.
struct ExposedPage {
  std::string content_type;
  std::string body;
};

// Whether an HTTP Accept header lists the delimited protobuf exposition (with a q above 0), as
// Prometheus does when native histograms are enabled.
bool AcceptsPrometheusProtobuf(std::string_view accept);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_METRICS_EXPOSITION_H_
