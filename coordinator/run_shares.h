#ifndef DBLOAD_COORDINATOR_RUN_SHARES_H_
#define DBLOAD_COORDINATOR_RUN_SHARES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dbload/v1/agent.pb.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// A load change for one participant of a run, as a LoadChange will carry it (its run_id left for
// the sender to set).
struct ShareChange {
  std::string participant;
  dbload::v1::LoadChange change;
};

// How a running run's split changes after its start, when agents are lost or join (plans
// without stages: their levels are split once, by the planner). It keeps what each participant
// was given: its clients now (closed loop), the highest rate it was ever given (open loop; the
// bound on what a lost agent ran unreported rests on it), and the run's spare slots not yet
// handed out, from which moved clients and joiners take their key spaces (a lost agent's own
// slots may hold rows it inserted or ids it consumed). No clock, no network, no lock: the
// coordinator calls it under its own and sends the changes it returns.
//
// The rule of the planner holds here too: the run never gets more than the plan asks. Rates
// are the plan's rate split again; clients are moved or spread, never added.
class RunShares {
 public:
  RunShares() = default;
  // After the planner's split: slots [next_spare_slot, total_slots) are spare (AgentShare).
  RunShares(uint32_t next_spare_slot, uint32_t total_slots)
      : next_spare_slot_(next_spare_slot), total_slots_(total_slots) {}

  // A participant of the first split, with its clients (closed loop) or its rate (open loop).
  void AssignClients(const std::string& participant, uint32_t clients);
  void AssignRate(const std::string& participant, double rate);

  uint32_t clients(const std::string& participant) const;
  // The highest rate the participant was given; none for closed loops.
  std::optional<double> highest_rate(const std::string& participant) const;
  uint32_t total_slots() const { return total_slots_; }
  uint32_t spare_slots_left() const { return total_slots_ - next_spare_slot_; }

  // Open loop, after a loss: `rate` split again by capacity over the participants still
  // working (capacities in the same order). One change per participant.
  std::vector<ShareChange> SplitRate(double rate, const std::vector<std::string>& participants,
                                     const std::vector<double>& capacities);

  // Closed loop, after a loss: the clients of the `lost` participants spread over the
  // `survivors`, on spare slots. Every lost participant's clients are counted once: afterwards
  // it has none (also when they could not be moved).
  struct ClientsMoved {
    uint32_t orphaned = 0;             // the lost participants' clients (0: nothing to do)
    bool moved = false;                // false with orphaned > 0: too few spare slots left
    std::vector<ShareChange> changes;  // survivors that take clients
  };
  ClientsMoved MoveClientsOf(const std::vector<std::string>& lost,
                             const std::vector<std::string>& survivors);

  // An agent that joins the running run as `participant`, beside the `survivors`. Open loop:
  // the plan's rate split again by capacity over the survivors and the joiner (`capacities`:
  // the survivors' then the joiner's), the joiner on target.pool spare slots. Closed loop: the
  // plan's clients spread over them again, the joiner first taking spare slots for its part,
  // then survivors that get more clients than they run for theirs. Nothing changes unless the
  // join is taken.
  struct Join {
    bool taken = false;
    // Not taken: the spare slots it would have needed (0: it would get no clients at all).
    uint32_t spare_needed = 0;
    dbload::v1::LoadShare load;        // the joiner's
    uint32_t first_slot = 0;           // the joiner's slots: [first_slot, first_slot + slots)
    std::vector<ShareChange> changes;  // survivors whose load changes
  };
  Join Take(const std::string& participant, const dbload::v1::Plan& plan,
            const std::vector<std::string>& survivors, const std::vector<double>& capacities);

 private:
  std::map<std::string, uint32_t> clients_;
  std::map<std::string, double> highest_rate_;
  uint32_t next_spare_slot_ = 0;
  uint32_t total_slots_ = 0;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_RUN_SHARES_H_
