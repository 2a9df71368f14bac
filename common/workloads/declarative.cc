#include "common/workloads/declarative.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/field_error.h"
#include "common/param_generator.h"
#include "common/random.h"
#include "common/sql_text.h"

namespace dbload {
namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;
using db::Value;

// A sample larger than this is a mistake in the workload (a missing LIMIT); it would cost the
// agent gigabytes before the run starts.
constexpr size_t kMaxSampleRows = 50'000'000;
constexpr int64_t kSeedOfLoad = 0x10ad;
constexpr int64_t kDefaultLoadBatch = 10'000;

absl::Status ToStatus(const ExecOutcome& outcome, absl::string_view doing) {
  if (outcome.ok()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(doing, ": ", outcome.error->message, " [", outcome.error->code, "]"));
}

ExecOutcome Failure(std::string code, std::string message) {
  ExecOutcome outcome;
  outcome.error = db::DbError{.error_class = db::ErrorClass::kFatal,
                              .code = std::move(code),
                              .message = std::move(message)};
  return outcome;
}

// A name as a SQL string literal. Names are identifiers (the parser checks), so doubling
// quotes is all the escaping they can need.
std::string Literal(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

// Where one bound value comes from on a worker.
struct BoundParam {
  std::unique_ptr<ParamGenerator> generator;  // or:
  int capture = -1;                           // index into the worker's captured values
  const std::vector<std::string>* sample = nullptr;
  size_t sample_index = 0;  // which of the scenario's samples
  bool from_sample = false;
  bool consume = false;
};

struct PreparedStatementPlan {
  int id = 0;
  int repeat = 1;
  int capture = -1;  // where to keep the first value, or -1
};

struct QueryTypePlan {
  bool transaction = false;
  std::vector<PreparedStatementPlan> statements;
};

class DeclarativeScenario;

class DeclarativeWorker final : public ScenarioWorker {
 public:
  DeclarativeWorker(const DeclarativeScenario& scenario, const WorkerSlot& slot);
  int NextQueryType() override;
  ExecOutcome Run(int query_type, Session& session) override;

 private:
  struct StatementState {
    std::vector<BoundParam> params;
    std::vector<Value> values;       // params × repeat, refilled per execution
    std::vector<std::string> texts;  // backing store of text values, same positions
  };
  Value Draw(BoundParam& param, std::string& text);

  const DeclarativeScenario& scenario_;
  const WorkerSlot slot_;
  Random random_;
  std::vector<std::vector<StatementState>> states_;  // [query type][statement]
  std::vector<std::optional<int64_t>> captured_;
  std::vector<size_t> consumed_;  // per sample: values this worker has taken
};

class DeclarativeScenario final : public Scenario {
 public:
  DeclarativeScenario(v1::Scenario spec) : spec_(std::move(spec)) {
    for (const v1::QueryType& query_type : spec_.query_types()) {
      names_.push_back(query_type.name());
      cumulative_weights_.push_back((cumulative_weights_.empty() ? 0 : cumulative_weights_.back()) +
                                    query_type.weight());
      QueryTypePlan plan{.transaction = query_type.transaction()};
      std::map<std::string, int> captures;
      for (const v1::Statement& statement : query_type.statements()) {
        PreparedStatementPlan prepared{.id = statement_count_++,
                                       .repeat = std::max<int>(1, statement.repeat())};
        if (!statement.capture().empty()) {
          auto [it, inserted] = capture_slots_.emplace(
              absl::StrCat(names_.size() - 1, "/", statement.capture()), capture_count_);
          if (inserted) ++capture_count_;
          prepared.capture = it->second;
        }
        plan.statements.push_back(prepared);
        for (const v1::Generator& param : statement.params()) {
          if (param.kind_case() == v1::Generator::kSample) {
            sample_index_.emplace(SampleKey(param.sample()), sample_index_.size());
          }
        }
      }
      plans_.push_back(std::move(plan));
    }
  }

  const std::vector<std::string>& query_types() const override { return names_; }

  std::vector<db::StatementSpec> Statements(Dialect dialect) const override {
    std::vector<db::StatementSpec> statements;
    for (const v1::QueryType& query_type : spec_.query_types()) {
      int index = 0;
      for (const v1::Statement& statement : query_type.statements()) {
        absl::StatusOr<std::string> sql = SqlFor(statement.sql(), dialect, "statement");
        // A workload without SQL for this dialect fails at Prepare with the statement's name.
        std::string text = sql.ok() ? *sql : std::string();
        if (statement.repeat() > 0) {
          text = ExpandRepeat(text, statement.repeat_text(), static_cast<int>(statement.repeat()));
        }
        if (dialect == Dialect::kPostgreSql) text = NumberPlaceholders(text);
        statements.push_back({absl::StrCat(query_type.name(), "_", index++), std::move(text)});
      }
    }
    return statements;
  }

  absl::Status Setup(db::Driver& driver) override {
    samples_.assign(sample_index_.size(), {});
    if (samples_.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<Session>> connected = driver.Connect();
    if (!connected.ok()) {
      return absl::Status(connected.status().code(),
                          absl::StrCat("target: ", connected.status().message()));
    }
    Session& session = **connected;
    const Dialect dialect = driver.dialect();
    for (const v1::QueryType& query_type : spec_.query_types()) {
      for (const v1::Statement& statement : query_type.statements()) {
        for (const v1::Generator& param : statement.params()) {
          if (param.kind_case() != v1::Generator::kSample) continue;
          std::vector<std::string>& sample = samples_[sample_index_.at(SampleKey(param.sample()))];
          if (!sample.empty()) continue;
          absl::StatusOr<std::string> sql = SqlFor(param.sample().sql(), dialect, "sample");
          if (!sql.ok()) return sql.status();
          absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(*sql, kMaxSampleRows);
          if (!rows.ok()) {
            return absl::Status(rows.status().code(),
                                absl::StrCat("scenario ", spec_.name(), ": reading the sample `",
                                             *sql, "`: ", rows.status().message()));
          }
          if (rows->empty()) {
            return absl::FailedPreconditionError(
                absl::StrCat("scenario ", spec_.name(), ": the sample `", *sql,
                             "` returned no rows (has `dbload prepare` been run?)"));
          }
          sample = *std::move(rows);
        }
      }
    }
    return absl::OkStatus();
  }

  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const override {
    return std::make_unique<DeclarativeWorker>(*this, slot);
  }

 private:
  friend class DeclarativeWorker;
  static std::string SampleKey(const v1::Generator::Sample& sample) {
    return sample.SerializeAsString();
  }

  const v1::Scenario spec_;
  std::vector<std::string> names_;
  std::vector<double> cumulative_weights_;
  std::vector<QueryTypePlan> plans_;
  int statement_count_ = 0;
  std::map<std::string, int> capture_slots_;  // "query type index/name" → slot
  int capture_count_ = 0;
  std::map<std::string, size_t> sample_index_;  // identical samples are read once
  std::vector<std::vector<std::string>> samples_;
};

DeclarativeWorker::DeclarativeWorker(const DeclarativeScenario& scenario, const WorkerSlot& slot)
    : scenario_(scenario),
      slot_(slot),
      random_(MixSeed(slot.run_seed, slot.index)),
      captured_(static_cast<size_t>(scenario.capture_count_)),
      consumed_(scenario.samples_.size(), 0) {
  uint64_t stream = 0;
  for (int q = 0; q < scenario.spec_.query_types_size(); ++q) {
    const v1::QueryType& query_type = scenario.spec_.query_types(q);
    std::vector<StatementState>& states = states_.emplace_back();
    for (int s = 0; s < query_type.statements_size(); ++s) {
      const v1::Statement& statement = query_type.statements(s);
      StatementState& state = states.emplace_back();
      for (const v1::Generator& spec : statement.params()) {
        BoundParam& param = state.params.emplace_back();
        ++stream;
        if (spec.kind_case() == v1::Generator::kCaptured) {
          param.capture = scenario.capture_slots_.at(absl::StrCat(q, "/", spec.captured()));
        } else if (spec.kind_case() == v1::Generator::kSample) {
          const size_t index = scenario.sample_index_.at(DeclarativeScenario::SampleKey(spec.sample()));
          param.sample = index < scenario.samples_.size() ? &scenario.samples_[index] : nullptr;
          param.sample_index = index;
          param.from_sample = true;
          param.consume = spec.sample().consume();
        } else {
          // Checked by the parser; a spec built in code that is wrong fails loudly here.
          absl::StatusOr<std::unique_ptr<ParamGenerator>> generator = MakeParamGenerator(
              spec, {.seed = MixSeed(MixSeed(slot.run_seed, slot.index), stream),
                     .slot_index = slot.index,
                     .slot_count = slot.count});
          if (generator.ok()) param.generator = *std::move(generator);
        }
      }
      const size_t width = state.params.size() * static_cast<size_t>(std::max<uint32_t>(1, statement.repeat()));
      state.values.resize(width);
      state.texts.resize(width);
    }
  }
}

int DeclarativeWorker::NextQueryType() {
  const std::vector<double>& weights = scenario_.cumulative_weights_;
  if (weights.size() == 1) return 0;
  const double draw = random_.NextDouble() * weights.back();
  return static_cast<int>(std::upper_bound(weights.begin(), weights.end(), draw) - weights.begin());
}

Value DeclarativeWorker::Draw(BoundParam& param, std::string& text) {
  if (param.generator) return param.generator->Next({}, text);
  if (param.capture >= 0) {
    const std::optional<int64_t>& value = captured_[static_cast<size_t>(param.capture)];
    return value ? Value(*value) : Value();
  }
  return Value();
}

ExecOutcome DeclarativeWorker::Run(int query_type, Session& session) {
  const QueryTypePlan& plan = scenario_.plans_[static_cast<size_t>(query_type)];
  std::vector<StatementState>& states = states_[static_cast<size_t>(query_type)];
  if (plan.transaction) {
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return begun;
  }
  int64_t rows = 0;
  for (size_t s = 0; s < plan.statements.size(); ++s) {
    const PreparedStatementPlan& statement = plan.statements[s];
    StatementState& state = states[s];
    size_t position = 0;
    for (int r = 0; r < statement.repeat; ++r) {
      for (size_t p = 0; p < state.params.size(); ++p, ++position) {
        BoundParam& param = state.params[p];
        if (param.from_sample) {
          if (param.sample == nullptr) {
            if (plan.transaction) session.Rollback();
            return Failure("dbload-sample", "the scenario's samples were never read (Setup)");
          }
          const std::vector<std::string>& sample = *param.sample;
          size_t index = 0;
          if (param.consume) {
            // This worker's part of the sample: positions slot, slot + slots, … so that no two
            // workers of the run (on any agent: all read the same ordered sample) take the same.
            const size_t taken = consumed_[param.sample_index]++;
            index = slot_.index + taken * slot_.count;
            if (index >= sample.size()) {
              if (plan.transaction) session.Rollback();
              return Failure("dbload-sample",
                             absl::StrCat("this worker's part of the sample (", taken,
                                          " values) is used up: the run asks for more rows "
                                          "than the database holds"));
            }
          } else {
            index = static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(sample.size()) - 1));
          }
          state.values[position] = std::string_view(sample[index]);
        } else {
          state.values[position] = Draw(param, state.texts[position]);
        }
      }
    }
    ExecOutcome outcome = session.Execute(statement.id, state.values, statement.capture >= 0);
    if (!outcome.ok()) {
      if (plan.transaction) session.Rollback();
      return outcome;
    }
    rows += outcome.rows;
    if (statement.capture >= 0) captured_[static_cast<size_t>(statement.capture)] = outcome.first_value;
  }
  if (plan.transaction) {
    if (ExecOutcome committed = session.Commit(); !committed.ok()) return committed;
  }
  ExecOutcome done;
  done.rows = rows;
  return done;
}

// ---------------------------------------------------------------------------------------------

class DeclarativeWorkload final : public Workload {
 public:
  explicit DeclarativeWorkload(v1::WorkloadSpec spec) : spec_(std::move(spec)) {}

