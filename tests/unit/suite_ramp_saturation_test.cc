#include "suite/suite_ramp_saturation.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

void AddReading(v1::RunReport& report, double elapsed_s,
                const std::map<std::string, double>& values) {
  v1::ProbeSample& sample = *report.add_probe_samples();
  sample.set_elapsed_s(elapsed_s);
  for (const auto& [key, value] : values) (*sample.mutable_values())[key] = value;
}

TEST(SuiteRampSaturationTest, CountersPerSecondAndTheHighestGaugeOverTheStep) {
  v1::RunReport report;
  AddReading(report, 0, {{"process/cpu_seconds", 0}, {"postgresql/connections", 9}});
  AddReading(report, 1,
             {{"process/cpu_seconds", 1},
              {"postgresql/connections", 2},
              {"postgresql/written_bytes", 1000},
              {"postgresql/tup_inserted", 10}});
  AddReading(report, 3,
             {{"process/cpu_seconds", 2},
              {"postgresql/connections", 5},
              {"postgresql/written_bytes", 5000},
              {"postgresql/tup_inserted", 50}});
  AddReading(report, 5,
             {{"process/cpu_seconds", 3},
              {"postgresql/connections", 4},
              {"postgresql/written_bytes", 9000},
              {"postgresql/tup_inserted", 90}});
  const StepSaturation s = SaturationOver(report, 0.5, 5);
  EXPECT_EQ(s.readings, 3u);  // from the first at or after 0.5 s to the first at or after 5 s
  EXPECT_DOUBLE_EQ(s.from_s, 1);
  EXPECT_DOUBLE_EQ(s.to_s, 5);
  EXPECT_DOUBLE_EQ(*s.cpu_cores, 0.5);
  EXPECT_DOUBLE_EQ(*s.written_bytes_per_s, 2000);
  EXPECT_DOUBLE_EQ(*s.rows_inserted_per_s, 20);
  // The gauge's readings taken in the step: (first, last], not the one it started from.
  EXPECT_DOUBLE_EQ(*s.connections, 5);
}

TEST(SuiteRampSaturationTest, MysqlKeysAndMariadbsRowCounter) {
  v1::RunReport report;
  AddReading(report, 0, {{"mysql/Handler_write", 0}, {"mysql/connections", 3}});
  AddReading(report, 2, {{"mysql/Handler_write", 40}, {"mysql/connections", 7}});
  const StepSaturation s = SaturationOver(report, 0, 2);
  EXPECT_DOUBLE_EQ(*s.rows_inserted_per_s, 20);
  EXPECT_DOUBLE_EQ(*s.connections, 7);
  EXPECT_FALSE(s.cpu_cores.has_value());  // the probe read no process CPU here
  EXPECT_FALSE(s.written_bytes_per_s.has_value());
}

TEST(SuiteRampSaturationTest, ADipIsNotCountedUntilTheCounterPassesItsHighestAgain) {
  v1::RunReport report;
  AddReading(report, 0, {{"process/cpu_seconds", 10}});
  AddReading(report, 1, {{"process/cpu_seconds", 8}});   // a dip, not a reset
  AddReading(report, 2, {{"process/cpu_seconds", 12}});  // +2 over the highest
  const StepSaturation s = SaturationOver(report, 0, 2);
  EXPECT_DOUBLE_EQ(*s.cpu_cores, 1);
}

TEST(SuiteRampSaturationTest, NoReadingAfterTheStartNoFigures) {
  v1::RunReport report;
  AddReading(report, 0, {{"process/cpu_seconds", 1}});
  AddReading(report, 1, {{"process/cpu_seconds", 2}});
  const StepSaturation s = SaturationOver(report, 5, 6);
  EXPECT_EQ(s.readings, 0u);
  EXPECT_FALSE(s.cpu_cores.has_value());
}

TEST(SuiteRampSaturationTest, OneReadingGivesAGaugeButNoRate) {
  v1::RunReport report;
  AddReading(report, 0, {{"process/cpu_seconds", 1}, {"postgresql/connections", 6}});
  AddReading(report, 4, {{"process/cpu_seconds", 9}, {"postgresql/connections", 8}});
  // Past the last reading: the span is the newest reading alone.
  const StepSaturation s = SaturationOver(report, 3, 10);
  EXPECT_EQ(s.readings, 1u);
  EXPECT_FALSE(s.cpu_cores.has_value());
  EXPECT_DOUBLE_EQ(*s.connections, 8);
}

}  // namespace
}  // namespace dbload
