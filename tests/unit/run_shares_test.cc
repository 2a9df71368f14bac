#include "coordinator/run_shares.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::Plan ClosedPlan(uint32_t clients) {
  v1::Plan plan;
  plan.mutable_load()->mutable_closed()->set_clients(clients);
  return plan;
}

v1::Plan OpenPlan(double rate, uint32_t pool) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_target()->set_pool(pool);
  return plan;
}

// Three agents of 7 clients on slots 0..6, 7 spare slots (7..13), as the planner splits it.
RunShares SevenClientsOverThree() {
  RunShares shares(/*next_spare_slot=*/7, /*total_slots=*/14);
  shares.AssignClients("a", 3);
  shares.AssignClients("b", 2);
  shares.AssignClients("c", 2);
  return shares;
}

TEST(RunSharesTest, ALostAgentsClientsGoToTheSurvivorsOnSpareSlots) {
  RunShares shares = SevenClientsOverThree();
  RunShares::ClientsMoved moved = shares.MoveClientsOf({"a"}, {"b", "c"});
  EXPECT_EQ(moved.orphaned, 3u);
  ASSERT_TRUE(moved.moved);
  ASSERT_EQ(moved.changes.size(), 2u);
  EXPECT_EQ(moved.changes[0].participant, "b");
  EXPECT_EQ(moved.changes[0].change.load().clients(), 4u);  // 2 + 2
  EXPECT_EQ(moved.changes[0].change.extra_first_slot(), 7u);
  EXPECT_EQ(moved.changes[0].change.extra_slot_count(), 2u);
  EXPECT_EQ(moved.changes[1].participant, "c");
  EXPECT_EQ(moved.changes[1].change.load().clients(), 3u);  // 2 + 1
  EXPECT_EQ(moved.changes[1].change.extra_first_slot(), 9u);
  EXPECT_EQ(moved.changes[1].change.extra_slot_count(), 1u);
  EXPECT_EQ(shares.clients("a"), 0u);
  EXPECT_EQ(shares.clients("b") + shares.clients("c"), 7u);  // never more than the plan
  EXPECT_EQ(shares.spare_slots_left(), 4u);
  // Counted once: a second loss of another agent moves only that one's clients.
  moved = shares.MoveClientsOf({"a", "b"}, {"c"});
  EXPECT_EQ(moved.orphaned, 4u);
  ASSERT_TRUE(moved.moved);
  ASSERT_EQ(moved.changes.size(), 1u);
  EXPECT_EQ(moved.changes[0].change.load().clients(), 7u);
  EXPECT_EQ(moved.changes[0].change.extra_first_slot(), 10u);
  EXPECT_EQ(shares.spare_slots_left(), 0u);
}

TEST(RunSharesTest, ClientsAreNotMovedWithoutEnoughSpareSlotsYetCountOnce) {
  RunShares shares(/*next_spare_slot=*/7, /*total_slots=*/9);
  shares.AssignClients("a", 3);
  shares.AssignClients("b", 4);
  RunShares::ClientsMoved moved = shares.MoveClientsOf({"a"}, {"b"});
  EXPECT_EQ(moved.orphaned, 3u);
  EXPECT_FALSE(moved.moved);
  EXPECT_TRUE(moved.changes.empty());
  EXPECT_EQ(shares.clients("a"), 0u);
  EXPECT_EQ(shares.clients("b"), 4u);
  EXPECT_EQ(shares.spare_slots_left(), 2u);
  EXPECT_EQ(shares.MoveClientsOf({"a"}, {"b"}).orphaned, 0u);
}

TEST(RunSharesTest, TheRateIsSplitAgainAndTheHighestRateIsKept) {
  RunShares shares;
  shares.AssignRate("a", 30);
  shares.AssignRate("b", 30);
  shares.AssignRate("c", 40);
  std::vector<ShareChange> changes = shares.SplitRate(100, {"a", "c"}, {1, 3});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].participant, "a");
  EXPECT_DOUBLE_EQ(changes[0].change.load().rate(), 25);
  EXPECT_EQ(changes[1].participant, "c");
  EXPECT_DOUBLE_EQ(changes[1].change.load().rate(), 75);
  EXPECT_EQ(changes[0].change.load().rate() + changes[1].change.load().rate(), 100);
  EXPECT_EQ(shares.highest_rate("a"), 30);  // given 30 once: the bound rests on the highest
  EXPECT_EQ(shares.highest_rate("c"), 75);
  EXPECT_EQ(shares.highest_rate("b"), 30);
  EXPECT_FALSE(shares.highest_rate("d").has_value());
}