  std::vector<std::string> ScenarioNames() const override {
    std::vector<std::string> names;
    for (const v1::Scenario& scenario : spec_.scenarios()) names.push_back(scenario.name());
    return names;
  }

  absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const override {
    for (const v1::Scenario& scenario : spec_.scenarios()) {
      if (scenario.name() == name) return std::make_unique<DeclarativeScenario>(scenario);
    }
    return FieldError("scenario", absl::StrCat("workload ", spec_.name(), " has no scenario '", name,
                                               "' (it has: ", absl::StrJoin(ScenarioNames(), ", "),
                                               ")"));
  }

  absl::Status Prepare(Session& session, Dialect dialect,
                       const std::function<void(const PrepareProgress&)>& progress) const override {
    return LoadWorkloadData(spec_, session, dialect, progress);
  }

  absl::Status Cleanup(Session& session) const override { return DropWorkloadData(spec_, session); }

 private:
  const v1::WorkloadSpec spec_;
};

// ---------------------------------------------------------------------------------------------
// Loading.

class Loader {
 public:
  Loader(const v1::WorkloadSpec& spec, Session& session, Dialect dialect,
         const std::function<void(const PrepareProgress&)>& progress)
      : spec_(spec), session_(session), dialect_(dialect), progress_(progress) {}

