#include "common/suite_parser.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/field_error.h"
#include "common/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Line numbers below count from 1 in this text; columns too (an error about a value points at
// the value).
constexpr char kSuite[] = R"(name: small
settings: {warmup_runs: 1, repetitions: 2, prepare: once, cleanup: true}
targets:
  - {name: pg, target: {driver: postgresql, user: bench, password_env: PGPASSWORD, database: bench}}
  - name: maria
    target: {driver: mysql, port: 3307, user: bench, password_env: MYSQL_PWD, database: bench, pool: 300}
    probe: {enabled: false}
cases:
  - name: point
    category: selects
    plan: {workload: oltp, scenario: point_select, load: {closed: {}}, stop: {duration: 2s}}
    points: [1, 4, 16]
  - name: insert
    category: inserts
    plan: {workload: oltp, scenario: insert, load: {open: {rate: 1000}}, stop: {queries: 5000, duration: 1m}}
)";

absl::StatusOr<v1::Suite> Parse(const std::string& text, SuiteOptions options = {}) {
  return ParseSuite(text, "s.yaml", options);
}

TEST(SuiteParserTest, ReadsTargetsCasesAndSettings) {
  absl::StatusOr<v1::Suite> suite = Parse(kSuite);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->name(), "small");
  EXPECT_EQ(suite->settings().warmup_runs(), 1u);
  EXPECT_EQ(suite->settings().repetitions(), 2u);
  EXPECT_EQ(suite->settings().prepare(), "once");
  EXPECT_TRUE(suite->settings().cleanup());
  ASSERT_EQ(suite->targets_size(), 2);
  // The plan parser's defaults (host, port), but no pool where none was given: each run's
  // default depends on its clients.
  EXPECT_EQ(suite->targets(0).target().host(), "127.0.0.1");
  EXPECT_EQ(suite->targets(0).target().port(), 5432u);
  EXPECT_EQ(suite->targets(0).target().pool(), 0u);
  EXPECT_EQ(suite->targets(1).target().port(), 3307u);
  EXPECT_EQ(suite->targets(1).target().pool(), 300u);
  EXPECT_TRUE(suite->targets(1).has_probe());
  EXPECT_TRUE(suite->targets(1).probe().disabled());
  ASSERT_EQ(suite->cases_size(), 2);
  EXPECT_EQ(suite->cases(0).category(), "selects");
  EXPECT_THAT(suite->cases(0).points(), ElementsAre(1, 4, 16));
  EXPECT_FALSE(suite->cases(0).plan().has_target());
  EXPECT_EQ(suite->cases(0).plan().scenario(), "point_select");
  EXPECT_EQ(suite->cases(1).plan().load().open().rate(), 1000);
}

TEST(SuiteParserTest, ExpandsInOrderWithWarmupsAndRepetitions) {
  absl::StatusOr<v1::Suite> suite = Parse(kSuite);
  ASSERT_TRUE(suite.ok()) << suite.status();
  const std::vector<v1::SuiteRun> runs = ExpandSuite(*suite);
  // 2 targets x (3 points + 1 plan's own load) x (1 warm-up + 2 repetitions).
  ASSERT_EQ(runs.size(), 24u);
  std::vector<std::string> first;
  for (size_t i = 0; i < 7; ++i) {
    first.push_back(absl::StrCat(runs[i].target(), " ", runs[i].case_name(), " ", runs[i].point(),
                                 " ", runs[i].repetition(), " ", runs[i].discarded(), " ",
                                 runs[i].report(), " ", runs[i].state()));
  }
  EXPECT_THAT(first, ElementsAre("pg point 1 0 1 runs/pg/point/1-w1.json pending",
                                 "pg point 1 1 0 runs/pg/point/1-r1.json pending",
                                 "pg point 1 2 0 runs/pg/point/1-r2.json pending",
                                 "pg point 4 0 1 runs/pg/point/4-w1.json pending",
                                 "pg point 4 1 0 runs/pg/point/4-r1.json pending",
                                 "pg point 4 2 0 runs/pg/point/4-r2.json pending",
                                 "pg point 16 0 1 runs/pg/point/16-w1.json pending"));
  EXPECT_EQ(runs[9].case_name(), "insert");
  EXPECT_EQ(runs[10].report(), "runs/pg/insert/plan-r1.json");
  EXPECT_EQ(runs[12].target(), "maria");
  EXPECT_EQ(runs[23].report(), "runs/maria/insert/plan-r2.json");
}

