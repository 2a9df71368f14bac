#ifndef DBLOAD_COORDINATOR_RUN_AGGREGATOR_H_
#define DBLOAD_COORDINATOR_RUN_AGGREGATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "interval/interval_snapshot.h"
#include "report/report.h"
#include "dbload/v1/agent.pb.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// What the coordinator knows of one agent's part of a run, from its reports so far.
struct AgentProgress {
  uint64_t query_budget = 0;   // its share of stop.queries; 0: none
  uint64_t budget_used = 0;    // completed in the measured part
  // Plans with stages: its share of each stage's queries (0: none) and what it completed there.
  std::vector<uint64_t> stage_budgets;
  std::vector<uint64_t> stage_used;
  uint64_t last_sequence = 0;  // of the last accepted report
  uint64_t executed = 0;       // measured part only, like the report's totals
  uint64_t errors = 0;
  uint64_t warmup_executed = 0;
  uint64_t warmup_errors = 0;
  // Of executed and warmup_executed, those the workload ended with ROLLBACK by design (TPC-C's
  // 1 % of New-Orders): completed, but no commit at the database.
  uint64_t rolled_back = 0;
  uint64_t duplicates = 0;  // repeated reports, ignored
  double elapsed_s = 0;     // of its latest report
  double cpu_seconds = 0;   // over all its reports
  bool final = false;
  // From its final report.
  double measured_s = 0;
  uint64_t not_started = 0;
  std::string end_reason;
  dbload::v1::EndReasonKind end_reason_kind = dbload::v1::END_REASON_UNSPECIFIED;
  std::string fatal_error;
  // Measured response times over all query types: the per-agent percentiles of the report.
  Histogram response_time;
  // What of it is in closed intervals (the report so far counts only those): measured executed
  // and errors, and the elapsed time of its latest report in one.
  uint64_t closed_executed = 0;
  uint64_t closed_errors = 0;
  double closed_elapsed_s = 0;
  // For the bound on what a lost agent ran after its last report: open loop, the arrivals its
  // reports say it wanted (target rate × interval, warm-up included); its in-flight
  // transactions and clients by its latest report; the most connections it reported.
  double wanted_arrivals = 0;
  uint32_t in_flight = 0;
  uint32_t clients = 0;
  uint32_t max_connections = 0;
  // Its sessions' own work over all its reports: connections opened, reconnects included, and
  // statements prepared (0 from an older agent, which does not say).
  uint64_t connections_opened = 0;
  uint64_t statements_prepared = 0;
};

// Merges one run's AgentReports, from any agent in any order, into the run's report, exactly:
// every sample of every accepted report lands in exactly one interval and, if measured, in the
// totals, and nothing is counted twice.
//
// Intervals follow the coordinator's tick, not the agents' (they start at slightly different
// moments): CloseInterval() turns everything received since the previous call into the next
// interval of the time series (RunController calls it once every working agent has a report
// pending, or its wait is over). With stages, reports are grouped by the stage they name too (an
// agent cuts its intervals at stage boundaries), so a stage's totals hold exactly its samples.
//
// Warm-up rule: a sample is warm-up when all its reports are. Reports are grouped by their
// warm-up flag, so the one tick in which agents cross the end of their warm-up yields two samples
// with the same elapsed time, a warm-up one and a measured one. That keeps the totals equal to
// the sum of the agents' measured parts (a stop.queries run completes exactly its count there),
// which a single mixed sample could not.
//
// Memory stays flat with run length: RunReportBuilder keeps merged histograms and one small
// IntervalSample per interval; here there is one pending snapshot per warm-up flag and a few
// counters per agent.
//
// Not thread-safe: the owner serialises calls.
class RunAggregator {
 public:
  struct AgentSpec {
    std::string name;
    uint64_t query_budget = 0;  // share of stop.queries; 0: no count limit
    std::vector<uint64_t> stage_budgets;  // with stages: share of each stage's queries
    uint32_t cores = 0;  // of the agent's machine, for its CPU as a fraction (0: unknown)
  };

  RunAggregator(std::string run_id, const dbload::v1::Plan& plan,
                std::vector<std::string> query_types, const std::vector<AgentSpec>& agents);

  // An agent that joins the running run (in place of a lost one). No-op for a known name.
  void AddAgent(const AgentSpec& spec);

  // Accepts one report from `agent`. A repeated sequence number is ignored (OK, counted); a
  // report for another run, from an agent not in the run, after the agent's final report, with a
  // gap in its sequence, that does not decode against the scenario (unknown query type,
  // malformed histogram) or that takes the agent past its query budget is refused with an error
  // and changes nothing.
  absl::Status AddReport(const std::string& agent, const dbload::v1::AgentReport& report);

  // One closed sample together with the exact merged counts it was computed from, for those
  // that need more than the sample's summary (the metrics exporter). The references are valid
  // only during the observer's call: the snapshot's buffers are reused for the next interval.
  struct ClosedInterval {
    const dbload::v1::IntervalSample& sample;
    const IntervalSnapshot& merged;
    double length_s;  // the length the sample's achieved rate is computed over
  };
  using IntervalObserver = std::function<void(const ClosedInterval&)>;