  absl::Status Run() {
    if (absl::Status status = ToStatus(
            session_.ExecuteSql(absl::StrCat(
                "CREATE TABLE IF NOT EXISTS ", kLoadStateTable,
                " (workload VARCHAR(200) NOT NULL, tbl VARCHAR(200) NOT NULL, rows_done BIGINT "
                "NOT NULL, phase VARCHAR(40) NOT NULL, PRIMARY KEY (workload, tbl))")),
            "creating the load state table");
        !status.ok()) {
      return status;
    }
    ReportFreeSpace();
    for (const v1::Table& table : spec_.tables()) {
      if (absl::Status status = LoadTable(table); !status.ok()) return status;
    }
    return ValidateWorkloadData(spec_, session_, dialect_);
  }

  // Load goes only to this machine, so the server's data directory is a local path: its free
  // space is worth a line before a long load. PostgreSQL shows data_directory only to
  // privileged users; without it there is nothing to say.
  void ReportFreeSpace() {
    if (!progress_) return;
    absl::StatusOr<std::vector<std::string>> dir = session_.FetchColumn(
        dialect_ == Dialect::kPostgreSql
            ? "SELECT setting FROM pg_settings WHERE name = 'data_directory'"
            : "SELECT @@datadir",
        1);
    struct statvfs fs;
    if (!dir.ok() || dir->empty() || dir->front().empty() ||
        statvfs(dir->front().c_str(), &fs) != 0) {
      return;
    }
    const double free_gib = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) /
                            (1024.0 * 1024 * 1024);
    progress_({.note = absl::StrFormat("free space where the server keeps its data (%s): %.1f GiB",
                                       dir->front(), free_gib)});
  }

