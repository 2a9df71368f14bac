#ifndef DBLOAD_REPORT_REPORT_H_
#define DBLOAD_REPORT_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/histogram.h"
#include "base/percentile_interval.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"
#include "interval/interval_snapshot.h"

namespace dbload {

inline constexpr uint32_t kReportFormatVersion = 1;

// Milliseconds as every report prints them: 4 decimals below 1 ms, 3 below 100 ms, then 1.
std::string FormatMs(double ms);

// The percentiles every LatencySummary publishes (p50_ms … p9999_ms), in their field order.
inline const std::vector<double> kPublishedPercentiles = {50, 75, 90, 95, 99, 99.9, 99.99};

// Every summary statistic of one histogram, in milliseconds, with what each percentile rests on.
dbload::v1::LatencySummary Summarize(const Histogram& histogram);

// What `percentile` (50, 99.9, …) of the summary rests on; nullptr in reports written before
// dbload recorded it.
const dbload::v1::PercentileBasis* BasisOf(const dbload::v1::LatencySummary& summary,
                                           double percentile);
// The percentile rests on fewer than kFewSamplesBeyond samples beyond it (false when unknown).
bool RestsOnFewSamples(const dbload::v1::LatencySummary& summary, double percentile);
// FormatMs of a percentile's value, with "*" when it rests on too few samples: the mark every
// table of the reports uses, explained beside the table.
std::string FormatPercentileMs(const dbload::v1::LatencySummary& summary, double percentile,
                               double value_ms);
// A percentile's 95 % confidence interval in ms, "[0.512, 0.530]", or "[32.1, >39.6]" when the
// samples give no upper bound (the maximum recorded is then only a floor of it).
std::string FormatInterval(const dbload::v1::PercentileBasis& basis);
// What the "*" of FormatPercentileMs means, for a note under a table.
inline constexpr char kFewSamplesNote[] =
    "* rests on fewer than 10 samples beyond it: an indication, not a measurement";

// "20000 (20.0 per transaction, 4000.0/s)": a scope's statements (sysbench's queries), per
// transaction that ended however it ended, since failed and ignored ones sent statements too,
// and per second of `seconds` (0: no rate). Empty when none were counted: a report from before
// dbload counted them, whose zero would be no measurement.
std::string DescribeStatements(uint64_t statements, uint64_t executed, uint64_t errors,
                               uint64_t ignored, double seconds);
// What a query type's retry policy did: "deadlock 12, serialization 3; committed after 2 tries
// 10, after 3 tries 1; failed after retrying 1". Empty when it never retried.
std::string DescribeRetries(const dbload::v1::QueryTypeReport& query_type);
// A query type's executed count, with the rolled back by the workload among them: "4321" or
// "4321 (43 rolled back by the workload)".
std::string DescribeExecuted(const dbload::v1::QueryTypeReport& query_type);
// For a run of workload tpcc's standard mix: the New-Orders completed per minute of the
// measured part, those rolled back by design included (TPC-C's tpmC, without keying or think
// times). nullopt for any other workload or scenario, or a run that measured nothing.
std::optional<double> TpmC(const dbload::v1::RunReport& report);
// For a run of workload tpcc, TPC-C's own figures: "tpmC 25,310 (…); mix new_order 45.0 %, …".
// Empty for any other workload.
std::string DescribeTpcc(const dbload::v1::RunReport& report);
// Where the load went and how: "postgresql 127.0.0.1:5432/bench, a connection per transaction,
// on event loops".
std::string DescribeTarget(const dbload::v1::Target& target);
// The database's commit count against the report's (PostgreSQL): "the database counted 4023
// (postgresql/xact_commit), the report 3996 + 27 of the connections' own (…); difference
// +0: matches". For a report whose commit_reconciliation is available.
std::string DescribeCommits(const dbload::v1::RunReport& report);
// What every connection of the run started with: "isolation serializable; SET lock_timeout =
// '2s'". Empty when nothing was set (the server's defaults).
std::string ConnectionSetup(const dbload::v1::RunManifest& manifest);
// Statements per second for a table cell ("51297"), "-" when none were counted.
std::string StatementsPerSecondCell(uint64_t statements, double seconds);

// Human units: the one formatter family of the suite report (and of any report that wants
// them). Three significant figures, never exponent form (no "6.679e-06" in a table).
// A latency or duration in ms: "850 µs", "12.3 ms", "1.25 s"; below 1 µs in ns ("6.68 ns").
std::string FormatLatency(double ms);
// Bytes in powers of 1000: "512 B", "8.19 kB", "12.3 MB", "1.25 GB"; fractions of a byte as
// FormatCount ("0.5 B").
std::string FormatBytes(double bytes);
// A count or rate: rounded to a whole number with thousands separators from 1,000 ("12,345"),
// three significant figures below ("123", "12.3", "1.5", "0.0006"); 0 as "0".
std::string FormatCount(double value);
// FormatCount and "/s": "1,234/s".
std::string FormatPerSecond(double per_second);
// A span in seconds as a plan states it: "45 s", "10 min", "1 h 30 min", "2.5 s"; below a
// second in ms or µs without trailing zeros ("50 ms", "2.5 ms").
std::string FormatSpan(double seconds);

// A probe counter over fewer readings than this is an indication, not a measurement: the probe
// reads about once a second, and a busy server can delay its readings (SaturationDelta.readings).
inline constexpr uint32_t kMinProbeReadings = 5;
// Known (readings > 0) and fewer than kMinProbeReadings.
inline bool FewProbeReadings(const dbload::v1::SaturationDelta& delta) {
  return delta.readings() > 0 && delta.readings() < kMinProbeReadings;
}
// The mark of such a figure, and what it means, for a note under a table.
inline constexpr char kFewReadingsMark[] = "†";
inline constexpr char kFewReadingsNote[] =
    "† rests on fewer than 5 probe readings: an indication, not a measurement";

// Collects a run's intervals and turns them into its report. Totals and percentiles come from
// the merged histograms of the measured intervals, never from per-interval figures.
class RunReportBuilder {
 public:
  RunReportBuilder(const dbload::v1::Plan& plan, std::vector<std::string> query_types);

