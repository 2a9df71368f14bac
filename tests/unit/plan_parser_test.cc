// The plan parser (YAML into the plan proto): every key, default, limit and error message a
// user meets. Its length: one case per rule, on the same small plan texts.
#include "plan/plan_parser.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plan/durations.h"
#include "plan/plan_limits.h"
#include "plan/plan_validation.h"
#include "plan/session_settings.h"
#include "plan/target_secrets.h"

namespace dbload {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using v1::OpenLoad;
using v1::Plan;

constexpr char kSource[] = "plans/pg.yaml";
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000'000'000;

// The message of the error that `yaml` must produce.
std::string ErrorOf(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  absl::StatusOr<Plan> plan = ParsePlan(yaml, kSource, overrides);
  EXPECT_FALSE(plan.ok()) << "expected an error for:\n" << yaml;
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
  return std::string(plan.status().message());
}

Plan ParseOk(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  absl::StatusOr<Plan> plan = ParsePlan(yaml, kSource, overrides);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan();
}

// Debian's Abseil has its own string_view, which gmock's string matchers do not take.
std::string Message(const absl::Status& status) { return std::string(status.message()); }

std::string WriteTempFile(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "plan_parser_test_" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  return path;
}

// A small valid plan; tests add or change lines. Line numbers matter to the tests below.
constexpr char kMinimal[] = R"(name: t
target:
  driver: postgresql
  host: 127.0.0.1
  port: 5432
workload: oltp
scenario: point_select
load: {closed: {clients: 8}}
stop: {duration: 30s}
)";

// ---------------------------------------------------------------------------------------------
// Valid plans

TEST(ParsePlanTest, FullClosedLoopPlanSetsEveryField) {
  const Plan plan = ParseOk(R"(
name: point-select-pg
target: {driver: postgresql, host: 127.0.0.1, port: 5433, user: bench,
         password_file: /path/pw, database: benchdb, pool: 16, connect_timeout: 10s}
workload: oltp
workload_options: {tables: 2, table_size: 10000, dist: "zipf"}
scenario: point_select
load: {closed: {clients: 8, think_time: 1ms}}
warmup: 5s
stop: {duration: 30s, queries: 500000}
seed: 42
)");
  EXPECT_EQ(plan.name(), "point-select-pg");
  EXPECT_EQ(plan.target().driver(), "postgresql");
  EXPECT_EQ(plan.target().host(), "127.0.0.1");
  EXPECT_EQ(plan.target().port(), 5433u);
  EXPECT_EQ(plan.target().socket(), "");
  EXPECT_EQ(plan.target().user(), "bench");
  EXPECT_EQ(plan.target().password_file(), "/path/pw");
  EXPECT_EQ(plan.target().password_env(), "");
  EXPECT_EQ(plan.target().database(), "benchdb");
  EXPECT_EQ(plan.target().pool(), 16u);
  EXPECT_EQ(plan.target().connect_timeout_ns(), 10 * kSec);
  EXPECT_FALSE(plan.target().has_noop());
  EXPECT_EQ(plan.workload(), "oltp");
  ASSERT_EQ(plan.workload_options().size(), 3u);
  EXPECT_EQ(plan.workload_options().at("tables"), "2");
  EXPECT_EQ(plan.workload_options().at("table_size"), "10000");
  EXPECT_EQ(plan.workload_options().at("dist"), "zipf");
  EXPECT_EQ(plan.scenario(), "point_select");
  ASSERT_TRUE(plan.load().has_closed());
  EXPECT_EQ(plan.load().closed().clients(), 8u);
  EXPECT_EQ(plan.load().closed().think_time_ns(), 1 * kMs);
  EXPECT_EQ(plan.warmup_ns(), 5 * kSec);
  EXPECT_EQ(plan.stop().duration_ns(), 30 * kSec);
  EXPECT_EQ(plan.stop().queries(), 500000u);
  EXPECT_EQ(plan.seed(), 42u);
}

TEST(ParsePlanTest, FullOpenLoopNoopPlanSetsEveryField) {
  const Plan plan = ParseOk(R"(
name: engine
target:
  driver: noop
  password_env: SOME_VAR
  pool: 64
  noop: {fixed: 100us, exponential_mean: 50us}
  engine: event_loops
  event_loops: 3
  connect: per_transaction
  connects_at_once: 100
workload: oltp
scenario: read_write
load:
  open:
    rate: 20000.5
    arrival: poisson
stop: {queries: 1000}
seed: 18446744073709551615
)");
  EXPECT_EQ(plan.name(), "engine");
  EXPECT_EQ(plan.target().driver(), "noop");
  EXPECT_EQ(plan.target().host(), "");  // no defaults for the noop driver
  EXPECT_EQ(plan.target().port(), 0u);
  EXPECT_EQ(plan.target().password_env(), "SOME_VAR");
  EXPECT_EQ(plan.target().pool(), 64u);
  EXPECT_EQ(plan.target().noop().fixed_ns(), 100'000);
  EXPECT_EQ(plan.target().noop().exponential_mean_ns(), 50'000);
  EXPECT_EQ(plan.target().engine(), dbload::v1::ENGINE_EVENT_LOOPS);
  EXPECT_EQ(plan.target().event_loops(), 3u);
  EXPECT_EQ(plan.target().connect(), dbload::v1::CONNECT_MODE_PER_TRANSACTION);
  EXPECT_EQ(ConnectsAtOnce(plan.target()), 100u);
  EXPECT_EQ(plan.scenario(), "read_write");
  ASSERT_TRUE(plan.load().has_open());
  EXPECT_DOUBLE_EQ(plan.load().open().rate(), 20000.5);
  EXPECT_EQ(plan.load().open().arrival(), OpenLoad::POISSON);
  EXPECT_EQ(plan.warmup_ns(), 0);
  EXPECT_EQ(plan.stop().duration_ns(), 0);
  EXPECT_EQ(plan.stop().queries(), 1000u);
  EXPECT_EQ(plan.seed(), UINT64_MAX);
}

// The session settings a run's connections start with: the target's, after (session) or over
// (isolation) its scenario's.
TEST(ParsePlanTest, TargetSessionSettingsJoinTheScenariosForTheRun) {
  Plan plan = ParseOk(std::string(kMinimal) + "", {"target.isolation=serializable"});
  EXPECT_EQ(plan.target().isolation(), v1::SERIALIZABLE);
  plan = ParseOk(absl::StrCat(
      "name: t\ntarget:\n  driver: mysql\n  isolation: read_committed\n  session: [\"SET a = "
      "1\"]\n",
      "workload: oltp\nscenario: s\nload: {closed: {clients: 8}}\nstop: {duration: 30s}\n"));
  EXPECT_EQ(plan.target().isolation(), v1::READ_COMMITTED);
  v1::Scenario& scenario = *plan.mutable_workload_spec()->add_scenarios();
  scenario.set_name("s");
  scenario.set_isolation(v1::SERIALIZABLE);
  scenario.add_session()->set_mysql("SET b = 2");
  scenario.add_session()->set_postgresql("SET c = 3");  // not this target's dialect
  scenario.add_session()->set_any("SET d = 4");
  v1::Target connections = TargetForRun(plan);
  EXPECT_EQ(connections.isolation(), v1::READ_COMMITTED);  // the target's wins
  EXPECT_THAT(connections.session(), ::testing::ElementsAre("SET b = 2", "SET d = 4", "SET a = 1"));
  plan.mutable_target()->clear_isolation();
  EXPECT_EQ(TargetForRun(plan).isolation(), v1::SERIALIZABLE);
  EXPECT_THAT(ErrorOf(kMinimal, {"target.isolation=serial"}),
              HasSubstr("target.isolation: expected one of read_uncommitted, read_committed, "
                        "repeatable_read, serializable, got \"serial\""));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "", {"target.session=SET x = 1"}),
              HasSubstr("target.session: expected a list of SQL statements"));
}

TEST(ParsePlanTest, DefaultsForPostgreSql) {
  const Plan plan = ParseOk(R"(
target: {driver: postgresql}
workload: oltp
scenario: point_select
load: {closed: {clients: 12}}
stop: {duration: 1m}
)");
  EXPECT_EQ(plan.target().host(), "127.0.0.1");
  EXPECT_EQ(plan.target().port(), 5432u);
  EXPECT_EQ(plan.target().pool(), 12u);  // one connection per client
  EXPECT_EQ(plan.seed(), 1u);            // reproducible even when not asked for
  EXPECT_EQ(plan.warmup_ns(), 0);
}