  // Closes the interval ending `elapsed_s` after the run's start: zero, one or two samples (see
  // the warm-up rule). Nothing received since the previous close yields none. `observer`, when
  // set, sees each sample with its merged counts before they are cleared (no second decode).
  //
  // A sample's achieved rate is the sum of each agent's executed / its own interval_s in the
  // sample, not executed / the coordinator's tick: reports arrive with jitter, and one landing
  // just after a tick would otherwise make one sample's rate double and the next one's vanish.
  // Reports without an interval_s fall back to the time since the previous close.
  std::vector<dbload::v1::IntervalSample> CloseInterval(double elapsed_s,
                                                       const IntervalObserver& observer = nullptr);

  // True when every agent of the run has sent its final report.
  bool AllFinal() const;

  // Whether a report of `agent` waits for the next CloseInterval.
  bool HasPendingReport(const std::string& agent) const;

  // The report so far: totals of the closed intervals, and the measured time of the furthest
  // agent in them (reports received since the last CloseInterval count in neither, so that the
  // rate is that of the intervals whose counts are shown).
  dbload::v1::RunReport ReportSoFar(const std::string& end_reason,
                                    const std::string& started_at) const;

  // Closes the last interval and builds the report. measured_s is the longest of the agents'
  // (from their final reports; an agent lost before its final counts with its last elapsed time
  // less the warm-up), not_started their sum; `end_reason` is the coordinator's.
  dbload::v1::RunReport Finish(double elapsed_s, const std::string& end_reason,
                               const std::string& started_at,
                               const IntervalObserver& observer = nullptr);

  // Knee-search stages: what each step got so far (measured reports tagged with the step).
  struct KneeTally {
    std::map<std::string, std::pair<uint64_t, double>> agents;  // executed, seconds
    uint64_t executed = 0;
    uint64_t errors = 0;
    Histogram response;
  };
  // Null until a report of that step arrived. `stage` and `step` are 1-based.
  const KneeTally* knee_tally(uint32_t stage, uint32_t step) const;

  const std::string& run_id() const { return run_id_; }
  const std::map<std::string, AgentProgress>& agents() const { return agents_; }
  uint64_t duplicate_reports() const { return duplicates_; }
  uint64_t executed() const;  // measured, over all agents

 private:
  // `closed_only`: of the closed intervals only (the report so far).
  double MeasuredSeconds(bool closed_only) const;
  void AddAgentSummaries(dbload::v1::RunReport& report, bool closed_only) const;
  // The first plan of each (stage, query type), from whichever agent sent it; a plan naming no
  // stage of the plan is dropped (plans inform, they never refuse a report).
  void KeepPlan(const dbload::v1::CapturedPlan& captured);
  void AddPlans(dbload::v1::RunReport& report) const;
  uint64_t NotStarted() const;

  std::string run_id_;
  int query_type_count_;
  double target_rate_;
  double warmup_s_;
  // The longest any agent spent reading its scenario's samples before the load (agents read
  // them at the same time, before the run's clock starts).
  double setup_s_ = 0;
  RunReportBuilder builder_;
  std::map<std::string, AgentProgress> agents_;
  std::map<std::string, uint32_t> agent_cores_;
  // Received since the previous CloseInterval, by warm-up flag and stage.
  struct Pending {
    IntervalSnapshot snapshot;
    bool any = false;
    // Per agent: executed and the length of the agent's own intervals, for the rate.
    std::map<std::string, std::pair<uint64_t, double>> agent_time;
    std::map<std::string, double> agent_cpu_seconds;
    // Plans with stages, per agent: its target rate and clients in its latest report.
    std::map<std::string, std::pair<double, uint32_t>> agent_target;
    // Per agent: measured executed and errors, and its latest report's elapsed time.
    struct AgentPart {
      uint64_t executed = 0;
      uint64_t errors = 0;
      double elapsed_s = 0;
    };
    std::map<std::string, AgentPart> agent_parts;
    // When the agents' intervals ended, by their own clocks (the latest of them): the sample's
    // time. The coordinator's tick comes up to a second after the agents' seconds end, so
    // stamping with it would shift the whole time series by that much.
    double agents_elapsed_s = 0;
  };
  struct PendingKey {
    bool measured;  // warm-up first
    uint32_t stage;
    auto operator<=>(const PendingKey&) const = default;
  };
  dbload::v1::IntervalSample ClosePending(Pending& pending, PendingKey key, double elapsed_s,
                                          double tick_s, const IntervalObserver& observer);
  std::vector<double> StageSeconds() const;

  bool staged_;
  uint32_t plan_clients_;
  int stage_count_;
  std::map<PendingKey, Pending> pending_;
  std::map<std::pair<uint32_t, uint32_t>, KneeTally> knee_tallies_;
  // Plans with stages: per agent, the measured seconds it spent in each stage.
  std::map<std::string, std::vector<double>> agent_stage_seconds_;
  double last_close_s_ = 0;
  uint64_t duplicates_ = 0;
  // EXPLAIN plans by stage (0: a plan without stages), in the order they came.
  std::map<uint32_t, std::vector<dbload::v1::QueryPlan>> plans_;
  std::vector<dbload::v1::QueryPlan> plans_after_load_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_RUN_AGGREGATOR_H_
