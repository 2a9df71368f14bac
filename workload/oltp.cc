#include "workload/oltp.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/code_workloads.h"
#include "base/field_error.h"
#include "workload/param_generator.h"

namespace dbload {

namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;

// sysbench's value templates: '#' is a random digit.
constexpr std::string_view kCTemplate =
    "###########-###########-###########-###########-###########-"
    "###########-###########-###########-###########-###########";
constexpr std::string_view kPadTemplate =
    "###########-###########-###########-###########-###########";

void FillTemplate(Random& random, std::string_view pattern, std::string& out) {
  out.assign(pattern);
  for (char& c : out) {
    if (c == '#') c = static_cast<char>('0' + random.Uniform(0, 9));
  }
}

std::string TableName(int table) { return absl::StrCat("sbtest", table); }

// The statements of oltp_common.lua's stmt_defs (and oltp_insert.lua's), in sysbench's
// placeholder style; "%u" is the table number.
enum class Statement {
  kPointSelect,
  kSimpleRange,
  kSumRange,
  kOrderRange,
  kDistinctRange,
  kIndexUpdate,
  kNonIndexUpdate,
  kDelete,
  kInsert,         // delete_inserts' re-insert of the id it deleted
  kInsertAutoInc,  // oltp_insert: the database picks the id
};
constexpr int kStatementKinds = static_cast<int>(Statement::kInsertAutoInc) + 1;

const char* StatementName(Statement statement) {
  switch (statement) {
    case Statement::kPointSelect:
      return "point_select";
    case Statement::kSimpleRange:
      return "simple_range";
    case Statement::kSumRange:
      return "sum_range";
    case Statement::kOrderRange:
      return "order_range";
    case Statement::kDistinctRange:
      return "distinct_range";
    case Statement::kIndexUpdate:
      return "index_update";
    case Statement::kNonIndexUpdate:
      return "non_index_update";
    case Statement::kDelete:
      return "delete";
    case Statement::kInsert:
      return "insert";
    case Statement::kInsertAutoInc:
      return "insert_auto_inc";
  }
  return "unknown";
}

const char* StatementTemplate(Statement statement, Dialect dialect) {
  switch (statement) {
    case Statement::kPointSelect:
      return "SELECT c FROM sbtest%u WHERE id=?";
    case Statement::kSimpleRange:
      return "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?";
    case Statement::kSumRange:
      return "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?";
    case Statement::kOrderRange:
      return "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c";
    case Statement::kDistinctRange:
      return "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c";
    case Statement::kIndexUpdate:
      return "UPDATE sbtest%u SET k=k+1 WHERE id=?";
    case Statement::kNonIndexUpdate:
      return "UPDATE sbtest%u SET c=? WHERE id=?";
    case Statement::kDelete:
      return "DELETE FROM sbtest%u WHERE id=?";
    case Statement::kInsert:
      return "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)";
    case Statement::kInsertAutoInc:
      // oltp_insert.lua with auto_inc (the default): PostgreSQL leaves id out so that SERIAL
      // assigns it; MySQL passes 0, which AUTO_INCREMENT replaces by the next id.
      return dialect == Dialect::kPostgreSql
                 ? "INSERT INTO sbtest%u (k, c, pad) VALUES (?, ?, ?)"
                 : "INSERT INTO sbtest%u (id, k, c, pad) VALUES (0, ?, ?, ?)";
  }
  return "";
}

// sysbench's pgsql driver numbers the '?' placeholders as $1, $2 … in the same way.
std::string StatementSql(Statement statement, Dialect dialect, int table) {
  std::string sql =
      absl::StrReplaceAll(StatementTemplate(statement, dialect), {{"%u", absl::StrCat(table)}});
  if (dialect != Dialect::kPostgreSql) return sql;
  std::string numbered;
  int placeholder = 0;
  for (char c : sql) {
    if (c == '?') {
      absl::StrAppend(&numbered, "$", ++placeholder);
    } else {
      numbered.push_back(c);
    }
  }
  return numbered;
}

// One execute_*() function of sysbench: `count` statements on one table drawn for the group.
enum class Group {
  kPointSelects,
  kSimpleRanges,
  kSumRanges,
  kOrderRanges,
  kDistinctRanges,
  kIndexUpdates,
  kNonIndexUpdates,
  kDeleteInserts,  // DELETE then INSERT of the same id
  kDelete,         // oltp_delete.lua: a DELETE alone
  kInsert,         // oltp_insert.lua
};

std::vector<Statement> StatementsOf(Group group) {
  switch (group) {
    case Group::kPointSelects:
      return {Statement::kPointSelect};
    case Group::kSimpleRanges:
      return {Statement::kSimpleRange};
    case Group::kSumRanges:
      return {Statement::kSumRange};
    case Group::kOrderRanges:
      return {Statement::kOrderRange};
    case Group::kDistinctRanges:
      return {Statement::kDistinctRange};
    case Group::kIndexUpdates:
      return {Statement::kIndexUpdate};
    case Group::kNonIndexUpdates:
      return {Statement::kNonIndexUpdate};
    case Group::kDeleteInserts:
      return {Statement::kDelete, Statement::kInsert};
    case Group::kDelete:
      return {Statement::kDelete};
    case Group::kInsert:
      return {Statement::kInsertAutoInc};
  }
  return {};
}

struct GroupRun {
  Group group;
  int count;
};

// What one scenario's event() does, from its Lua script.
struct EventPlan {
  std::vector<GroupRun> groups;
  bool transaction = false;  // BEGIN … COMMIT around the event
};

constexpr std::string_view kScenarioNames[] = {
    "point_select", "read_only",        "read_write", "write_only",
    "update_index", "update_non_index", "delete",     "insert",
};

std::optional<EventPlan> PlanOf(std::string_view scenario, const OltpOptions& o) {
  const std::vector<GroupRun> ranges =
      o.range_selects ? std::vector<GroupRun>{{Group::kSimpleRanges, o.simple_ranges},
                                              {Group::kSumRanges, o.sum_ranges},
                                              {Group::kOrderRanges, o.order_ranges},
                                              {Group::kDistinctRanges, o.distinct_ranges}}
                      : std::vector<GroupRun>{};
  const std::vector<GroupRun> writes = {{Group::kIndexUpdates, o.index_updates},
                                        {Group::kNonIndexUpdates, o.non_index_updates},
                                        {Group::kDeleteInserts, o.delete_inserts}};
  EventPlan plan;
  if (scenario == "point_select") {
    plan.groups = {{Group::kPointSelects, 1}};  // oltp_point_select.lua overrides point_selects
  } else if (scenario == "read_only" || scenario == "read_write") {
    plan.groups = {{Group::kPointSelects, o.point_selects}};
    plan.groups.insert(plan.groups.end(), ranges.begin(), ranges.end());
    if (scenario == "read_write") {
      plan.groups.insert(plan.groups.end(), writes.begin(), writes.end());
    }
    plan.transaction = !o.skip_trx;
  } else if (scenario == "write_only") {
    plan.groups = writes;
    plan.transaction = !o.skip_trx;
  } else if (scenario == "update_index") {
    plan.groups = {{Group::kIndexUpdates, o.index_updates}};
  } else if (scenario == "update_non_index") {
    plan.groups = {{Group::kNonIndexUpdates, o.non_index_updates}};
  } else if (scenario == "delete") {
    // oltp_delete.lua's event() deletes and puts nothing back (unlike delete_inserts), so the
    // tables shrink and later deletes of the same ids find nothing, as under sysbench.
    plan.groups = {{Group::kDelete, 1}};
  } else if (scenario == "insert") {
    plan.groups = {{Group::kInsert, 1}};
  } else {
    return std::nullopt;
  }
  return plan;
}

// Statement ids: every statement kind the scenario uses (in order of first use) times every
// table, so that a group's statement on table t is base + t - 1.
struct StatementLayout {
  std::vector<Statement> kinds;
  std::array<int, kStatementKinds> base{};
};

StatementLayout LayoutOf(const EventPlan& plan, int tables) {
  StatementLayout layout;
  layout.base.fill(-1);
  for (const GroupRun& run : plan.groups) {
    for (Statement statement : StatementsOf(run.group)) {
      int& base = layout.base[static_cast<int>(statement)];
      if (base >= 0) continue;
      base = static_cast<int>(layout.kinds.size()) * tables;
      layout.kinds.push_back(statement);
    }
  }
  return layout;
}

class OltpWorker final : public ScenarioWorker {
 public:
  OltpWorker(const OltpOptions& options, const EventPlan& plan, const StatementLayout& layout,
             uint64_t seed)
      : options_(options),
        plan_(plan),
        layout_(layout),
        uniform_(options.rand_type == "uniform"),
        random_(seed) {
    c_.reserve(kCTemplate.size());
    pad_.reserve(kPadTemplate.size());
  }