TEST(ParsePlanTest, DefaultsForMySqlOpenLoop) {
  const Plan plan = ParseOk(R"(
target: {driver: mysql}
workload: oltp
scenario: point_select
load: {open: {rate: 100}}
stop: {duration: 10}
)");
  EXPECT_EQ(plan.target().host(), "127.0.0.1");
  EXPECT_EQ(plan.target().port(), 3306u);
  EXPECT_EQ(plan.target().pool(), 8u);
  EXPECT_EQ(plan.load().open().arrival(), OpenLoad::UNIFORM);
  EXPECT_EQ(plan.stop().duration_ns(), 10 * kSec);  // a bare integer is seconds
}

TEST(ParsePlanTest, SocketTargetGetsNoHostButTheDefaultPort) {
  const Plan plan = ParseOk(R"(
target: {driver: postgresql, socket: /tmp/pgsock}
workload: oltp
scenario: point_select
load: {closed: {clients: 1}}
stop: {queries: 10}
)");
  EXPECT_EQ(plan.target().socket(), "/tmp/pgsock");
  EXPECT_EQ(plan.target().host(), "");
  EXPECT_EQ(plan.target().port(), 5432u);  // PostgreSQL names its socket file after the port
}

// Whether load may go there is for the connecting process's --allow-target, not the plan.
TEST(ParsePlanTest, AnyHostIsAccepted) {
  for (const std::string host : {"127.0.0.1", "127.1.2.3", "localhost", "LocalHost", "::1",
                                 "::ffff:127.0.0.1", "10.1.2.3", "db.example.com", "fd00::5",
                                 "db-1_a.internal"}) {
    absl::StatusOr<Plan> plan = ParsePlan(
        "target: {driver: postgresql, host: '" + host +
            "'}\nworkload: w\nscenario: s\nload: {closed: {clients: 1}}\nstop: {queries: 1}\n",
        kSource);
    EXPECT_TRUE(plan.ok()) << host << ": " << plan.status();
  }
}

TEST(ParsePlanTest, QuotedNumbersAndLeadingDocumentMarkerAreFine) {
  const Plan plan = ParseOk("---\n" + std::string(kMinimal) + "seed: '7'\n");
  EXPECT_EQ(plan.seed(), 7u);
}

// ---------------------------------------------------------------------------------------------
// Errors with positions: "file:line:col: field: message"

TEST(PlanErrorsTest, IntegerFieldGivenText) {
  EXPECT_EQ(ErrorOf(R"(name: t
target:
  driver: postgresql
  host: 127.0.0.1
  port: abc
)"),
            "plans/pg.yaml:5:9: target.port: expected an integer from 1 to 65535, got \"abc\"");
}

TEST(PlanErrorsTest, PortOutOfRange) {
  EXPECT_THAT(ErrorOf("target: {driver: mysql, port: 70000}\n"),
              AllOf(StartsWith("plans/pg.yaml:1:31: target.port: "), HasSubstr("\"70000\"")));
  EXPECT_THAT(ErrorOf("target: {driver: mysql, port: -1}\n"),
              StartsWith("plans/pg.yaml:1:31: target.port: "));
}

TEST(PlanErrorsTest, SyntaxErrorHasAPosition) {
  EXPECT_THAT(ErrorOf("name: t\ntarget: {driver: postgresql\nworkload: oltp\n"),
              AllOf(StartsWith("plans/pg.yaml:"), HasSubstr("invalid YAML")));
  EXPECT_THAT(ErrorOf("name: t\n  bad indent: [1, 2\n"),
              AllOf(StartsWith("plans/pg.yaml:2:"), HasSubstr("invalid YAML")));
}

TEST(PlanErrorsTest, UnknownFieldSuggestsTheNearestKnownOne) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "sed: 4\n"),
            "plans/pg.yaml:10:1: sed: unknown field; did you mean 'seed'?");
  EXPECT_EQ(ErrorOf(R"(target:
  driver: postgresql
  databse: bench
)"),
            "plans/pg.yaml:3:3: target.databse: unknown field; did you mean 'database'?");
  EXPECT_THAT(ErrorOf("target: {driver: noop, hots: localhost}\n"),
              HasSubstr("target.hots: unknown field; did you mean 'host'?"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, noop: {fixd: 1ms}}\n"),
              HasSubstr("target.noop.fixd: unknown field; did you mean 'fixed'?"));
  EXPECT_THAT(ErrorOf("load: {opne: {rate: 5}}\n"),
              HasSubstr("plans/pg.yaml:1:8: load.opne: unknown field; did you mean 'open'?"));
  EXPECT_THAT(ErrorOf("load: {closed: {cleints: 5}}\n"),
              HasSubstr("load.closed.cleints: unknown field; did you mean 'clients'?"));
  EXPECT_THAT(ErrorOf("load: {open: {rate: 5, arival: uniform}}\n"),
              HasSubstr("load.open.arival: unknown field; did you mean 'arrival'?"));
  EXPECT_THAT(ErrorOf("stop: {duraton: 5s}\n"),
              HasSubstr("stop.duraton: unknown field; did you mean 'duration'?"));
}

TEST(PlanErrorsTest, UnknownFieldWithoutANearOneListsTheKnownOnes) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "colour: red\n"),
            "plans/pg.yaml:10:1: colour: unknown field; a plan has: name, target, workload, "
            "scenario, workload_options, load, warmup, stop, seed, stages, abort, agents, probe, "
            "generator, explain");
  EXPECT_THAT(ErrorOf("stop: {forever: true}\n"),
              HasSubstr("stop.forever: unknown field; stop has: duration, queries"));
}

TEST(PlanErrorsTest, PasswordInThePlanIsRefusedWithoutEchoingIt) {
  const std::string message = ErrorOf(R"(target:
  driver: postgresql
  password: hunter2
)");
  EXPECT_THAT(message, StartsWith("plans/pg.yaml:3:3: target.password: "));
  EXPECT_THAT(message, HasSubstr("password_file or password_env"));
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
}

TEST(PlanErrorsTest, WrongTypes) {
  EXPECT_EQ(ErrorOf("target: {driver: postgresql, host: [a, b]}\n"),
            "plans/pg.yaml:1:36: target.host: expected a string, got a list");
  EXPECT_THAT(ErrorOf("target: localhost\n"),
              AllOf(StartsWith("plans/pg.yaml:1:9: target: expected a map with fields driver, "
                               "host, port"),
                    HasSubstr("got \"localhost\"")));
  EXPECT_THAT(ErrorOf("load: {closed: 8}\n"),
              StartsWith("plans/pg.yaml:1:16: load.closed: expected a map"));
  EXPECT_EQ(ErrorOf("load: {open: {rate: fast}}\n"),
            "plans/pg.yaml:1:21: load.open.rate: expected a number, got \"fast\"");
  EXPECT_EQ(ErrorOf("name: {a: 1}\n"), "plans/pg.yaml:1:7: name: expected a string, got a map");
  EXPECT_EQ(ErrorOf("stop:\n"),
            "plans/pg.yaml:1:1: stop: expected a map with fields duration, "
            "queries, got null");
  EXPECT_THAT(ErrorOf("workload_options: {tables: [1, 2]}\n"),
              StartsWith("plans/pg.yaml:1:28: workload_options.tables: expected a single value"));
  EXPECT_THAT(ErrorOf("workload_options: [tables]\n"),
              StartsWith("plans/pg.yaml:1:19: workload_options: expected a map, got a list"));
  EXPECT_THAT(ErrorOf("{[a]: 1}\n"), HasSubstr("expected field names as keys, got a list"));
  EXPECT_THAT(ErrorOf("load: {open: {rate: 5, arrival: poison}}\n"),
              HasSubstr("load.open.arrival: expected uniform or poisson, got \"poison\"; did "
                        "you mean 'poisson'?"));
}

TEST(PlanErrorsTest, TopLevelMustBeAMap) {
  EXPECT_THAT(ErrorOf("- a\n- b\n"),
              AllOf(StartsWith("plans/pg.yaml:1:1: expected a map of plan fields"),
                    HasSubstr("got a list")));
  EXPECT_THAT(ErrorOf("just text\n"), HasSubstr("got \"just text\""));
}

TEST(PlanErrorsTest, EmptyPlan) {
  EXPECT_EQ(ErrorOf(""), "plans/pg.yaml: the plan is empty");
  EXPECT_EQ(ErrorOf("# only a comment\n"), "plans/pg.yaml: the plan is empty");
}

