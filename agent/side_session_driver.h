#ifndef DBLOAD_AGENT_SIDE_SESSION_DRIVER_H_
#define DBLOAD_AGENT_SIDE_SESSION_DRIVER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/interval_recorder.h"
#include "db/driver.h"

namespace dbload {

// The driver of the agent's side work beside the load (the scenario's sample reads, EXPLAIN):
// each session it opens tells `recorder`, when it closes, of its own work on the server
// (connections opened, statements prepared), which the database's counters include and the
// commit reconciliation counts. The sessions are `inner`'s, each call passed on; side work is
// off the timed path, so the extra call costs nothing that is measured.
class SideSessionDriver final : public db::Driver {
 public:
  // Both must outlive this and the sessions it opens.
  SideSessionDriver(db::Driver& inner, IntervalRecorder& recorder)
      : inner_(inner), recorder_(recorder) {}

  db::Dialect dialect() const override { return inner_.dialect(); }
  db::Capabilities capabilities() const override { return inner_.capabilities(); }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override;
  void ThreadStart() override { inner_.ThreadStart(); }
  void ThreadEnd() override { inner_.ThreadEnd(); }

 private:
  db::Driver& inner_;
  IntervalRecorder& recorder_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_SIDE_SESSION_DRIVER_H_
