#include "workload/workload_spec_check.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "base/quote.h"
#include "plan/plan_limits.h"
#include "workload/param_generator.h"
#include "workload/sql_text.h"

namespace dbload {
namespace {

using v1::WorkloadSpec;

constexpr uint32_t kDefaultBatch = 10'000;
constexpr uint32_t kMaxBatch = 1'000'000;
constexpr uint32_t kMaxRepeat = 10'000;

// Table and workload names end up in SQL as identifiers and literals; keeping them plain makes
// them mean the same quoted or not, in both dialects, and needs no escaping.
bool IsPlainName(const std::string& name) {
  return !name.empty() && name.size() <= 63 &&
         !absl::ascii_isdigit(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
         });
}

bool HasSql(const v1::DialectSql& sql) {
  return !sql.any().empty() || !sql.postgresql().empty() || !sql.mysql().empty();
}

class Checker {
 public:
  explicit Checker(const ErrorAtPath& error_at) : error_at_(error_at) {}

  absl::Status Check(WorkloadSpec& spec) {
    if (!IsPlainName(spec.name())) {
      return error_at_("name", absl::StrCat("expected a lowercase name of letters, "
                                            "digits and _, got ",
                                            Quote(spec.name())));
    }
    std::set<std::string> tables;
    for (int t = 0; t < spec.tables_size(); ++t) {
      if (absl::Status status =
              CheckTable(*spec.mutable_tables(t), absl::StrCat("tables.", t), tables);
          !status.ok()) {
        return status;
      }
    }
    for (int c = 0; c < spec.checks_size(); ++c) {
      const std::string path = absl::StrCat("checks.", c);
      if (!HasSql(spec.checks(c).sql())) return error_at_(path, "a check needs sql");
      if (spec.checks(c).name().empty()) return error_at_(path, "a check needs a name");
    }
    std::set<std::string> invariants;
    for (int i = 0; i < spec.invariants_size(); ++i) {
      const v1::Invariant& invariant = spec.invariants(i);
      const std::string path = absl::StrCat("invariants.", i);
      if (invariant.name().empty()) return error_at_(path, "an invariant needs a name");
      if (!invariants.insert(invariant.name()).second) {
        return error_at_(JoinPath(path, "name"),
                         absl::StrCat("invariant ", Quote(invariant.name()), " is listed twice"));
      }
      if (!HasSql(invariant.sql())) return error_at_(path, "an invariant needs sql");
      if (invariant.expect().empty() == !invariant.unchanged()) {
        return error_at_(path,
                         "an invariant needs either expect: VALUE or unchanged: true (not both)");
      }
    }
    if (spec.scenarios_size() == 0) {
      return error_at_("", "a workload needs at least one scenario (scenarios:)");
    }
    std::set<std::string> scenarios;
    for (int s = 0; s < spec.scenarios_size(); ++s) {
      if (absl::Status status =
              CheckScenario(*spec.mutable_scenarios(s), absl::StrCat("scenarios.", s), scenarios);
          !status.ok()) {
        return status;
      }
    }
    // The same limits the plan validator applies to the proto, here with the file's position.
    if (absl::Status limits = CheckWorkloadLimits(spec); !limits.ok()) {
      return error_at_(FieldOf(limits).value_or(""), limits.message());
    }
    return absl::OkStatus();
  }