TEST(PlanErrorsTest, OpenRateMustBePositiveAndBounded) {
  const std::string head = "target: {driver: noop}\nworkload: w\nscenario: s\nstop: {queries: 5}\n";
  EXPECT_EQ(ErrorOf(head + "load: {open: {rate: -5}}\n"),
            "plans/pg.yaml:5:21: load.open.rate: must be > 0, got -5");
  EXPECT_EQ(ErrorOf(head + "load: {open: {rate: 0}}\n"),
            "plans/pg.yaml:5:21: load.open.rate: must be > 0, got 0");
  EXPECT_EQ(ErrorOf(head + "load: {open: {rate: 1e9}}\n"),
            "plans/pg.yaml:5:21: load.open.rate: must be at most 100000000, got 1000000000");
  EXPECT_THAT(ErrorOf(head + "load: {open: {rate: .nan}}\n"),
              HasSubstr("load.open.rate: expected a number"));
  EXPECT_THAT(ErrorOf(head + "load: {open: {arrival: poisson}}\n"),
              StartsWith("plans/pg.yaml:5:14: load.open.rate: missing"));
  EXPECT_TRUE(ParsePlan(head + "load: {open: {rate: 100000000}}\n", kSource).ok());
}

TEST(PlanErrorsTest, ClientsAndPoolBounds) {
  const std::string head = "target: {driver: noop}\nworkload: w\nscenario: s\nstop: {queries: 5}\n";
  EXPECT_EQ(ErrorOf(head + "load: {closed: {clients: 0}}\n"),
            "plans/pg.yaml:5:26: load.closed.clients: expected an integer from 1 to 100000, got "
            "\"0\"");
  EXPECT_THAT(ErrorOf(head + "load: {closed: {clients: 100001}}\n"),
              StartsWith("plans/pg.yaml:5:26: load.closed.clients: expected an integer from 1 "
                         "to 100000"));
  EXPECT_THAT(ErrorOf(head + "load: {closed: {think_time: 1s}}\n"),
              StartsWith("plans/pg.yaml:5:16: load.closed.clients: missing"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, pool: 0}\n"),
              StartsWith("plans/pg.yaml:1:30: target.pool: expected an integer from 1 to 100000"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, pool: 100001}\n"),
              StartsWith("plans/pg.yaml:1:30: target.pool: expected an integer from 1 to 100000"));
}

// No engine named: event loops for an open loop on a driver they drive, threads otherwise.
TEST(PlanParserTest, TheEngineDefaultsToEventLoopsForAnOpenLoopOnPostgresqlOrNoop) {
  const auto engine_of = [](const std::string& driver, const std::string& load,
                            const std::string& more = "") {
    absl::StatusOr<dbload::v1::Plan> plan =
        ParsePlan(absl::StrCat("target: {driver: ", driver, more, "}\nworkload: w\nscenario: s\n",
                               "load: ", load, "\nstop: {queries: 5}\n"),
                  kSource);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->target().engine() : dbload::v1::ENGINE_UNSPECIFIED;
  };
  const std::string open = "{open: {rate: 100}}", closed = "{closed: {clients: 2}}";
  EXPECT_EQ(engine_of("postgresql", open), dbload::v1::ENGINE_EVENT_LOOPS);
  EXPECT_EQ(engine_of("noop", open), dbload::v1::ENGINE_EVENT_LOOPS);
  EXPECT_EQ(engine_of("mysql", open), dbload::v1::ENGINE_THREADS);
  EXPECT_EQ(engine_of("postgresql", closed), dbload::v1::ENGINE_THREADS);
  EXPECT_EQ(engine_of("postgresql", open, ", engine: threads"), dbload::v1::ENGINE_THREADS);
  EXPECT_EQ(engine_of("postgresql", closed, ", engine: event_loops"),
            dbload::v1::ENGINE_EVENT_LOOPS);
  // What only event loops take comes with their default.
  EXPECT_EQ(engine_of("postgresql", open, ", event_loops: 1, connects_at_once: 4"),
            dbload::v1::ENGINE_EVENT_LOOPS);
}

TEST(PlanDefaultsTest, MySqlClientIsConnectorCUnlessThePlanSaysConnectorCpp) {
  const auto client_of = [](const std::string& target) {
    absl::StatusOr<dbload::v1::Plan> plan =
        ParsePlan(absl::StrCat("target: ", target,
                               "\nworkload: w\nscenario: s\nload: {closed: {clients: 1}}\n"
                               "stop: {queries: 5}\n"),
                  kSource);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->target().mysql_client() : dbload::v1::MY_SQL_CLIENT_UNSPECIFIED;
  };
  EXPECT_EQ(client_of("{driver: mysql}"), dbload::v1::MY_SQL_CLIENT_CONNECTOR_C);
  EXPECT_EQ(client_of("{driver: mysql, mysql_client: connector_cpp}"),
            dbload::v1::MY_SQL_CLIENT_CONNECTOR_CPP);
  EXPECT_EQ(client_of("{driver: postgresql}"), dbload::v1::MY_SQL_CLIENT_UNSPECIFIED);
}

