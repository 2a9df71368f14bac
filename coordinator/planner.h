#ifndef DBLOAD_COORDINATOR_PLANNER_H_
#define DBLOAD_COORDINATOR_PLANNER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dbload/v1/plan.pb.h"

namespace dbload {

// How a plan's load is cut into agents' shares. Pure functions, no state: the coordinator calls
// them with the agents it has, and tests call them with anything.
//
// The one rule they all keep: the coordinator never assigns more than the plan asks. Integer
// splits (clients, queries) sum exactly to the plan's figure, and rate splits sum exactly to the
// plan's rate as doubles, in any order of addition.

// Splits an open-loop rate in proportion to capacity. A capacity that is not a positive finite
// number counts as 1 (AgentHello.capacity: "0 means 1"), so all-default agents share equally.
// Every share is a whole multiple of the total's ulp (so that sums are exact); the rounding, under
// one ulp per agent, goes to the last agent. Empty for no agents.
std::vector<double> SplitRate(double total, const std::vector<double>& capacities);

// Spreads closed-loop clients as evenly as integers allow: 7 over 3 is 3, 2, 2 (the first agents
// take the remainder). Calling it again after a change of clients keeps the spread even.
std::vector<uint32_t> SpreadClients(uint32_t clients, size_t agents);

// Splits a count (stop.queries) in proportion to `weights` by largest remainder, so that the parts
// sum exactly to `total` and each is within one of its exact share. Weights are the agents' rates
// or clients, so that agents reach their counts at about the same time. Weights that are not
// positive finite numbers count as 0; if none is positive the split is even.
std::vector<uint64_t> SplitQueries(uint64_t total, const std::vector<double>& weights);

// Uniform arrivals of agent i of n are shifted by i/n of a period, so that agents do not fire in
// lockstep.
std::vector<double> UniformPhases(size_t agents);

// Each agent's workers are slots [first_slot, first_slot + connections) of total_slots across the
// run: key spaces and random streams are partitioned by slot, so agents never collide.
struct SlotRange {
  uint32_t first_slot = 0;
  uint32_t count = 0;
};
struct SlotPartition {
  std::vector<SlotRange> ranges;
  uint32_t total_slots = 0;
};
SlotPartition PartitionSlots(const std::vector<uint32_t>& connections);

// One agent's part of a run, as the Assignment will carry it.
struct AgentShare {
  size_t agent = 0;  // index into the capacities given to SplitPlan
  uint32_t agent_index = 0;
  uint32_t agent_count = 0;
  double rate = 0;       // open loop
  uint32_t clients = 0;  // closed loop
  double rate_fraction = 0;  // open loop with stages: of every stage's rate
  uint64_t queries = 0;  // share of stop.queries; 0 when the plan sets none
  std::vector<uint64_t> stage_queries;  // with stages: share of each stage's queries
  uint32_t first_slot = 0;
  uint32_t total_slots = 0;
  uint32_t connections = 0;
  double phase = 0;
  // Plans without stages keep as many spare slots as the agents use, from here to total_slots:
  // when an agent is lost, the coordinator moves its clients to the survivors, and an agent
  // that joins the running run takes its share, on spare slots (the lost agent's own slots may
  // still hold what it did). 0: no spare slots.
  uint32_t spare_first_slot = 0;
};

// The whole split of a validated plan over agents of the given capacities. Agents that would get
// no work are left out (fewer clients or queries than agents): an agent with a zero query share
// would read it as "no count limit", and one with no clients would only idle. The result is in
// agent order, at least one share when there is at least one agent.
//
// Plans with stages: agent_index/agent_count place each agent in the spread of every client
// level, rate_fraction splits every rate, and an agent that would never run a client is left out.
//
// Connections: a closed-loop agent opens one per client. An open-loop agent opens the plan's
// target.pool (as the agent's run executor does), so the database sees pool × agents connections.
std::vector<AgentShare> SplitPlan(const dbload::v1::Plan& plan,
                                  const std::vector<double>& capacities);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_PLANNER_H_
