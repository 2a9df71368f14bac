// The engine of YAML workloads. One file of about 600 lines because its three classes share one
// private plan: the scenario compiles the spec (statements, captures, variables, samples, retry
// policies) once, and its workers, friends of it, run that plan on the hot path without copies.
#include "workload/declarative.h"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "base/random.h"
#include "workload/loader.h"
#include "workload/param_generator.h"
#include "workload/sql_text.h"

namespace dbload {
namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;
using db::Value;

// A sample larger than this is a mistake in the workload (a missing LIMIT); it would cost the
// agent gigabytes before the run starts.
constexpr size_t kMaxSampleRows = 50'000'000;

// ---------------------------------------------------------------------------------------------
// Scenarios.

// Where one bound value comes from on a worker.
struct BoundParam {
  std::unique_ptr<ParamGenerator> generator;  // or:
  int capture = -1;                           // index into the worker's captured values, or:
  int variable = -1;                          // index into the query type's variables
  const std::vector<std::string>* sample = nullptr;
  // consume: the positions in the sample of the values this worker's slot owns.
  const std::vector<uint32_t>* owned = nullptr;
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
  std::map<std::string, int> variables;  // let: name → index, in draw order
};

class DeclarativeScenario;

class DeclarativeWorker final : public ScenarioWorker {
 public:
  DeclarativeWorker(const DeclarativeScenario& scenario, const WorkerSlot& slot);
  int NextQueryType() override;
  ExecOutcome Run(int query_type, Session& session) override;
  ExecOutcome Retry(int query_type, Session& session) override;
  std::vector<ExplainTarget> ExplainTargets(int query_type,
                                            const CaptureRun& run_capturing) override;

 private:
  struct StatementState {
    std::vector<BoundParam> params;
    std::vector<Value> values;       // params × repeat, refilled per execution
    std::vector<std::string> texts;  // backing store of text values, same positions
    uint64_t drawn_for = 0;          // the transaction (transactions_) values were drawn for
  };
  // A `let:` variable: drawn once per transaction, bound by every statement that names it.
  struct VariableState {
    BoundParam param;
    std::vector<int> distinct_from;  // earlier variables it must differ from
    Value value;
    std::string text;  // backing store of a text value
  };
  // One value of `param` into `value`; a failure (a sample not read or used up) is returned.
  std::optional<ExecOutcome> Draw(BoundParam& param, Value& value, std::string& text,
                                  const std::vector<VariableState>& variables);
  // Draws the query type's variables for one transaction.
  std::optional<ExecOutcome> DrawVariables(std::vector<VariableState>& variables);
  // Fills state.values for one execution. On a retry of the same transaction, only the values
  // that come from the transaction itself (captured, variables) are bound again; the drawn ones
  // stay as they were, so that a retry is the same transaction (a consumed sample value is not
  // taken twice).
  std::optional<ExecOutcome> Bind(const PreparedStatementPlan& statement, StatementState& state,
                                  const std::vector<VariableState>& variables);
  ExecOutcome Execute(int query_type, Session& session);

  const DeclarativeScenario& scenario_;
  const WorkerSlot slot_;
  Random random_;
  std::vector<std::vector<StatementState>> states_;  // [query type][statement]
  std::vector<std::vector<VariableState>> variables_;  // [query type][variable]
  std::vector<std::optional<int64_t>> captured_;
  std::vector<size_t> consumed_;  // per sample: values this worker has taken
  uint64_t transactions_ = 0;     // Run calls so far: which transaction values belong to
};

class DeclarativeScenario final : public Scenario {
 public:
  DeclarativeScenario(v1::Scenario spec) : spec_(std::move(spec)) {
    for (const v1::QueryType& query_type : spec_.query_types()) {
      names_.push_back(query_type.name());
      // Not given: 1, as the parser sets it; 0: never drawn (upper_bound skips it).
      const double weight = query_type.has_weight() ? std::max(0.0, query_type.weight()) : 1.0;
      cumulative_weights_.push_back((cumulative_weights_.empty() ? 0 : cumulative_weights_.back()) +
                                    weight);
      QueryTypePlan plan{.transaction = query_type.transaction()};
      for (const v1::Variable& variable : query_type.let()) {
        plan.variables.emplace(variable.name(), static_cast<int>(plan.variables.size()));
      }
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
      for (const v1::Variable& variable : query_type.let()) {
        if (variable.generator().kind_case() == v1::Generator::kSample) {
          sample_index_.emplace(SampleKey(variable.generator().sample()), sample_index_.size());
        }
      }
      plans_.push_back(std::move(plan));
      retry_policies_.push_back(RetryPolicyOf(query_type.retry(), spec_.retry()));
    }
  }

