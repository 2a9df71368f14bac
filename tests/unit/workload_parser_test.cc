#include "workload/workload_parser.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "plan/plan_limits.h"
#include "workload/sql_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

// A minimal valid workload; each test breaks one thing in it.
constexpr char kValid[] = R"(name: tiny
options:
  rows: 10
tables:
  - name: t
    create: CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(20))
    data:
      rows: ${rows}
      columns:
        id: {row: true}
        v: {pattern: {pattern: "v{row}"}}
scenarios:
  - name: read
    query_types:
      - name: by_id
        statements:
          - sql: SELECT v FROM t WHERE id = ?
            params: [{uniform: {min: 1, max: "${rows}"}}]
)";

absl::StatusOr<v1::WorkloadSpec> Parse(const std::string& text,
                                       const std::map<std::string, std::string>& options = {}) {
  return ParseWorkload(text, "w.yaml", options);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(WorkloadParserTest, ReadsAValidFileWithItsOptionsInPlace) {
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(kValid);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "tiny");
  EXPECT_EQ(spec->tables(0).data().rows(), 10);
  EXPECT_EQ(spec->tables(0).data().batch(), 10'000u);  // the default
  ASSERT_EQ(spec->tables(0).data().columns_size(), 2);
  EXPECT_EQ(spec->tables(0).data().columns(1).name(), "v");
  EXPECT_EQ(spec->tables(0).data().columns(1).generator().pattern().pattern(), "v{row}");
  EXPECT_EQ(spec->scenarios(0).query_types(0).statements(0).params(0).uniform().max(), 10);
  EXPECT_EQ(spec->scenarios(0).query_types(0).weight(), 1);  // the default
  EXPECT_EQ(spec->tables(0).create().any(), "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(20))");
  EXPECT_EQ(spec->options().at("rows"), "10");
}

TEST(WorkloadParserTest, ThePlansOptionsWinAndUnknownOnesAreRefusedByName) {
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(kValid, {{"rows", "500"}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->tables(0).data().rows(), 500);
  EXPECT_EQ(spec->scenarios(0).query_types(0).statements(0).params(0).uniform().max(), 500);
  const absl::Status unknown = Parse(kValid, {{"row", "5"}}).status();
  EXPECT_EQ(FieldOf(unknown), "workload_options.row");
  EXPECT_THAT(unknown.message(), HasSubstr("known: rows"));
  EXPECT_EQ(FieldOf(Parse(kValid, {{"rows", "many"}}).status()), "workload_options.rows");
}

TEST(WorkloadParserTest, ErrorsNameTheFileLineAndField) {
  struct Case {
    std::string from, to, expected;
  };
  const Case cases[] = {
      {"    create:", "    craete:", "w.yaml:6:5: tables.0.craete: unknown field"},
      {"SELECT v FROM t WHERE id = ?", "SELECT v FROM t WHERE id = ? AND v = ?",
       "w.yaml:17:18: scenarios.0.query_types.0.statements.0.sql: the SQL has 2 placeholders"},
      {"min: 1, max:", "min: 20, max:",
       "scenarios.0.query_types.0.statements.0.params.0.uniform.max"},
      {"- name: t\n", "- name: T\n", "tables.0.name: expected a lowercase name"},
      {"rows: ${rows}", "rows: ${rowz}", "w.yaml:8:13: tables.0.data.rows: unknown option ${rowz}"},
      {"rows: ${rows}", "rows: -3", "tables.0.data.rows: must be >= 0"},
      {"{row: true}", "{row: yes}", "tables.0.data.columns.id.row: expected true or false"},
      {"{row: true}", "{row: true, constant: x}", "only one of the generator kinds"},
      {"{uniform: {min: 1, max: \"${rows}\"}}", "{captured: id}",
       "statements.0.params.0: captured: no earlier statement"},
      {"  - name: read\n", "  - name: read\n    bogus: 1\n", "w.yaml:14:5: scenarios.0.bogus"},
  };
  for (const Case& c : cases) {
    const absl::Status status = Parse(Replace(kValid, c.from, c.to)).status();
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.to;
  }
  EXPECT_THAT(Parse("name: [unclosed").status().message(), HasSubstr("w.yaml:1:"));
}

TEST(WorkloadParserTest, RepeatedStatementsCountPlaceholdersInTheRepeatedPart) {
  const std::string repeated = Replace(kValid, R"(          - sql: SELECT v FROM t WHERE id = ?
            params: [{uniform: {min: 1, max: "${rows}"}}])",
                                       R"(          - sql: SELECT v FROM t WHERE id IN ({repeat})
            repeat: 3
            repeat_text: "?"
            params: [{uniform: {min: 1, max: "${rows}"}}])");
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(repeated);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->scenarios(0).query_types(0).statements(0).repeat(), 3u);
  EXPECT_THAT(Parse(Replace(repeated, "repeat_text: \"?\"", "repeat_text: \"?, ?\""))
                  .status()
                  .message(),
              HasSubstr("repeat_text has 2 placeholders but 1 params"));
  EXPECT_THAT(Parse(Replace(repeated, "IN ({repeat})", "IN (?)")).status().message(),
              HasSubstr("must hold {repeat} once"));
}

