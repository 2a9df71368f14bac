#ifndef DBLOAD_AGENT_ASSIGNMENT_RUNNER_H_
#define DBLOAD_AGENT_ASSIGNMENT_RUNNER_H_

#include <atomic>
#include <functional>
#include <string>

#include "agent/active_run.h"
#include "base/clock.h"
#include "dbload/v1/agent.pb.h"

namespace dbload {

// Runs a prepared assignment on the run's own thread: ExecuteRun (or a prepare run's loading),
// one AgentReport per interval to the connection the assignment came from, then the final
// report, which marks the run finished.
class AssignmentRunner {
 public:
  // `shutdown` (the link's) ends a run as "interrupted"; `event` gets one line per run start and
  // end. Both outlive the runner.
  AssignmentRunner(Clock& clock, const std::atomic<bool>& shutdown,
                   std::function<void(const std::string&)> event);

  // The run's own thread: ExecuteRun, one report per interval, then the final report.
  void Run(ActiveRun& run);

 private:
  // A prepare run: this agent's parts of every table (its slots), on one connection each.
  void LoadParts(ActiveRun& run, dbload::v1::AgentReport& final_report);
  void Event(const std::string& line) { event_(line); }

  Clock& clock_;
  const std::atomic<bool>& shutdown_;
  std::function<void(const std::string&)> event_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_ASSIGNMENT_RUNNER_H_
