#include "suite/suite_parser.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "suite/suite_index.h"
#include "suite/suite_runs.h"
#include "workload/workload.h"
#include "workload/workload_parser.h"
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
            "s.yaml:15:28: cases.1.plan.scenaro: unknown field; did you mean 'scenario'? (case "
            "insert on target pg)");
  // A closed-loop point that is not a number of clients: at the point.
  std::string bad_point = text;
  bad_point.replace(bad_point.find("[1, 4, 16]"), 10, "[1, 2.5]");
  EXPECT_THAT(error_of(bad_point),
              HasSubstr("s.yaml:12:17: cases.0.points.1: expected an integer"));
  EXPECT_THAT(error_of(bad_point), HasSubstr("(case point on target pg at point 2.5)"));
  std::string negative = text;
  negative.replace(negative.find("[1, 4, 16]"), 10, "[1, -4]");
  EXPECT_THAT(error_of(negative),
              HasSubstr("s.yaml:12:17: cases.0.points.1: expected a number > 0"));
  // A target's mistake, found on its first combination.
  std::string bad_target = text;
  bad_target.replace(bad_target.find("port: 3307"), 10, "port: abc");
  EXPECT_THAT(error_of(bad_target),
              HasSubstr("s.yaml:6:35: targets.1.target.port: expected an integer from 1 to 65535"));
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
  EXPECT_THAT(error_of(no_stop), HasSubstr("s.yaml:11:11: cases.0.plan.stop: missing"));
  // A case's field, by its whole path, at its value.
  std::string bad_duration = text;
  bad_duration.replace(bad_duration.find("duration: 1m"), 12, "duration: 1x");
  EXPECT_THAT(error_of(bad_duration),
              HasSubstr("s.yaml:15:106: cases.1.plan.stop.duration: expected a duration"));
  EXPECT_EQ(error_of("name: x\ntargets: []\n"),
            "s.yaml:2:10: targets: expected a list of targets (at least one), got a list");
  EXPECT_THAT(error_of("name: x\nsettings: {repetitions: 0}\n"),
              HasSubstr("s.yaml:2:25: settings.repetitions: expected an integer from 1 to 1000"));
  EXPECT_THAT(error_of("name: x\nsettings: {prepare: twice}\n"),
              HasSubstr("s.yaml:2:21: settings.prepare: expected once, per_case or none"));
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
            "s.yaml:15:38: cases.1.plan.scenario: no such scenario (case insert on target pg)");
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
  EXPECT_THAT(
      error_of({"targets.1.target.port=abc"}),
      HasSubstr("s.yaml: --set targets.1.target.port: expected an integer from 1 to 65535"));
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
  // A scaled rate beyond the plan parser's bound is refused, naming --scale, the field and where
  // the file gave it.
  options.scale = 1e6;
  EXPECT_THAT(std::string(Parse(text, options).status().message()),
              ::testing::StartsWith("s.yaml:15:66: cases.1.plan.load.open.rate: "));
  EXPECT_THAT(std::string(Parse(text, options).status().message()),
              HasSubstr("(with --scale 1e+06: case insert on target pg)"));
  options.scale = 1e5;  // 1e8 for case 1, but 5e8 for the second point of case 2
  EXPECT_THAT(std::string(Parse(text, options).status().message()),
              HasSubstr("s.yaml:18:20: cases.2.points.1: "));
}