// A transfer: one amount drawn per transaction, bound by both updates; two distinct rows.
constexpr char kTransfer[] = R"(name: bank
scenarios:
  - name: move
    query_types:
      - name: transfer
        transaction: true
        let:
          amount: {uniform: {min: 1, max: 100}}
          from: {uniform: {min: 1, max: 10}}
          to: {uniform: {min: 1, max: 10}, distinct_from: [from]}
        statements:
          - sql: UPDATE a SET v = v - ? WHERE id = ?
            params: [amount, from]
          - sql: UPDATE a SET v = v + ? WHERE id = ?
            params: [amount, {variable: to}]
          - sql: INSERT INTO log (note) VALUES (?)
            params: [amount_text]
)";

TEST(WorkloadParserTest, ABareNameOfAVariableBindsItAndAnyOtherBareValueStaysAConstant) {
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(kTransfer);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::QueryType& transfer = spec->scenarios(0).query_types(0);
  ASSERT_EQ(transfer.let_size(), 3);
  EXPECT_EQ(transfer.let(0).name(), "amount");  // in the file's order
  EXPECT_EQ(transfer.let(2).name(), "to");
  EXPECT_EQ(transfer.let(2).generator().distinct_from(0), "from");
  EXPECT_EQ(transfer.statements(0).params(0).variable(), "amount");
  EXPECT_EQ(transfer.statements(0).params(1).variable(), "from");
  EXPECT_EQ(transfer.statements(1).params(1).variable(), "to");
  EXPECT_EQ(transfer.statements(2).params(0).constant(), "amount_text");
}

TEST(WorkloadParserTest, VariableMistakesAreNamedAtTheirLine) {
  struct Case {
    std::string from, to, expected;
  };
  const Case cases[] = {
      {"{variable: to}", "{variable: too}",
       "w.yaml:15:30: scenarios.0.query_types.0.statements.1.params.1: variable: \"too\" is not "
       "declared in this query type's let: (it declares: amount, from, to)"},
      {"distinct_from: [from]", "distinct_from: [to]",
       "let.to.distinct_from: \"to\" is not a variable declared before \"to\""},
      {"distinct_from: [from]", "distinct_from: [amount2]", "\"amount2\" is not a variable"},
      {"to: {uniform: {min: 1, max: 10}", "to: {uniform: {min: 1, max: 1}",
       "let.to.distinct_from: the generator has 1 possible value, too few to differ from 1 other"},
      {"amount: {uniform: {min: 1, max: 100}}", "amount: {captured: x}",
       "let.amount: a variable is drawn before the transaction's first statement"},
      {"amount: {uniform", "Amount: {uniform", "let.Amount: expected a variable name"},
      {"params: [amount_text]", "params: [{uniform: {min: 1, max: 2}, distinct_from: [from]}]",
       "params.0.distinct_from: only a variable (let:) can be drawn distinct from others"},
      {"VALUES (?)\n            params: [amount_text]",
       "VALUES (?) RETURNING id\n            params: [amount_text]\n            capture: amount",
       "statements.2.capture: \"amount\" is already a variable of this query type"},
  };
  for (const Case& c : cases) {
    const absl::Status status = Parse(Replace(kTransfer, c.from, c.to)).status();
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.to;
  }
}

TEST(WorkloadParserTest, ARetryPolicyIsReadWithItsCausesAndChecked) {
  const std::string retrying =
      Replace(kTransfer, "        transaction: true\n",
              "        transaction: true\n        retry: {max_tries: 5, on: [deadlock, "
              "serialization]}\n");
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(retrying);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::Retry& retry = spec->scenarios(0).query_types(0).retry();
  EXPECT_EQ(retry.max_tries(), 5u);
  EXPECT_THAT(retry.on(), testing::ElementsAre(v1::DEADLOCK, v1::SERIALIZATION));
  struct Case {
    std::string from, to, expected;
  };
  const Case cases[] = {
      {"deadlock, serialization", "deadlock, dead",
       "w.yaml:7:46: scenarios.0.query_types.0.retry.on.1: expected one of serialization, "
       "deadlock, lock_timeout, got \"dead\""},
      {"max_tries: 5", "max_tries: 5000",
       "scenarios.0.query_types.0.retry.max_tries: must be at most 1000"},
      {"max_tries: 5, ", "", "scenarios.0.query_types.0.retry: a retry needs max_tries"},
  };
  for (const Case& c : cases) {
    const absl::Status status = Parse(Replace(retrying, c.from, c.to)).status();
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.to;
  }
}

