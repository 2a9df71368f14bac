#include "coordinator/metrics_exposition.h"

#include <cmath>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "prometheus/text_serializer.h"

namespace dbload {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricType;

// Protocol Buffers wire format, written by hand for the few messages of the exposition
// (prometheus-cpp has no protobuf exposition, and the schema is not installed here). Field
// numbers are those of io.prometheus.client's metrics.proto, in which all fields are proto3
// scalars or messages; repeated scalars are written packed.
class ProtoMessage {
 public:
  ProtoMessage& Varint(int field, uint64_t value) {
    Tag(field, kVarint);
    AppendVarint(value);
    return *this;
  }
  ProtoMessage& Sint(int field, int64_t value) { return Varint(field, ZigZag(value)); }
  ProtoMessage& Double(int field, double value) {
    Tag(field, kFixed64);
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(bits >> (8 * i)));
    return *this;
  }
  // A string, a nested message or packed scalars.
  ProtoMessage& Bytes(int field, std::string_view value) {
    Tag(field, kLengthDelimited);
    AppendVarint(value.size());
    bytes_.append(value);
    return *this;
  }
  ProtoMessage& Message(int field, const ProtoMessage& message) {
    return Bytes(field, message.bytes());
  }
  ProtoMessage& PackedSints(int field, const std::vector<int64_t>& values) {
    ProtoMessage packed;
    for (int64_t value : values) packed.AppendVarint(ZigZag(value));
    return Bytes(field, packed.bytes_);
  }
  // A message prefixed by its length, as the delimited exposition streams its families.
  void AppendDelimited(const ProtoMessage& message) {
    AppendVarint(message.bytes().size());
    bytes_.append(message.bytes());
  }
  const std::string& bytes() const { return bytes_; }

 private:
  enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };
  static uint64_t ZigZag(int64_t value) {
    return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  }
  void AppendVarint(uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<char>(value));
  }
  void Tag(int field, WireType type) { AppendVarint((static_cast<uint64_t>(field) << 3) | type); }

  std::string bytes_;
};

// io.prometheus.client.MetricType
enum ProtoMetricType { kCounter = 0, kGauge = 1, kSummary = 2, kUntyped = 3, kHistogram = 4 };

ProtoMetricType ProtoType(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return kCounter;
    case MetricType::Gauge:
      return kGauge;
    case MetricType::Summary:
      return kSummary;
    case MetricType::Untyped:
      return kUntyped;
    case MetricType::Histogram:
      return kHistogram;
  }
  return kUntyped;
}

ProtoMessage Value(double value) { return std::move(ProtoMessage().Double(1, value)); }

// Histogram fields: sample_count 1, sample_sum 2, bucket 3 (cumulative_count 1, upper_bound 2),
// schema 5, zero_threshold 6, zero_count 7, positive_span 12 (offset 1, length 2),
// positive_delta 13.
ProtoMessage HistogramMessage(const ClientMetric::Histogram& classic,
                              const NativeHistogram* native) {
  ProtoMessage histogram;
  histogram.Varint(1, classic.sample_count).Double(2, classic.sample_sum);
  for (const ClientMetric::Bucket& bucket : classic.bucket) {
    histogram.Message(
        3, ProtoMessage().Varint(1, bucket.cumulative_count).Double(2, bucket.upper_bound));
  }
  if (native == nullptr) return histogram;
  histogram.Sint(5, native->schema).Double(6, kNativeZeroThreshold).Varint(7, native->zero_count);
  // Runs of consecutive indices are spans; each span's offset is its gap after the previous
  // one (the first's is its start), and each count is written as its change from the one before.
  std::vector<int64_t> deltas;
  int64_t previous_count = 0;
  int32_t span_start = 0, span_length = 0, previous_end = 0;
  auto close_span = [&] {
    if (span_length == 0) return;
    histogram.Message(12, ProtoMessage().Sint(1, span_start - previous_end).Varint(2, span_length));
    previous_end = span_start + span_length;
  };
  for (const auto& [index, count] : native->buckets) {
    if (span_length == 0 || index != span_start + span_length) {
      close_span();
      span_start = index;
      span_length = 0;
    }
    ++span_length;
    deltas.push_back(static_cast<int64_t>(count) - previous_count);
    previous_count = static_cast<int64_t>(count);
  }
  close_span();
  // A native histogram without samples still needs a span, or it reads as a classic one.
  if (native->buckets.empty()) histogram.Message(12, ProtoMessage().Sint(1, 0).Varint(2, 0));
  if (!deltas.empty()) histogram.PackedSints(13, deltas);
  return histogram;
}

