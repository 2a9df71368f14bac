#ifndef DBLOAD_AGENT_RUN_PREPARATION_H_
#define DBLOAD_AGENT_RUN_PREPARATION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/active_run.h"
#include "agent/agent_link.h"
#include "base/clock.h"
#include "dbload/v1/agent.pb.h"

namespace dbload {

// Turns an assignment into a run ready to start, or says why it cannot run: the plan is
// validated, the share checked against it (never more than the plan asks, whatever the
// coordinator computed), the workers against the agent's resources, the target against
// --allow-target, and the driver made. Nothing connects to the database here.
class RunPreparer {
 public:
  // `options` (with its resolver set) and `driver_factory` outlive the preparer.
  RunPreparer(const AgentLinkOptions& options, const DriverFactory& driver_factory, Clock& clock);

  // Everything that can be wrong with an assignment is found here, before any load starts.
  // `target_refused`: the error is the --allow-target refusal.
  absl::StatusOr<std::unique_ptr<ActiveRun>> PrepareRun(const dbload::v1::Assignment& assignment,
                                                        bool& target_refused) const;

 private:
  AgentResources Resources() const;

  const AgentLinkOptions& options_;
  const DriverFactory& driver_factory_;
  Clock& clock_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_RUN_PREPARATION_H_