TEST(WorkloadParserTest, InvariantsAreReadAndNeedOneRule) {
  const std::string with =
      Replace(kTransfer, "scenarios:\n",
              "invariants:\n  - {name: total, sql: SELECT SUM(v) FROM a, unchanged: true}\n"
              "  - {name: none_negative, sql: SELECT COUNT(*) FROM a WHERE v < 0, expect: 0}\n"
              "scenarios:\n");
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(with);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->invariants_size(), 2);
  EXPECT_TRUE(spec->invariants(0).unchanged());
  EXPECT_EQ(spec->invariants(1).expect(), "0");
  EXPECT_THAT(
      Parse(Replace(with, "unchanged: true}", "unchanged: true, expect: 3}")).status().message(),
      HasSubstr("w.yaml:3:5: invariants.0: an invariant needs either expect: VALUE or "
                "unchanged: true (not both)"));
  EXPECT_THAT(Parse(Replace(with, "name: none_negative", "name: total")).status().message(),
              HasSubstr("invariants.1.name: invariant \"total\" is listed twice"));
}

TEST(WorkloadParserTest, WeightZeroLeavesAQueryTypeOutAndAllZeroIsRefused) {
  const std::string two =
      Replace(kValid, "      - name: by_id\n",
              "      - {name: never, weight: 0, statements: [{sql: SELECT 1}]}\n"
              "      - name: by_id\n");
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(two);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->scenarios(0).query_types(0).weight(), 0);
  EXPECT_EQ(spec->scenarios(0).query_types(1).weight(), 1);  // not given: 1
  EXPECT_THAT(
      Parse(Replace(two, "      - name: by_id\n", "      - name: by_id\n        weight: 0\n"))
          .status()
          .message(),
      HasSubstr("w.yaml:13:5: scenarios.0: every query type has weight 0"));
}

