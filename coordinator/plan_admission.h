#ifndef DBLOAD_COORDINATOR_PLAN_ADMISSION_H_
#define DBLOAD_COORDINATOR_PLAN_ADMISSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/planner.h"
#include "dbload/v1/agent.pb.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// The most a plan asks for at any moment, as the field that says it.
struct PlanPeak {
  double value = 0;
  std::string field;  // "load.open.rate", "stages.2.knee.max" …; empty when the plan asks none
};

// The plan's peak rate (`rate`: open loop) or peak number of clients (closed loop), over all
// its stages and knee steps; 0 for the other kind of load.
PlanPeak PeakOf(const dbload::v1::Plan& plan, bool rate);

// Whether a plan is within a coordinator's limits (--max-rate, --max-clients; 0: none): an error
// naming `source`, the field and the limit otherwise.
absl::Status WithinCoordinatorLimits(const dbload::v1::Plan& plan, const std::string& source,
                                     double max_rate, uint32_t max_clients);

// Whether the agents a plan was split over can take their shares, before any of them hears of
// the run: the room each said it has (one thread and one connection per worker; the agent checks
// again when assigned) and the targets its --allow-target admits (from its hello: an agent that
// sent no list, and a host name only the agent can resolve, are left to the agent's own check;
// every refusing agent is named with its reason). `hellos` and `names` are indexed by
// AgentShare::agent. Returns the run's connections to the target over all agents, EXPLAIN's
// included; or FAILED_PRECONDITION with the answer to the submitter (without the plan's source:
// the CLI puts it in front), and `refusal_log` set to what the coordinator logs.
absl::StatusOr<uint64_t> AdmitShares(const dbload::v1::Plan& plan,
                                     const std::vector<AgentShare>& shares,
                                     const std::vector<const dbload::v1::AgentHello*>& hellos,
                                     const std::vector<std::string>& names,
                                     std::string& refusal_log);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_PLAN_ADMISSION_H_