TEST(PlanErrorsTest, EngineChoicesAndTheirLimits) {
  const std::string tail =
      "workload: w\nscenario: s\nload: {closed: {clients: 2}}\n"
      "stop: {queries: 5}\n";
  EXPECT_EQ(ErrorOf("target: {driver: noop, engine: fibers}\n" + tail),
            "plans/pg.yaml:1:32: target.engine: expected threads or event_loops, got \"fibers\"");
  EXPECT_THAT(
      ErrorOf("target: {driver: mysql, mysql_client: connector_cpp, engine: event_loops}\n" + tail),
      HasSubstr("target.engine: event_loops needs a client that does not block its thread; "
                "MySQL Connector/C++ (mysql_client: connector_cpp) blocks in every call: use "
                "threads, or mysql_client: connector_c"));
  EXPECT_TRUE(ParsePlan("target: {driver: mysql, engine: event_loops}\n" + tail, kSource).ok());
  EXPECT_EQ(ErrorOf("target: {driver: mysql, mysql_client: connector_cc}\n" + tail),
            "plans/pg.yaml:1:39: target.mysql_client: expected connector_c or connector_cpp, got "
            "\"connector_cc\"; did you mean 'connector_c'?");
  EXPECT_THAT(ErrorOf("target: {driver: postgresql, mysql_client: connector_c}\n" + tail),
              HasSubstr("target.mysql_client: only with driver: mysql; the target's driver is "
                        "postgresql"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, event_loops: 2}\n" + tail),
              HasSubstr("target.event_loops: only with engine: event_loops"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, engine: event_loops, event_loops: 1025}\n" + tail),
              HasSubstr("target.event_loops: expected an integer from 0 to 1024"));
  EXPECT_TRUE(ParsePlan("target: {driver: mysql, engine: threads}\n" + tail, kSource).ok());
  EXPECT_THAT(ErrorOf("target: {driver: noop, connects_at_once: 8}\n" + tail),
              HasSubstr("target.connects_at_once: only with engine: event_loops"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, engine: event_loops, connects_at_once: 0}\n" + tail),
              HasSubstr("target.connects_at_once: expected an integer from 1 to 100000"));
  EXPECT_EQ(ConnectsAtOnce(dbload::v1::Target()), kDefaultConnectsAtOnce);
  EXPECT_EQ(
      ParsePlan("target: {driver: noop, engine: event_loops, timer_slack: 100us}\n" + tail, kSource)
          ->target()
          .timer_slack_ns(),
      100'000);
  EXPECT_THAT(ErrorOf("target: {driver: noop, timer_slack: 100us}\n" + tail),
              HasSubstr("target.timer_slack: only with engine: event_loops"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, engine: event_loops, timer_slack: 11ms}\n" + tail),
              HasSubstr("target.timer_slack: must be from 0 to 10ms, got 11ms"));
  EXPECT_TRUE(ParsePlan("target: {driver: postgresql, pipeline: true}\n" + tail, kSource)
                  ->target()
                  .pipeline());
  EXPECT_EQ(ErrorOf("target: {driver: postgresql, pipeline: yes}\n" + tail),
            "plans/pg.yaml:1:40: target.pipeline: expected false or true, got \"yes\"");
  EXPECT_THAT(ErrorOf("target: {driver: noop, pipeline: true}\n" + tail),
              HasSubstr("target.pipeline: pipelining is PostgreSQL's (libpq's pipeline mode); "
                        "the target's driver is noop"));
  EXPECT_EQ(ErrorOf("target: {driver: noop, connect: each}\n" + tail),
            "plans/pg.yaml:1:33: target.connect: expected once or per_transaction, got \"each\"");
}

TEST(PlanErrorsTest, ClosedLoopNeedsAConnectionPerClient) {
  EXPECT_EQ(ErrorOf(R"(target:
  driver: postgresql
  pool: 4
workload: oltp
scenario: point_select
load: {closed: {clients: 8}}
stop: {duration: 30s}
)"),
            "plans/pg.yaml:3:9: target.pool: a closed loop needs a connection per client: must "
            "be at least load.closed.clients (8), got 4");
}

TEST(PlanErrorsTest, OpenAndClosedTogetherOrNeither) {
  EXPECT_EQ(ErrorOf("load: {open: {rate: 5}, closed: {clients: 2}}\n"),
            "plans/pg.yaml:1:7: load: set either open (a rate) or closed (a number of clients), "
            "not both");
  const std::string without_load =
      "target: {driver: noop}\nworkload: w\nscenario: s\nstop: {queries: 5}\n";
  EXPECT_THAT(ErrorOf(without_load + "load: {}\n"), StartsWith("plans/pg.yaml:5:7: load: missing"));
  EXPECT_THAT(ErrorOf(without_load), StartsWith("plans/pg.yaml: load: missing"));
}

TEST(PlanErrorsTest, TargetAndDriver) {
  EXPECT_THAT(
      ErrorOf("workload: w\nscenario: s\nload: {closed: {clients: 1}}\nstop: {queries: 1}\n"),
      StartsWith("plans/pg.yaml: target: missing"));
  EXPECT_THAT(ErrorOf("name: x\ntarget: {host: 127.0.0.1}\n"),
              StartsWith("plans/pg.yaml:2:9: target.driver: missing; expected one of "
                         "postgresql, mysql, noop"));
  EXPECT_EQ(ErrorOf("target:\n  driver: postgres\n"),
            "plans/pg.yaml:2:11: target.driver: expected one of postgresql, mysql, noop, got "
            "\"postgres\"; did you mean 'postgresql'?");
  EXPECT_THAT(ErrorOf("target: {driver: oracle}\n"),
              AllOf(HasSubstr("target.driver: expected one of"), Not(HasSubstr("did you mean"))));
}

TEST(PlanErrorsTest, HostAndSocketExcludeEachOther) {
  EXPECT_THAT(ErrorOf("target: {driver: postgresql, host: localhost, socket: /tmp/s}\n"),
              StartsWith("plans/pg.yaml:1:55: target.socket: set either host (and port) or "
                         "socket, not both"));
}

TEST(PlanErrorsTest, HostIsOneNameOrAddress) {
  for (const std::string host : {"127.0.0.1,10.0.0.1", "db example", "db=x"}) {
    EXPECT_THAT(ErrorOf("target: {driver: postgresql, host: \"" + host + "\"}\n"),
                AllOf(StartsWith("plans/pg.yaml:1:36: target.host: expected one host name or IP "
                                 "address, got "),
                      HasSubstr(host)))
        << host;
  }
  EXPECT_THAT(ErrorOf("target: {driver: postgresql, host: /var/run/postgresql}\n"),
              HasSubstr("a socket directory goes in target.socket"));
}

TEST(PlanErrorsTest, NoopLatencyOnlyForTheNoopDriver) {
  EXPECT_THAT(ErrorOf("target: {driver: mysql, noop: {fixed: 1ms}}\nworkload: w\n"),
              StartsWith("plans/pg.yaml:1:31: target.noop: only the noop driver simulates"));
}

TEST(PlanErrorsTest, PasswordFileAndEnvExcludeEachOther) {
  EXPECT_THAT(ErrorOf("target: {driver: postgresql, password_file: /p, password_env: PW}\n"),
              StartsWith("plans/pg.yaml:1:63: target.password_env: set either password_file or "
                         "password_env, not both"));
}

TEST(PlanErrorsTest, StopRuleIsRequired) {
  const std::string head =
      "target: {driver: noop}\nworkload: w\nscenario: s\nload: {closed: {clients: 1}}\n";
  EXPECT_EQ(ErrorOf(head),
            "plans/pg.yaml: stop: missing; set stop.duration, stop.queries or both: every run "
            "is bounded");
  EXPECT_THAT(ErrorOf(head + "stop: {}\n"), StartsWith("plans/pg.yaml:5:7: stop: missing"));
  EXPECT_EQ(ErrorOf(head + "stop: {duration: 0s}\n"),
            "plans/pg.yaml:5:18: stop.duration: must be > 0, got 0");
  EXPECT_THAT(ErrorOf(head + "stop: {queries: 0}\n"),
              StartsWith("plans/pg.yaml:5:17: stop.queries: expected an integer from 1 to "));
  EXPECT_EQ(ErrorOf(head + "stop: {duration: -1m}\n"),
            "plans/pg.yaml:5:18: stop.duration: must be > 0, got -1m");
}

TEST(PlanErrorsTest, WarmupAndOtherDurations) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "warmup: -5s\n"),
            "plans/pg.yaml:10:9: warmup: must be >= 0, got -5s");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "warmup: 5 parsecs\n"),
            "plans/pg.yaml:10:9: warmup: expected a duration such as 250ms, 5s or 1m30s (units "
            "ns, us, ms, s, m, h; a bare integer means seconds), got \"5 parsecs\"");
  EXPECT_THAT(ErrorOf("target: {driver: noop, connect_timeout: soon}\n"),
              StartsWith("plans/pg.yaml:1:41: target.connect_timeout: expected a duration"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, connect_timeout: -1s}\nworkload: w\nscenario: s\n"
                      "load: {closed: {clients: 1}}\nstop: {queries: 1}\n"),
              StartsWith("plans/pg.yaml:1:41: target.connect_timeout: must be >= 0, got -1s"));
  EXPECT_THAT(ErrorOf("target: {driver: noop, noop: {exponential_mean: 1 ms}}\n"),
              StartsWith("plans/pg.yaml:1:49: target.noop.exponential_mean: expected a duration"));
  EXPECT_THAT(ErrorOf("load: {closed: {clients: 1, think_time: [1s]}}\n"),
              StartsWith("plans/pg.yaml:1:41: load.closed.think_time: expected a duration"));
}

TEST(PlanErrorsTest, WorkloadAndScenarioAreRequired) {
  EXPECT_THAT(ErrorOf("target: {driver: noop}\nscenario: s\n"),
              StartsWith("plans/pg.yaml: workload: missing"));
  EXPECT_THAT(ErrorOf("target: {driver: noop}\nworkload: w\n"),
              StartsWith("plans/pg.yaml: scenario: missing"));
}

TEST(PlanErrorsTest, SeedMustBeAnUnsignedInteger) {
  for (const std::string seed : {"-1", "abc", "1.5", "18446744073709551616", "0x10"}) {
    EXPECT_EQ(ErrorOf(std::string(kMinimal) + "seed: " + seed + "\n"),
              "plans/pg.yaml:10:7: seed: expected an integer from 0 to 18446744073709551615, "
              "got \"" +
                  seed + "\"");
  }
  EXPECT_EQ(ParseOk(std::string(kMinimal) + "seed: 0\n").seed(), 0u);
}

TEST(PlanErrorsTest, DuplicateKeysAreRefused) {
  EXPECT_EQ(ErrorOf(R"(target:
  driver: postgresql
  port: 5432
  port: 5433
)"),
            "plans/pg.yaml:4:3: target.port: duplicate field; it is already set at line 3");
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "name: again\n"),
              StartsWith("plans/pg.yaml:10:1: name: duplicate field; it is already set at line 1"));
}

TEST(PlanErrorsTest, MoreThanOneDocumentIsRefused) {
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "---\nname: other\n"),
              StartsWith("plans/pg.yaml:10:1: a second YAML document starts here"));
}

TEST(PlanErrorsTest, HostileInputFailsCleanly) {
  EXPECT_THAT(ErrorOf("name: " + std::string(100, '[') + std::string(100, ']') + "\n"),
              AllOf(StartsWith("plans/pg.yaml:1:"), HasSubstr("nesting deeper than 64")));
  EXPECT_THAT(ErrorOf(std::string(100000, '[')), HasSubstr("nesting deeper than 64"));
  std::string block_nesting;
  for (int i = 0; i < 100; ++i) block_nesting += std::string(i, ' ') + "k:\n";
  EXPECT_THAT(ErrorOf(block_nesting), HasSubstr("nesting deeper than 64"));
  EXPECT_THAT(ErrorOf(std::string(kMaxPlanBytes + 1, '#')), HasSubstr("larger than 1048576"));
  // Self-referencing and exponentially aliased structures: the schema bounds the walk.
  EXPECT_THAT(ErrorOf("target: &a {noop: *a}\n"), HasSubstr("target.noop.noop: unknown field"));
  EXPECT_THAT(ErrorOf("a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n"),
              HasSubstr("unknown field"));
  EXPECT_THAT(ErrorOf("name: *undefined\n"), HasSubstr("plans/pg.yaml:1:"));
  EXPECT_THAT(ErrorOf(std::string("\0\xff\xfe garbage: [", 15)), StartsWith("plans/pg.yaml"));
}