  // What the parser checks with the file's positions, checked again on the proto, which may come
  // from any client of the coordinator: every name a value refers to exists where it must.
  absl::Status CheckReferences() const {
    for (int q = 0; q < spec_.query_types_size(); ++q) {
      const v1::QueryType& query_type = spec_.query_types(q);
      const std::string path =
          absl::StrCat("workload_spec.scenarios[", spec_.name(), "].query_types.", q);
      const std::map<std::string, int>& variables = plans_[static_cast<size_t>(q)].variables;
      if (variables.size() != static_cast<size_t>(query_type.let_size())) {
        return FieldError(path + ".let", "a variable is declared twice");
      }
      for (int v = 0; v < query_type.let_size(); ++v) {
        const v1::Generator& generator = query_type.let(v).generator();
        for (const std::string& other : generator.distinct_from()) {
          auto it = variables.find(other);
          if (it == variables.end() || it->second >= v) {
            return FieldError(absl::StrCat(path, ".let.", v, ".generator.distinct_from"),
                              absl::StrCat("'", other, "' is not an earlier variable"));
          }
        }
        if (generator.kind_case() == v1::Generator::kCaptured ||
            generator.kind_case() == v1::Generator::kVariable) {
          return FieldError(absl::StrCat(path, ".let.", v),
                            "a variable cannot be captured or "
                            "another variable");
        }
      }
      std::set<std::string> captured;
      for (int s = 0; s < query_type.statements_size(); ++s) {
        const v1::Statement& statement = query_type.statements(s);
        for (int p = 0; p < statement.params_size(); ++p) {
          const v1::Generator& param = statement.params(p);
          const std::string param_path = absl::StrCat(path, ".statements.", s, ".params.", p);
          if (param.kind_case() == v1::Generator::kVariable &&
              !variables.contains(param.variable())) {
            return FieldError(param_path,
                              absl::StrCat("no variable '", param.variable(), "' in let:"));
          }
          if (param.kind_case() == v1::Generator::kCaptured &&
              !captured.contains(param.captured())) {
            return FieldError(
                param_path, absl::StrCat("no earlier statement captures '", param.captured(), "'"));
          }
        }
        if (!statement.capture().empty()) captured.insert(statement.capture());
      }
    }
    return absl::OkStatus();
  }

  const std::vector<std::string>& query_types() const override { return names_; }