TEST(WorkloadParserTest, TimestampsTakeADateAndDays) {
  absl::StatusOr<v1::WorkloadSpec> spec =
      Parse(Replace(kValid, "{pattern: {pattern: \"v{row}\"}}",
                    "{timestamp: {from: \"2024-01-01\", days: 730}}"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& timestamp = spec->tables(0).data().columns(1).generator().timestamp();
  EXPECT_EQ(timestamp.from_unix_s(), 1704067200);
  EXPECT_EQ(timestamp.span_s(), 730 * 86400);
  EXPECT_THAT(Parse(Replace(kValid, "{pattern: {pattern: \"v{row}\"}}",
                            "{timestamp: {from: \"2024-13-01\", days: 730}}"))
                  .status()
                  .message(),
              HasSubstr("tables.0.data.columns.v.timestamp.from: expected a date"));
}

TEST(WorkloadParserTest, EveryBuiltinWorkloadFileParses) {
  ASSERT_FALSE(BuiltinWorkloadFiles().empty());
  for (const auto& [name, text] : BuiltinWorkloadFiles()) {
    absl::StatusOr<v1::WorkloadSpec> spec = ResolveWorkload(name, {});
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status();
    EXPECT_EQ(spec->name(), name);
    EXPECT_TRUE(IsYamlWorkload(name));
  }
  EXPECT_FALSE(IsYamlWorkload("oltp"));
  EXPECT_TRUE(IsYamlWorkload("./mine.yaml"));
  EXPECT_THAT(ResolveWorkload("/nonexistent/w.yaml", {}).status().message(),
              HasSubstr("cannot read workload file /nonexistent/w.yaml"));
}

TEST(WorkloadParserTest, TheShopWorkloadHasTheSeventeenCases) {
  absl::StatusOr<v1::WorkloadSpec> spec = ResolveWorkload("shop", {{"users", "1000"}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->scenarios_size(), 17);
  EXPECT_EQ(spec->tables(0).data().rows(), 1000);
  EXPECT_EQ(spec->tables(2).data().columns(1).generator().uniform().max(), 1000);  // user_id
}

// A workload whose scenario has `query_types` query types, each with `statements` copies of
// `sql` (written out, or as aliases of the first when `alias` is set).
std::string Generated(int query_types, int statements, const std::string& sql, bool alias) {
  std::string text = "name: big\nscenarios:\n  - name: s\n    query_types:\n";
  bool anchored = false;
  for (int q = 0; q < query_types; ++q) {
    absl::StrAppend(&text, "      - name: q", q, "\n        statements:\n");
    for (int i = 0; i < statements; ++i) {
      if (alias && anchored) {
        text += "          - sql: *big\n";
      } else {
        absl::StrAppend(&text, "          - sql: ", alias ? "&big " : "", "\"", sql, "\"\n");
        anchored = true;
      }
    }
  }
  return text;
}

TEST(WorkloadLimitsTest, TooManyQueryTypesAreRefusedAtTheScenariosLine) {
  ASSERT_TRUE(Parse(Generated(kMaxQueryTypes, 1, "SELECT 1", false)).ok());
  const absl::Status status =
      Parse(Generated(kMaxQueryTypes + 1, 1, "SELECT 1", false)).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("w.yaml:5:7: scenarios.0.query_types: 257 query types; a scenario may "
                        "have at most 256"));
}

TEST(WorkloadLimitsTest, AStatementPastItsLimitIsRefusedAtItsLine) {
  const std::string huge = "SELECT '" + std::string(kMaxStatementBytes, 'x') + "'";
  const absl::Status status = Parse(Generated(1, 1, huge, false)).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("w.yaml:7:18: scenarios.0.query_types.0.statements.0.sql: the SQL is "
                        "1048585 bytes, more than the 1048576 one statement may have"));
}

// The measured case was one 1 MB statement aliased 10,000 times (6 GB, then std::bad_alloc).
// Here 512 KiB aliased 200 times: 100 MB once expanded, which the old code read (slowly, into
// several copies) and accepted; the limit stops it at the alias that crosses 16 MiB, having
// built nothing.
TEST(WorkloadLimitsTest, AnAliasBombIsRefusedAtTheAliasBeforeAnythingIsExpanded) {
  const std::string statement = "SELECT '" + std::string(512 << 10, 'x') + "'";
  const std::string bomb = Generated(1, 200, statement, /*alias=*/true);
  ASSERT_LT(bomb.size(), size_t{600} << 10);  // a small file
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = Parse(bomb).status();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // 32 copies of 512 KiB and the YAML around them pass 16 MiB: the 32nd, on line 7 + 31.
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("w.yaml:38:18: the file expands to more than 16777216 bytes at this "
                        "alias (each use of an alias counts its anchor's text again)"));
  EXPECT_LT(seconds, 5.0);  // a pass over 600 KB of text, even on a loaded machine
  // Below the limit the same aliases are fine.
  EXPECT_TRUE(Parse(Generated(1, 20, statement, true)).ok());
}

// yaml-cpp 0.7 reports a new document forever after a stray ","; the expansion check once
// looped on it (a 7.7 KB file found by the fuzzer ran for minutes). It reads one document, as
// YAML::Load does, so a file with one finishes with the parser's answer.
TEST(WorkloadLimitsTest, AStrayCommaEndsWithAnErrorNotALoop) {
  const absl::Status status = Parse(",").status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("w.yaml"));
  // The same stray comma where the fuzzer put it, inside a valid file.
  EXPECT_FALSE(Parse(Replace(kValid, "  rows: 10\n", "  rows: 10\n,\n")).ok());
}

TEST(SqlTextTest, PlaceholdersOutsideQuotesAndComments) {
  EXPECT_EQ(CountPlaceholders("SELECT '?', \"a?\", `b?` FROM t WHERE a = ? -- ?\n AND b = ?"), 2);
  EXPECT_EQ(NumberPlaceholders("a = ? AND b = '?' AND c = ?"), "a = $1 AND b = '?' AND c = $2");
  EXPECT_EQ(ExpandRepeat("INSERT INTO t VALUES {repeat}", "(?, ?)", 3),
            "INSERT INTO t VALUES (?, ?), (?, ?), (?, ?)");
  EXPECT_EQ(CountRepeatMarks("x IN ({repeat}) AND y = '{repeat}'"), 1);
}

// Checks and invariants run on the server long after parsing: each keeps where it is written,
// so that an error or a broken one can say so.
TEST(WorkloadParserTest, ChecksAndInvariantsKeepWhereTheyAreWritten) {
  absl::StatusOr<v1::WorkloadSpec> spec = Parse(R"(name: w
checks:
  - name: no_negative
    sql: SELECT COUNT(*) FROM t WHERE v < 0
    expect: 0
invariants:
  - name: total
    sql: SELECT SUM(v) FROM t
    unchanged: true
scenarios:
  - name: s
    query_types: [{name: q, statements: [{sql: SELECT 1}]}]
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->checks(0).source(), "w.yaml:4:10");
  EXPECT_EQ(spec->invariants(0).source(), "w.yaml:8:10");
}

}  // namespace
}  // namespace dbload
