#ifndef DBLOAD_AGENT_LOAD_CHANGE_H_
#define DBLOAD_AGENT_LOAD_CHANGE_H_

#include <functional>
#include <string>

#include "agent/active_run.h"
#include "dbload/v1/agent.pb.h"

namespace dbload {

// Applies the coordinator's LoadChange to the run it names (the caller has checked that this
// agent is running it) through the run's control: a rate or a client count within the plan's
// limits and the run's slots, or, for a plan with stages, a knee-search step. A change that
// could not take effect is ignored. `event` is told what was done or why it was ignored.
void ApplyLoadChange(const dbload::v1::LoadChange& change, ActiveRun& run,
                     const std::function<void(const std::string&)>& event);

}  // namespace dbload

#endif  // DBLOAD_AGENT_LOAD_CHANGE_H_