  int NextQueryType() override { return 0; }

  ExecOutcome Run(int, Session& session) override {
    if (plan_.transaction) {
      ExecOutcome begun = session.Begin();
      if (!begun.ok()) return begun;
    }
    int64_t rows = 0;
    for (const GroupRun& run : plan_.groups) {
      // Each execute_*() of oltp_common.lua draws its own table.
      const int table = static_cast<int>(random_.Uniform(1, options_.tables));
      for (int i = 0; i < run.count; ++i) {
        ExecOutcome outcome = RunOne(run.group, table, &session, rows);
        if (!outcome.ok()) {
          // Ends the transaction here, so that the session is clean for the next event; the
          // statement's error is what the caller classifies and counts, not ROLLBACK's.
          if (plan_.transaction) session.Rollback();
          return outcome;
        }
      }
    }
    if (plan_.transaction) {
      ExecOutcome committed = session.Commit();
      if (!committed.ok()) return committed;
    }
    return ExecOutcome{.rows = rows};
  }

  // Each group once (a read_only event's ten point selects are one statement), on the table
  // and with the values its event would draw (nothing captures).
  std::vector<ExplainTarget> ExplainTargets(int, const CaptureRun&) override {
    explained_.clear();
    int64_t rows = 0;
    for (const GroupRun& run : plan_.groups) {
      const int table = static_cast<int>(random_.Uniform(1, options_.tables));
      if (run.count > 0) RunOne(run.group, table, nullptr, rows);
    }
    return std::move(explained_);
  }

