#ifndef DBLOAD_COORDINATOR_LOSS_BOUND_H_
#define DBLOAD_COORDINATOR_LOSS_BOUND_H_

#include <cstdint>
#include <string>

#include "dbload/v1/report.pb.h"

namespace dbload {

// What the coordinator knows of an agent it lost before its final report, on the run's clock.
struct LostAgentFacts {
  std::string name;
  std::string why;
  double last_report_s = 0;  // the agent's elapsed time at its last accepted report (0: none)
  double lost_s = 0;         // when the coordinator declared it lost
  double dead_man_s = 0;     // the dead-man timeout it was given
  bool open_loop = true;
  bool poisson = false;
  // Open loop: the highest rate it was given; the arrivals its reports wanted so far and the
  // transactions they completed (warm-up included); in flight at its last report.
  double rate = 0;
  double wanted_arrivals = 0;
  uint64_t completed = 0;
  uint32_t in_flight = 0;
  // Closed loop: its clients, and the best per-client rate of any interval of the run (0: none
  // measured).
  uint32_t clients = 0;
  double per_client_rate = 0;
};

// How long after its last report a lost agent may still have run besides lost_s: an agent
// looks at its dead-man timer every 50 ms, and the workers finish the transaction they are in.
inline constexpr double kDeadManSlackS = 0.1;

// The most transactions a lost agent may have completed that no report of it counts:
//  - open loop: what was due and not completed at its last report (arrivals wanted − completed,
//    at least its in-flight ones), plus its rate × the time until it stopped; Poisson arrivals
//    add 4 standard deviations of their count (sqrt of the mean) and one;
//  - closed loop: each client's transaction in flight, plus clients × the best per-client rate
//    measured × that time; unknown when no interval measured a per-client rate.
// "Until it stopped" is lost_s (unreported_if_stopped: it stopped when it was lost, as a
// killed agent does) or lost_s + its dead-man timeout (unreported_max: it kept running, cut
// off, until its dead-man timer stopped it).
dbload::v1::LostAgent BoundLostAgent(const LostAgentFacts& facts);

// The best transactions per second per client in any interval of `report` (closed loop).
double BestPerClientRate(const dbload::v1::RunReport& report);

// PostgreSQL's xact_commit of the target database, from the probe's first reading (before the
// load) to its last (after it), against the report: `report_commits` the transactions the
// agents reported (warm-up included), `set_up` those of their connections' own set-up.
// `first_before_load`: the probe's first reading was taken before any agent was assigned its
// share; `load_end_s`: when the last agent finished, on the run's clock (the last reading must be
// after it). Fills report.commit_reconciliation from report.probe_samples and lost_agents.
struct ConnectionSetUp {
  int64_t connections_opened = 0;   // by the agents' sessions, reconnects included
  int64_t statements_prepared = 0;  // on the server by those sessions, again after reconnects
};
void ReconcileCommits(int64_t report_commits, ConnectionSetUp set_up, bool first_before_load,
                      double load_end_s, dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_LOSS_BOUND_H_
