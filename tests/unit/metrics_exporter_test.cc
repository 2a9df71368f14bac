#include "coordinator/metrics_exporter.h"

#include <iostream>
#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace dbload {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

const MetricFamily& FamilyNamed(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return family;
  }
  ADD_FAILURE() << "no family " << name;
  static const MetricFamily kNone;
  return kNone;
}

std::string LabelOf(const ClientMetric& metric, const std::string& name) {
  for (const auto& label : metric.label) {
    if (label.name == name) return label.value;
  }
  return "";
}

IntervalSnapshot Snapshot(std::mt19937_64& random, int ok, int errors) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(2);
  std::lognormal_distribution<double> latency(13.0, 1.0);  // ~0.4 ms median
  for (int i = 0; i < ok; ++i) {
    const auto value = static_cast<int64_t>(latency(random));
    snapshot.query_types[i % 2].response_time.Record(value);
    snapshot.query_types[i % 2].service_time.Record(value / 2);
    snapshot.schedule_lag.Record(1'000);
  }
  snapshot.query_types[1].errors[{db::ErrorClass::kRetryable, "40001"}] = errors;
  // A select sends 1 statement, an update transaction 3 (and a failed one 2).
  snapshot.query_types[0].statements = snapshot.query_types[0].response_time.TotalCount();
  snapshot.query_types[1].statements =
      3 * snapshot.query_types[1].response_time.TotalCount() + 2 * static_cast<uint64_t>(errors);
  return snapshot;
}