 private:
  int64_t NextId() {
    if (uniform_) return random_.Uniform(1, options_.table_size);
    return SpecialDistribution(random_, 1, options_.table_size, options_);
  }

  int Id(Statement statement, int table) const {
    return layout_.base[static_cast<int>(statement)] + table - 1;
  }

  // With no session (ExplainTargets) the statement and its values are only noted.
  ExecOutcome Execute(Statement statement, int table, Session* session, size_t params,
                      int64_t& rows) {
    if (session == nullptr) {
      ExplainTarget& target = explained_.emplace_back();
      target.statement = Id(statement, table);
      for (size_t i = 0; i < params; ++i) target.params.push_back(OwnedValue(params_[i]));
      return ExecOutcome{};
    }
    ExecOutcome outcome = session->Execute(Id(statement, table), std::span(params_.data(), params));
    rows += outcome.rows;
    return outcome;
  }

  // Draws parameters in the order oltp_common.lua does.
  ExecOutcome RunOne(Group group, int table, Session* session, int64_t& rows) {
    switch (group) {
      case Group::kPointSelects:
        params_[0] = NextId();
        return Execute(Statement::kPointSelect, table, session, 1, rows);
      case Group::kSimpleRanges:
        return Range(Statement::kSimpleRange, table, session, rows);
      case Group::kSumRanges:
        return Range(Statement::kSumRange, table, session, rows);
      case Group::kOrderRanges:
        return Range(Statement::kOrderRange, table, session, rows);
      case Group::kDistinctRanges:
        return Range(Statement::kDistinctRange, table, session, rows);
      case Group::kIndexUpdates:
        params_[0] = NextId();
        return Execute(Statement::kIndexUpdate, table, session, 1, rows);
      case Group::kNonIndexUpdates:
        FillTemplate(random_, kCTemplate, c_);
        params_[0] = std::string_view(c_);
        params_[1] = NextId();
        return Execute(Statement::kNonIndexUpdate, table, session, 2, rows);
      case Group::kDeleteInserts: {
        const int64_t id = NextId();
        const int64_t k = NextId();
        FillTemplate(random_, kCTemplate, c_);
        FillTemplate(random_, kPadTemplate, pad_);
        params_[0] = id;
        ExecOutcome deleted = Execute(Statement::kDelete, table, session, 1, rows);
        if (!deleted.ok()) return deleted;
        params_ = {id, k, std::string_view(c_), std::string_view(pad_)};
        return Execute(Statement::kInsert, table, session, 4, rows);
      }
      case Group::kDelete:
        params_[0] = NextId();
        return Execute(Statement::kDelete, table, session, 1, rows);
      case Group::kInsert:
        params_[0] = NextId();  // k; the database assigns id
        FillTemplate(random_, kCTemplate, c_);
        FillTemplate(random_, kPadTemplate, pad_);
        params_[1] = std::string_view(c_);
        params_[2] = std::string_view(pad_);
        return Execute(Statement::kInsertAutoInc, table, session, 3, rows);
    }
    return ExecOutcome{};
  }