// ---------------------------------------------------------------------------------------------
// ValidatePlan on plans built in code: no positions, but the field path.

Plan ValidOpenPlan() {
  Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.set_workload("oltp");
  plan.set_scenario("point_select");
  plan.mutable_load()->mutable_open()->set_rate(100);
  plan.mutable_stop()->set_duration_ns(kSec);
  ApplyPlanDefaults(plan);
  return plan;
}

TEST(ValidatePlanTest, NamesTheFieldWithoutAPosition) {
  Plan plan = ValidOpenPlan();
  EXPECT_TRUE(ValidatePlan(plan, "plan.yaml").ok());
  plan.mutable_load()->mutable_open()->set_rate(-5);
  EXPECT_EQ(Message(ValidatePlan(plan, "plan.yaml")),
            "plan.yaml: load.open.rate: must be > 0, got -5");
}

TEST(ValidatePlanTest, CatchesWhatAProtoCanHoldButAPlanMustNot) {
  Plan plan = ValidOpenPlan();
  plan.mutable_target()->set_pool(0);
  EXPECT_EQ(Message(ValidatePlan(plan, "p")),
            "p: target.pool: expected an integer from 1 to 100000, got 0");
  plan = ValidOpenPlan();
  plan.mutable_target()->set_port(70000);
  EXPECT_THAT(Message(ValidatePlan(plan, "p")), StartsWith("p: target.port: "));
  plan = ValidOpenPlan();
  plan.mutable_load()->mutable_open()->set_arrival(OpenLoad::ARRIVAL_UNSPECIFIED);
  EXPECT_THAT(Message(ValidatePlan(plan, "p")), StartsWith("p: load.open.arrival: "));
  plan = ValidOpenPlan();
  plan.set_warmup_ns(-1);
  EXPECT_EQ(Message(ValidatePlan(plan, "p")), "p: warmup: must be >= 0, got -1ns");
  plan = ValidOpenPlan();
  plan.mutable_target()->set_driver("postgresql");  // no defaults applied: no host, no socket
  EXPECT_THAT(Message(ValidatePlan(plan, "p")), StartsWith("p: target.host: missing"));
  plan = ValidOpenPlan();
  plan.mutable_target()->set_host("192.168.1.1");  // remote targets are the agents' to allow
  EXPECT_TRUE(ValidatePlan(plan, "p").ok());
  plan = ValidOpenPlan();
  plan.clear_stop();
  EXPECT_THAT(Message(ValidatePlan(plan, "p")), StartsWith("p: stop: missing"));
}

// ---------------------------------------------------------------------------------------------
// Limits (plan/plan_limits.h), on the proto: what a coordinator or agent receives.

Plan PlanWithQueryTypes(int query_types) {
  Plan plan = ValidOpenPlan();
  plan.set_workload("w.yaml");
  plan.set_scenario("s");
  v1::Scenario& scenario = *plan.mutable_workload_spec()->add_scenarios();
  scenario.set_name("s");
  for (int q = 0; q < query_types; ++q) {
    v1::QueryType& type = *scenario.add_query_types();
    type.set_name(absl::StrCat("q", q));
    type.add_statements()->mutable_sql()->set_any("SELECT 1");
  }
  return plan;
}