 private:
  std::string StateWhere(const v1::Table& table) const {
    return absl::StrCat(" WHERE workload = ", Literal(spec_.name()), " AND tbl = ",
                        Literal(table.name()));
  }

  absl::Status SetState(const v1::Table& table, int64_t rows_done, absl::string_view phase) {
    return ToStatus(session_.ExecuteSql(absl::StrCat("UPDATE ", kLoadStateTable,
                                                     " SET rows_done = ", rows_done,
                                                     ", phase = ", Literal(phase),
                                                     StateWhere(table))),
                    absl::StrCat("recording the load state of ", table.name()));
  }

  absl::StatusOr<bool> TableExists(const v1::Table& table) {
    // PostgreSQL's information_schema hides tables the user may not read; pg_tables does not,
    // and a table of someone else's is exactly what must be found here.
    const std::string sql =
        dialect_ == Dialect::kPostgreSql
            ? absl::StrCat("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = "
                           "current_schema() AND tablename = ",
                           Literal(table.name()))
            : absl::StrCat("SELECT table_name FROM information_schema.tables WHERE "
                           "table_schema = DATABASE() AND table_name = ",
                           Literal(table.name()));
    absl::StatusOr<std::vector<std::string>> found = session_.FetchColumn(sql, 1);
    if (!found.ok()) return found.status();
    return !found->empty();
  }