  ExecOutcome Range(Statement statement, int table, Session* session, int64_t& rows) {
    const int64_t id = NextId();
    params_[0] = id;
    params_[1] = id + options_.range_size - 1;
    return Execute(statement, table, session, 2, rows);
  }

  const OltpOptions& options_;
  const EventPlan& plan_;
  const StatementLayout& layout_;
  const bool uniform_;
  Random random_;
  std::vector<ExplainTarget> explained_;  // filled by Execute without a session
  // Parameter buffers reused by every event: Values borrow c_ and pad_.
  std::string c_;
  std::string pad_;
  std::array<db::Value, 4> params_;
};

// One of sysbench's oltp_*.lua scripts; one event is one transaction of one query type named
// after the scenario (sysbench counts events, and dbload records per transaction).
class OltpScenario final : public Scenario {
 public:
  OltpScenario(std::string name, OltpOptions options, EventPlan plan)
      : options_(std::move(options)),
        plan_(std::move(plan)),
        layout_(LayoutOf(plan_, options_.tables)),
        query_types_{std::move(name)} {}

  const std::vector<std::string>& query_types() const override { return query_types_; }

  std::vector<db::StatementSpec> Statements(Dialect dialect) const override {
    std::vector<db::StatementSpec> statements;
    for (Statement statement : layout_.kinds) {
      for (int t = 1; t <= options_.tables; ++t) {
        statements.push_back(
            {absl::StrCat(StatementName(statement), "_", t), StatementSql(statement, dialect, t)});
      }
    }
    return statements;
  }

  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const override {
    return std::make_unique<OltpWorker>(options_, plan_, layout_,
                                        MixSeed(slot.run_seed, slot.index));
  }

  // The worker has rolled back when a transaction ends with one of these (Run ends every failed
  // transaction so), which is what sysbench's PostgreSQL driver does before it restarts the
  // event.
  db::IgnoredErrors ErrorsToIgnore(Dialect dialect) const override {
    if (options_.ignore_errors.has_value()) return db::IgnoredErrors(*options_.ignore_errors);
    return db::IgnoredErrors::SysbenchDefaults(dialect);
  }

 private:
  // Workers refer to these: the scenario outlives them.
  const OltpOptions options_;
  const EventPlan plan_;
  const StatementLayout layout_;
  const std::vector<std::string> query_types_;
};

class OltpWorkload final : public Workload {
 public:
  explicit OltpWorkload(OltpOptions options) : options_(std::move(options)) {}

  std::vector<std::string> ScenarioNames() const override {
    return {std::begin(kScenarioNames), std::end(kScenarioNames)};
  }

  absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const override {
    if (std::optional<EventPlan> plan = PlanOf(name, options_)) {
      return std::make_unique<OltpScenario>(name, options_, *std::move(plan));
    }
    return FieldError("scenario",
                      absl::StrCat("workload oltp has no scenario '", name,
                                   "' (it has: ", absl::StrJoin(ScenarioNames(), ", "), ")"));
  }

