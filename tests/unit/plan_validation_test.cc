// The checks on the Plan proto alone (plan/plan_validation.h), linked without any YAML reader:
// what the coordinator and each agent run on a plan they receive.

#include "plan/plan_validation.h"

#include <string>

#include "base/nearest_name.h"
#include "plan/durations.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::Plan OpenLoopPlan() {
  v1::Plan plan;
  plan.mutable_target()->set_driver("postgresql");
  plan.set_workload("oltp");
  plan.set_scenario("point_select");
  plan.mutable_load()->mutable_open()->set_rate(100);
  plan.mutable_stop()->set_duration_ns(10 * int64_t{1'000'000'000});
  return plan;
}

TEST(PlanValidationTest, DefaultsMakeACodeBuiltPlanValid) {
  v1::Plan plan = OpenLoopPlan();
  ApplyPlanDefaults(plan);
  EXPECT_EQ(plan.target().host(), "127.0.0.1");
  EXPECT_EQ(plan.target().port(), 5432u);
  EXPECT_EQ(plan.target().pool(), 8u);
  EXPECT_EQ(plan.load().open().arrival(), v1::OpenLoad::UNIFORM);
  EXPECT_TRUE(ValidatePlan(plan, "plan").ok());
}

TEST(PlanValidationTest, ClosedLoopPoolDefaultsToItsClients) {
  v1::Plan plan = OpenLoopPlan();
  plan.mutable_target()->set_driver("mysql");
  plan.mutable_load()->mutable_closed()->set_clients(12);
  ApplyPlanDefaults(plan);
  EXPECT_EQ(plan.target().port(), 3306u);
  EXPECT_EQ(plan.target().pool(), 12u);
  EXPECT_TRUE(ValidatePlan(plan, "plan").ok());
}

TEST(PlanValidationTest, MessagesNameTheSourceAndTheField) {
  v1::Plan plan = OpenLoopPlan();
  ApplyPlanDefaults(plan);
  plan.mutable_load()->mutable_open()->set_rate(-5);
  EXPECT_EQ(ValidatePlan(plan, "plan.yaml").message(),
            "plan.yaml: load.open.rate: must be > 0, got -5");
}

TEST(PlanValidationTest, MessagesArePlacedWhereTheLocatorSays) {
  v1::Plan plan = OpenLoopPlan();
  ApplyPlanDefaults(plan);
  plan.mutable_target()->set_driver("postgres");
  const FieldLocator at_line = [](absl::string_view) { return FieldLocation{"p.yaml:2:11"}; };
  EXPECT_EQ(ValidatePlanAt(plan, at_line).message(),
            "p.yaml:2:11: target.driver: expected one of postgresql, mysql, noop, got "
            "\"postgres\"; did you mean 'postgresql'?");
  const FieldLocator from_set = [](absl::string_view) { return FieldLocation{"p.yaml", true}; };
  EXPECT_THAT(std::string(ValidatePlanAt(plan, from_set).message()),
              ::testing::StartsWith("p.yaml: --set target.driver: expected one of"));
}

// A pipeline is PostgreSQL's, and sends every statement of a transaction before any answer: a
// statement that binds what an earlier one captured cannot be in one.
TEST(PlanValidationTest, APipelineIsPostgresqlsAndBindsNoCapturedValue) {
  v1::Plan plan = OpenLoopPlan();
  plan.mutable_target()->set_pipeline(true);
  plan.set_workload("bank");
  plan.set_scenario("transfer");
  ApplyPlanDefaults(plan);
  v1::Scenario& scenario = *plan.mutable_workload_spec()->add_scenarios();
  scenario.set_name("transfer");
  v1::QueryType& open = *scenario.add_query_types();
  open.set_name("open_account");
  v1::Statement& insert = *open.add_statements();
  insert.set_capture("id");
  v1::Statement& deposit = *open.add_statements();
  deposit.add_params()->mutable_uniform()->set_max(10);  // any generator but a captured value
  EXPECT_TRUE(ValidatePlan(plan, "plan").ok()) << ValidatePlan(plan, "plan");

  deposit.add_params()->set_captured("id");
  EXPECT_EQ(ValidatePlan(plan, "plan").message(),
            "plan: target.pipeline: query type open_account, statement 2 binds the value "
            "captured as 'id', which a pipeline does not have until the transaction's end; run "
            "this scenario without pipeline");
  plan.set_scenario("another");
  EXPECT_TRUE(ValidatePlan(plan, "plan").ok()) << "only the plan's scenario matters";

  plan.mutable_target()->set_driver("mysql");
  plan.mutable_target()->set_engine(v1::ENGINE_THREADS);
  EXPECT_EQ(ValidatePlan(plan, "plan").message(),
            "plan: target.pipeline: pipelining is PostgreSQL's (libpq's pipeline mode); the "
            "target's driver is mysql");
}

// tpcc's transactions read values mid-way (the next order id, the customer by name); its
// terminal waits are a closed loop's.
TEST(PlanValidationTest, TpccCannotBePipelinedNorWaitInAnOpenLoop) {
  v1::Plan plan = OpenLoopPlan();
  plan.set_workload("tpcc");
  plan.set_scenario("standard");
  ApplyPlanDefaults(plan);
  EXPECT_TRUE(ValidatePlan(plan, "plan").ok()) << ValidatePlan(plan, "plan");
  (*plan.mutable_workload_options())["terminal_waits"] = "true";
  EXPECT_EQ(ValidatePlan(plan, "plan").message(),
            "plan: workload_options.terminal_waits: keying and think times are the waits of "
            "terminals, a closed loop's; this plan's load is open (use load.closed.clients)");
  plan.mutable_workload_options()->erase("terminal_waits");
  plan.mutable_target()->set_pipeline(true);
  EXPECT_THAT(std::string(ValidatePlan(plan, "plan").message()),
              ::testing::StartsWith("plan: target.pipeline: workload tpcc reads values in the "
                                    "middle of its transactions"));
}

TEST(FieldMessagesTest, PathsQuoteKeysThatAreNotPlainNames) {
  EXPECT_EQ(JoinFieldPath("", "target"), "target");
  EXPECT_EQ(JoinFieldPath("workload_options", "table_size"), "workload_options.table_size");
  EXPECT_EQ(JoinFieldPath("workload_options", "a b"), "workload_options.\"a b\"");
  EXPECT_EQ(IntegerRange(1, 65535), "an integer from 1 to 65535");
}

TEST(DurationsTest, FormatAndParseRoundTrip) {
  for (int64_t nanos : {int64_t{0}, int64_t{1'500'000'000}, int64_t{-5'000'000'000},
                        int64_t{7'200'000'000'000}, int64_t{1}}) {
    absl::StatusOr<int64_t> parsed = ParseDurationNanos(FormatDurationNanos(nanos));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, nanos);
  }
}

TEST(NearestNameTest, SuggestsOnlyAClearlyCloseName) {
  EXPECT_EQ(NearestName("hots", {"host", "port", "socket"}), "host");
  EXPECT_EQ(NearestName("colour", {"host", "port"}), std::nullopt);
}

}  // namespace
}  // namespace dbload