// Metric fields: label 1 (name 1, value 2), gauge 2, counter 3, summary 4 (sample_count 1,
// sample_sum 2, quantile 3: quantile 1, value 2), untyped 5, histogram 7.
ProtoMessage MetricMessage(MetricType type, const ClientMetric& metric,
                           const NativeHistogram* native) {
  ProtoMessage message;
  for (const ClientMetric::Label& label : metric.label) {
    message.Message(1, ProtoMessage().Bytes(1, label.name).Bytes(2, label.value));
  }
  switch (type) {
    case MetricType::Counter:
      return std::move(message.Message(3, Value(metric.counter.value)));
    case MetricType::Gauge:
      return std::move(message.Message(2, Value(metric.gauge.value)));
    case MetricType::Untyped:
      return std::move(message.Message(5, Value(metric.untyped.value)));
    case MetricType::Summary: {
      ProtoMessage summary;
      summary.Varint(1, metric.summary.sample_count).Double(2, metric.summary.sample_sum);
      for (const ClientMetric::Quantile& quantile : metric.summary.quantile) {
        summary.Message(3, ProtoMessage().Double(1, quantile.quantile).Double(2, quantile.value));
      }
      return std::move(message.Message(4, summary));
    }
    case MetricType::Histogram:
      return std::move(message.Message(7, HistogramMessage(metric.histogram, native)));
  }
  return message;
}

}  // namespace

int32_t NativeBucketIndex(double value, int schema) {
  auto index = static_cast<int32_t>(std::ceil(std::log2(value) * std::ldexp(1.0, schema)));
  // log2's rounding can leave a value that lies on a bound one bucket off: bucket k is
  // (bound(k-1), bound(k)].
  while (value > NativeBucketUpperBound(index, schema)) ++index;
  while (value <= NativeBucketUpperBound(index - 1, schema)) --index;
  return index;
}

double NativeBucketUpperBound(int32_t index, int schema) {
  return std::exp2(std::ldexp(static_cast<double>(index), -schema));
}

absl::StatusOr<std::optional<int>> ParseNativeSchema(std::string_view spec) {
  const absl::string_view text(spec.data(), spec.size());
  if (text == "off") return std::optional<int>();
  int schema = 0;
  if (!absl::SimpleAtoi(text, &schema) || schema < kMinNativeSchema || schema > kMaxNativeSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': expected a schema from ", kMinNativeSchema, " to ",
                     kMaxNativeSchema, " (2^schema buckets per power of two), or 'off'"));
  }
  return std::optional<int>(schema);
}

std::string PrometheusText(const prometheus::Collectable& collectable) {
  return prometheus::TextSerializer().Serialize(collectable.Collect());
}

std::string PrometheusProtobuf(const Exposition& exposition) {
  ProtoMessage out;
  for (size_t f = 0; f < exposition.families.size(); ++f) {
    const prometheus::MetricFamily& family = exposition.families[f];
    if (family.metric.empty()) continue;
    const std::vector<NativeHistogram>* native =
        f < exposition.native.size() && exposition.native[f].size() == family.metric.size()
            ? &exposition.native[f]
            : nullptr;
    // MetricFamily fields: name 1, help 2, type 3, metric 4.
    ProtoMessage message;
    message.Bytes(1, family.name).Bytes(2, family.help).Varint(3, ProtoType(family.type));
    for (size_t m = 0; m < family.metric.size(); ++m) {
      message.Message(4, MetricMessage(family.type, family.metric[m],
                                       native != nullptr ? &(*native)[m] : nullptr));
    }
    out.AppendDelimited(message);
  }
  return out.bytes();
}

bool AcceptsPrometheusProtobuf(std::string_view accept) {
  for (absl::string_view range : absl::StrSplit(absl::string_view(accept.data(), accept.size()),
                                                ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
    if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(parts[0]),
                                "application/vnd.google.protobuf")) {
      continue;
    }
    bool metric_family = false, delimited = false, refused = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      const absl::string_view parameter = absl::StripAsciiWhitespace(parts[i]);
      metric_family |= parameter == "proto=io.prometheus.client.MetricFamily";
      delimited |= parameter == "encoding=delimited";
      absl::string_view q_text = parameter;
      double q = 1;
      refused |= absl::ConsumePrefix(&q_text, "q=") && absl::SimpleAtod(q_text, &q) && q <= 0;
    }
    if (metric_family && delimited && !refused) return true;
  }
  return false;
}

}  // namespace dbload
