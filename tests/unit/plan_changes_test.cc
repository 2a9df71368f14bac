#include "coordinator/plan_changes.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

// As PostgreSQL 15 writes them (EXPLAIN (FORMAT TEXT)): the same plan with other costs and
// values, and the plan the same lookup gets once the table is known to be small.
constexpr char kIndexLookup[] =
    "Update on inventory_items  (cost=0.29..8.31 rows=0 width=0)\n"
    "  ->  Index Scan using inventory_items_pkey on inventory_items  (cost=0.29..8.31 rows=1 "
    "width=10)\n"
    "        Index Cond: (id = 17)";
constexpr char kIndexLookupOtherValues[] =
    "Update on inventory_items  (cost=0.42..8.44 rows=0 width=0)\n"
    "  ->  Index Scan using inventory_items_pkey on inventory_items  (cost=0.42..8.44 rows=1 "
    "width=10)\n"
    "        Index Cond: (id = 9021)";
constexpr char kSequentialScan[] =
    "Update on inventory_items  (cost=0.00..1.01 rows=0 width=0)\n"
    "  ->  Seq Scan on inventory_items  (cost=0.00..1.01 rows=1 width=10)\n"
    "        Filter: (id = 17)";

TEST(PlanShapeTest, PostgreSqlKeepsTheNodesAndDropsCostsAndValues) {
  EXPECT_EQ(PlanShape(kIndexLookup),
            "Update on inventory_items\n"
            "  ->  Index Scan using inventory_items_pkey on inventory_items");
  EXPECT_EQ(PlanShape(kIndexLookup), PlanShape(kIndexLookupOtherValues));
  EXPECT_NE(PlanShape(kIndexLookup), PlanShape(kSequentialScan));
}

TEST(PlanShapeTest, MariaDbKeepsEachTablesAccessAndKey) {
  constexpr char kConst[] = R"({
  "query_block": {
    "select_id": 1,
    "table": {
      "table_name": "t",
      "access_type": "const",
      "possible_keys": ["PRIMARY"],
      "key": "PRIMARY",
      "key_length": "4",
      "used_key_parts": ["id"],
      "ref": ["const"],
      "rows": 1,
      "filtered": 100
    }
  }
})";
  EXPECT_EQ(PlanShape(kConst), "table t access_type=const key=PRIMARY");
  constexpr char kAll[] = R"({"query_block": {"select_id": 1, "table": {"table_name": "t",
      "access_type": "ALL", "rows": 1000, "filtered": 100, "attached_condition": "t.k = 5"}}})";
  EXPECT_EQ(PlanShape(kAll), "table t access_type=ALL");
  // A lookup of a row that is not there is planned on the value: nothing to compare.
  EXPECT_EQ(PlanShape(R"({"query_block": {"select_id": 1, "table": {"message": "Impossible WHERE )"
                      R"(noticed after reading const tables"}}})"),
            "");
}

TEST(PlanShapeTest, SeveralStatementsKeepTheirNumbersButNotTheirValues) {
  const std::string one = std::string("-- statement 1: UPDATE t SET n = n - 3 WHERE id = 17\n") +
                          kIndexLookup +
                          "\n-- statement 2: COMMIT\n(skipped: EXPLAIN does not "
                          "take this statement)";
  const std::string other = std::string("-- statement 1: UPDATE t SET n = n - 9 WHERE id = 4\n") +
                            kIndexLookupOtherValues +
                            "\n-- statement 2: COMMIT\n(skipped: EXPLAIN "
                            "does not take this statement)";
  EXPECT_EQ(PlanShape(one), PlanShape(other));
  EXPECT_THAT(PlanShape(one), ::testing::StartsWith("-- statement 1\nUpdate on inventory_items"));
  EXPECT_EQ(PlanShape("-- statement 1: SELECT 1\n(EXPLAIN failed: see the error)"), "");
}

v1::QueryPlan Plan(const std::string& query_type, const std::string& text,
                   const std::string& error = "") {
  v1::QueryPlan plan;
  plan.set_query_type(query_type);
  plan.set_plan(text);
  plan.set_error(error);
  return plan;
}

TEST(FindPlanChangesTest, NamesEachQueryTypeWhosePlanChangedAndBetweenWhichCaptures) {
  google::protobuf::RepeatedPtrField<v1::QueryPlan> stage1, stage2, after;
  *stage1.Add() = Plan("reserve", kSequentialScan);
  *stage1.Add() = Plan("audit", kIndexLookup);
  *stage2.Add() = Plan("reserve", kIndexLookup);
  *stage2.Add() = Plan("audit", kIndexLookupOtherValues);
  // A capture that failed is skipped: the next one is compared with the last that had a plan.
  *after.Add() = Plan("reserve", "", "connecting: refused");
  *after.Add() = Plan("audit", kSequentialScan);
  const std::vector<v1::PlanChange> changes = FindPlanChanges(
      {{"stage 1 (warm)", &stage1}, {"stage 2 (hot)", &stage2}, {"after the load", &after}});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].query_type(), "reserve");
  EXPECT_EQ(changes[0].before(), "stage 1 (warm)");
  EXPECT_EQ(changes[0].after(), "stage 2 (hot)");
  EXPECT_EQ(changes[0].before_shape(), PlanShape(kSequentialScan));
  EXPECT_EQ(changes[0].after_shape(), PlanShape(kIndexLookup));
  EXPECT_EQ(changes[1].query_type(), "audit");
  EXPECT_EQ(changes[1].before(), "stage 2 (hot)");
  EXPECT_EQ(changes[1].after(), "after the load");
}

TEST(FindPlanChangesTest, TheSamePlanWithOtherCostsIsNoChange) {
  google::protobuf::RepeatedPtrField<v1::QueryPlan> start, after;
  *start.Add() = Plan("reserve", kIndexLookup);
  *after.Add() = Plan("reserve", kIndexLookupOtherValues);
  EXPECT_TRUE(FindPlanChanges({{"the start", &start}, {"after the load", &after}}).empty());
}

}  // namespace
}  // namespace dbload