// --set with * sets every element of a list; each gets its own copy of the value.
TEST(SuiteParserSetTest, WildcardSetsEveryElement) {
  SuiteOptions options;
  options.overrides = {"cases.*.plan.stop.duration=3s", "targets.*.target.host=127.0.0.2",
                       "cases.1.plan.stop.duration=4s"};
  absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->cases(0).plan().stop().duration_ns(), 3'000'000'000);
  EXPECT_EQ(suite->cases(1).plan().stop().duration_ns(), 4'000'000'000);
  EXPECT_EQ(suite->targets(0).target().host(), "127.0.0.2");
  EXPECT_EQ(suite->targets(1).target().host(), "127.0.0.2");

  auto error_of = [](std::vector<std::string> overrides) {
    SuiteOptions options;
    options.overrides = std::move(overrides);
    absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
    return suite.ok() ? std::string("ok") : std::string(suite.status().message());
  };
  EXPECT_EQ(error_of({"settings.*=1"}),
            "s.yaml: --set settings.*: * stands for every element of a list, and settings is a "
            "map");
  EXPECT_EQ(error_of({"cases.0.plan.*=1"}),
            "s.yaml: --set cases.0.plan.*: * stands for every element of a list, and "
            "cases.0.plan is a map");
  // Case 1 has no points.
  EXPECT_EQ(error_of({"cases.*.points.*=2"}),
            "s.yaml: --set cases.1.points: the suite has none; --set changes one that exists");
  // An error in a value it set names the element.
  EXPECT_THAT(error_of({"cases.*.plan.stop.duration=1x"}),
              ::testing::StartsWith("s.yaml: --set cases.0.plan.stop.duration: expected a "
                                    "duration"));
  EXPECT_THAT(error_of({"cases.x.name=a"}), HasSubstr("cases is a list; give an index from 0"));
}

// --set PATH=null removes a field; on a list element it is refused.
TEST(SuiteParserSetTest, NullRemovesAField) {
  SuiteOptions options;
  options.overrides = {"cases.1.plan.stop.queries=null", "targets.1.target.pool=null",
                       "cases.0.plan.nothing.here=null"};
  absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->cases(1).plan().stop().queries(), 0u);
  EXPECT_EQ(suite->cases(1).plan().stop().duration_ns(), 60'000'000'000);
  EXPECT_EQ(suite->targets(1).target().pool(), 0u);  // each run's default again

  options.overrides = {"cases.0.plan.stop=null"};
  EXPECT_THAT(std::string(Parse(kSuite, options).status().message()),
              HasSubstr("s.yaml:11:11: cases.0.plan.stop: missing"));
  options.overrides = {"cases.0.points.1=null"};
  EXPECT_EQ(Parse(kSuite, options).status().message(),
            "s.yaml: --set cases.0.points.1: null removes a field of a map; to drop elements of "
            "cases.0.points, --set the whole list");
}

// A target's password source given by --set replaces the file's; a file naming two is refused.
TEST(SuiteParserSetTest, APasswordSourceReplacesTheTargetsOther) {
  SuiteOptions options;
  options.overrides = {"targets.0.target.password_file=/run/pg-password"};
  absl::StatusOr<v1::Suite> suite = Parse(kSuite, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->targets(0).target().password_file(), "/run/pg-password");
  EXPECT_EQ(suite->targets(0).target().password_env(), "");
  EXPECT_EQ(suite->targets(1).target().password_env(), "MYSQL_PWD");  // the other target's stays
  options.overrides = {"targets.*.target.password_env=DB_PASSWORD"};
  suite = Parse(kSuite, options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->targets(0).target().password_env(), "DB_PASSWORD");
  EXPECT_EQ(suite->targets(1).target().password_env(), "DB_PASSWORD");

  std::string both = kSuite;
  both.replace(both.find("password_env: PGPASSWORD"), 0, "password_file: /p, ");
  const std::string line =
      "  - {name: pg, target: {driver: postgresql, user: bench, password_file: "
      "/p, password_env: PGPASSWORD, database: bench}}";
  ASSERT_NE(both.find(line), std::string::npos);
  EXPECT_THAT(std::string(Parse(both).status().message()),
              HasSubstr(absl::StrCat("s.yaml:4:", line.find("PGPASSWORD") + 1,
                                     ": targets.0.target.password_env: set either password_file "
                                     "or password_env, not both")));
}

constexpr char kTimed[] = R"(name: timed
targets: [{name: t, target: {driver: noop}}]
cases:
  - name: open
    plan: {workload: oltp, scenario: point_select, load: {open: {rate: 100}}, warmup: 2s,
           stop: {duration: 10s, queries: 999}, abort: {p99_above: 50ms, for: 3s}}
  - name: staged
    plan:
      workload: oltp
      scenario: point_select
      load: {closed: {think_time: 15ms}}
      stages:
        - {name: s1, duration: 4s, queries: 7, clients: 2}
        - {name: s2, clients: {from: 1, step: 1, max: 3, every: 1500ms}}
        - {name: k, knee: {from: 1, step: 1, max: 2, every: 2s, p99: 20ms}}
  - name: open-stages
    plan:
      workload: oltp
      scenario: point_select
      load: {open: {}}
      stages:
        - {name: up, duration: 3s, rate: {from: 10, to: 50}}
        - {name: k, knee: {from: 100, step: 100, max: 300, every: 4s, p99: 20ms}}
)";

