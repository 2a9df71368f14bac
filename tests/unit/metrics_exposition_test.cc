#include "coordinator/metrics_exposition.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using ::testing::HasSubstr;

TEST(NativeBucketTest, EveryValueLiesInItsBucketAndBoundsBelongToTheBucketBelow) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> exponent(-30, 12);  // 1 ns to over an hour, in seconds
  for (int schema = kMinNativeSchema; schema <= kMaxNativeSchema; ++schema) {
    for (int i = 0; i < 2'000; ++i) {
      const double value = std::exp2(exponent(random));
      const int32_t index = NativeBucketIndex(value, schema);
      ASSERT_GT(value, NativeBucketUpperBound(index - 1, schema)) << value << " schema " << schema;
      ASSERT_LE(value, NativeBucketUpperBound(index, schema)) << value << " schema " << schema;
    }
    // Upper bounds are inclusive, as in Prometheus: a bound is the top of its own bucket.
    for (int32_t index : {-300, -1, 0, 1, 7, 255, 256, 1000}) {
      const double bound = NativeBucketUpperBound(index, schema);
      if (!std::isnormal(bound)) continue;  // past a double's range at the coarse schemas
      EXPECT_EQ(NativeBucketIndex(NativeBucketUpperBound(index, schema), schema), index)
          << "schema " << schema;
    }
  }
  // Schema 0: one bucket per power of two, (0.5, 1] is bucket 0.
  EXPECT_EQ(NativeBucketIndex(1.0, 0), 0);
  EXPECT_EQ(NativeBucketIndex(0.75, 0), 0);
  EXPECT_EQ(NativeBucketIndex(0.5, 0), -1);
  EXPECT_EQ(NativeBucketIndex(1.5, 0), 1);
  // Schema 5: 32 buckets per power of two, 2.2 % apart.
  EXPECT_NEAR(NativeBucketUpperBound(1, 5) / NativeBucketUpperBound(0, 5), std::exp2(1.0 / 32),
              1e-12);
  EXPECT_EQ(NativeBucketIndex(2.0, 5), 32);
  // Negative schemas join powers of two: at -2, one bucket per factor 16.
  EXPECT_EQ(NativeBucketIndex(16.0, -2), 1);
  EXPECT_EQ(NativeBucketIndex(16.5, -2), 2);
}

TEST(NativeBucketTest, SchemaSpecsAreReadOrRefusedNamingTheRange) {
  EXPECT_EQ(*ParseNativeSchema("5"), std::optional<int>(5));
  EXPECT_EQ(*ParseNativeSchema("-4"), std::optional<int>(-4));
  EXPECT_EQ(*ParseNativeSchema("8"), std::optional<int>(8));
  EXPECT_EQ(*ParseNativeSchema("off"), std::nullopt);
  for (const char* bad : {"9", "-5", "", "five", "5.5", "on"}) {
    const absl::StatusOr<std::optional<int>> parsed = ParseNativeSchema(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("from -4 to 8"));
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(absl::StrCat("'", bad, "'")));
  }
}

TEST(AcceptTest, OnlyAClientThatListsTheDelimitedMetricFamilyGetsProtobuf) {
  // What Prometheus 2.42 sends with --enable-feature=native-histograms, and without it.
  EXPECT_TRUE(AcceptsPrometheusProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
      "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"));
  EXPECT_FALSE(AcceptsPrometheusProtobuf(
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
      "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
  EXPECT_FALSE(AcceptsPrometheusProtobuf(""));
  EXPECT_FALSE(AcceptsPrometheusProtobuf("*/*"));
  // Spaces and case as other clients write them.
  EXPECT_TRUE(AcceptsPrometheusProtobuf(
      "text/plain, Application/Vnd.Google.Protobuf; proto=io.prometheus.client.MetricFamily; "
      "encoding=delimited"));
  // Refused (q=0), another encoding, another message.
  EXPECT_FALSE(AcceptsPrometheusProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
      "encoding=delimited;q=0"));
  EXPECT_FALSE(AcceptsPrometheusProtobuf(
      "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text"));
  EXPECT_FALSE(AcceptsPrometheusProtobuf(
      "application/vnd.google.protobuf;proto=other.Message;encoding=delimited"));
}

