#ifndef DBLOAD_COORDINATOR_ROW_CHECK_H_
#define DBLOAD_COORDINATOR_ROW_CHECK_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/row_changes.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// One run's check of the rows its write scenario changed (row_changes.h), counted by the
// coordinator once for the whole run, whatever its number of agents: before the assignments go
// out, and after the last final report. COUNT(*) of a large table can take minutes, so each
// count runs on a thread of this check's own, never under the coordinator's lock: the run holds
// its assignments until the count before is in (BeforeIn) and its end until the count after is
// (CountAfter). A count that fails does not fail the run: its report says why the rows were not
// checked (RunReport.row_changes_not_checked), as it says why the probe was off.
//
// Not thread-safe, like the RunController that owns it: only the counting thread's results
// cross threads, under a lock of their own.
class RowCheck {
 public:
  // Makes the counter for a plan's target, or says why there can be none (the coordinator's
  // --allow-target, the password); an empty counter: the target has no rows (noop).
  using CounterFactory = std::function<absl::StatusOr<RowCounter>(const dbload::v1::Plan&)>;
  // Makes the reader of the workload's invariants (row_changes.h), or says why there can be none.
  using ReaderFactory = std::function<absl::StatusOr<ValueReader>(const dbload::v1::Plan&)>;

  RowCheck();  // nothing to check
  // The check `plan` asks for: none when its scenario declares no changes, it is a prepare or
  // its target has no rows; not checked, and why, without a counter. A warm-up's transactions
  // count too (QueryTypeReport.warmup_executed): the count before precedes them. The workload's
  // invariants are read at the same times (with `make_reader`; none without). `on_counted` is
  // called on the counting thread after each count (it must not wait for the coordinator's lock).
  static RowCheck For(const dbload::v1::Plan& plan, const CounterFactory& make_counter,
                      std::function<void()> on_counted, const ReaderFactory& make_reader = {});
  RowCheck(RowCheck&&) noexcept;
  RowCheck& operator=(RowCheck&&) noexcept;
  ~RowCheck();  // waits for a count under way

  // Whether there are tables to count.
  bool active() const { return counting_ != nullptr; }
  // Starts the count before the load (once).
  void CountBefore();
  // Whether the count before the load is in (or failed, or there is none): the assignments may
  // go out.
  bool BeforeIn() const;
  // Starts the count after the load (once; only after a count before it that succeeded) and
  // says whether it is in: the run may end.
  bool CountAfter();

  // For a run that ended as planned: the row changes and the invariants and their verdicts, or
  // why they were not checked. OK, or RowChangesDisagreement's DataLoss, or
  // InvariantViolations' FailedPrecondition (for the log: the report says it too).
  absl::Status FillReport(dbload::v1::RunReport& report) const;

 private:
  struct Counting;
  explicit RowCheck(std::string not_checked);

  std::unique_ptr<Counting> counting_;  // null: nothing to count or read
  std::string not_checked_;             // why the rows are not, when there were some to check
  std::string invariants_not_checked_;  // why the invariants are not, when there are some
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_ROW_CHECK_H_