  absl::Status LoadTable(const v1::Table& table) {
    absl::StatusOr<std::vector<std::string>> state = session_.FetchColumn(
        absl::StrCat("SELECT CONCAT(phase, ':', rows_done) FROM ", kLoadStateTable,
                     StateWhere(table)),
        1);
    if (!state.ok()) return state.status();
    absl::StatusOr<bool> exists = TableExists(table);
    if (!exists.ok()) return exists.status();
    std::string phase = "new";
    int64_t rows_done = 0;
    if (!state->empty()) {
      std::vector<std::string> parts = absl::StrSplit(state->front(), ':');
      phase = parts.size() >= 2 ? parts[0] : "";
      if (parts.size() >= 2) {
        (void)std::from_chars(parts.back().data(), parts.back().data() + parts.back().size(), rows_done);
      }
      if (parts.size() == 3) phase = absl::StrCat(parts[0], ":", parts[1]);
    } else if (*exists) {
      return absl::AlreadyExistsError(absl::StrCat(
          "table ", table.name(), " already exists and was not created by dbload prepare (",
          kLoadStateTable, " has no entry for it); dbload does not write into tables it did not "
          "create: drop it, or prepare into another database"));
    } else {
      if (absl::Status status = ToStatus(
              session_.ExecuteSql(absl::StrCat("INSERT INTO ", kLoadStateTable,
                                               " (workload, tbl, rows_done, phase) VALUES (",
                                               Literal(spec_.name()), ", ", Literal(table.name()),
                                               ", 0, 'loading')")),
              absl::StrCat("recording the load state of ", table.name()));
          !status.ok()) {
        return status;
      }
      phase = "loading";
    }
    if (phase == "done") {
      Report(table, table.data().rows());
      return absl::OkStatus();
    }
    if (phase == "loading" && rows_done > 0 && progress_) {
      progress_({.note = absl::StrFormat("%s: resuming after row %d (the last committed batch)",
                                         table.name(), rows_done)});
    }
    if (!*exists) {
      absl::StatusOr<std::string> create = SqlFor(table.create(), dialect_, table.name());
      if (!create.ok()) return create.status();
      if (absl::Status status =
              ToStatus(session_.ExecuteSql(*create), absl::StrCat("creating ", table.name()));
          !status.ok()) {
        return status;
      }
    }
    if (phase == "loading") {
      if (absl::Status status = RunEach(table.before_load(), table, "before loading");
          !status.ok()) {
        return status;
      }
      if (absl::Status status = LoadRows(table, rows_done); !status.ok()) return status;
      phase = "index:0";
      if (absl::Status status = SetState(table, table.data().rows(), phase); !status.ok()) {
        return status;
      }
    }
    // Indexes after the data: building one over sorted data beats maintaining it per row.
    int built = 0;
    if (absl::StartsWith(phase, "index:")) {
      (void)std::from_chars(phase.data() + 6, phase.data() + phase.size(), built);
    }
    for (int i = built; i < table.indexes_size(); ++i) {
      absl::StatusOr<std::string> sql = SqlFor(table.indexes(i), dialect_, table.name());
      if (!sql.ok()) return sql.status();
      if (absl::Status status = ToStatus(session_.ExecuteSql(*sql),
                                         absl::StrCat("indexing ", table.name()));
          !status.ok()) {
        return status;
      }
      if (absl::Status status = SetState(table, table.data().rows(), absl::StrCat("index:", i + 1));
          !status.ok()) {
        return status;
      }
    }
    if (absl::Status status = RunEach(table.after_load(), table, "after loading"); !status.ok()) {
      return status;
    }
    return SetState(table, table.data().rows(), "done");
  }