// A message read back with protobuf's own wire-format parser (no schema: fields by number).
using Message = std::shared_ptr<const UnknownFieldSet>;

Message Parse(const std::string& bytes) {
  auto set = std::make_shared<UnknownFieldSet>();
  EXPECT_TRUE(set->ParseFromString(bytes));
  return set;
}

std::vector<Message> ReadDelimited(const std::string& bytes) {
  std::vector<Message> messages;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  uint32_t length = 0;
  while (in.ReadVarint32(&length)) {
    std::string message;
    EXPECT_TRUE(in.ReadString(&message, static_cast<int>(length)));
    messages.push_back(Parse(message));
  }
  EXPECT_EQ(in.CurrentPosition(), static_cast<int>(bytes.size())) << "trailing bytes";
  return messages;
}

std::vector<const UnknownField*> Fields(const Message& set, int number) {
  std::vector<const UnknownField*> fields;
  for (int i = 0; i < set->field_count(); ++i) {
    if (set->field(i).number() == number) fields.push_back(&set->field(i));
  }
  return fields;
}

const UnknownField* Only(const Message& set, int number) {
  const std::vector<const UnknownField*> fields = Fields(set, number);
  EXPECT_EQ(fields.size(), 1u) << "field " << number;
  return fields.empty() ? nullptr : fields[0];
}

Message Nested(const UnknownField* field) {
  EXPECT_NE(field, nullptr);
  return Parse(field != nullptr ? field->length_delimited() : std::string());
}

