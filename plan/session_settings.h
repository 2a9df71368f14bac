#ifndef DBLOAD_PLAN_SESSION_SETTINGS_H_
#define DBLOAD_PLAN_SESSION_SETTINGS_H_

#include "dbload/v1/plan.pb.h"

namespace dbload {

// The target every connection of the plan's run opens: the plan's target with the run's
// scenario's session settings folded in (workload Scenario.isolation and .session). The target's
// isolation wins over the scenario's; its session statements run after the scenario's, in the
// dialect of target.driver. So that a run's connections start the same on every agent, and the
// report's plan shows what they started with.
dbload::v1::Target TargetForRun(const dbload::v1::Plan& plan);

}  // namespace dbload

#endif  // DBLOAD_PLAN_SESSION_SETTINGS_H_