 private:
  absl::Status CheckTable(v1::Table& table, const std::string& path, std::set<std::string>& names) {
    if (!IsPlainName(table.name())) {
      return error_at_(JoinPath(path, "name"),
                       absl::StrCat("expected a lowercase name of letters, digits and _ "
                                    "(the same, quoted or not, in both dialects), got ",
                                    Quote(table.name())));
    }
    if (!names.insert(table.name()).second) {
      return error_at_(JoinPath(path, "name"),
                       absl::StrCat("table ", Quote(table.name()), " is listed twice"));
    }
    if (!HasSql(table.create())) return error_at_(path, "a table needs create: SQL");
    v1::TableData& data = *table.mutable_data();
    const std::string data_path = JoinPath(path, "data");
    if (data.rows() < 0) {
      return error_at_(JoinPath(data_path, "rows"), "must be >= 0");
    }
    if (data.batch() == 0) data.set_batch(kDefaultBatch);
    if (data.batch() > kMaxBatch) {
      return error_at_(JoinPath(data_path, "batch"), absl::StrCat("must be at most ", kMaxBatch));
    }
    const bool client_side = data.columns_size() > 0;
    const bool server_side = HasSql(data.generate());
    if (data.rows() > 0 && client_side == server_side) {
      return error_at_(data_path,
                       "rows to load need either columns (generated here) or generate "
                       "(SQL run by the server), not both and not neither");
    }
    if (server_side) {
      if (absl::Status status =
              CheckPlaceholders(data.generate(), 2, JoinPath(data_path, "generate"));
          !status.ok()) {
        return status;
      }
    }
    for (const v1::Column& column : data.columns()) {
      const std::string column_path = absl::StrCat(data_path, ".columns.", column.name());
      if (column.generator().kind_case() == v1::Generator::kCaptured ||
          column.generator().kind_case() == v1::Generator::kSample ||
          column.generator().kind_case() == v1::Generator::kVariable) {
        return error_at_(column_path,
                         "captured, sample and variable values exist only in scenarios");
      }
      if (absl::Status status = CheckGenerator(column.generator(), column_path); !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckScenario(v1::Scenario& scenario, const std::string& path,
                             std::set<std::string>& names) {
    if (scenario.name().empty()) return error_at_(path, "a scenario needs a name");
    if (!names.insert(scenario.name()).second) {
      return error_at_(JoinPath(path, "name"),
                       absl::StrCat("scenario ", Quote(scenario.name()), " is listed twice"));
    }
    if (scenario.query_types_size() == 0) {
      return error_at_(path, "a scenario needs at least one query type (query_types:)");
    }
    if (absl::Status status = CheckRetry(scenario.retry(), JoinPath(path, "retry")); !status.ok()) {
      return status;
    }
    std::set<std::string> query_types;
    for (int q = 0; q < scenario.query_types_size(); ++q) {
      v1::QueryType& query_type = *scenario.mutable_query_types(q);
      const std::string query_path = absl::StrCat(path, ".query_types.", q);
      if (query_type.name().empty()) return error_at_(query_path, "a query type needs a name");
      if (!query_types.insert(query_type.name()).second) {
        return error_at_(JoinPath(query_path, "name"),
                         absl::StrCat("query type ", Quote(query_type.name()),
                                      " is listed twice in this scenario"));
      }
      if (!query_type.has_weight()) query_type.set_weight(1);
      if (query_type.weight() < 0) {
        return error_at_(JoinPath(query_path, "weight"), "must be >= 0");
      }
      for (const auto& [table, rows] : query_type.changes()) {
        if (!IsPlainName(table)) {
          return error_at_(JoinPath(JoinPath(query_path, "changes"), table),
                           "expected a table name of lowercase letters, digits and _");
        }
      }
      if (query_type.statements_size() == 0) {
        return error_at_(query_path, "a query type needs at least one statement");
      }
      if (absl::Status status = CheckRetry(query_type.retry(), JoinPath(query_path, "retry"));
          !status.ok()) {
        return status;
      }
      std::set<std::string> variables;
      if (absl::Status status = CheckVariables(query_type, query_path, variables); !status.ok()) {
        return status;
      }
      std::set<std::string> captures;
      for (int s = 0; s < query_type.statements_size(); ++s) {
        if (absl::Status status =
                CheckStatement(query_type.statements(s),
                               absl::StrCat(query_path, ".statements.", s), variables, captures);
            !status.ok()) {
          return status;
        }
      }
    }
    if (std::none_of(scenario.query_types().begin(), scenario.query_types().end(),
                     [](const v1::QueryType& query_type) { return query_type.weight() > 0; })) {
      return error_at_(path, "every query type has weight 0, so none would run (0 leaves one out)");
    }
    return absl::OkStatus();
  }

  absl::Status CheckRetry(const v1::Retry& retry, const std::string& path) {
    // max_tries' bound: CheckWorkloadLimits, shared with the coordinator.
    if (retry.max_tries() == 0 && (retry.on_size() > 0 || retry.redraw())) {
      return error_at_(path, "a retry needs max_tries (tries in all, the first included, e.g. 10)");
    }
    return absl::OkStatus();
  }

  // `let:` names are plain and unique, each generator draws something a transaction can use
  // before its first statement, and `distinct_from` names earlier variables that the generator
  // can differ from.
  absl::Status CheckVariables(const v1::QueryType& query_type, const std::string& query_path,
                              std::set<std::string>& names) {
    for (const v1::Variable& variable : query_type.let()) {
      const std::string path = JoinPath(JoinPath(query_path, "let"), variable.name());
      if (!IsPlainName(variable.name())) {
        return error_at_(path, absl::StrCat("expected a variable name of lowercase letters, "
                                            "digits and _, got ",
                                            Quote(variable.name())));
      }
      if (!names.insert(variable.name()).second) {
        return error_at_(path, "a variable is declared once per query type");
      }
      const v1::Generator& generator = variable.generator();
      switch (generator.kind_case()) {
        case v1::Generator::kCaptured:
        case v1::Generator::kVariable:
        case v1::Generator::kRow:
          return error_at_(path,
                           "a variable is drawn before the transaction's first statement: "
                           "captured, variable and row values do not exist yet");
        default:
          break;
      }
      if (absl::Status status = CheckGenerator(generator, path, /*in_let=*/true); !status.ok()) {
        return status;
      }
      const std::string distinct_path = JoinPath(path, "distinct_from");
      for (const std::string& other : generator.distinct_from()) {
        if (other == variable.name() || !names.contains(other)) {
          return error_at_(distinct_path,
                           absl::StrCat(Quote(other), " is not a variable declared before ",
                                        Quote(variable.name()), " in this let:"));
        }
      }
      if (const std::optional<int64_t> values = DistinctValues(generator);
          values && *values <= generator.distinct_from_size()) {
        return error_at_(
            distinct_path,
            absl::StrCat("the generator has ", *values, " possible value", *values == 1 ? "" : "s",
                         ", too few to differ from ", generator.distinct_from_size(),
                         " other variable", generator.distinct_from_size() == 1 ? "" : "s"));
      }
    }
    return absl::OkStatus();
  }

  // How many values a generator can draw, where that is small and known.
  static std::optional<int64_t> DistinctValues(const v1::Generator& generator) {
    const auto range = [](int64_t min, int64_t max) -> std::optional<int64_t> {
      return max >= min && max - min < 1'000'000 ? std::optional<int64_t>(max - min + 1)
                                                 : std::nullopt;
    };
    switch (generator.kind_case()) {
      case v1::Generator::kConstant:
        return 1;
      case v1::Generator::kUniform:
        return range(generator.uniform().min(), generator.uniform().max());
      case v1::Generator::kZipf:
        return range(generator.zipf().min(), generator.zipf().max());
      case v1::Generator::kSpecial:
        return range(generator.special().min(), generator.special().max());
      case v1::Generator::kGaussian:
        return range(generator.gaussian().min(), generator.gaussian().max());
      case v1::Generator::kChoice: {
        std::set<std::string> values(generator.choice().values().begin(),
                                     generator.choice().values().end());
        return static_cast<int64_t>(values.size());
      }
      default:
        return std::nullopt;
    }
  }

  absl::Status CheckStatement(const v1::Statement& statement, const std::string& path,
                              const std::set<std::string>& variables,
                              std::set<std::string>& captures) {
    if (!HasSql(statement.sql())) return error_at_(path, "a statement needs sql");
    const std::string sql_path = JoinPath(path, "sql");
    if (statement.repeat() > kMaxRepeat) {
      return error_at_(JoinPath(path, "repeat"), absl::StrCat("must be at most ", kMaxRepeat));
    }
    if (statement.repeat() > 0) {
      if (statement.repeat_text().empty()) {
        return error_at_(JoinPath(path, "repeat"), "repeat needs repeat_text, e.g. \"(?, ?)\"");
      }
      for (const std::string* text :
           {&statement.sql().any(), &statement.sql().postgresql(), &statement.sql().mysql()}) {
        if (text->empty()) continue;
        if (CountRepeatMarks(*text) != 1) {
          return error_at_(sql_path, "with repeat, the SQL must hold {repeat} once");
        }
      }
      if (absl::Status status = CheckPlaceholders(statement.sql(), 0, sql_path); !status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(status.message(), " (with repeat, placeholders belong in repeat_text)"));
      }
      if (const int in_repeat = CountPlaceholders(statement.repeat_text());
          in_repeat != statement.params_size()) {
        return error_at_(JoinPath(path, "params"),
                         absl::StrCat("repeat_text has ", in_repeat, " placeholders but ",
                                      statement.params_size(), " params are given"));
      }
    } else if (absl::Status status =
                   CheckPlaceholders(statement.sql(), statement.params_size(), sql_path);
               !status.ok()) {
      return status;
    }
    for (int p = 0; p < statement.params_size(); ++p) {
      const v1::Generator& param = statement.params(p);
      const std::string param_path = absl::StrCat(path, ".params.", p);
      if (param.kind_case() == v1::Generator::kCaptured && !captures.contains(param.captured())) {
        return error_at_(param_path,
                         absl::StrCat("captured: no earlier statement of this query type has "
                                      "capture: ",
                                      param.captured()));
      }
      if (param.kind_case() == v1::Generator::kVariable && !variables.contains(param.variable())) {
        return error_at_(
            param_path, absl::StrCat("variable: ", Quote(param.variable()),
                                     " is not declared in this query type's let:",
                                     variables.empty() ? "" : " (it declares: ",
                                     absl::StrJoin(variables, ", "), variables.empty() ? "" : ")"));
      }
      if (absl::Status status = CheckGenerator(param, param_path); !status.ok()) return status;
    }
    if (!statement.capture().empty()) {
      if (variables.contains(statement.capture())) {
        return error_at_(JoinPath(path, "capture"),
                         absl::StrCat(Quote(statement.capture()),
                                      " is already a variable of this query type (let:)"));
      }
      captures.insert(statement.capture());
    }
    return absl::OkStatus();
  }

  absl::Status CheckPlaceholders(const v1::DialectSql& sql, int expected, const std::string& path) {
    for (const std::string* text : {&sql.any(), &sql.postgresql(), &sql.mysql()}) {
      if (text->empty()) continue;
      if (const int found = CountPlaceholders(*text); found != expected) {
        return error_at_(path,
                         absl::StrCat("the SQL has ", found, " placeholders (?) but ", expected,
                                      expected == 1 ? " value is" : " values are", " bound to it"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckGenerator(const v1::Generator& generator, const std::string& path,
                              bool in_let = false) {
    if (!in_let && generator.distinct_from_size() > 0) {
      return error_at_(JoinPath(path, "distinct_from"),
                       "only a variable (let:) can be drawn distinct from others");
    }
    absl::Status status = CheckGeneratorSpec(generator);
    if (status.ok()) return status;
    const std::optional<std::string> field = FieldOf(status);
    const std::string field_path = field ? JoinPath(path, *field) : path;
    return error_at_(field_path, status.message());
  }

  const ErrorAtPath& error_at_;
};

}  // namespace

absl::Status CheckWorkloadSpec(WorkloadSpec& spec, const ErrorAtPath& error_at) {
  return Checker(error_at).Check(spec);
}

}  // namespace dbload