double DoubleOf(const UnknownField* field) {
  if (field == nullptr) return NAN;
  double value = 0;
  const uint64_t bits = field->fixed64();
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

int64_t UnZigZag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

TEST(ProtobufExpositionTest, FamiliesMetricsAndBothKindsOfHistogramReadBack) {
  MetricFamily counter{.name = "dbload_queries_total",
                       .help = "Completed.",
                       .type = MetricType::Counter,
                       .metric = {}};
  ClientMetric ok;
  ok.label = {{"run", "r1"}, {"result", "ok"}};
  ok.counter.value = 12345;
  counter.metric.push_back(ok);
  MetricFamily empty{
      .name = "dbload_run_stage", .help = "Stage.", .type = MetricType::Gauge, .metric = {}};
  MetricFamily gauge{.name = "dbload_agents_connected",
                     .help = "Agents.",
                     .type = MetricType::Gauge,
                     .metric = {}};
  gauge.metric.emplace_back().gauge.value = 2;
  MetricFamily histogram{.name = "dbload_response_time_seconds",
                         .help = "Response.",
                         .type = MetricType::Histogram,
                         .metric = {}};
  ClientMetric& h = histogram.metric.emplace_back();
  h.label = {{"run", "r1"}};
  h.histogram.sample_count = 10;
  h.histogram.sample_sum = 0.5;
  h.histogram.bucket = {{.cumulative_count = 4, .upper_bound = 0.001},
                        {.cumulative_count = 10, .upper_bound = INFINITY}};
  // Two spans: buckets -300 and -299, then -290 after 8 empty buckets (the offset is the gap).
  const NativeHistogram native{
      .schema = 5, .zero_count = 1, .buckets = {{-300, 3}, {-299, 5}, {-290, 1}}};

  Exposition exposition;
  exposition.families = {counter, empty, gauge, histogram};
  exposition.native = {{}, {}, {}, {native}};
  const std::vector<Message> families = ReadDelimited(PrometheusProtobuf(exposition));
  ASSERT_EQ(families.size(), 3u) << "the family without series is left out";

  // MetricFamily: name 1, help 2, type 3 (COUNTER 0, GAUGE 1, HISTOGRAM 4), metric 4.
  EXPECT_EQ(Only(families[0], 1)->length_delimited(), "dbload_queries_total");
  EXPECT_EQ(Only(families[0], 2)->length_delimited(), "Completed.");
  EXPECT_EQ(Only(families[0], 3)->varint(), 0u);
  const Message ok_metric = Nested(Only(families[0], 4));
  const std::vector<const UnknownField*> labels = Fields(ok_metric, 1);
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(Only(Nested(labels[1]), 1)->length_delimited(), "result");
  EXPECT_EQ(Only(Nested(labels[1]), 2)->length_delimited(), "ok");
  EXPECT_EQ(DoubleOf(Only(Nested(Only(ok_metric, 3)), 1)), 12345);

  EXPECT_EQ(Only(families[1], 3)->varint(), 1u);
  EXPECT_EQ(DoubleOf(Only(Nested(Only(Nested(Only(families[1], 4)), 2)), 1)), 2);

  EXPECT_EQ(Only(families[2], 3)->varint(), 4u);
  const Message read = Nested(Only(Nested(Only(families[2], 4)), 7));
  EXPECT_EQ(Only(read, 1)->varint(), 10u);  // sample_count
  EXPECT_EQ(DoubleOf(Only(read, 2)), 0.5);  // sample_sum
  const std::vector<const UnknownField*> classic = Fields(read, 3);
  ASSERT_EQ(classic.size(), 2u);
  EXPECT_EQ(Only(Nested(classic[0]), 1)->varint(), 4u);
  EXPECT_EQ(DoubleOf(Only(Nested(classic[0]), 2)), 0.001);
  EXPECT_TRUE(std::isinf(DoubleOf(Only(Nested(classic[1]), 2))));
  EXPECT_EQ(UnZigZag(Only(read, 5)->varint()), 5);  // schema
  EXPECT_EQ(DoubleOf(Only(read, 6)), kNativeZeroThreshold);
  EXPECT_EQ(Only(read, 7)->varint(), 1u);  // zero_count
  const std::vector<const UnknownField*> spans = Fields(read, 12);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(UnZigZag(Only(Nested(spans[0]), 1)->varint()), -300);
  EXPECT_EQ(Only(Nested(spans[0]), 2)->varint(), 2u);
  EXPECT_EQ(UnZigZag(Only(Nested(spans[1]), 1)->varint()), 8);
  EXPECT_EQ(Only(Nested(spans[1]), 2)->varint(), 1u);
  // positive_delta, packed: each count as its change from the one before.
  const std::string packed = Only(read, 13)->length_delimited();
  google::protobuf::io::CodedInputStream deltas(reinterpret_cast<const uint8_t*>(packed.data()),
                                                static_cast<int>(packed.size()));
  std::vector<int64_t> read_deltas;
  for (uint64_t delta = 0; deltas.ReadVarint64(&delta);) read_deltas.push_back(UnZigZag(delta));
  EXPECT_THAT(read_deltas, ::testing::ElementsAre(3, 2, -4));
}

// An empty native histogram still carries a span of its own, or Prometheus would take it for a
// classic one; without native data a histogram has its classic fields only.
TEST(ProtobufExpositionTest, AnEmptyNativeHistogramKeepsANoOpSpan) {
  MetricFamily histogram{.name = "h", .help = "h", .type = MetricType::Histogram, .metric = {}};
  histogram.metric.emplace_back().histogram.bucket = {{.cumulative_count = 0, .upper_bound = 1}};
  Exposition exposition;
  exposition.families = {histogram};
  exposition.native = {{NativeHistogram{.schema = 3, .zero_count = 0, .buckets = {}}}};
  Message read =
      Nested(Only(Nested(Only(ReadDelimited(PrometheusProtobuf(exposition)).at(0), 4)), 7));
  const Message span = Nested(Only(read, 12));
  EXPECT_EQ(UnZigZag(Only(span, 1)->varint()), 0);
  EXPECT_EQ(Only(span, 2)->varint(), 0u);
  EXPECT_TRUE(Fields(read, 13).empty());

  exposition.native = {{}};
  read = Nested(Only(Nested(Only(ReadDelimited(PrometheusProtobuf(exposition)).at(0), 4)), 7));
  for (int native_field : {5, 6, 7, 12, 13}) EXPECT_TRUE(Fields(read, native_field).empty());
  EXPECT_EQ(Fields(read, 3).size(), 1u);
}

}  // namespace
}  // namespace dbload