TEST(SuiteParserTest, PlanOfRunFillsTargetAndPoint) {
  absl::StatusOr<v1::Suite> suite = Parse(kSuite);
  ASSERT_TRUE(suite.ok()) << suite.status();
  const std::vector<v1::SuiteRun> runs = ExpandSuite(*suite);
  absl::StatusOr<v1::Plan> plan = PlanOfRun(*suite, runs[6]);  // pg, point, 16 clients
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->target().driver(), "postgresql");
  EXPECT_EQ(plan->load().closed().clients(), 16u);
  EXPECT_EQ(plan->target().pool(), 16u);  // the run's default: one connection per client
  EXPECT_EQ(plan->name(), "small/pg/point/16");
  EXPECT_EQ(PlannedRunNanos(*plan), 2'000'000'000);
  absl::StatusOr<v1::Plan> maria = PlanOfRun(*suite, runs[12]);
  ASSERT_TRUE(maria.ok()) << maria.status();
  EXPECT_EQ(maria->target().pool(), 300u);
  EXPECT_TRUE(maria->probe().disabled());
  absl::StatusOr<v1::Plan> open = PlanOfRun(*suite, runs[10]);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(open->load().open().rate(), 1000);
  EXPECT_EQ(PlannedRunNanos(*open), 5'000'000'000);  // 5000 queries at 1000/s, under 1m
}

TEST(SuiteParserTest, ErrorsNameFileLineColumnAndField) {
  auto error_of = [](const std::string& text, SuiteOptions options = {}) {
    absl::StatusOr<v1::Suite> suite = Parse(text, options);
    return suite.ok() ? std::string("ok") : std::string(suite.status().message());
  };
  std::string text = kSuite;
  // An unknown suite field, with a suggestion.
  EXPECT_EQ(error_of(absl::StrCat(text, "settngs: {}\n")),
            "s.yaml:16:1: settngs: unknown field; did you mean 'settings'?");
  // An unknown field inside a case's plan: the plan parser's message, at its place in the suite.
  std::string bad_plan = text;
  bad_plan.replace(bad_plan.find("scenario: insert"), 8, "scenaro");
  EXPECT_EQ(error_of(bad_plan),
            "s.yaml:15:28: scenaro: unknown field; did you mean 'scenario'? (case insert on "
            "target pg)");
  // A closed-loop point that is not a number of clients: at the point.
  std::string bad_point = text;
  bad_point.replace(bad_point.find("[1, 4, 16]"), 10, "[1, 2.5]");
  EXPECT_THAT(error_of(bad_point), HasSubstr("s.yaml:12:17: load.closed.clients: expected"));
  EXPECT_THAT(error_of(bad_point), HasSubstr("(case point on target pg at point 2.5)"));
  std::string negative = text;
  negative.replace(negative.find("[1, 4, 16]"), 10, "[1, -4]");
  EXPECT_THAT(error_of(negative),
              HasSubstr("s.yaml:12:17: cases.0.points.1: expected a number > 0"));
  // A target's mistake, found on its first combination.
  std::string bad_target = text;
  bad_target.replace(bad_target.find("port: 3307"), 10, "port: abc");
  EXPECT_THAT(error_of(bad_target),
              HasSubstr("s.yaml:6:35: target.port: expected an integer from 1 to 65535"));
  EXPECT_THAT(error_of(bad_target), HasSubstr("on target maria"));
  // A case never has a target of its own.
  std::string own_target = text;
  own_target.replace(own_target.find("{workload: oltp, scenario: insert"), 1,
                     "{target: {driver: noop}, ");
  EXPECT_THAT(error_of(own_target), HasSubstr("s.yaml:15:20: cases.1.plan.target: a case has no "
                                              "target of its own"));
  std::string duplicate = text;
  duplicate.replace(duplicate.find("name: insert"), 12, "name: point");
  EXPECT_EQ(error_of(duplicate),
            "s.yaml:13:11: cases.1.name: duplicate case name \"point\" (also at line 9)");
  std::string bad_name = text;
  bad_name.replace(bad_name.find("name: insert"), 12, "name: ../x");
  EXPECT_THAT(error_of(bad_name), HasSubstr("s.yaml:13:11: cases.1.name: expected a name"));
  std::string no_stop = text;
  no_stop.replace(no_stop.find(", stop: {duration: 2s}"), 22, "");
  EXPECT_THAT(error_of(no_stop), HasSubstr("s.yaml:11:11: stop: missing"));
  EXPECT_EQ(error_of("name: x\ntargets: []\n"),
            "s.yaml:2:10: targets: expected a list of targets (at least one), got a list");
  EXPECT_THAT(error_of("name: x\nsettings: {repetitions: 0}\n"),
              HasSubstr("s.yaml:2:25: settings.repetitions: expected an integer from 1 to 1000"));
  EXPECT_THAT(error_of("name: x\nsettings: {prepare: twice}\n"),
              HasSubstr("s.yaml:2:21: settings.prepare: expected once or none"));
  EXPECT_THAT(error_of("name: [x\n"), HasSubstr("s.yaml:2:1: invalid YAML"));
}

TEST(SuiteParserTest, PlanCheckErrorsAreAtTheirField) {
  SuiteOptions options;
  options.check = [](const v1::Plan& plan) -> absl::Status {
    if (plan.scenario() == "insert") return FieldError("scenario", "no such scenario");
    return absl::OkStatus();
  };
  absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
  ASSERT_FALSE(suite.ok());
  EXPECT_EQ(suite.status().message(),
            "s.yaml:15:38: scenario: no such scenario (case insert on target pg)");
}

TEST(SuiteParserTest, SetOverridesChangeTheSuite) {
  SuiteOptions options;
  options.overrides = {"settings.repetitions=3", "cases.0.points=[2, 8]",
                       "targets.0.target.port=5433", "cases.1.plan.stop.duration=30s"};
  absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->settings().repetitions(), 3u);
  EXPECT_THAT(suite->cases(0).points(), ElementsAre(2, 8));
  EXPECT_EQ(suite->targets(0).target().port(), 5433u);
  EXPECT_EQ(suite->cases(1).plan().stop().duration_ns(), 30'000'000'000);
  // 2 targets x (2 + 1) points x (1 + 3) runs.
  EXPECT_EQ(ExpandSuite(*suite).size(), 24u);

  auto error_of = [](std::vector<std::string> overrides) {
    SuiteOptions options;
    options.overrides = std::move(overrides);
    absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
    return suite.ok() ? std::string("ok") : std::string(suite.status().message());
  };
  EXPECT_EQ(error_of({"setings.repetitions=3"}),
            "s.yaml: --set setings: unknown field; did you mean 'settings'?");
  EXPECT_EQ(error_of({"cases.5.points=[1]"}),
            "s.yaml: --set cases.5: the suite has 2 cases (numbered from 0); --set changes one "
            "that exists");
  EXPECT_EQ(error_of({"settings.repetitions=many"}),
            "s.yaml: --set settings.repetitions: expected an integer from 1 to 1000, got "
            "\"many\"");
  EXPECT_THAT(error_of({"targets.1.target.port=abc"}),
              HasSubstr("s.yaml: --set target.port: expected an integer from 1 to 65535"));
  EXPECT_THAT(error_of({"cases.0.points=[1, 2"}),
              HasSubstr("s.yaml: --set cases.0.points: the value is not valid YAML: "));
  EXPECT_EQ(error_of({"cases=[]"}),
            "s.yaml: --set cases: expected a list of cases (at least one), got a list");
  EXPECT_THAT(error_of({"cases.0.points=[1, x]"}),
              HasSubstr("s.yaml: --set cases.0.points.1: expected a number > 0"));
}

TEST(SuiteParserTest, ScaleMultipliesOpenLoopRatesAndQueryCounts) {
  std::string text = kSuite;
  text += R"(  - name: open-points
    plan: {workload: oltp, scenario: point_select, load: {open: {rate: 1}}, stop: {queries: 3000}}
    points: [1000, 5000]
)";
  SuiteOptions options;
  options.scale = 0.1;
  absl::StatusOr<v1::Suite> suite = Parse(text, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_THAT(suite->cases(0).points(), ElementsAre(1, 4, 16));  // clients stay
  EXPECT_EQ(suite->cases(0).plan().stop().duration_ns(), 2'000'000'000);
  EXPECT_DOUBLE_EQ(suite->cases(1).plan().load().open().rate(), 100);
  EXPECT_EQ(suite->cases(1).plan().stop().queries(), 500u);
  EXPECT_EQ(suite->cases(1).plan().stop().duration_ns(), 60'000'000'000);  // durations stay
  ASSERT_EQ(suite->cases(2).points_size(), 2);
  EXPECT_DOUBLE_EQ(suite->cases(2).points(0), 100);
  EXPECT_DOUBLE_EQ(suite->cases(2).points(1), 500);
  EXPECT_EQ(suite->cases(2).plan().stop().queries(), 300u);

  options.scale = 0;
  EXPECT_THAT(std::string(Parse(text, options).status().message()),
              HasSubstr("s.yaml: --scale: expected a number > 0"));
  // A scaled rate beyond the plan parser's bound is refused, naming --scale.
  options.scale = 1e6;
  EXPECT_THAT(std::string(Parse(text, options).status().message()),
              HasSubstr("with --scale 1e+06"));
}

TEST(SuiteParserTest, ResumeMatchesOnlyTheSameSuite) {
  absl::StatusOr<v1::Suite> recorded = Parse(kSuite);
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(MatchSuites(*recorded, *Parse(kSuite)).ok());
  SuiteOptions options;
  options.overrides = {"cases.0.points=[1, 8, 16]"};
  absl::Status differs = MatchSuites(*recorded, *Parse(kSuite, options));
  EXPECT_EQ(differs.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(differs.message()), HasSubstr("points[1]"));
  EXPECT_THAT(std::string(differs.message()), HasSubstr("4 -> 8"));
  options.overrides = {};
  options.scale = 2;
  EXPECT_FALSE(MatchSuites(*recorded, *Parse(kSuite, options)).ok());
}

TEST(SuiteParserTest, IndexRoundTripsAsJson) {
  absl::StatusOr<v1::Suite> suite = Parse(kSuite);
  ASSERT_TRUE(suite.ok());
  v1::SuiteIndex index;
  index.set_format_version(kSuiteIndexFormat);
  *index.mutable_suite() = *suite;
  for (const v1::SuiteRun& run : ExpandSuite(*suite)) *index.add_runs() = run;
  const std::string path = ::testing::TempDir() + "/suite_index_test.json";
  ASSERT_TRUE(SaveSuiteIndex(path, index).ok());
  absl::StatusOr<v1::SuiteIndex> read = LoadSuiteIndex(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(MatchSuites(read->suite(), *suite).ok());
  EXPECT_EQ(read->runs_size(), 24);
}

// The built-in suites are valid, their workloads know their scenarios and options, and they
// expand to the runs their comments promise.
TEST(SuiteParserTest, BuiltinSuitesParse) {
  SuiteOptions options;
  options.check = [](const v1::Plan& plan) -> absl::Status {
    v1::Plan resolved = plan;
    if (absl::Status status = ResolvePlanWorkload(resolved); !status.ok()) return status;
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(resolved);
    if (!workload.ok()) return workload.status();
    return (*workload)->MakeScenario(plan.scenario()).status();
  };
  ASSERT_EQ(BuiltinSuiteFiles().size(), 4u);
  for (const auto& [name, text] : BuiltinSuiteFiles()) {
    absl::StatusOr<v1::Suite> suite = ParseSuite(text, name, options);
    ASSERT_TRUE(suite.ok()) << suite.status();
    EXPECT_EQ(suite->name(), name);
    for (const v1::SuiteRun& run : ExpandSuite(*suite)) {
      absl::StatusOr<v1::Plan> plan = PlanOfRun(*suite, run);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->target().host(), "127.0.0.1");
      EXPECT_FALSE(plan->target().password_env().empty());
    }
  }
  absl::StatusOr<v1::Suite> shop =
      ParseSuite(BuiltinSuiteFiles().at("mysql-vs-postgresql-shop"), "shop", options);
  ASSERT_TRUE(shop.ok());
  EXPECT_EQ(shop->cases_size(), 17);
  EXPECT_EQ(ExpandSuite(*shop).size(), 34u);
  EXPECT_EQ(shop->cases(4).plan().load().open().rate(), 5000);  // case 5: 50,000/s / 10
  EXPECT_EQ(shop->cases(4).plan().stop().queries(), 50000u);
  options.scale = 10;  // the source's figures
  shop = ParseSuite(BuiltinSuiteFiles().at("mysql-vs-postgresql-shop"), "shop", options);
  ASSERT_TRUE(shop.ok()) << shop.status();
  EXPECT_EQ(shop->cases(4).plan().load().open().rate(), 50000);
  EXPECT_EQ(shop->cases(4).plan().stop().queries(), 500000u);
  absl::StatusOr<v1::Suite> sweep =
      ParseSuite(BuiltinSuiteFiles().at("sysbench-sweep"), "sweep", SuiteOptions());
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(ExpandSuite(*sweep).size(), 2u * 3 * 6 * 2);
  EXPECT_TRUE(ExpandSuite(*sweep)[0].discarded());
}

}  // namespace
}  // namespace dbload