TEST(RunSharesTest, AJoinerTakesItsPartOfTheClientsFromTheSurvivors) {
  RunShares shares(/*next_spare_slot=*/7, /*total_slots=*/14);
  shares.AssignClients("a", 0);  // lost, its clients moved: b 4 on 0..1 + 7..8, c 3
  shares.AssignClients("b", 4);
  shares.AssignClients("c", 3);
  RunShares::ClientsMoved none = shares.MoveClientsOf({"a"}, {"b", "c"});
  ASSERT_EQ(none.orphaned, 0u);
  RunShares::Join join = shares.Take("a#2", ClosedPlan(7), {"b", "c"}, {1, 1, 1});
  ASSERT_TRUE(join.taken);
  EXPECT_EQ(join.load.clients(), 2u);  // 7 over 3: 3, 2, 2
  EXPECT_EQ(join.first_slot, 7u);
  ASSERT_EQ(join.changes.size(), 2u);
  EXPECT_EQ(join.changes[0].participant, "b");
  EXPECT_EQ(join.changes[0].change.load().clients(), 3u);
  EXPECT_EQ(join.changes[0].change.extra_slot_count(), 0u);
  EXPECT_EQ(join.changes[1].participant, "c");
  EXPECT_EQ(join.changes[1].change.load().clients(), 2u);
  EXPECT_EQ(shares.clients("a#2"), 2u);
  EXPECT_EQ(shares.clients("b") + shares.clients("c") + shares.clients("a#2"), 7u);
  EXPECT_EQ(shares.spare_slots_left(), 5u);
}

TEST(RunSharesTest, ASurvivorThatGetsMoreClientsTakesSpareSlotsAfterTheJoiner) {
  RunShares shares(/*next_spare_slot=*/2, /*total_slots=*/10);
  shares.AssignClients("b", 1);
  RunShares::Join join = shares.Take("a", ClosedPlan(5), {"b"}, {1, 1});
  ASSERT_TRUE(join.taken);
  EXPECT_EQ(join.load.clients(), 2u);  // 5 over 2: 3, 2
  EXPECT_EQ(join.first_slot, 2u);
  ASSERT_EQ(join.changes.size(), 1u);
  EXPECT_EQ(join.changes[0].change.load().clients(), 3u);
  EXPECT_EQ(join.changes[0].change.extra_first_slot(), 4u);
  EXPECT_EQ(join.changes[0].change.extra_slot_count(), 2u);
  EXPECT_EQ(shares.spare_slots_left(), 4u);
}

TEST(RunSharesTest, AJoinThatDoesNotFitChangesNothing) {
  RunShares shares(/*next_spare_slot=*/5, /*total_slots=*/6);
  shares.AssignClients("b", 5);
  RunShares::Join join = shares.Take("a", ClosedPlan(5), {"b"}, {1, 1});
  EXPECT_FALSE(join.taken);
  EXPECT_EQ(join.spare_needed, 2u);
  EXPECT_EQ(shares.clients("b"), 5u);
  EXPECT_EQ(shares.clients("a"), 0u);
  EXPECT_EQ(shares.spare_slots_left(), 1u);

  RunShares one_client(/*next_spare_slot=*/1, /*total_slots=*/10);
  one_client.AssignClients("b", 1);
  join = one_client.Take("a", ClosedPlan(1), {"b"}, {1, 1});
  EXPECT_FALSE(join.taken);
  EXPECT_EQ(join.spare_needed, 0u);  // no client for it at all

  RunShares open(/*next_spare_slot=*/4, /*total_slots=*/6);
  open.AssignRate("b", 100);
  join = open.Take("a", OpenPlan(100, /*pool=*/4), {"b"}, {1, 1});
  EXPECT_FALSE(join.taken);
  EXPECT_EQ(join.spare_needed, 4u);
  EXPECT_FALSE(open.highest_rate("a").has_value());
}

TEST(RunSharesTest, AnOpenLoopJoinerTakesItsRateByCapacityOnPoolSlots) {
  RunShares shares(/*next_spare_slot=*/8, /*total_slots=*/16);
  shares.AssignRate("b", 50);
  shares.AssignRate("c", 50);
  RunShares::Join join = shares.Take("a", OpenPlan(100, /*pool=*/4), {"b", "c"}, {1, 1, 2});
  ASSERT_TRUE(join.taken);
  EXPECT_DOUBLE_EQ(join.load.rate(), 50);
  EXPECT_EQ(join.first_slot, 8u);
  ASSERT_EQ(join.changes.size(), 2u);
  EXPECT_DOUBLE_EQ(join.changes[0].change.load().rate(), 25);
  EXPECT_DOUBLE_EQ(join.changes[1].change.load().rate(), 25);
  EXPECT_EQ(join.load.rate() + join.changes[0].change.load().rate() +
                join.changes[1].change.load().rate(),
            100);
  EXPECT_EQ(shares.highest_rate("a"), 50);
  EXPECT_EQ(shares.highest_rate("b"), 50);
  EXPECT_EQ(shares.spare_slots_left(), 4u);
}

}  // namespace
}  // namespace dbload