  // What an interval was: where it ends, its length, and for plans with stages which stage
  // (1-based) it belongs to and the clients then running.
  struct IntervalInfo {
    double elapsed_s = 0;
    double length_s = 0;
    double target_rate = 0;
    bool warmup = false;
    uint32_t stage = 0;
    uint32_t clients = 0;
    double max_agent_cpu = 0;  // the busiest agent's CPU, as a fraction of its cores
  };
  // Warm-up intervals appear in the time series but not in the totals.
  dbload::v1::IntervalSample AddInterval(const IntervalInfo& info,
                                         const IntervalSnapshot& snapshot);
  // `measured_s`: from the end of the warm-up to the end of the run. `stage_seconds[i]`: how
  // long stage i+1 lasted (plans with stages; a stage never reached has 0).
  dbload::v1::RunReport Finish(double measured_s, double outside_queries_s, uint64_t not_started,
                               std::string end_reason, std::string started_at,
                               const std::vector<double>& stage_seconds = {}) const;

 private:
  dbload::v1::Plan plan_;
  std::vector<std::string> query_types_;
  IntervalSnapshot measured_;
  std::vector<uint64_t> warmup_executed_;  // per query type: committed during the warm-up
  // Per stage, merged like measured_: one dense histogram pair per query type and stage, so
  // plans with many stages and query types cost memory (about 0.5 MiB per pair).
  std::vector<IntervalSnapshot> stage_measured_;
  std::vector<uint32_t> stage_max_clients_;
  std::vector<dbload::v1::IntervalSample> samples_;
};

// The report as the published comparisons print it (Total test duration, Queries duration,
// Executed queries, Wanted/Actual rate, Min/Max/Mean, percentiles in ms).
// "dispatch lag p99 0.21 ms = 3% of response p99 7.02 ms (the generator's own share of it)":
// how much of the published p99 the agent's own lateness can be, in every renderer's words.
// Empty when there is no response p99.
std::string DispatchLagShareSentence(const dbload::v1::RunReport& report);

std::string RenderReportText(const dbload::v1::RunReport& report);
// One line of progress: elapsed, target and achieved rate, p50, p99, errors, schedule lag. The p99
// carries "*" when the interval had under 1,000 samples (fewer than 10 beyond its p99).
std::string RenderIntervalLine(const dbload::v1::IntervalSample& sample);
// Versioned JSON (proto field names).
std::string RenderReportJson(const dbload::v1::RunReport& report);
absl::StatusOr<dbload::v1::RunReport> ParseReportJson(const std::string& json);

// Writes the report's JSON next to `path`, flushes it to disk and renames it into place, so that
// a reader (or a restarted coordinator) never sees half a report.
absl::Status SaveReportJson(const std::string& path, const dbload::v1::RunReport& report);
// The same for any content: PATH.tmp, written, flushed, renamed to PATH (mode 0644).
absl::Status WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace dbload

#endif  // DBLOAD_REPORT_REPORT_H_