// 100,000 query types took the coordinator to 2.85 GB and made a report nobody could read.
TEST(PlanLimitsTest, TooManyQueryTypesAreRefusedNamingTheFieldAndTheLimit) {
  EXPECT_TRUE(ValidatePlan(PlanWithQueryTypes(kMaxQueryTypes), "p").ok());
  EXPECT_EQ(Message(ValidatePlan(PlanWithQueryTypes(100'000), "p")),
            "p: workload.scenarios.0.query_types: 100000 query types; a scenario may have at "
            "most 256");
  // Over several scenarios too.
  Plan plan = PlanWithQueryTypes(200);
  *plan.mutable_workload_spec()->add_scenarios() = plan.workload_spec().scenarios(0);
  plan.mutable_workload_spec()->mutable_scenarios(1)->set_name("t");
  EXPECT_THAT(Message(ValidatePlan(plan, "p")),
              HasSubstr("p: workload.scenarios.1.query_types: the workload has more than 256 "
                        "query types over its scenarios"));
}

TEST(PlanLimitsTest, StagesAndQueryTypesPerStageAreBounded) {
  Plan plan = PlanWithQueryTypes(10);
  plan.mutable_load()->mutable_open()->clear_rate();  // the stages give it
  for (int i = 0; i <= kMaxStages; ++i) {
    v1::Stage& stage = *plan.add_stages();
    stage.set_duration_ns(kSec);
    stage.mutable_rate()->set_shape(v1::Level::CONSTANT);
    stage.mutable_rate()->set_from(10);
  }
  EXPECT_EQ(Message(ValidatePlan(plan, "p")), "p: stages: 101 stages; a plan may have at most 100");
  plan.mutable_stages()->DeleteSubrange(4, kMaxStages + 1 - 4);
  EXPECT_TRUE(ValidatePlan(plan, "p").ok()) << ValidatePlan(plan, "p");
  plan = PlanWithQueryTypes(110);
  plan.mutable_load()->mutable_open()->clear_rate();
  plan.add_stages();
  plan.mutable_stages(0)->set_duration_ns(kSec);
  plan.mutable_stages(0)->mutable_rate()->set_shape(v1::Level::CONSTANT);
  plan.mutable_stages(0)->mutable_rate()->set_from(10);
  for (int i = 0; i < 3; ++i) *plan.add_stages() = plan.stages(0);
  EXPECT_THAT(Message(ValidatePlan(plan, "p")),
              HasSubstr("p: stages: 110 query types in 5 scopes (the run and its 4 stages) make "
                        "550 sets of histograms in the report, more than its 512"));
}

TEST(PlanLimitsTest, AStatementOrAWorkloadTooLargeIsRefused) {
  Plan plan = PlanWithQueryTypes(1);
  plan.mutable_workload_spec()
      ->mutable_scenarios(0)
      ->mutable_query_types(0)
      ->mutable_statements(0)
      ->mutable_sql()
      ->set_postgresql(std::string(kMaxStatementBytes + 1, 'x'));
  EXPECT_EQ(Message(ValidatePlan(plan, "p")),
            "p: workload.scenarios.0.query_types.0.statements.0.sql: the SQL is 1048577 bytes, "
            "more than the 1048576 one statement may have");
  plan = PlanWithQueryTypes(20);
  for (v1::QueryType& type : *plan.mutable_workload_spec()->mutable_scenarios(0)
                                  ->mutable_query_types()) {
    type.mutable_statements(0)->mutable_sql()->set_any(std::string(kMaxStatementBytes, 'x'));
  }
  EXPECT_THAT(Message(ValidatePlan(plan, "p")),
              HasSubstr("p: workload: the workload is 20971"));
  EXPECT_THAT(Message(ValidatePlan(plan, "p")),
              HasSubstr("more than the 16777216 a plan may carry"));
}

// Aliases in a plan file count every time they are used, before any node is built.
TEST(PlanLimitsTest, APlanAliasBombIsRefusedAtTheAlias) {
  std::string yaml = std::string(kMinimal) + "workload_options:\n  a: &big \"" +
                     std::string(512 << 10, 'x') + "\"\n";
  for (int i = 0; i < 40; ++i) absl::StrAppend(&yaml, "  b", i, ": *big\n");
  EXPECT_THAT(ErrorOf(yaml), HasSubstr("plans/pg.yaml:42:8: the file expands to more than "
                                       "16777216 bytes at this alias"));
}

// The agent's room, injected: the numbers an agent measured (agent/agent_resources.h).
TEST(PlanLimitsTest, WorkersBeyondAnAgentsThreadsOrFilesAreRefusedNamingItsLimit) {
  Plan plan = ParseOk(kMinimal);
  const AgentResources room{.threads = 100,
                            .threads_bound = "RLIMIT_NPROC 120, 20 threads of this user in use",
                            .files = 50,
                            .files_bound = "RLIMIT_NOFILE 64, 14 open"};
  EXPECT_TRUE(CheckAgentResources(plan, 8, true, room, "a1").ok());
  const absl::Status threads = CheckAgentResources(plan, 93, false, room, "a1");
  EXPECT_EQ(FieldOf(threads), "load.closed.clients");
  EXPECT_EQ(Message(threads),
            "agent a1 cannot run 93 clients: they need 101 threads (one each, plus 8), and it can "
            "start 100 more (RLIMIT_NPROC 120, 20 threads of this user in use); use fewer clients "
            "per agent (more agents), or raise the limit");
  const absl::Status files = CheckAgentResources(plan, 18, true, room, "a1");
  EXPECT_EQ(Message(files),
            "agent a1 cannot open 18 connections: they need 51 file descriptors (one each, plus "
            "32 of its own, plus 1 for EXPLAIN), and it can open 50 more (RLIMIT_NOFILE 64, 14 "
            "open); use fewer clients per agent (more agents), or raise the limit (ulimit -n)");
  // Unknown room (an older agent) is not checked; noop sessions hold no descriptor.
  EXPECT_TRUE(CheckAgentResources(plan, 90'000, false, AgentResources{}, "old").ok());
  // On event loops the workers need the loops' threads, not one each (one loop per core).
  plan.mutable_target()->set_engine(dbload::v1::ENGINE_EVENT_LOOPS);
  AgentResources two_cores = room;
  two_cores.cores = 2;
  two_cores.files = 0;  // the threads alone
  EXPECT_TRUE(CheckAgentResources(plan, 93, false, two_cores, "a1").ok());
  plan.mutable_target()->set_event_loops(95);
  EXPECT_THAT(Message(CheckAgentResources(plan, 200, false, two_cores, "a1")),
              HasSubstr("they need 103 threads (their event loops, plus 8)"));
  plan.mutable_target()->set_driver("noop");
  EXPECT_TRUE(CheckAgentResources(plan, 18, true, room, "a1").ok());
}

TEST(PlanLimitsTest, ConnectionsBeyondTheServersMaxConnectionsAreRefusedWithTheNumbers) {
  const Plan plan = ParseOk(kMinimal);
  EXPECT_TRUE(CheckServerConnections(plan, 95, 100).ok());
  EXPECT_TRUE(CheckServerConnections(plan, 5000, 0).ok());  // unknown
  const absl::Status refused = CheckServerConnections(plan, 96, 100);
  EXPECT_EQ(FieldOf(refused), "load.closed.clients");
  EXPECT_EQ(Message(refused),
            "the run needs 96 connections over all agents, and the server allows max_connections "
            "100, of which dbload leaves 5 free (its probe, reserved connections): use at most 95 "
            "connections, or raise max_connections");
}

// ---------------------------------------------------------------------------------------------
// Durations

TEST(ParseDurationNanosTest, AcceptsTheDocumentedForms) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"250ms", 250 * kMs},
      {"5s", 5 * kSec},
      {"1m", 60 * kSec},
      {"1m30s", 90 * kSec},
      {"2h", 7200 * kSec},
      {"100us", 100'000},
      {"100\xC2\xB5s", 100'000},
      {"1500ns", 1500},
      {"30", 30 * kSec},
      {"0", 0},
      {"0s", 0},
      {"1.5s", 1500 * kMs},
      {"0.25ms", 250'000},
      {"1h2m3s4ms5us6ns", 3723 * kSec + 4 * kMs + 5'006},
      {"-5s", -5 * kSec},
      {"9223372036854775807ns", INT64_MAX},
      {"2562047h", int64_t{2562047} * 3600 * kSec},
      {"0.000000001s", 1},
  };
  for (const auto& [text, nanos] : cases) {
    absl::StatusOr<int64_t> parsed = ParseDurationNanos(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(*parsed, nanos) << text;
  }
}

TEST(ParseDurationNanosTest, RejectsEverythingElse) {
  for (const std::string text : {"",         "-",
                                 "s",        "5 parsecs",
                                 "5 s",      " 5s",
                                 "5s ",      "1.5",
                                 "5d",       "5S",
                                 "1..5s",    ".5s",
                                 "5.s",      "--5s",
                                 "+5s",      "1e3s",
                                 "5ms5",     "9223372036854775808ns",
                                 "2562048h", "99999999999999999999s"}) {
    absl::StatusOr<int64_t> parsed = ParseDurationNanos(text);
    EXPECT_FALSE(parsed.ok()) << "\"" << text << "\" gave " << *parsed;
    if (!parsed.ok()) {
      EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("expected a duration"));
    }
  }
}

TEST(ParseDurationNanosTest, FormatRoundTrips) {
  for (int64_t nanos : {int64_t{0}, int64_t{1}, -kSec, 90 * kSec, 7200 * kSec, 1500 * kMs,
                        int64_t{123'456'789}, INT64_MAX, INT64_MIN + 1}) {
    absl::StatusOr<int64_t> parsed = ParseDurationNanos(FormatDurationNanos(nanos));
    ASSERT_TRUE(parsed.ok()) << FormatDurationNanos(nanos);
    EXPECT_EQ(*parsed, nanos);
  }
  EXPECT_EQ(FormatDurationNanos(90 * kSec), "90s");
  EXPECT_EQ(FormatDurationNanos(-5 * kSec), "-5s");
  EXPECT_EQ(FormatDurationNanos(2 * 3600 * kSec), "2h");
  EXPECT_EQ(FormatDurationNanos(INT64_MIN), "-9223372036854775808ns");
}

// ---------------------------------------------------------------------------------------------
// --set overrides

TEST(OverridesTest, ReplaceAndAddValues) {
  const Plan plan =
      ParseOk(kMinimal, {"target.port=5433", "load.closed.clients=16", "stop.duration=10s",
                         "stop.queries=100", "workload_options.table_size=100000", "warmup=1s",
                         "seed=7", "name=renamed"});
  EXPECT_EQ(plan.target().port(), 5433u);
  EXPECT_EQ(plan.load().closed().clients(), 16u);
  EXPECT_EQ(plan.target().pool(), 16u);  // the default follows the overridden clients
  EXPECT_EQ(plan.stop().duration_ns(), 10 * kSec);
  EXPECT_EQ(plan.stop().queries(), 100u);
  EXPECT_EQ(plan.workload_options().at("table_size"), "100000");
  EXPECT_EQ(plan.warmup_ns(), kSec);
  EXPECT_EQ(plan.seed(), 7u);
  EXPECT_EQ(plan.name(), "renamed");
}

TEST(OverridesTest, OpenRateOverride) {
  const Plan plan = ParseOk(
      "target: {driver: noop}\nworkload: w\nscenario: s\nload: {open: {rate: 5}}\n"
      "stop: {queries: 5}\n",
      {"load.open.rate=2000", "load.open.arrival=poisson"});
  EXPECT_DOUBLE_EQ(plan.load().open().rate(), 2000);
  EXPECT_EQ(plan.load().open().arrival(), OpenLoad::POISSON);
}

TEST(OverridesTest, BadValueIsReportedWithTheOverridePath) {
  EXPECT_EQ(ErrorOf(kMinimal, {"target.port=abc"}),
            "plans/pg.yaml: --set target.port: expected an integer from 1 to 65535, got \"abc\"");
  EXPECT_EQ(ErrorOf(kMinimal, {"stop.duration=5 parsecs"}),
            "plans/pg.yaml: --set stop.duration: expected a duration such as 250ms, 5s or 1m30s "
            "(units ns, us, ms, s, m, h; a bare integer means seconds), got \"5 parsecs\"");
  EXPECT_EQ(ErrorOf(kMinimal, {"warmup=-1s"}),
            "plans/pg.yaml: --set warmup: must be >= 0, got -1s");
  EXPECT_THAT(ErrorOf(kMinimal, {"target.host=10.0.0.1,10.0.0.2"}),
              StartsWith("plans/pg.yaml: --set target.host: expected one host name or IP"));
  EXPECT_EQ(ErrorOf(kMinimal, {"target.pool=4"}),
            "plans/pg.yaml: --set target.pool: a closed loop needs a connection per client: must "
            "be at least load.closed.clients (8), got 4");
}

TEST(OverridesTest, UnknownOrMalformedPathsAreNamed) {
  EXPECT_EQ(ErrorOf(kMinimal, {"target.prot=1"}),
            "plans/pg.yaml: --set target.prot: unknown field; did you mean 'port'?");
  EXPECT_THAT(ErrorOf(kMinimal, {"bogus.deeper=1"}),
              StartsWith("plans/pg.yaml: --set bogus: unknown field; a plan has: name"));
  EXPECT_THAT(ErrorOf(kMinimal, {"target.port"}), HasSubstr("expected path=value"));
  EXPECT_THAT(ErrorOf(kMinimal, {"target=x"}),
              StartsWith("plans/pg.yaml: --set target: is a map; --set one value inside it"));
  EXPECT_THAT(ErrorOf(kMinimal, {"seed.x=1"}),
              StartsWith("plans/pg.yaml: --set seed: is a single value; it has no field 'x'"));
  EXPECT_THAT(ErrorOf(kMinimal, {"target..port=1"}), HasSubstr("empty field name"));
  EXPECT_THAT(ErrorOf(kMinimal, {"workload_options.a.b=1"}),
              StartsWith("plans/pg.yaml: --set workload_options.a: is a single value"));
  EXPECT_THAT(ErrorOf("target: postgresql\n", {"target.port=1"}),
              HasSubstr("the plan sets it to \"postgresql\", not a map"));
}

TEST(OverridesTest, CreatedMapsAreBlamedOnTheOverride) {
  // load.open is created by --set next to the file's load.closed: both set.
  EXPECT_THAT(ErrorOf(kMinimal, {"load.open.rate=5"}),
              StartsWith("plans/pg.yaml:8:7: load: set either open"));
  // The file has no load: the error about the created map must not point into the file.
  EXPECT_THAT(ErrorOf("target: {driver: noop}\nworkload: w\nscenario: s\nstop: {queries: 5}\n",
                      {"load.open.arrival=poisson"}),
              StartsWith("plans/pg.yaml: --set load.open.rate: missing"));
}

TEST(OverridesTest, LoadPlanFileAppliesOverrides) {
  const std::string path = WriteTempFile("overrides.yaml", kMinimal);
  absl::StatusOr<Plan> plan = LoadPlanFile(path, {"target.port=6543"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->target().port(), 6543u);
  absl::StatusOr<Plan> bad = LoadPlanFile(path, {"target.port=0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()), StartsWith(path + ": --set target.port: "));
}

// ---------------------------------------------------------------------------------------------
// Files

TEST(LoadPlanFileTest, ReadsAFileAndNamesItInErrors) {
  const std::string path = WriteTempFile("good.yaml", kMinimal);
  absl::StatusOr<Plan> plan = LoadPlanFile(path);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->name(), "t");

  const std::string bad_path = WriteTempFile("bad.yaml", std::string(kMinimal) + "sed: 1\n");
  absl::StatusOr<Plan> bad = LoadPlanFile(bad_path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()), StartsWith(bad_path + ":10:1: sed: "));
}

TEST(LoadPlanFileTest, MissingFileNamesThePath) {
  absl::StatusOr<Plan> plan = LoadPlanFile("/nonexistent/dir/plan.yaml");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(plan.status()), HasSubstr("/nonexistent/dir/plan.yaml"));
}

TEST(LoadPlanFileTest, OversizedFileIsRefused) {
  const std::string path = WriteTempFile("huge.yaml", std::string(kMaxPlanBytes + 100, '#'));
  absl::StatusOr<Plan> plan = LoadPlanFile(path);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(Message(plan.status()), AllOf(StartsWith(path), HasSubstr("larger than")));
}

// ---------------------------------------------------------------------------------------------
// Passwords

v1::Target TargetWithPasswordFile(const std::string& path) {
  v1::Target target;
  target.set_password_file(path);
  return target;
}

TEST(ReadTargetPasswordTest, FromFileWithoutTrailingNewline) {
  for (const std::string content : {"s3cret\n", "s3cret\r\n", "s3cret", "s3cret\n\n"}) {
    absl::StatusOr<std::string> password =
        ReadTargetPassword(TargetWithPasswordFile(WriteTempFile("pw", content)));
    ASSERT_TRUE(password.ok()) << password.status();
    EXPECT_EQ(*password, "s3cret");
  }
  absl::StatusOr<std::string> inner_space =
      ReadTargetPassword(TargetWithPasswordFile(WriteTempFile("pw2", " a b \n")));
  ASSERT_TRUE(inner_space.ok());
  EXPECT_EQ(*inner_space, " a b ");
}

TEST(ReadTargetPasswordTest, MissingOrUnreadableFileNamesThePath) {
  absl::StatusOr<std::string> missing =
      ReadTargetPassword(TargetWithPasswordFile("/nonexistent/pw"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(Message(missing.status()),
              AllOf(HasSubstr("target.password_file"), HasSubstr("/nonexistent/pw")));

  const std::string directory = ::testing::TempDir();  // open succeeds, read fails
  absl::StatusOr<std::string> unreadable = ReadTargetPassword(TargetWithPasswordFile(directory));
  ASSERT_FALSE(unreadable.ok());
  EXPECT_THAT(Message(unreadable.status()), HasSubstr(directory));
}

TEST(ReadTargetPasswordTest, ContentNeverAppearsInErrors) {
  std::string huge;
  while (huge.size() <= 70 * 1024) huge += "hunter2-";
  const std::string path = WriteTempFile("huge_pw", huge);
  absl::StatusOr<std::string> password = ReadTargetPassword(TargetWithPasswordFile(path));
  ASSERT_FALSE(password.ok());
  EXPECT_THAT(Message(password.status()), AllOf(HasSubstr(path), Not(HasSubstr("hunter2"))));

  // Plan errors about password settings do not read the file at all.
  const std::string small = WriteTempFile("small_pw", "hunter2\n");
  const std::string message =
      ErrorOf("target: {driver: postgresql, password_file: " + small + ", password_env: X}\n");
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
  v1::Target both = TargetWithPasswordFile(small);
  both.set_password_env("X");
  absl::StatusOr<std::string> both_result = ReadTargetPassword(both);
  ASSERT_FALSE(both_result.ok());
  EXPECT_THAT(Message(both_result.status()), Not(HasSubstr("hunter2")));
}

TEST(ReadTargetPasswordTest, FromEnvironment) {
  v1::Target target;
  target.set_password_env("DBLOAD_PLAN_PARSER_TEST_PW");
  ::setenv("DBLOAD_PLAN_PARSER_TEST_PW", "from-env", 1);
  absl::StatusOr<std::string> password = ReadTargetPassword(target);
  ASSERT_TRUE(password.ok()) << password.status();
  EXPECT_EQ(*password, "from-env");

  ::unsetenv("DBLOAD_PLAN_PARSER_TEST_PW");
  absl::StatusOr<std::string> unset = ReadTargetPassword(target);
  ASSERT_FALSE(unset.ok());
  EXPECT_THAT(Message(unset.status()), HasSubstr("DBLOAD_PLAN_PARSER_TEST_PW"));
}

TEST(ReadTargetPasswordTest, NeitherGivesEmpty) {
  absl::StatusOr<std::string> password = ReadTargetPassword(v1::Target());
  ASSERT_TRUE(password.ok());
  EXPECT_EQ(*password, "");
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

constexpr char kStagedHead[] = R"(name: t
target: {driver: postgresql, host: 127.0.0.1, port: 5432}
workload: oltp
scenario: point_select
)";

TEST(StagesTest, OneLineStaircaseRampsAndAbortRulesParse) {
  const v1::Plan plan = ParseOk(std::string(kStagedHead) + R"(load: {closed: {}}
stages:
  - {name: climb, clients: {from: 1, step: 1, every: 60s, max: 16}}
  - {name: hold, duration: 2m, clients: 16}
  - {name: down, duration: 1m, clients: {from: 16, to: 1}}
abort: {p99_above: 50ms, error_rate_above: 0.01}
)");
  ASSERT_EQ(plan.stages_size(), 3);
  const v1::Level& climb = plan.stages(0).clients();
  EXPECT_EQ(climb.shape(), v1::Level::STAIRCASE);
  EXPECT_EQ(climb.from(), 1);
  EXPECT_EQ(climb.step(), 1);
  EXPECT_EQ(climb.every_ns(), 60 * kSec);
  EXPECT_EQ(climb.max(), 16);
  EXPECT_EQ(plan.stages(1).clients().shape(), v1::Level::CONSTANT);
  EXPECT_EQ(plan.stages(1).duration_ns(), 120 * kSec);
  EXPECT_EQ(plan.stages(2).clients().shape(), v1::Level::RAMP);
  EXPECT_EQ(plan.target().pool(), 16u);  // the most clients any stage runs
  EXPECT_EQ(plan.abort().p99_above_ns(), 50 * kMs);
  EXPECT_EQ(plan.abort().for_ns(), 5 * kSec);  // the default span
}

TEST(StagesTest, MistakesNameTheStageAndField) {
  const std::string open = std::string(kStagedHead) + "load: {open: {}}\nstages:\n";
  EXPECT_EQ(ErrorOf(open + "  - {duration: 10s, clients: 4}\n"),
            "plans/pg.yaml:7:30: stages.0.clients: the plan's load is open, so a stage gives its "
            "rate");
  EXPECT_EQ(ErrorOf(open + "  - {rate: {from: 10, to: 100}}\n"),
            "plans/pg.yaml:7:5: stages.0.duration: missing; a ramp needs a duration to ramp over");
  EXPECT_EQ(ParseOk(open + "  - {queries: 100, rate: 10}\n  - {duration: 1s, rate: 10}\n")
                .stages(0)
                .queries(),
            100u);
  EXPECT_EQ(ErrorOf(open + "  - {rate: 10}\n"),
            "plans/pg.yaml:7:5: stages.0.duration: missing; a stage lasts a duration, a number of "
            "queries, or both");
  EXPECT_EQ(ErrorOf(open + "  - {duration: 1s, rate: {from: 10, step: 5}}\n"),
            "plans/pg.yaml:7:26: stages.0.rate.every: missing; a staircase needs from, step, every "
            "and max");
  EXPECT_EQ(ErrorOf(open + "  - {duration: 1s, rate: {from: 0, to: 5}}\n"),
            "plans/pg.yaml:7:33: stages.0.rate.from: must be > 0, got 0 (a rate ramp starts at a "
            "small rate, e.g. 1)");
  EXPECT_THAT(ErrorOf(std::string(kStagedHead) + "load: {open: {rate: 5}}\nstages:\n  - {duration: "
                                                 "1s, rate: 10}\n"),
              StartsWith("plans/pg.yaml:5:21: load.open.rate: with stages, each stage gives its "
                         "rate"));
  EXPECT_THAT(ErrorOf(std::string(kStagedHead) +
                      "load: {closed: {}}\nstages: [{duration: 1s, clients: 2}]\n"
                      "abort: {achieved_below: 0.9}\n"),
              HasSubstr("abort.achieved_below: only an open loop has a target rate"));
}

TEST(PlanProbeTest, ExplainIsOnUnlessTurnedOff) {
  EXPECT_FALSE(ParseOk(kMinimal).explain().disabled());
  EXPECT_FALSE(ParseOk(std::string(kMinimal) + "explain: {enabled: true}\n").explain().disabled());
  EXPECT_TRUE(ParseOk(std::string(kMinimal) + "explain: {enabled: false}\n").explain().disabled());
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "explain: {enabled: off}\n"),
              HasSubstr("explain.enabled: expected true or false, got \"off\""));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "explain: {enable: false}\n"),
              HasSubstr("explain.enable: unknown field; did you mean 'enabled'?"));
}

TEST(PlanProbeTest, ProbeAndGeneratorLimitsParseAndMistakesNameTheField) {
  const v1::Plan plan = ParseOk(std::string(kMinimal) +
                                "probe: {interval: 500ms, haproxy_stats: /run/haproxy.sock}\n"
                                "generator: {max_agent_cpu: 0.8, max_schedule_lag_p99: 2ms}\n");
  EXPECT_FALSE(plan.probe().disabled());
  EXPECT_EQ(plan.probe().interval_ns(), 500 * kMs);
  EXPECT_EQ(plan.probe().haproxy_stats(), "/run/haproxy.sock");
  EXPECT_EQ(plan.generator().max_agent_cpu(), 0.8);
  EXPECT_EQ(plan.generator().max_schedule_lag_p99_ns(), 2 * kMs);
  const v1::Plan relative =
      ParseOk(std::string(kMinimal) +
              "generator: {max_dispatch_lag_share: 0.25, min_dispatch_lag_p99: 2ms}\n");
  EXPECT_EQ(relative.generator().max_dispatch_lag_share(), 0.25);
  EXPECT_EQ(relative.generator().min_dispatch_lag_p99_ns(), 2 * kMs);
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "generator: {max_dispatch_lag_share: 10}\n"),
              HasSubstr("generator.max_dispatch_lag_share: must be a share of the response-time "
                        "p99"));
  EXPECT_TRUE(ParseOk(std::string(kMinimal) + "probe: {enabled: false}\n").probe().disabled());
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "probe: {enabled: no}\n"),
              HasSubstr("probe.enabled: expected true or false, got \"no\""));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "probe: {interval: 10ms}\n"),
              HasSubstr("probe.interval: must be between 100ms and 1h"));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "probe: {haproxy_stats: stats.sock}\n"),
              HasSubstr("probe.haproxy_stats: must be an absolute path"));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "probe: {intervall: 1s}\n"),
              HasSubstr("probe.intervall: unknown field; did you mean 'interval'?"));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "generator: {max_agent_cpu: 90}\n"),
              HasSubstr("generator.max_agent_cpu: must be a fraction of the agent's cores"));
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "generator: {max_schedule_lag_p99: 0s}\n"),
              HasSubstr("generator.max_schedule_lag_p99: must be > 0"));
}