// --time-scale: every duration of every case and every query count times T (whole ms, at least
// 1 ms and 1 query); rates, clients and latency limits stay; --scale on top scales the load.
TEST(SuiteParserTimeScaleTest, ScalesEveryDurationAndQueryCount) {
  SuiteOptions options;
  options.time_scale = 0.5;
  absl::StatusOr<v1::Suite> suite = ParseSuite(kTimed, "t.yaml", options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  const v1::Plan& open = suite->cases(0).plan();
  EXPECT_EQ(open.warmup_ns(), 1'000'000'000);
  EXPECT_EQ(open.stop().duration_ns(), 5'000'000'000);
  EXPECT_EQ(open.stop().queries(), 500u);  // 499.5, rounded
  EXPECT_EQ(open.abort().for_ns(), 1'500'000'000);
  EXPECT_EQ(open.abort().p99_above_ns(), 50'000'000);
  EXPECT_EQ(open.load().open().rate(), 100);
  const v1::Plan& staged = suite->cases(1).plan();
  EXPECT_EQ(staged.load().closed().think_time_ns(), 8'000'000);  // 7.5 ms, to whole ms
  EXPECT_EQ(staged.stages(0).duration_ns(), 2'000'000'000);
  EXPECT_EQ(staged.stages(0).queries(), 4u);  // 3.5
  EXPECT_EQ(staged.stages(0).clients().from(), 2);
  EXPECT_EQ(staged.stages(1).clients().every_ns(), 750'000'000);
  EXPECT_EQ(staged.stages(1).clients().max(), 3);
  EXPECT_EQ(staged.stages(2).knee().every_ns(), 1'000'000'000);
  EXPECT_EQ(staged.stages(2).knee().p99_ns(), 20'000'000);
  EXPECT_EQ(staged.stages(2).knee().max(), 2);
  const v1::Plan& open_stages = suite->cases(2).plan();
  EXPECT_EQ(open_stages.stages(0).duration_ns(), 1'500'000'000);
  EXPECT_EQ(open_stages.stages(0).rate().to(), 50);
  EXPECT_EQ(open_stages.stages(1).knee().every_ns(), 2'000'000'000);
  // The planned lengths follow: 1 s warm-up + 5 s; a staircase of 3 steps of 750 ms.
  absl::StatusOr<v1::Plan> plan = PlanOfRun(*suite, ExpandSuite(*suite)[0]);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(PlannedRunNanos(*plan), 6'000'000'000);

  // With --scale: rates and counts by the load's factor, counts and times by the time's.
  options.scale = 2;
  suite = ParseSuite(kTimed, "t.yaml", options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->cases(0).plan().load().open().rate(), 200);
  EXPECT_EQ(suite->cases(0).plan().stop().queries(), 999u);
  EXPECT_EQ(suite->cases(0).plan().stop().duration_ns(), 5'000'000'000);
  EXPECT_EQ(suite->cases(1).plan().stages(0).clients().from(), 2);  // clients are not rates
  EXPECT_EQ(suite->cases(2).plan().stages(0).rate().to(), 100);
  EXPECT_EQ(suite->cases(2).plan().stages(1).knee().max(), 600);

  // Longer: a count-bounded case takes T times as long, its rate the same.
  options = {};
  options.time_scale = 3;
  suite = ParseSuite(kTimed, "t.yaml", options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->cases(0).plan().stop().queries(), 2997u);
  EXPECT_EQ(suite->cases(0).plan().stop().duration_ns(), 30'000'000'000);
  EXPECT_EQ(suite->cases(1).plan().stages(2).knee().every_ns(), 6'000'000'000);
}

TEST(SuiteParserTimeScaleTest, AtLeastOneMillisecondAndOneQuery) {
  SuiteOptions options;
  options.time_scale = 0.001;
  absl::StatusOr<v1::Suite> suite = ParseSuite(R"(name: tiny
targets: [{name: t, target: {driver: noop}}]
cases:
  - name: c
    plan: {workload: oltp, scenario: point_select, load: {closed: {clients: 1, think_time: 100us}},
           stop: {duration: 1500ms, queries: 7}}
)",
                                               "t.yaml", options);
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->cases(0).plan().stop().duration_ns(), 2'000'000);  // 1.5 ms: whole ms
  EXPECT_EQ(suite->cases(0).plan().stop().queries(), 1u);
  EXPECT_EQ(suite->cases(0).plan().load().closed().think_time_ns(), 1'000'000);
}

// Scaled plans are checked again before any load, every limit included, the error at the
// field's place in the file and naming the scaling.
TEST(SuiteParserTimeScaleTest, LimitsAreCheckedAfterScaling) {
  SuiteOptions options;
  options.time_scale = 0.1;  // a knee step of 200 ms: a step is judged on whole seconds
  absl::StatusOr<v1::Suite> suite = ParseSuite(kTimed, "t.yaml", options);
  ASSERT_FALSE(suite.ok());
  EXPECT_EQ(suite.status().message(),
            "t.yaml:15:61: cases.1.plan.stages.2.knee.every: must be at least 1s (a step is "
            "judged on whole reporting intervals), got 200ms (with --time-scale 0.1: case staged "
            "on target t)");
  for (const double bad : {0.0, -1.0, 1001.0}) {
    options.time_scale = bad;
    EXPECT_THAT(std::string(ParseSuite(kTimed, "t.yaml", options).status().message()),
                HasSubstr("t.yaml: --time-scale: expected a number > 0 and at most 1000"))
        << bad;
  }
  options.time_scale = 1000;  // the upper bound itself
  EXPECT_TRUE(ParseSuite(kTimed, "t.yaml", options).ok());
  // The whole validation runs on every scaled plan (ValidatePlan, with the limits of
  // plan/plan_limits.h): a rate past the plan parser's bound, reached only by --scale.
  options = {};
  options.scale = 1e7;
  options.time_scale = 2;
  suite = ParseSuite(kTimed, "t.yaml", options);
  ASSERT_FALSE(suite.ok());
  EXPECT_EQ(suite.status().message(),
            "t.yaml:5:72: cases.0.plan.load.open.rate: must be at most 100000000, got "
            "1000000000 (with --scale 1e+07 --time-scale 2: case open on target t)");
}

TEST(SuiteParserTest, PlannedLengthIsABoundForKneeSearches) {
  absl::StatusOr<v1::Suite> suite = ParseSuite(kTimed, "t.yaml", {});
  ASSERT_TRUE(suite.ok()) << suite.status();
  const std::vector<v1::SuiteRun> runs = ExpandSuite(*suite);
  absl::StatusOr<v1::Plan> open = PlanOfRun(*suite, runs[0]);
  ASSERT_TRUE(open.ok());
  EXPECT_FALSE(PlannedRunLength(*open).bound);
  EXPECT_EQ(PlannedRunLength(*open).nanos, 2'000'000'000 + 9'990'000'000);  // 999 at 100/s
  absl::StatusOr<v1::Plan> staged = PlanOfRun(*suite, runs[1]);
  ASSERT_TRUE(staged.ok());
  EXPECT_TRUE(PlannedRunLength(*staged).bound);
  // 4 s; 3 steps of 1.5 s; a knee of 2 steps and 3 of refinement, each 2 s + 5 s of judgement.
  EXPECT_EQ(PlannedRunLength(*staged).nanos, 4'000'000'000 + 4'500'000'000 + 5 * 7'000'000'000);
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
  ASSERT_EQ(BuiltinSuiteFiles().size(), 6u);
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