  v1::WorkloadSpec DataSpec() const override;

 private:
  OltpOptions options_;
};

// sysbench's tables as a data spec, loaded by the same resumable loader as the YAML workloads
// (COPY on PostgreSQL, multi-row INSERT on MySQL, each batch committed with its watermark).
// Values follow oltp_common.lua: k from the default distribution, c and pad from the digit
// templates, ids 1 … table_size in order (sysbench's auto_inc).
v1::WorkloadSpec DataSpecOf(const OltpOptions& options) {
  const auto pattern = [](std::string_view sysbench_template) {
    std::string out;
    for (char c : sysbench_template) out += c == '#' ? std::string("{#}") : std::string(1, c);
    return out;
  };
  v1::WorkloadSpec spec;
  spec.set_name(kOltpWorkloadName);
  for (int t = 1; t <= options.tables; ++t) {
    const std::string name = TableName(t);
    v1::Table& table = *spec.add_tables();
    table.set_name(name);
    // PostgreSQL: the primary key is built after loading, like the secondary index (a b-tree
    // built once over the loaded rows costs less than one kept up to date by every COPY row).
    // InnoDB keeps rows in primary-key order: there it is declared up front, and the rows come
    // in that order.
    table.mutable_create()->set_postgresql(absl::StrCat(
        "CREATE TABLE ", name,
        " (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
        "pad CHAR(60) DEFAULT '' NOT NULL)"));
    table.mutable_create()->set_mysql(absl::StrCat(
        "CREATE TABLE ", name,
        " (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) "
        "DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB"));
    table.add_indexes()->set_postgresql(absl::StrCat("ALTER TABLE ", name, " ADD PRIMARY KEY (id)"));
    // IF NOT EXISTS: MariaDB commits DDL by itself, and a prepare resumed after a kill runs the
    // step it was in again.
    table.add_indexes()->set_any(
        absl::StrCat("CREATE INDEX IF NOT EXISTS k_", t, " ON ", name, "(k)"));
    // Explicit ids leave PostgreSQL's serial behind; the insert scenario needs it past them.
    table.add_after_load()->set_postgresql(
        absl::StrCat("SELECT setval(pg_get_serial_sequence('", name, "', 'id'), (SELECT MAX(id) FROM ",
                     name, "))"));
    v1::TableData& data = *table.mutable_data();
    data.set_rows(options.table_size);
    v1::Column* id = data.add_columns();
    id->set_name("id");
    id->mutable_generator()->set_row(true);
    v1::Column* k = data.add_columns();
    k->set_name("k");
    if (options.rand_type == "uniform") {
      k->mutable_generator()->mutable_uniform()->set_min(1);
      k->mutable_generator()->mutable_uniform()->set_max(options.table_size);
    } else {
      v1::Generator::SysbenchSpecial& special = *k->mutable_generator()->mutable_special();
      special.set_min(1);
      special.set_max(options.table_size);
      special.set_pct(options.rand_spec_pct);
      special.set_res(options.rand_spec_res);
      special.set_iter(options.rand_spec_iter);
    }
    v1::Column* c = data.add_columns();
    c->set_name("c");
    c->mutable_generator()->mutable_pattern()->set_pattern(pattern(kCTemplate));
    v1::Column* pad = data.add_columns();
    pad->set_name("pad");
    pad->mutable_generator()->mutable_pattern()->set_pattern(pattern(kPadTemplate));
  }
  return spec;
}

v1::WorkloadSpec OltpWorkload::DataSpec() const { return DataSpecOf(options_); }

}  // namespace

int64_t SpecialDistribution(Random& random, int64_t low, int64_t high, const OltpOptions& options) {
  return SysbenchSpecial(random, low, high, options.rand_spec_pct, options.rand_spec_res,
                         options.rand_spec_iter);
}

std::unique_ptr<Workload> MakeOltpWorkload(OltpOptions options) {
  return std::make_unique<OltpWorkload>(std::move(options));
}

}  // namespace dbload
