#include "agent/load_change.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "plan/plan_validation.h"

namespace dbload {

void ApplyLoadChange(const v1::LoadChange& change, ActiveRun& run,
                     const std::function<void(const std::string&)>& event) {
  if (run.plan.stages_size() > 0) {
    // Stages set the load; the coordinator only steers knee searches.
    if (change.knee_done()) {
      run.control.EndKnee();
      event(absl::StrCat("run ", change.run_id(), ": knee search done"));
    } else if (change.knee_step() > 0 && std::isfinite(change.knee_level()) &&
               change.knee_level() >= 0 &&
               change.knee_level() <=
                   (run.plan.load().has_open() ? kMaxOpenRate : kMaxClosedClients)) {
      run.control.SetKneeStep(change.knee_step(), change.knee_level());
      event(absl::StrCat("run ", change.run_id(), ": knee step ", change.knee_step(), " at ",
                         change.knee_level()));
    } else {
      event(absl::StrCat("ignoring a load change for run ", change.run_id(),
                         ": its stages set the load"));
    }
    return;
  }
  const bool open = run.plan.load().has_open();
  switch (change.load().kind_case()) {
    case v1::LoadShare::kRate: {
      const double rate = change.load().rate();
      if (open && run.share.rate == 0.0) {
        // A zero share opened no sessions and has no pacer: the change could not take effect.
        event(absl::StrCat("ignoring a load change for run ", change.run_id(),
                           ": it started with rate 0, so it has no sessions to raise"));
        return;
      }
      if (!open || !std::isfinite(rate) || rate < 0 || rate > kMaxOpenRate) {
        event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": rate ", rate,
                           open ? " out of range" : " for a closed-loop run"));
        return;
      }
      run.control.SetRate(rate);
      event(absl::StrCat("run ", change.run_id(), ": rate ", rate, "/s"));
      return;
    }
    case v1::LoadShare::kClients: {
      const uint32_t clients = change.load().clients();
      if (open || clients > kMaxClosedClients) {
        event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": ", clients,
                           open ? " clients for an open-loop run" : " clients out of range"));
        return;
      }
      // Added clients need slots of their own: from the run's spares, never inside another
      // agent's range (the coordinator hands out each spare once) or beyond the run's slots.
      const uint64_t first = change.extra_first_slot();
      const uint64_t count = change.extra_slot_count();
      if (count > 0 && (first < run.own_slots_end || first + count > run.share.total_slots)) {
        event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": slots ", first,
                           " + ", count, " outside the run's spare slots (", run.own_slots_end,
                           " to ", run.share.total_slots, ")"));
        return;
      }
      if (clients > run.slot_capacity + count) {
        event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": ", clients,
                           " clients, but slots for ", run.slot_capacity + count));
        return;
      }
      if (count > 0) {
        run.control.AddSlots(static_cast<uint32_t>(first), static_cast<uint32_t>(count));
        run.slot_capacity += static_cast<uint32_t>(count);
      }
      run.control.SetClients(clients);
      event(absl::StrCat(
          "run ", change.run_id(), ": ", clients, " clients",
          count > 0 ? absl::StrCat(" (slots ", first, " to ", first + count - 1, " added)") : ""));
      return;
    }
    case v1::LoadShare::KIND_NOT_SET:
      event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": no load given"));
      return;
  }
}

}  // namespace dbload
