#include "agent/plan_capture.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/dialect_sql.h"
#include "workload/sql_text.h"

namespace dbload {
namespace {

// EXPLAIN's output is a few lines per plan node; more than this is not a plan worth a report.
constexpr size_t kMaxPlanLines = 10'000;

// The statement's first word, in capitals: "SELECT", "INSERT", "BEGIN".
std::string FirstKeyword(std::string_view sql) {
  const absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(absl::string_view(sql.data(), sql.size()));
  size_t length = 0;
  while (length < rest.size() && absl::ascii_isalpha(rest[length])) ++length;
  return absl::AsciiStrToUpper(rest.substr(0, length));
}

// Statements EXPLAIN does not take: transaction control and DDL.
bool Explainable(std::string_view sql) {
  const std::string keyword = FirstKeyword(sql);
  static constexpr std::string_view kNot[] = {"BEGIN",   "START",    "COMMIT", "ROLLBACK",
                                              "SAVEPOINT", "RELEASE", "END",    "CREATE",
                                              "ALTER",   "DROP",     "TRUNCATE", "RENAME",
                                              "GRANT",   "REVOKE"};
  return std::find(std::begin(kNot), std::end(kNot), keyword) == std::end(kNot);
}

void RemoveTrailingNewline(std::string& text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
}

}  // namespace

std::string SqlLiteral(const ParamValue& value, db::Dialect dialect) {
  if (const auto* number = std::get_if<int64_t>(&value)) return db::IntegerLiteral(*number);
  if (const auto* real = std::get_if<double>(&value)) return db::RealLiteral(*real, dialect);
  if (const auto* text = std::get_if<std::string>(&value)) return db::QuoteText(*text, dialect);
  return "NULL";
}

std::string InlineParams(std::string_view sql, std::span<const ParamValue> params,
                         db::Dialect dialect) {
  return ReplacePlaceholders(sql, dialect == db::Dialect::kPostgreSql, [&](int n) {
    if (n < 0 || static_cast<size_t>(n) >= params.size()) return std::string("NULL");
    return SqlLiteral(params[static_cast<size_t>(n)], dialect);
  });
}

std::vector<v1::QueryPlan> ExplainQueryTypes(const Scenario& scenario, ScenarioWorker& worker,
                                             db::Session& session, db::Dialect dialect) {
  const std::vector<db::StatementSpec> statements = scenario.Statements(dialect);
  const char* const prefix = db::ExplainPrefix(dialect);
  std::vector<v1::QueryPlan> plans;
  for (size_t q = 0; q < scenario.query_types().size(); ++q) {
    v1::QueryPlan& plan = plans.emplace_back();
    plan.set_query_type(scenario.query_types()[q]);
    std::vector<std::string> errors;
    // Everything below runs in a transaction that is rolled back: what capturing statements
    // write goes, and the EXPLAINs commit nothing the database's commit counter would add to
    // the load's. A failed statement loses it on PostgreSQL: the next one begins another.
    bool in_transaction = false;
    const auto begin = [&](const std::string& before) {
      if (in_transaction) return true;
      db::ExecOutcome begun = session.Begin();
      // The connection may have gone since the last capture (a restarted server) unnoticed:
      // the session opens another at its next call.
      if (!begun.ok() && begun.error->error_class == db::ErrorClass::kConnection) {
        begun = session.Begin();
      }
      if (!begun.ok()) {
        errors.push_back(absl::StrCat("BEGIN before ", before, ": ", begun.error->message));
        return false;
      }
      in_transaction = true;
      return true;
    };
    const auto run_capturing = [&](const ExplainTarget& target) -> std::optional<int64_t> {
      if (target.statement < 0 || static_cast<size_t>(target.statement) >= statements.size()) {
        return std::nullopt;
      }
      const db::StatementSpec& spec = statements[static_cast<size_t>(target.statement)];
      if (!begin(spec.name)) return std::nullopt;
      db::ExecOutcome ran = session.ExecuteSql(InlineParams(spec.sql, target.params, dialect));
      const std::string keyword = FirstKeyword(spec.sql);
      if (ran.ok() && dialect == db::Dialect::kMySql &&
          (keyword == "INSERT" || keyword == "REPLACE")) {
        // What the driver captures from a MySQL INSERT without a result: the id it generated.
        ran = session.ExecuteSql("SELECT LAST_INSERT_ID()");
      }
      if (!ran.ok()) {
        // The transaction is lost on PostgreSQL: what follows is explained outside it.
        errors.push_back(absl::StrCat("running ", spec.name,
                                      " for the value a later statement "
                                      "captures (bound as NULL): ",
                                      ran.error->message));
        session.Rollback();
        in_transaction = false;
        return std::nullopt;
      }
      return ran.first_value;
    };
    const std::vector<ExplainTarget> targets =
        worker.ExplainTargets(static_cast<int>(q), run_capturing);
    if (targets.empty()) {
      plan.set_error("the workload tells no statement of this query type to explain");
      continue;
    }
    const bool several = targets.size() > 1;
    std::vector<std::string> texts;
    std::string plan_text;
    for (size_t i = 0; i < targets.size(); ++i) {
      const ExplainTarget& target = targets[i];
      const std::string label = several ? absl::StrCat("statement ", i + 1, ": ") : "";
      if (target.statement < 0 || static_cast<size_t>(target.statement) >= statements.size()) {
        errors.push_back(absl::StrCat(label, "no statement ", target.statement));
        continue;
      }
      const std::string text = InlineParams(statements[target.statement].sql, target.params, dialect);
      texts.push_back(text);
      if (several) absl::StrAppend(&plan_text, "-- ", label, text, "\n");
      if (!Explainable(text)) {
        absl::StrAppend(&plan_text, "(skipped: EXPLAIN does not take this statement)\n");
        continue;
      }
      // Without a transaction (BEGIN failed: the connection is most likely gone too) the
      // EXPLAIN is still tried, and commits on its own.
      begin(statements[target.statement].name);
      absl::StatusOr<std::vector<std::string>> lines =
          session.FetchColumn(absl::StrCat(prefix, text), kMaxPlanLines);
      if (!lines.ok()) {
        errors.push_back(absl::StrCat(label, lines.status().message()));
        if (in_transaction) {  // lost on PostgreSQL: the next statement begins another
          session.Rollback();
          in_transaction = false;
        }
        if (several) absl::StrAppend(&plan_text, "(EXPLAIN failed: see the error)\n");
        continue;
      }
      for (const std::string& line : *lines) absl::StrAppend(&plan_text, line, "\n");
    }
    if (in_transaction) session.Rollback();
    RemoveTrailingNewline(plan_text);
    plan.set_statement(absl::StrJoin(texts, "\n"));
    plan.set_plan(std::move(plan_text));
    plan.set_error(absl::StrJoin(errors, "\n"));
  }
  return plans;
}

PlanCapture::PlanCapture(db::Driver& driver, const Scenario& scenario, const WorkerSlot& slot,
                         Sink sink)
    : driver_(driver),
      scenario_(scenario),
      slot_(slot),
      sink_(std::move(sink)),
      thread_([this] { Main(); }) {}

PlanCapture::~PlanCapture() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PlanCapture::Capture(PlanMoment moment) {
  {
    std::lock_guard lock(mu_);
    requests_.push_back(moment);
  }
  wake_.notify_all();
}

void PlanCapture::Main() {
  driver_.ThreadStart();
  std::unique_ptr<db::Session> session;
  std::unique_ptr<ScenarioWorker> worker;
  const db::Dialect dialect = driver_.dialect();
  for (;;) {
    PlanMoment moment;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return closing_ || !requests_.empty(); });
      if (requests_.empty()) break;
      moment = requests_.front();
      requests_.pop_front();
    }
    std::string failure;
    if (session == nullptr) {
      absl::StatusOr<std::unique_ptr<db::Session>> connected = driver_.Connect();
      if (connected.ok()) {
        session = *std::move(connected);
        if (dialect == db::Dialect::kMySql) {
          // SqlLiteral escapes with backslashes: the server must read them so.
          const db::ExecOutcome mode = session->ExecuteSql(db::kEnableBackslashEscapes);
          if (!mode.ok()) failure = absl::StrCat("setting sql_mode: ", mode.error->message);
        }
      } else {
        failure = absl::StrCat("connecting: ", connected.status().message());
      }
      if (!failure.empty()) session.reset();  // tried again at the next request
    }
    if (worker == nullptr) worker = scenario_.NewWorker(slot_);
    std::vector<v1::QueryPlan> plans;
    if (session != nullptr) {
      plans = ExplainQueryTypes(scenario_, *worker, *session, dialect);
    } else {
      for (const std::string& name : scenario_.query_types()) {
        v1::QueryPlan& plan = plans.emplace_back();
        plan.set_query_type(name);
        plan.set_error(failure);
      }
    }
    sink_(moment, std::move(plans));
  }
  session.reset();
  worker.reset();
  driver_.ThreadEnd();
}

}  // namespace dbload
