#include "coordinator/row_check.h"

#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/background_thread.h"
#include "base/thread_name.h"
#include "coordinator/row_changes.h"

namespace dbload {

namespace {
using Counts = std::map<std::string, int64_t>;
}  // namespace

// What the counting thread shares with the run: its results, under `mu`. On the heap, so that
// the thread's `this` stays valid when the RowCheck moves.
struct RowCheck::Counting {
  // What one reading took: the tables' rows (none asked: empty) and the invariants' values.
  struct Reading {
    absl::StatusOr<Counts> counts;
    absl::StatusOr<std::vector<std::string>> values;
  };
  std::map<std::string, std::map<std::string, int64_t>> declared;
  std::set<std::string> tables;  // empty: the rows are not checked
  RowCounter counter;
  std::vector<v1::InvariantResult> invariants;  // empty: none to read
  ValueReader reader;
  std::function<void()> on_counted;
  std::thread thread;  // the count under way, or the last one
  bool before_started = false;
  bool after_started = false;
  mutable std::mutex mu;
  std::optional<Reading> before;  // guarded by mu
  std::optional<Reading> after;   // guarded by mu

  ~Counting() {
    if (thread.joinable()) thread.join();
  }

  void Start(std::optional<Reading> Counting::*result) {
    if (thread.joinable()) thread.join();  // the previous count is in: it only has to return
    thread = std::thread([this, result] {
      NameThisThread("dbload-rowcheck");
      MakeThisThreadBackground();
      Reading reading{Counts(), std::vector<std::string>()};
      if (!tables.empty()) reading.counts = counter(tables);
      if (!invariants.empty()) {
        std::vector<std::string> queries;
        for (const v1::InvariantResult& invariant : invariants) queries.push_back(invariant.sql());
        reading.values = reader(queries);
      }
      {
        std::lock_guard lock(mu);
        this->*result = std::move(reading);
      }
      if (on_counted) on_counted();
    });
  }
  // Whether a reading gave anything that one after the load can be compared with: the rows'
  // counts or the invariants' values. One that failed must not cost the other its check.
  bool Comparable(const std::optional<Reading>& reading) const {
    return reading && ((!tables.empty() && reading->counts.ok()) ||
                       (!invariants.empty() && reading->values.ok()));
  }
};

RowCheck::RowCheck() = default;
RowCheck::RowCheck(std::string not_checked) : not_checked_(std::move(not_checked)) {}
RowCheck::RowCheck(RowCheck&&) noexcept = default;
RowCheck& RowCheck::operator=(RowCheck&&) noexcept = default;
RowCheck::~RowCheck() = default;

RowCheck RowCheck::For(const v1::Plan& plan, const CounterFactory& make_counter,
                       std::function<void()> on_counted, const ReaderFactory& make_reader) {
  // A prepare loads the tables: its "transactions" are parts of the load, not the scenario's.
  if (plan.prepare_only()) return RowCheck();
  auto declared = DeclaredChanges(plan);
  RowCheck check;
  auto counting = std::make_unique<Counting>();
  if (!declared.empty()) {
    absl::StatusOr<RowCounter> counter = make_counter(plan);
    if (!counter.ok()) {
      check.not_checked_ = std::string(counter.status().message());
    } else if (*counter) {
      for (const auto& [query_type, tables] : declared) {
        for (const auto& [table, rows] : tables) counting->tables.insert(table);
      }
      counting->declared = std::move(declared);
      counting->counter = *std::move(counter);
    }
  }
  if (std::vector<v1::InvariantResult> invariants = PlannedInvariants(plan); !invariants.empty()) {
    absl::StatusOr<ValueReader> reader =
        make_reader ? make_reader(plan)
                    : absl::StatusOr<ValueReader>(absl::UnimplementedError("no reader"));
    if (!reader.ok()) {
      check.invariants_not_checked_ = std::string(reader.status().message());
    } else if (*reader) {
      counting->invariants = std::move(invariants);
      counting->reader = *std::move(reader);
    }
  }
  if (!counting->tables.empty() || !counting->invariants.empty()) {
    counting->on_counted = std::move(on_counted);
    check.counting_ = std::move(counting);
  }
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
    if (!counting_->Comparable(counting_->before)) return true;
  }
  if (!counting_->after_started) {
    counting_->after_started = true;
    counting_->Start(&Counting::after);
  }
  std::lock_guard lock(counting_->mu);
  return counting_->after.has_value();
}

absl::Status RowCheck::FillReport(v1::RunReport& report) const {
  if (!invariants_not_checked_.empty()) report.set_invariants_not_checked(invariants_not_checked_);
  if (counting_ == nullptr) {
    report.set_row_changes_not_checked(not_checked_);
    return absl::OkStatus();
  }
  std::lock_guard lock(counting_->mu);
  // Why a reading is missing or failed: a run that ended first, or the reading's error.
  const auto why = [&](absl::string_view noun, absl::string_view verb, absl::string_view when,
                       const std::optional<Counting::Reading>& reading,
                       const absl::Status& status) -> std::string {
    if (!reading) return absl::StrCat("the run ended before the ", noun, " ", when, " its load");
    return absl::StrCat(verb, " ", when, " the load: ", status.message());
  };
  const std::optional<Counting::Reading>& before = counting_->before;
  const std::optional<Counting::Reading>& after = counting_->after;
  absl::Status verdict;
  if (!counting_->tables.empty()) {
    if (!before || !before->counts.ok()) {
      report.set_row_changes_not_checked(why("count", "counting", "before", before,
                                             before ? before->counts.status() : absl::OkStatus()));
    } else if (!after || !after->counts.ok()) {
      report.set_row_changes_not_checked(why("count", "counting", "after", after,
                                             after ? after->counts.status() : absl::OkStatus()));
    } else {
      verdict = CheckRowChanges(counting_->declared, *before->counts, *after->counts, report);
    }
  } else {
    report.set_row_changes_not_checked(not_checked_);
  }
  if (!counting_->invariants.empty()) {
    if (!before || !before->values.ok()) {
      report.set_invariants_not_checked(why("reading", "reading", "before", before,
                                            before ? before->values.status() : absl::OkStatus()));
    } else if (!after || !after->values.ok()) {
      report.set_invariants_not_checked(why("reading", "reading", "after", after,
                                            after ? after->values.status() : absl::OkStatus()));
    } else if (absl::Status broken =
                   CheckInvariants(counting_->invariants, *before->values, *after->values, report);
               verdict.ok()) {
      verdict = broken;
    }
  }
  return verdict;
}

}  // namespace dbload