  std::vector<db::StatementSpec> Statements(Dialect dialect) const override {
    std::vector<db::StatementSpec> statements;
    for (const v1::QueryType& query_type : spec_.query_types()) {
      int index = 0;  // 1-based, as EXPLAIN's plans and the workload's reader count them
      for (const v1::Statement& statement : query_type.statements()) {
        ++index;
        absl::StatusOr<std::string> sql = SqlFor(statement.sql(), dialect, "statement");
        // A workload without SQL for this dialect fails at Prepare with the statement's name.
        std::string text = sql.ok() ? *sql : std::string();
        if (statement.repeat() > 0) {
          text = ExpandRepeat(text, statement.repeat_text(), static_cast<int>(statement.repeat()));
        }
        if (dialect == Dialect::kPostgreSql) text = NumberPlaceholders(text);
        statements.push_back(
            {absl::StrCat(query_type.name(), "_", index), std::move(text),
             absl::StrCat(statement.source().empty() ? "" : statement.source() + ": ", "scenario ",
                          spec_.name(), ", query type ", query_type.name(), ", statement ", index,
                          " of ", query_type.statements_size())});
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
    const auto read = [&](const v1::Generator& param) -> absl::Status {
      if (param.kind_case() != v1::Generator::kSample) return absl::OkStatus();
      std::vector<std::string>& sample = samples_[sample_index_.at(SampleKey(param.sample()))];
      if (!sample.empty()) return absl::OkStatus();
      absl::StatusOr<std::string> sql = SqlFor(param.sample().sql(), dialect, "sample");
      if (!sql.ok()) return sql.status();
      absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(*sql, kMaxSampleRows);
      if (!rows.ok()) {
        return absl::Status(rows.status().code(),
                            absl::StrCat("scenario ", spec_.name(), ": reading the sample `", *sql,
                                         "`: ", rows.status().message()));
      }
      if (rows->empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("scenario ", spec_.name(), ": the sample `", *sql,
                         "` returned no rows (has `dbload prepare` been run?)"));
      }
      sample = *std::move(rows);
      return absl::OkStatus();
    };
    // In one transaction, rolled back: the reads see one snapshot, and commit nothing.
    return db::ReadRolledBack(
        session, absl::StrCat("scenario ", spec_.name(), ": reading the samples"),
        [&]() -> absl::Status {
          for (const v1::QueryType& query_type : spec_.query_types()) {
            for (const v1::Variable& variable : query_type.let()) {
              if (absl::Status status = read(variable.generator()); !status.ok()) return status;
            }
            for (const v1::Statement& statement : query_type.statements()) {
              for (const v1::Generator& param : statement.params()) {
                if (absl::Status status = read(param); !status.ok()) return status;
              }
            }
          }
          return absl::OkStatus();
        });
  }

  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const override {
    return std::make_unique<DeclarativeWorker>(*this, slot);
  }

  std::vector<RetryPolicy> RetryPolicies() const override { return retry_policies_; }

 private:
  friend class DeclarativeWorker;

  // A consumed sample's values, split by the slot that owns them: an integer by its value
  // modulo `slots` (sequential ids split evenly), anything else by its hash. By value, not by
  // position in the sample: an agent that reads the sample later (one that joins a running run,
  // after others have consumed part of it) then gives every slot exactly the values it had.
  // Built once per sample, on first use; the positions stay valid while the scenario lives.
  const std::vector<uint32_t>& OwnedPositions(size_t sample, uint32_t slot, uint32_t slots) const {
    std::lock_guard lock(partition_mu_);
    auto [it, added] = partitions_.try_emplace({sample, slots});
    std::vector<std::vector<uint32_t>>& owners = it->second;
    if (added) {
      owners.resize(slots);
      const std::vector<std::string>& values = samples_[sample];
      for (size_t position = 0; position < values.size(); ++position) {
        int64_t number = 0;
        const uint64_t key = absl::SimpleAtoi(values[position], &number)
                                 ? static_cast<uint64_t>(number)
                                 : std::hash<std::string>{}(values[position]);
        owners[key % slots].push_back(static_cast<uint32_t>(position));
      }
    }
    return owners[slot % slots];
  }
  static std::string SampleKey(const v1::Generator::Sample& sample) {
    return sample.SerializeAsString();
  }

  const v1::Scenario spec_;
  std::vector<std::string> names_;
  std::vector<double> cumulative_weights_;
  std::vector<QueryTypePlan> plans_;
  std::vector<RetryPolicy> retry_policies_;  // per query type
  int statement_count_ = 0;
  std::map<std::string, int> capture_slots_;  // "query type index/name" → slot
  int capture_count_ = 0;
  std::map<std::string, size_t> sample_index_;  // identical samples are read once
  std::vector<std::vector<std::string>> samples_;
  mutable std::mutex partition_mu_;
  // (sample, slots) → [slot] → positions (OwnedPositions)
  mutable std::map<std::pair<size_t, uint32_t>, std::vector<std::vector<uint32_t>>> partitions_;
};

DeclarativeWorker::DeclarativeWorker(const DeclarativeScenario& scenario, const WorkerSlot& slot)
    : scenario_(scenario),
      slot_(slot),
      random_(MixSeed(slot.run_seed, slot.index)),
      captured_(static_cast<size_t>(scenario.capture_count_)),
      consumed_(scenario.samples_.size(), 0) {
  const uint64_t worker_seed = MixSeed(slot.run_seed, slot.index);
  const auto bind = [&](const v1::Generator& spec, int q, uint64_t stream) {
    BoundParam param;
    if (spec.kind_case() == v1::Generator::kCaptured) {
      param.capture = scenario.capture_slots_.at(absl::StrCat(q, "/", spec.captured()));
    } else if (spec.kind_case() == v1::Generator::kVariable) {
      param.variable = scenario.plans_[static_cast<size_t>(q)].variables.at(spec.variable());
    } else if (spec.kind_case() == v1::Generator::kSample) {
      const size_t index = scenario.sample_index_.at(DeclarativeScenario::SampleKey(spec.sample()));
      param.sample = index < scenario.samples_.size() ? &scenario.samples_[index] : nullptr;
      param.sample_index = index;
      if (param.sample != nullptr && spec.sample().consume()) {
        param.owned =
            &scenario.OwnedPositions(index, slot.index, std::max<uint32_t>(1, slot.count));
      }
      param.from_sample = true;
      param.consume = spec.sample().consume();
    } else {
      // Checked by the parser; a spec built in code that is wrong fails loudly here.
      absl::StatusOr<std::unique_ptr<ParamGenerator>> generator =
          MakeParamGenerator(spec, {.seed = MixSeed(worker_seed, stream),
                                    .slot_index = slot.index,
                                    .slot_count = slot.count});
      if (generator.ok()) param.generator = *std::move(generator);
    }
    return param;
  };
  uint64_t stream = 0;
  // Variables draw from streams of their own, numbered apart from the parameters' so that adding
  // a let: to one query type leaves every other value of the run as it was.
  uint64_t variable_stream = uint64_t{1} << 32;
  for (int q = 0; q < scenario.spec_.query_types_size(); ++q) {
    const v1::QueryType& query_type = scenario.spec_.query_types(q);
    std::vector<VariableState>& variables = variables_.emplace_back();
    for (const v1::Variable& variable : query_type.let()) {
      VariableState& state = variables.emplace_back();
      state.param = bind(variable.generator(), q, ++variable_stream);
      for (const std::string& other : variable.generator().distinct_from()) {
        state.distinct_from.push_back(scenario.plans_[static_cast<size_t>(q)].variables.at(other));
      }
    }
    std::vector<StatementState>& states = states_.emplace_back();
    for (const v1::Statement& statement : query_type.statements()) {
      StatementState& state = states.emplace_back();
      for (const v1::Generator& spec : statement.params()) {
        state.params.push_back(bind(spec, q, ++stream));
      }
      const size_t width =
          state.params.size() * static_cast<size_t>(std::max<uint32_t>(1, statement.repeat()));
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

std::optional<ExecOutcome> DeclarativeWorker::Draw(BoundParam& param, Value& value,
                                                   std::string& text,
                                                   const std::vector<VariableState>& variables) {
  if (param.generator) {
    value = param.generator->Next({}, text);
  } else if (param.variable >= 0) {
    // A text variable's view points into its VariableState, which outlives the transaction.
    value = variables[static_cast<size_t>(param.variable)].value;
  } else if (param.capture >= 0) {
    const std::optional<int64_t>& captured = captured_[static_cast<size_t>(param.capture)];
    value = captured ? Value(*captured) : Value();
  } else if (param.from_sample) {
    if (param.sample == nullptr) {
      return WorkloadFailure("dbload-sample", "the scenario's samples were never read (Setup)");
    }
    const std::vector<std::string>& sample = *param.sample;
    size_t index = 0;
    if (param.consume) {
      // This worker's part of the sample: the values its slot owns, so that no two workers of
      // the run (on any agent) take the same.
      const size_t taken = consumed_[param.sample_index]++;
      if (taken >= param.owned->size()) {
        return WorkloadFailure("dbload-sample",
                               absl::StrCat("this worker's part of the sample (", taken,
                                            " values) is used up: the run asks for more rows "
                                            "than the database holds"));
      }
      index = (*param.owned)[taken];
    } else {
      index = static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(sample.size()) - 1));
    }
    value = std::string_view(sample[index]);
  } else {
    value = Value();
  }
  return std::nullopt;
}

// Values compare by what they bind: the same number, or the same text.
bool SameValue(const Value& a, const Value& b) { return OwnedValue(a) == OwnedValue(b); }

// A variable with distinct_from is drawn again while it equals one of those; the parser has made
// sure that its generator has more values than it must avoid, so this ends quickly unless the
// distribution is extremely skewed, and the bound turns that case into a named error.
constexpr int kMaxDistinctDraws = 1000;

std::optional<ExecOutcome> DeclarativeWorker::DrawVariables(std::vector<VariableState>& variables) {
  for (VariableState& variable : variables) {
    for (int draw = 0;; ++draw) {
      if (std::optional<ExecOutcome> failed =
              Draw(variable.param, variable.value, variable.text, variables)) {
        return failed;
      }
      const bool clashes =
          std::any_of(variable.distinct_from.begin(), variable.distinct_from.end(), [&](int other) {
            return SameValue(variable.value, variables[static_cast<size_t>(other)].value);
          });
      if (!clashes) break;
      if (draw + 1 == kMaxDistinctDraws) {
        return WorkloadFailure(
            "dbload-distinct",
            absl::StrCat(kMaxDistinctDraws,
                         " draws of a let: variable gave only values its "
                         "distinct_from variables already hold; widen its range"));
      }
    }
  }
  return std::nullopt;
}

std::optional<ExecOutcome> DeclarativeWorker::Bind(const PreparedStatementPlan& statement,
                                                   StatementState& state,
                                                   const std::vector<VariableState>& variables) {
  const bool retry = state.drawn_for == transactions_;
  state.drawn_for = transactions_;
  size_t position = 0;
  for (int r = 0; r < statement.repeat; ++r) {
    for (size_t p = 0; p < state.params.size(); ++p, ++position) {
      if (retry && state.params[p].capture < 0 && state.params[p].variable < 0) continue;
      if (std::optional<ExecOutcome> failed =
              Draw(state.params[p], state.values[position], state.texts[position], variables)) {
        return failed;
      }
    }
  }
  return std::nullopt;
}

std::vector<ExplainTarget> DeclarativeWorker::ExplainTargets(int query_type,
                                                             const CaptureRun& run_capturing) {
  const QueryTypePlan& plan = scenario_.plans_[static_cast<size_t>(query_type)];
  std::vector<StatementState>& states = states_[static_cast<size_t>(query_type)];
  std::vector<VariableState>& variables = variables_[static_cast<size_t>(query_type)];
  ++transactions_;  // values of their own, as a transaction's
  // A variable that cannot be drawn is NULL, like any value below: the plan is still worth having.
  if (DrawVariables(variables).has_value()) {
    for (VariableState& variable : variables) variable.value = Value();
  }
  std::vector<ExplainTarget> targets;
  for (size_t s = 0; s < plan.statements.size(); ++s) {
    ExplainTarget& target = targets.emplace_back();
    target.statement = plan.statements[s].id;
    // A value that cannot be drawn (a used-up sample) is NULL.
    if (Bind(plan.statements[s], states[s], variables).has_value()) {
      for (Value& value : states[s].values) value = Value();
    }
    for (const Value& value : states[s].values) target.params.push_back(OwnedValue(value));
    const int capture = plan.statements[s].capture;
    if (capture >= 0) {
      captured_[static_cast<size_t>(capture)] =
          run_capturing ? run_capturing(target) : std::nullopt;
    }
  }
  return targets;
}

ExecOutcome DeclarativeWorker::Run(int query_type, Session& session) {
  ++transactions_;
  if (std::optional<ExecOutcome> failed =
          DrawVariables(variables_[static_cast<size_t>(query_type)])) {
    return *std::move(failed);
  }
  return Execute(query_type, session);
}

ExecOutcome DeclarativeWorker::Retry(int query_type, Session& session) {
  if (scenario_.retry_policies_[static_cast<size_t>(query_type)].redraw) {
    if (std::optional<ExecOutcome> failed =
            DrawVariables(variables_[static_cast<size_t>(query_type)])) {
      return *std::move(failed);
    }
  }
  return Execute(query_type, session);
}

ExecOutcome DeclarativeWorker::Execute(int query_type, Session& session) {
  const QueryTypePlan& plan = scenario_.plans_[static_cast<size_t>(query_type)];
  std::vector<StatementState>& states = states_[static_cast<size_t>(query_type)];
  const std::vector<VariableState>& variables = variables_[static_cast<size_t>(query_type)];
  if (plan.transaction) {
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return begun;
  }
  int64_t rows = 0;
  for (size_t s = 0; s < plan.statements.size(); ++s) {
    const PreparedStatementPlan& statement = plan.statements[s];
    if (std::optional<ExecOutcome> failed = Bind(statement, states[s], variables)) {
      if (plan.transaction) session.Rollback();
      return *std::move(failed);
    }
    ExecOutcome outcome = session.Execute(statement.id, states[s].values, statement.capture >= 0);
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
      if (scenario.name() != name) continue;
      auto made = std::make_unique<DeclarativeScenario>(scenario);
      if (absl::Status status = made->CheckReferences(); !status.ok()) return status;
      return made;
    }
    return FieldError("scenario", absl::StrCat("workload ", spec_.name(), " has no scenario '", name,
                                               "' (it has: ", absl::StrJoin(ScenarioNames(), ", "),
                                               ")"));
  }

  v1::WorkloadSpec DataSpec() const override { return spec_; }
  std::vector<v1::Invariant> Invariants() const override {
    return {spec_.invariants().begin(), spec_.invariants().end()};
  }

 private:
  const v1::WorkloadSpec spec_;
};

}  // namespace

RetryPolicy RetryPolicyOf(const v1::Retry& query_type, const v1::Retry& scenario) {
  const v1::Retry& retry = query_type.max_tries() > 0 ? query_type : scenario;
  RetryPolicy policy{.max_tries = std::max<uint32_t>(1, retry.max_tries()),
                     .redraw = retry.redraw()};
  for (int cause : retry.on()) {
    switch (static_cast<v1::RetryCause>(cause)) {
      case v1::SERIALIZATION:
        policy.on.push_back(db::RetryCause::kSerialization);
        break;
      case v1::DEADLOCK:
        policy.on.push_back(db::RetryCause::kDeadlock);
        break;
      case v1::LOCK_TIMEOUT:
        policy.on.push_back(db::RetryCause::kLockTimeout);
        break;
      default:
        break;
    }
  }
  if (retry.on().empty())
    policy.on.assign(std::begin(db::kRetryCauses), std::end(db::kRetryCauses));
  return policy;
}

std::unique_ptr<Workload> MakeDeclarativeWorkload(v1::WorkloadSpec spec) {
  return std::make_unique<DeclarativeWorkload>(std::move(spec));
}

}  // namespace dbload