TEST(MetricsExporterTest, CountersAndHistogramsAreTheExactSums) {
  MetricsExporter exporter(3);
  std::mt19937_64 random(1);
  Histogram all_select;
  for (int second = 0; second < 5; ++second) {
    const IntervalSnapshot snapshot = Snapshot(random, 1'000, 7);
    all_select.Add(snapshot.query_types[0].response_time);
    exporter.OnInterval({.run_id = "r1",
                         .scenario = "mixed",
                         .query_types = {"select", "update"},
                         .merged = &snapshot,
                         .length_s = 1.0,
                         .target_rate = 1'000,
                         .agent_cpu_seconds = {{"a1", 0.25}}});
  }
  exporter.SetAgentsConnected(3);
  const auto families = exporter.Collect();

  uint64_t ok = 0, errors = 0;
  for (const auto& m : FamilyNamed(families, "dbload_queries_total").metric) {
    (LabelOf(m, "result") == "ok" ? ok : errors) += static_cast<uint64_t>(m.counter.value);
  }
  EXPECT_EQ(ok, 5'000u);
  EXPECT_EQ(errors, 35u);
  // Statements per query type, whatever the result: the sums of the intervals' exact counts.
  std::map<std::string, double> statements;
  for (const auto& m : FamilyNamed(families, "dbload_statements_total").metric) {
    EXPECT_EQ(LabelOf(m, "run"), "r1");
    EXPECT_EQ(LabelOf(m, "scenario"), "mixed");
    statements[LabelOf(m, "query_type")] += m.counter.value;
  }
  EXPECT_THAT(statements, testing::ElementsAre(testing::Pair("select", 2'500),
                                               testing::Pair("update", 3 * 2'500 + 2 * 35)));

  const auto& response = FamilyNamed(families, "dbload_response_time_seconds");
  ASSERT_EQ(response.metric.size(), 2u);
  const ClientMetric& select = LabelOf(response.metric[0], "query_type") == "select"
                                   ? response.metric[0]
                                   : response.metric[1];
  EXPECT_EQ(select.histogram.sample_count, all_select.TotalCount());
  EXPECT_EQ(select.histogram.bucket.back().cumulative_count, all_select.TotalCount());
  // Cumulative and never counting a sample below its value: the count at the bucket holding
  // the exact p99 is at least 99 %.
  const double p99_s = all_select.ValueAtPercentile(99) / 1e9;
  for (const auto& bucket : select.histogram.bucket) {
    if (bucket.upper_bound >= p99_s) {
      EXPECT_GE(bucket.cumulative_count, all_select.TotalCount() * 99 / 100);
      break;
    }
  }
  EXPECT_NEAR(FamilyNamed(families, "dbload_agent_cpu_seconds_total").metric[0].counter.value,
              1.25, 1e-9);
  EXPECT_EQ(FamilyNamed(families, "dbload_agents_connected").metric[0].gauge.value, 3);
  EXPECT_EQ(FamilyNamed(families, "dbload_achieved_rate").metric[0].gauge.value, 1'000);
}

// A Prometheus with native histograms gets each histogram as a native one too: every sample is
// in it (zero in the zero bucket), and the report's exact quantiles lie in the native bucket
// where their rank falls, so histogram_quantile() answers within that bucket (2.2 % at schema 5).
TEST(MetricsExporterTest, NativeHistogramsHoldEverySampleAndTheQuantilesBucket) {
  for (const int schema : {kMinNativeSchema, 0, kDefaultNativeSchema, kMaxNativeSchema}) {
    MetricsExporter exporter(3, DefaultBucketBounds(), schema);
    std::mt19937_64 random(2);
    Histogram all_select;
    for (int second = 0; second < 5; ++second) {
      IntervalSnapshot snapshot = Snapshot(random, 1'000, 7);
      snapshot.query_types[0].response_time.Record(0);  // the noop driver's zero latency
      all_select.Add(snapshot.query_types[0].response_time);
      exporter.OnInterval({.run_id = "r1",
                           .scenario = "mixed",
                           .query_types = {"select", "update"},
                           .merged = &snapshot,
                           .length_s = 1.0});
    }
    const Exposition exposition = exporter.Expose();
    ASSERT_EQ(exposition.native.size(), exposition.families.size());
    size_t native_series = 0;
    for (size_t f = 0; f < exposition.families.size(); ++f) {
      const MetricFamily& family = exposition.families[f];
      if (family.type != prometheus::MetricType::Histogram) {
        EXPECT_TRUE(exposition.native[f].empty()) << family.name;
        continue;
      }
      ASSERT_EQ(exposition.native[f].size(), family.metric.size()) << family.name;
      native_series += family.metric.size();
      if (family.name != "dbload_response_time_seconds") continue;
      const size_t m = LabelOf(family.metric[0], "query_type") == "select" ? 0 : 1;
      const NativeHistogram& native = exposition.native[f][m];
      EXPECT_EQ(native.schema, schema);
      EXPECT_EQ(native.zero_count, 5u);
      uint64_t total = native.zero_count;
      for (size_t b = 0; b < native.buckets.size(); ++b) {
        EXPECT_GT(native.buckets[b].second, 0u);
        if (b > 0) {
          EXPECT_GT(native.buckets[b].first, native.buckets[b - 1].first);
        }
        total += native.buckets[b].second;
      }
      EXPECT_EQ(total, all_select.TotalCount());
      EXPECT_EQ(family.metric[m].histogram.sample_count, all_select.TotalCount());
      for (const double percentile : {50.0, 90.0, 99.0, 99.9}) {
        const uint64_t rank = all_select.RankOfPercentile(percentile);
        uint64_t at_or_below = native.zero_count;
        size_t b = 0;
        while (b < native.buckets.size() && at_or_below + native.buckets[b].second < rank) {
          at_or_below += native.buckets[b++].second;
        }
        ASSERT_LT(b, native.buckets.size());
        const double exact_s = static_cast<double>(all_select.ValueAtPercentile(percentile)) / 1e9;
        EXPECT_GT(exact_s, NativeBucketUpperBound(native.buckets[b].first - 1, schema))
            << "p" << percentile << " schema " << schema;
        EXPECT_LE(exact_s, NativeBucketUpperBound(native.buckets[b].first, schema))
            << "p" << percentile << " schema " << schema;
      }
    }
    EXPECT_EQ(native_series, 4u);  // response and service time of two query types
  }
  const Exposition classic_only = MetricsExporter(3, DefaultBucketBounds(), std::nullopt).Expose();
  for (const auto& native : classic_only.native) EXPECT_TRUE(native.empty());
}

// The page's format follows the scrape's Accept header, and native histograms being on.
TEST(MetricsExporterTest, OnlyAScrapeThatAsksForProtobufGetsIt) {
  constexpr char kPrometheusNative[] =
      "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
      "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
  MetricsExporter exporter;
  exporter.SetAgentsConnected(2);
  const ExposedPage text = exporter.Render("*/*");
  EXPECT_EQ(text.content_type, kTextContentType);
  EXPECT_THAT(text.body, testing::HasSubstr("\ndbload_agents_connected 2\n"));
  const ExposedPage protobuf = exporter.Render(kPrometheusNative);
  EXPECT_EQ(protobuf.content_type, kProtobufContentType);
  EXPECT_EQ(protobuf.body, PrometheusProtobuf(exporter.Expose()));
  MetricsExporter classic_only(10, DefaultBucketBounds(), std::nullopt);
  EXPECT_EQ(classic_only.Render(kPrometheusNative).content_type, kTextContentType);
}

TEST(MetricsExporterTest, WindowQuantilesAreExactOverTheLastIntervals) {
  MetricsExporter exporter(2);
  auto one_value = [&](int64_t nanos) {
    IntervalSnapshot snapshot;
    snapshot.query_types.resize(1);
    for (int i = 0; i < 100; ++i) snapshot.query_types[0].response_time.Record(nanos);
    exporter.OnInterval({.run_id = "r", .scenario = "s", .query_types = {"q"}, .merged = &snapshot,
                         .length_s = 1});
  };
  one_value(50'000'000);  // falls out of the 2-interval window
  one_value(1'000'000);
  one_value(2'000'000);
  const auto families = exporter.Collect();
  for (const auto& m : FamilyNamed(families, "dbload_response_time_window_seconds").metric) {
    if (LabelOf(m, "quantile") == "0.999") {
      EXPECT_NEAR(m.gauge.value, 0.002, 0.002 * 0.001);
    } else if (LabelOf(m, "quantile") == "0.5") {
      EXPECT_NEAR(m.gauge.value, 0.001, 0.001 * 0.001);
    }
  }
}

// sysbench's ignored errors are a result of their own: an error rate over result="error" (the
// dashboard's) leaves them out, as the report's errors do.
TEST(MetricsExporterTest, IgnoredErrorsAreAResultOfTheirOwn) {
  MetricsExporter exporter;
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  for (int i = 0; i < 50; ++i) snapshot.query_types[0].response_time.Record(1'000'000);
  snapshot.query_types[0].errors[{db::ErrorClass::kIgnored, "23505"}] = 4;
  snapshot.query_types[0].errors[{db::ErrorClass::kIgnored, "40P01"}] = 2;
  snapshot.query_types[0].errors[{db::ErrorClass::kRetryable, "55P03"}] = 1;
  exporter.OnInterval({.run_id = "r", .scenario = "read_write", .query_types = {"read_write"},
                       .merged = &snapshot, .length_s = 1});
  const auto families = exporter.Collect();
  std::map<std::string, double> by_result;
  for (const auto& m : FamilyNamed(families, "dbload_queries_total").metric) {
    by_result[LabelOf(m, "result") + "/" + LabelOf(m, "error_class")] += m.counter.value;
  }
  EXPECT_THAT(by_result, testing::ElementsAre(testing::Pair("error/retryable", 1),
                                              testing::Pair("ignored/ignored", 6),
                                              testing::Pair("ok/", 50)));
}

TEST(MetricsExporterTest, OnlyTheNewestRunsAreKeptAndTheTextFormatIsValid) {
  MetricsExporter exporter;
  for (size_t i = 0; i < MetricsExporter::kRunsKept + 3; ++i) {
    exporter.SetRunState("run" + std::to_string(i), "s", "finished");
  }
  const auto families = exporter.Collect();
  EXPECT_EQ(FamilyNamed(families, "dbload_run_info").metric.size(), MetricsExporter::kRunsKept);
  const std::string text = prometheus::TextSerializer().Serialize(families);
  EXPECT_THAT(text, testing::HasSubstr("# TYPE dbload_response_time_seconds histogram"));
  EXPECT_THAT(text, testing::Not(testing::HasSubstr("run=\"run0\"")));
}

TEST(MetricsExporterTest, TheFineBucketsGrowByFivePercentFromFiftyMicrosecondsToAMinute) {
  const std::vector<double> bounds = FineBucketBounds();
  EXPECT_EQ(bounds.size(), 288u);  // 289 buckets with +Inf
  EXPECT_DOUBLE_EQ(bounds.front(), 50e-6);
  EXPECT_GE(bounds.back(), 60.0);
  for (size_t i = 1; i < bounds.size(); ++i) {
    EXPECT_NEAR(bounds[i] / bounds[i - 1], 1.05, 0.002) << i;
  }
}

TEST(MetricsExporterTest, TheDefaultBucketsAreFewAndCloseWhereDatabasesAnswer) {
  const std::vector<double> bounds = DefaultBucketBounds();
  EXPECT_EQ(bounds.size(), 14u);
  EXPECT_DOUBLE_EQ(bounds.front(), 50e-6);
  EXPECT_DOUBLE_EQ(bounds.back(), 10.0);
  // At most 2.5x apart up to 100 ms, 5x up to 1 s, 10x up to 10 s.
  for (size_t i = 1; i < bounds.size(); ++i) {
    const double most = bounds[i] <= 0.1 ? 2.5 : bounds[i] <= 1 ? 5 : 10;
    EXPECT_LE(bounds[i] / bounds[i - 1], most + 1e-9) << bounds[i];
  }
}

// What Prometheus pays for one run of 20 query types (issue 20: at most 1,000 series and 100 KB
// per scrape by default), after a second of load with errors of two codes in every query type.
TEST(MetricsExporterTest, ARunOfTwentyQueryTypesStaysUnderAThousandSeriesByDefault) {
  std::vector<std::string> names;
  for (int q = 0; q < 20; ++q) names.push_back("query_type_" + std::to_string(q));
  std::mt19937_64 random(5);
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(names.size());
  std::lognormal_distribution<double> latency(13.0, 1.5);
  for (QueryTypeInterval& q : snapshot.query_types) {
    for (int i = 0; i < 2'000; ++i) {
      const auto value = static_cast<int64_t>(latency(random));
      q.response_time.Record(value);
      q.service_time.Record(value / 2);
    }
    q.errors[{db::ErrorClass::kRetryable, "40001"}] = 3;
    q.errors[{db::ErrorClass::kRetryable, "40P01"}] = 1;
    q.statements = 2'004;
  }
  snapshot.schedule_lag.Record(1'000);
  struct Exported {
    size_t series = 0;
    size_t bytes = 0;
    size_t protobuf_bytes = 0;  // with native histograms, schema 5
  };
  const auto exported = [&](std::vector<double> bounds) {
    MetricsExporter exporter(10, std::move(bounds));
    exporter.SetAgentsConnected(3);
    exporter.OnInterval({.run_id = "r1",
                         .scenario = "mixed",
                         .query_types = names,
                         .merged = &snapshot,
                         .length_s = 1,
                         .clients = 64});
    const std::string text = prometheus::TextSerializer().Serialize(exporter.Collect());
    Exported result{.series = 0,
                    .bytes = text.size(),
                    .protobuf_bytes = PrometheusProtobuf(exporter.Expose()).size()};
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (!line.empty() && line[0] != '#') ++result.series;
    }
    return result;
  };
  const Exported small = exported(DefaultBucketBounds());
  const Exported fine = exported(FineBucketBounds());
  std::cout << "[20 query types] default buckets: " << small.series << " series, " << small.bytes
            << " bytes; fine buckets: " << fine.series << " series, " << fine.bytes << " bytes; "
            << "protobuf with native histograms: " << small.protobuf_bytes << " bytes" << std::endl;
  EXPECT_LE(small.series, 1'000u);
  EXPECT_LE(small.bytes, 100'000u);
  EXPECT_LE(small.protobuf_bytes, 100'000u);
  EXPECT_GT(fine.series, 10 * small.series);  // what the issue measured: 11,781
}

TEST(MetricsExporterTest, BucketSpecsAreReadOrRefusedNamingTheBound) {
  EXPECT_EQ(*ParseBucketBounds("default"), DefaultBucketBounds());
  EXPECT_EQ(*ParseBucketBounds("fine"), FineBucketBounds());
  EXPECT_EQ(*ParseBucketBounds("0.001, 0.01,1"), (std::vector<double>{0.001, 0.01, 1}));
  EXPECT_THAT(ParseBucketBounds("0.001,fast").status().message(),
              testing::HasSubstr("bucket bound 'fast': expected a positive number of seconds"));
  EXPECT_THAT(ParseBucketBounds("0.01,0.001").status().message(),
              testing::HasSubstr("bucket bound 0.001 is not above the one before it (0.01)"));
  EXPECT_FALSE(ParseBucketBounds("0,1").ok());
  EXPECT_FALSE(ParseBucketBounds("").ok());
  std::string many;
  for (int i = 1; i <= 1'001; ++i) absl::StrAppend(&many, i == 1 ? "" : ",", i);
  EXPECT_THAT(ParseBucketBounds(many).status().message(),
              testing::HasSubstr("1001 bucket bounds; at most 1000"));
}

// A histogram exported with the caller's bounds: each sample in the first bucket at or above it.
TEST(MetricsExporterTest, TheHistogramUsesTheBoundsItWasGiven) {
  MetricsExporter exporter(10, {0.001, 0.01});
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  snapshot.query_types[0].response_time.Record(500'000);     // 0.5 ms
  snapshot.query_types[0].response_time.Record(5'000'000);   // 5 ms
  snapshot.query_types[0].response_time.Record(50'000'000);  // 50 ms
  exporter.OnInterval(
      {.run_id = "r1", .scenario = "s", .query_types = {"q"}, .merged = &snapshot, .length_s = 1});
  const std::vector<MetricFamily> families = exporter.Collect();
  const auto& response = FamilyNamed(families, "dbload_response_time_seconds");
  ASSERT_EQ(response.metric.size(), 1u);
  const auto& buckets = response.metric[0].histogram.bucket;
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].cumulative_count, 1u);
  EXPECT_EQ(buckets[1].cumulative_count, 2u);
  EXPECT_EQ(buckets[2].cumulative_count, 3u);
  EXPECT_EQ(exporter.bucket_bounds(), (std::vector<double>{0.001, 0.01}));
}

TEST(MetricsExporterTest, ConnectTimesAreAHistogramOfTheRunsThatConnectPerTransaction) {
  MetricsExporter exporter(10, {0.001, 0.01});
  IntervalSnapshot once, per_transaction;
  once.query_types.resize(1);
  per_transaction.query_types.resize(1);
  per_transaction.connect_time.Record(3'000'000);   // 3 ms
  per_transaction.connect_time.Record(20'000'000);  // 20 ms
  for (int second = 0; second < 2; ++second) {
    exporter.OnInterval(
        {.run_id = "held", .scenario = "s", .query_types = {"q"}, .merged = &once, .length_s = 1});
    exporter.OnInterval({.run_id = "storm",
                         .scenario = "s",
                         .query_types = {"q"},
                         .merged = &per_transaction,
                         .length_s = 1});
  }
  const std::vector<MetricFamily> families = exporter.Collect();
  const auto& connect = FamilyNamed(families, "dbload_connect_time_seconds");
  ASSERT_EQ(connect.metric.size(), 1u) << "no series for the run that connected once";
  EXPECT_EQ(LabelOf(connect.metric[0], "run"), "storm");
  const auto& buckets = connect.metric[0].histogram.bucket;
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].cumulative_count, 0u);
  EXPECT_EQ(buckets[1].cumulative_count, 2u);
  EXPECT_EQ(buckets[2].cumulative_count, 4u);
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(MetricsExporterStageTest, TheCurrentStageIsAGaugeNamedByTheStage) {
  MetricsExporter exporter(3);
  std::mt19937_64 random(2);
  const IntervalSnapshot snapshot = Snapshot(random, 10, 0);
  exporter.OnInterval({.run_id = "r1", .scenario = "s", .query_types = {"a", "b"},
                       .merged = &snapshot, .length_s = 1, .clients = 3});
  EXPECT_TRUE(FamilyNamed(exporter.Collect(), "dbload_run_stage").metric.empty());
  for (uint32_t stage : {1u, 2u}) {
    exporter.OnInterval({.run_id = "r1", .scenario = "s", .query_types = {"a", "b"},
                         .merged = &snapshot, .length_s = 1, .clients = 3, .stage = stage,
                         .stage_name = stage == 1 ? "climb" : "hold"});
  }
  const std::vector<MetricFamily> families = exporter.Collect();
  const MetricFamily& stage = FamilyNamed(families, "dbload_run_stage");
  ASSERT_EQ(stage.metric.size(), 1u);
  EXPECT_EQ(LabelOf(stage.metric[0], "stage"), "hold");
  EXPECT_EQ(stage.metric[0].gauge.value, 2);
}

TEST(MetricsExporterProbeTest, ProbeReadingsAreCountersAndGaugesOfTheRun) {
  MetricsExporter exporter(3);
  EXPECT_TRUE(FamilyNamed(exporter.Collect(), "dbload_probe_up").metric.empty());
  exporter.OnProbeReading("r1", "s",
                          {{.source = "postgresql", .name = "commits", .value = 10, .gauge = false},
                           {.source = "process", .name = "rss_bytes", .value = 4096, .gauge = true}});
  exporter.OnProbeReading("r1", "s",
                          {{.source = "postgresql", .name = "commits", .value = 25, .gauge = false},
                           {.source = "process", .name = "rss_bytes", .value = 8192, .gauge = true}});
  exporter.SetProbeUp("r1", "s", true);
  const std::vector<MetricFamily> families = exporter.Collect();
  const MetricFamily& counters = FamilyNamed(families, "dbload_db_counter_total");
  ASSERT_EQ(counters.metric.size(), 1u);  // the latest reading replaces the one before
  EXPECT_EQ(counters.type, prometheus::MetricType::Counter);
  EXPECT_EQ(LabelOf(counters.metric[0], "source"), "postgresql");
  EXPECT_EQ(LabelOf(counters.metric[0], "name"), "commits");
  EXPECT_EQ(LabelOf(counters.metric[0], "scenario"), "s");
  EXPECT_EQ(counters.metric[0].counter.value, 25);
  const MetricFamily& gauges = FamilyNamed(families, "dbload_db_gauge");
  ASSERT_EQ(gauges.metric.size(), 1u);
  EXPECT_EQ(gauges.metric[0].gauge.value, 8192);
  const MetricFamily& up = FamilyNamed(families, "dbload_probe_up");
  ASSERT_EQ(up.metric.size(), 1u);
  EXPECT_EQ(up.metric[0].gauge.value, 1);
}

// A restarted server counts from zero: the exported counter keeps what was counted before (an
// offset), so that it never goes down; gauges are exported as read.
TEST(MetricsExporterProbeTest, ProbeCountersStayMonotonicAcrossAServerRestart) {
  MetricsExporter exporter(3);
  auto read = [&](double commits, double connections) {
    exporter.OnProbeReading(
        "r1", "s",
        {{.source = "mysql", .name = "Handler_commit", .value = commits, .gauge = false},
         {.source = "mysql", .name = "connections", .value = connections, .gauge = true}});
    const std::vector<MetricFamily> families = exporter.Collect();
    return std::make_pair(FamilyNamed(families, "dbload_db_counter_total").metric.at(0).counter.value,
                          FamilyNamed(families, "dbload_db_gauge").metric.at(0).gauge.value);
  };
  EXPECT_EQ(read(100, 5), std::make_pair(100.0, 5.0));
  EXPECT_EQ(read(250, 5), std::make_pair(250.0, 5.0));
  EXPECT_EQ(read(20, 1), std::make_pair(270.0, 1.0));  // restarted: 20 counted since
  EXPECT_EQ(read(60, 2), std::make_pair(310.0, 2.0));
  EXPECT_EQ(read(5, 2), std::make_pair(315.0, 2.0));   // and again
  // A dip to more than half is no reset (CPU time of a child reaped mid-reading): the highest
  // value stands until the counter passes it.
  EXPECT_EQ(read(4, 2), std::make_pair(315.0, 2.0));
  EXPECT_EQ(read(7, 2), std::make_pair(317.0, 2.0));
}

// A thousand agents would be two thousand series: past kAgentSeriesMax, their sum and the
// busiest.
TEST(MetricsExporterTest, ARunOfManyAgentsExportsTheirSumAndTheBusiest) {
  MetricsExporter exporter(3);
  std::mt19937_64 random(5);
  const IntervalSnapshot snapshot = Snapshot(random, 10, 0);
  for (const size_t agents : {MetricsExporter::kAgentSeriesMax, size_t{1000}}) {
    RunInterval interval{.run_id = absl::StrCat("r", agents),
                         .scenario = "s",
                         .query_types = {"a", "b"},
                         .merged = &snapshot,
                         .length_s = 1};
    for (size_t i = 0; i < agents; ++i) {
      const std::string name = absl::StrCat("agent-", i);
      interval.agent_cpu_seconds[name] = 0.25;
      interval.agent_cpu_utilization[name] = i == 7 ? 0.9 : 0.1;
    }
    exporter.OnInterval(interval);
    exporter.OnInterval(interval);
  }
  const std::vector<MetricFamily> families = exporter.Collect();
  std::map<std::string, std::vector<const ClientMetric*>> cpu, utilization;
  for (const ClientMetric& m : FamilyNamed(families, "dbload_agent_cpu_seconds_total").metric) {
    cpu[LabelOf(m, "run")].push_back(&m);
  }
  for (const ClientMetric& m : FamilyNamed(families, "dbload_agent_cpu_utilization").metric) {
    utilization[LabelOf(m, "run")].push_back(&m);
  }
  EXPECT_EQ(cpu["r50"].size(), 50u);
  EXPECT_EQ(utilization["r50"].size(), 50u);
  ASSERT_EQ(cpu["r1000"].size(), 1u);
  EXPECT_EQ(LabelOf(*cpu["r1000"][0], "agent"), "all");
  EXPECT_DOUBLE_EQ(cpu["r1000"][0]->counter.value, 1000 * 0.5);
  ASSERT_EQ(utilization["r1000"].size(), 1u);
  EXPECT_EQ(LabelOf(*utilization["r1000"][0], "agent"), "busiest");
  EXPECT_DOUBLE_EQ(utilization["r1000"][0]->gauge.value, 0.9);
}

TEST(MetricsExporterProbeTest, GeneratorLimitAndAgentCpuFollowTheLastInterval) {
  MetricsExporter exporter(3);
  std::mt19937_64 random(3);
  const IntervalSnapshot snapshot = Snapshot(random, 10, 0);
  exporter.OnInterval({.run_id = "r1", .scenario = "s", .query_types = {"a", "b"},
                       .merged = &snapshot, .length_s = 1,
                       .agent_cpu_utilization = {{"agent-1", 0.95}},
                       .generator_limited = true});
  std::vector<MetricFamily> families = exporter.Collect();
  const MetricFamily& limited = FamilyNamed(families, "dbload_generator_limited");
  ASSERT_EQ(limited.metric.size(), 1u);
  EXPECT_EQ(limited.metric[0].gauge.value, 1);
  EXPECT_EQ(FamilyNamed(families, "dbload_pool_limited").metric[0].gauge.value, 0);
  const MetricFamily& cpu = FamilyNamed(families, "dbload_agent_cpu_utilization");
  ASSERT_EQ(cpu.metric.size(), 1u);
  EXPECT_EQ(LabelOf(cpu.metric[0], "agent"), "agent-1");
  EXPECT_EQ(cpu.metric[0].gauge.value, 0.95);
  exporter.OnInterval({.run_id = "r1",
                       .scenario = "s",
                       .query_types = {"a", "b"},
                       .merged = &snapshot,
                       .length_s = 1,
                       .agent_cpu_utilization = {{"agent-1", 0.3}},
                       .pool_limited = true,
                       .dispatch_lag_share = 0.51});
  families = exporter.Collect();
  EXPECT_EQ(FamilyNamed(families, "dbload_generator_limited").metric[0].gauge.value, 0);
  EXPECT_EQ(FamilyNamed(families, "dbload_pool_limited").metric[0].gauge.value, 1);
  EXPECT_EQ(FamilyNamed(families, "dbload_database_stalled").metric[0].gauge.value, 0);
  EXPECT_EQ(FamilyNamed(families, "dbload_dispatch_lag_share").metric[0].gauge.value, 0.51);
  exporter.OnInterval({.run_id = "r1",
                       .scenario = "s",
                       .query_types = {"a", "b"},
                       .merged = &snapshot,
                       .length_s = 1,
                       .database_stalled = true});
  families = exporter.Collect();
  EXPECT_EQ(FamilyNamed(families, "dbload_database_stalled").metric[0].gauge.value, 1);
  EXPECT_EQ(FamilyNamed(families, "dbload_pool_limited").metric[0].gauge.value, 0);
}

}  // namespace
}  // namespace dbload