  // Steps may be written for one dialect only; the other skips them.
  absl::Status RunEach(const google::protobuf::RepeatedPtrField<v1::DialectSql>& steps,
                       const v1::Table& table, absl::string_view doing) {
    for (const v1::DialectSql& step : steps) {
      absl::StatusOr<std::string> sql = SqlFor(step, dialect_, table.name());
      if (!sql.ok()) continue;
      if (absl::Status status =
              ToStatus(session_.ExecuteSql(*sql), absl::StrCat(doing, " ", table.name()));
          !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  // Batches from rows_done + 1: each commits with its watermark, so a killed load leaves only
  // whole batches behind and resumes right after the last one.
  absl::Status LoadRows(const v1::Table& table, int64_t rows_done) {
    const v1::TableData& data = table.data();
    // A spec built in code may leave batch at 0; the parser's default applies then too (and
    // the loop below must always advance).
    const int64_t batch = data.batch() > 0 ? data.batch() : kDefaultLoadBatch;
    std::vector<std::unique_ptr<ParamGenerator>> generators;
    std::vector<std::string> columns;
    for (int c = 0; c < data.columns_size(); ++c) {
      absl::StatusOr<std::unique_ptr<ParamGenerator>> generator = MakeParamGenerator(
          data.columns(c).generator(),
          {.seed = MixSeed(MixSeed(kSeedOfLoad, std::hash<std::string>{}(table.name())),
                           static_cast<uint64_t>(c) * 1'000'003 + static_cast<uint64_t>(rows_done))});
      if (!generator.ok()) return generator.status();
      generators.push_back(*std::move(generator));
      columns.push_back(data.columns(c).name());
    }
    int generate_id = -1;
    if (data.columns_size() == 0 && data.rows() > 0) {
      absl::StatusOr<std::string> sql = SqlFor(data.generate(), dialect_, table.name());
      if (!sql.ok()) return sql.status();
      generate_id = next_statement_id_++;
      if (absl::Status status = session_.Prepare(
              generate_id, {absl::StrCat("load_", table.name()),
                            dialect_ == Dialect::kPostgreSql ? NumberPlaceholders(*sql) : *sql});
          !status.ok()) {
        return status;
      }
    }
    std::vector<Value> values;
    std::vector<std::string> texts;
    for (int64_t first = rows_done + 1; first <= data.rows(); first += batch) {
      const int64_t last = std::min(data.rows(), first + batch - 1);
      if (ExecOutcome begun = session_.Begin(); !begun.ok()) return ToStatus(begun, "BEGIN");
      ExecOutcome loaded;
      if (generate_id >= 0) {
        const Value bounds[] = {first, last};
        loaded = session_.Execute(generate_id, bounds);
      } else {
        const size_t cells = static_cast<size_t>(last - first + 1) * generators.size();
        values.resize(cells);
        texts.resize(cells);
        size_t cell = 0;
        for (int64_t row = first; row <= last; ++row) {
          for (auto& generator : generators) {
            values[cell] = generator->Next({.row = row}, texts[cell]);
            ++cell;
          }
        }
        loaded = session_.BulkInsert(table.name(), columns, values);
      }
      if (!loaded.ok()) {
        session_.Rollback();
        return ToStatus(loaded, absl::StrCat("loading rows ", first, "-", last, " of ", table.name()));
      }
      if (absl::Status status = SetState(table, last, "loading"); !status.ok()) {
        session_.Rollback();
        return status;
      }
      if (ExecOutcome committed = session_.Commit(); !committed.ok()) {
        return ToStatus(committed, absl::StrCat("committing rows ", first, "-", last, " of ",
                                                table.name()));
      }
      Report(table, last);
    }
    return absl::OkStatus();
  }

  void Report(const v1::Table& table, int64_t rows) {
    if (progress_) {
      progress_({table.name(), static_cast<uint64_t>(rows), static_cast<uint64_t>(table.data().rows())});
    }
  }

  const v1::WorkloadSpec& spec_;
  Session& session_;
  const Dialect dialect_;
  const std::function<void(const PrepareProgress&)>& progress_;
  int next_statement_id_ = 0;  // the session's statements are numbered 0, 1, 2 …
};

absl::StatusOr<int64_t> CountOf(Session& session, const std::string& sql) {
  absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(sql, 1);
  if (!rows.ok()) return rows.status();
  int64_t value = 0;
  if (rows->empty() ||
      std::from_chars(rows->front().data(), rows->front().data() + rows->front().size(), value)
              .ec != std::errc()) {
    return absl::InternalError(absl::StrCat("`", sql, "` did not return one integer"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::string> SqlFor(const v1::DialectSql& sql, Dialect dialect, std::string_view what) {
  const std::string& own = dialect == Dialect::kMySql ? sql.mysql() : sql.postgresql();
  if (!own.empty()) return own;
  if (!sql.any().empty()) return sql.any();
  if (dialect == Dialect::kNoop) return sql.postgresql().empty() ? sql.mysql() : sql.postgresql();
  const std::string_view dialect_name = db::DialectName(dialect);
  return absl::InvalidArgumentError(absl::StrCat(absl::string_view(what.data(), what.size()),
                                                 ": the workload has no SQL for ",
                                                 absl::string_view(dialect_name.data(),
                                                                   dialect_name.size())));
}

absl::Status LoadWorkloadData(const v1::WorkloadSpec& spec, Session& session, Dialect dialect,
                              const std::function<void(const PrepareProgress&)>& progress) {
  return Loader(spec, session, dialect, progress).Run();
}

absl::Status ValidateWorkloadData(const v1::WorkloadSpec& spec, Session& session, Dialect dialect) {
  std::vector<std::string> failures;
  auto expect = [&](const std::string& what, const std::string& sql, int64_t wanted) {
    absl::StatusOr<int64_t> got = CountOf(session, sql);
    if (!got.ok()) {
      failures.push_back(absl::StrCat(what, ": ", got.status().message()));
    } else if (*got != wanted) {
      failures.push_back(absl::StrCat(what, ": expected ", wanted, ", got ", *got));
    }
  };
  for (const v1::Table& table : spec.tables()) {
    const std::string quoted = dialect == Dialect::kMySql ? absl::StrCat("`", table.name(), "`")
                                                          : absl::StrCat("\"", table.name(), "\"");
    expect(absl::StrCat("rows of ", table.name()), absl::StrCat("SELECT COUNT(*) FROM ", quoted),
           table.data().rows());
  }
  for (const v1::Check& check : spec.checks()) {
    absl::StatusOr<std::string> sql = SqlFor(check.sql(), dialect, check.name());
    if (!sql.ok()) continue;  // a check for the other dialect
    expect(check.name(), *sql, check.expect());
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("validation of workload ", spec.name(), " failed: ",
                                          absl::StrJoin(failures, "; ")));
}

absl::Status DropWorkloadData(const v1::WorkloadSpec& spec, Session& session) {
  absl::StatusOr<std::vector<std::string>> ours = session.FetchColumn(
      absl::StrCat("SELECT tbl FROM ", kLoadStateTable, " WHERE workload = ", Literal(spec.name())),
      100'000);
  if (!ours.ok()) {
    // No state table: dbload never loaded anything here, so there is nothing of ours to drop.
    return absl::OkStatus();
  }
  for (int t = spec.tables_size() - 1; t >= 0; --t) {
    const v1::Table& table = spec.tables(t);
    if (std::find(ours->begin(), ours->end(), table.name()) == ours->end()) continue;
    if (absl::Status status = ToStatus(session.ExecuteSql(absl::StrCat("DROP TABLE IF EXISTS ",
                                                                       table.name())),
                                       absl::StrCat("dropping ", table.name()));
        !status.ok()) {
      return status;
    }
    if (absl::Status status = ToStatus(
            session.ExecuteSql(absl::StrCat("DELETE FROM ", kLoadStateTable, " WHERE workload = ",
                                            Literal(spec.name()), " AND tbl = ",
                                            Literal(table.name()))),
            "updating the load state");
        !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<std::vector<std::string>> left =
      session.FetchColumn(absl::StrCat("SELECT tbl FROM ", kLoadStateTable), 1);
  if (left.ok() && left->empty()) session.ExecuteSql(absl::StrCat("DROP TABLE ", kLoadStateTable));
  return absl::OkStatus();
}

std::unique_ptr<Workload> MakeDeclarativeWorkload(v1::WorkloadSpec spec) {
  return std::make_unique<DeclarativeWorkload>(std::move(spec));
}

}  // namespace dbload
