#include "suite/suite_plan_messages.h"

#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace dbload::suite_yaml {
namespace {

TEST(SuitePlanMessagesTest, SplitsPositionFieldAndWhat) {
  const PlanMessage split =
      SplitPlanMessage("s.yaml:12:5: stop.duration: expected a duration, got \"x\"", "s.yaml");
  EXPECT_EQ(split.where, "s.yaml:12:5");
  EXPECT_FALSE(split.from_set);
  EXPECT_EQ(split.field, "stop.duration");
  EXPECT_EQ(split.what, "expected a duration, got \"x\"");
}

TEST(SuitePlanMessagesTest, ASetMessageHasNoPosition) {
  const PlanMessage split = SplitPlanMessage("s.yaml: --set target.port: expected", "s.yaml");
  EXPECT_EQ(split.where, "");
  EXPECT_TRUE(split.from_set);
  EXPECT_EQ(split.field, "target.port");
  EXPECT_EQ(split.what, "expected");
}

TEST(SuitePlanMessagesTest, TheFileAloneAndAMessageWithoutAField) {
  const PlanMessage split = SplitPlanMessage("s.yaml: the plan needs a stop rule", "s.yaml");
  EXPECT_EQ(split.where, "");
  EXPECT_FALSE(split.from_set);
  EXPECT_EQ(split.field, "");
  EXPECT_EQ(split.what, "the plan needs a stop rule");
  // Text before ": " that is no field path stays in the message.
  EXPECT_EQ(SplitPlanMessage("s.yaml: a b: c", "s.yaml").what, "a b: c");
}

TEST(SuitePlanMessagesTest, AnotherSourceKeepsItsText) {
  const PlanMessage split = SplitPlanMessage("other.yaml:1:1: x: y", "s.yaml");
  EXPECT_EQ(split.where, "");
  EXPECT_EQ(split.field, "");
  EXPECT_EQ(split.what, "other.yaml:1:1: x: y");
}

struct Fixture {
  YAML::Node suite = YAML::Load(
      "targets:\n"
      "  - name: pg\n"
      "    target: {driver: postgresql, port: 5432}\n"
      "cases:\n"
      "  - name: c\n"
      "    plan: {stop: {duration: 5s}, load: {closed: {}}}\n"
      "    points: [1, 4]\n");
  YAML::Node case_plan = suite["cases"][0]["plan"];
  YAML::Node target = suite["targets"][0]["target"];
  YAML::Node point = suite["cases"][0]["points"][1];
  PlanOrigin Origin() const {
    return {.case_index = 0,
            .target_index = 0,
            .case_plan = &case_plan,
            .target = &target,
            .probe = nullptr,
            .point = 1,
            .point_node = &point};
  }
};

TEST(SuitePlanMessagesTest, APlanFieldIsNamedByItsPathInTheSuiteAtItsPosition) {
  const Fixture f;
  EXPECT_EQ(InSuite("s.yaml: stop.duration: too long", "s.yaml", f.Origin()),
            "s.yaml:6:29: cases.0.plan.stop.duration: too long");
  EXPECT_EQ(InSuite("s.yaml: target.port: refused", "s.yaml", f.Origin()),
            "s.yaml:3:40: targets.0.target.port: refused");
  // The load point the suite put into the plan is the case's point.
  EXPECT_EQ(InSuite("s.yaml: load.closed.clients: too many", "s.yaml", f.Origin()),
            "s.yaml:7:17: cases.0.points.1: too many");
}

TEST(SuitePlanMessagesTest, AFieldNotInTheFileIsNamedAtTheNearestNodeThere) {
  const Fixture f;
  // stop.queries is not in the file: the message points at stop.
  EXPECT_EQ(InSuite("s.yaml: stop.queries: missing", "s.yaml", f.Origin()),
            "s.yaml:6:18: cases.0.plan.stop.queries: missing");
}

TEST(SuitePlanMessagesTest, AParsersPositionIsKeptAndASetStaysASet) {
  const Fixture f;
  EXPECT_EQ(InSuite("s.yaml:9:9: stop.duration: bad", "s.yaml", f.Origin()),
            "s.yaml:9:9: cases.0.plan.stop.duration: bad");
  EXPECT_EQ(InSuite("s.yaml: --set stop.duration: bad", "s.yaml", f.Origin()),
            "s.yaml: --set cases.0.plan.stop.duration: bad");
}

}  // namespace
}  // namespace dbload::suite_yaml
