#include "coordinator/row_check.h"

#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "coordinator/row_changes.h"

namespace dbload {

namespace {
using Counts = std::map<std::string, int64_t>;
}  // namespace

// What the counting thread shares with the run: its results, under `mu`. On the heap, so that
// the thread's `this` stays valid when the RowCheck moves.
struct RowCheck::Counting {
  std::map<std::string, std::map<std::string, int64_t>> declared;
  std::set<std::string> tables;
  RowCounter counter;
  std::function<void()> on_counted;
  std::thread thread;  // the count under way, or the last one
  bool before_started = false;
  bool after_started = false;
  mutable std::mutex mu;
  std::optional<absl::StatusOr<Counts>> before;  // guarded by mu
  std::optional<absl::StatusOr<Counts>> after;   // guarded by mu

  ~Counting() {
    if (thread.joinable()) thread.join();
  }

  void Start(std::optional<absl::StatusOr<Counts>> Counting::*result) {
    if (thread.joinable()) thread.join();  // the previous count is in: it only has to return
    thread = std::thread([this, result] {
      absl::StatusOr<Counts> counted = counter(tables);
      {
        std::lock_guard lock(mu);
        this->*result = std::move(counted);
      }
      if (on_counted) on_counted();
    });
  }
};

RowCheck::RowCheck() = default;
RowCheck::RowCheck(std::string not_checked) : not_checked_(std::move(not_checked)) {}
RowCheck::RowCheck(RowCheck&&) noexcept = default;
RowCheck& RowCheck::operator=(RowCheck&&) noexcept = default;
RowCheck::~RowCheck() = default;

RowCheck RowCheck::For(const v1::Plan& plan, const CounterFactory& make_counter,
                       std::function<void()> on_counted) {
  auto declared = DeclaredChanges(plan);
  // A prepare loads the tables: its "transactions" are parts of the load, not the scenario's.
  if (declared.empty() || plan.prepare_only()) return RowCheck();
  if (plan.warmup_ns() > 0) {
    return RowCheck("the warm-up's transactions change rows but are not in the report");
  }
  absl::StatusOr<RowCounter> counter = make_counter(plan);
  if (!counter.ok()) return RowCheck(std::string(counter.status().message()));
  if (!*counter) return RowCheck();
  RowCheck check;
  check.counting_ = std::make_unique<Counting>();
  for (const auto& [query_type, tables] : declared) {
    for (const auto& [table, rows] : tables) check.counting_->tables.insert(table);
  }
  check.counting_->declared = std::move(declared);
  check.counting_->counter = *std::move(counter);
  check.counting_->on_counted = std::move(on_counted);
  return check;
}

void RowCheck::CountBefore() {
  if (counting_ == nullptr || counting_->before_started) return;
  counting_->before_started = true;
  counting_->Start(&Counting::before);
}

bool RowCheck::BeforeIn() const {
  if (counting_ == nullptr || !counting_->before_started) return true;
  std::lock_guard lock(counting_->mu);
  return counting_->before.has_value();
}

bool RowCheck::CountAfter() {
  if (counting_ == nullptr) return true;
  {
    // Nothing to compare a count after the load with.
    std::lock_guard lock(counting_->mu);
    if (!counting_->before || !counting_->before->ok()) return true;
  }
  if (!counting_->after_started) {
    counting_->after_started = true;
    counting_->Start(&Counting::after);
  }
  std::lock_guard lock(counting_->mu);
  return counting_->after.has_value();
}

absl::Status RowCheck::FillReport(v1::RunReport& report) const {
  if (counting_ == nullptr) {
    report.set_row_changes_not_checked(not_checked_);
    return absl::OkStatus();
  }
  std::lock_guard lock(counting_->mu);
  const auto not_checked = [&report](absl::string_view why) {
    report.set_row_changes_not_checked(std::string(why));
    return absl::OkStatus();
  };
  if (!counting_->before) return not_checked("the run ended before the count before its load");
  if (!counting_->before->ok()) {
    return not_checked(
        absl::StrCat("counting before the load: ", counting_->before->status().message()));
  }
  if (!counting_->after) return not_checked("the run ended before the count after its load");
  if (!counting_->after->ok()) {
    return not_checked(
        absl::StrCat("counting after the load: ", counting_->after->status().message()));
  }
  return CheckRowChanges(counting_->declared, **counting_->before, **counting_->after, report);
}

}  // namespace dbload