TEST(StagesTest, SetReachesIntoAStageByIndex) {
  const std::string yaml = std::string(kStagedHead) + R"(load: {closed: {}}
stages:
  - {clients: {from: 1, step: 1, every: 60s, max: 4}}
  - {duration: 1m, clients: 4}
)";
  const v1::Plan plan = ParseOk(yaml, {"stages.0.clients.every=2s", "stages.1.clients=3"});
  EXPECT_EQ(plan.stages(0).clients().every_ns(), 2 * kSec);
  EXPECT_EQ(plan.stages(1).clients().from(), 3);
  EXPECT_EQ(ErrorOf(yaml, {"stages.5.duration=1s"}),
            "plans/pg.yaml: --set stages.5: the plan has 2 stages (numbered from 0); --set "
            "changes one that exists");
}

TEST(StagesTest, APlanCanRequireAgents) {
  const v1::Plan plan = ParseOk(std::string(kMinimal) + "agents: {min: 3, wait: 30s}\n");
  EXPECT_EQ(plan.agents().min(), 3u);
  EXPECT_EQ(plan.agents().wait_ns(), 30 * kSec);
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "agents: {min: 0}\n"),
              HasSubstr("agents.min: expected an integer from 1 to 100000, got \"0\""));
}

TEST(StagesTest, KneeSearchParsesWithDefaultsAndItsMistakesAreNamed) {
  const std::string open = std::string(kStagedHead) + "load: {open: {}}\nstages:\n";
  const v1::Plan plan = ParseOk(
      open + "  - knee: {from: 1000, step: 1000, max: 50000, every: 10s, p99: 10ms, "
             "achieved: 0.95}\n");
  ASSERT_EQ(plan.stages_size(), 1);
  const v1::KneeSearch& knee = plan.stages(0).knee();
  EXPECT_EQ(knee.from(), 1000);
  EXPECT_EQ(knee.max(), 50000);
  EXPECT_EQ(knee.every_ns(), 10 * kSec);
  EXPECT_EQ(knee.p99_ns(), 10 * kMs);
  EXPECT_EQ(knee.refine(), 3u);  // the default

  EXPECT_THAT(ErrorOf(open + "  - knee: {from: 1, step: 1, max: 5, every: 1s}\n"),
              HasSubstr("stages.0.knee: missing an SLO"));
  EXPECT_THAT(ErrorOf(open + "  - knee: {from: 1, step: 1, max: 5, every: 100ms, p99: 1ms}\n"),
              HasSubstr("stages.0.knee.every: must be at least 1s"));
  EXPECT_THAT(ErrorOf(open + "  - {duration: 5s, knee: {from: 1, step: 1, max: 5, every: 1s, "
                             "p99: 1ms}}\n"),
              HasSubstr("stages.0.duration: a knee-search stage sets its load and length itself"));
  EXPECT_THAT(ErrorOf(std::string(kStagedHead) +
                      "load: {closed: {}}\nstages:\n  - knee: {from: 1, step: 1.5, max: 5, "
                      "every: 1s, p99: 1ms}\n"),
              HasSubstr("stages.0.knee: clients are whole numbers"));
  EXPECT_THAT(ErrorOf(open + "  - knee: {from: 1, step: 1, every: 1s, p99: 1ms}\n"),
              HasSubstr("stages.0.knee.max: missing"));
}

}  // namespace
}  // namespace dbload
