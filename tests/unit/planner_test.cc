#include "coordinator/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace dbload {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Gt;

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(SplitRate, EqualWhenAllCapacitiesAreOne) {
  EXPECT_THAT(SplitRate(3000, {1, 1, 1}), ElementsAre(1000, 1000, 1000));
}

TEST(SplitRate, ZeroOrInvalidCapacityCountsAsOne) {
  EXPECT_THAT(SplitRate(300, {0, 1, -2}), ElementsAre(100, 100, 100));
  EXPECT_THAT(SplitRate(300, {std::nan(""), 1, 1}), ElementsAre(100, 100, 100));
}

TEST(SplitRate, ProportionalToCapacity) {
  const std::vector<double> shares = SplitRate(1000, {1, 3});
  EXPECT_THAT(shares, ElementsAre(250, 750));
}

TEST(SplitRate, SumsExactlyToTotalWhereThirdsDoNot) {
  const std::vector<double> shares = SplitRate(1000, {1, 1, 1});
  EXPECT_EQ(Sum(shares), 1000);
  const std::vector<double> sevenths = SplitRate(0.1, {1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(Sum(sevenths), 0.1);
}

TEST(SplitRate, NoAgentsNoShares) { EXPECT_TRUE(SplitRate(100, {}).empty()); }

TEST(SpreadClients, SevenOverThreeIsThreeTwoTwo) {
  EXPECT_THAT(SpreadClients(7, 3), ElementsAre(3, 2, 2));
}

TEST(SpreadClients, EvenAfterAChange) {
  EXPECT_THAT(SpreadClients(8, 3), ElementsAre(3, 3, 2));
  EXPECT_THAT(SpreadClients(9, 3), ElementsAre(3, 3, 3));
  EXPECT_THAT(SpreadClients(2, 3), ElementsAre(1, 1, 0));
  EXPECT_TRUE(SpreadClients(5, 0).empty());
}

TEST(SplitQueries, ProportionalAndExact) {
  EXPECT_THAT(SplitQueries(1000, {1, 1, 2}), ElementsAre(250, 250, 500));
  EXPECT_THAT(SplitQueries(10, {1, 1, 1}), ElementsAre(4, 3, 3));
  EXPECT_THAT(SplitQueries(2, {1, 1, 1}), ElementsAre(1, 1, 0));
}

TEST(SplitQueries, ZeroWeightGetsNothingUnlessAllAreZero) {
  EXPECT_THAT(SplitQueries(10, {0, 1}), ElementsAre(0, 10));
  EXPECT_THAT(SplitQueries(10, {0, 0}), ElementsAre(5, 5));
}

TEST(SplitQueries, HugeTotalsStayExact) {
  const uint64_t total = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> parts = SplitQueries(total, {1, 3, 7});
  unsigned __int128 sum = 0;
  for (uint64_t p : parts) sum += p;
  EXPECT_EQ(sum, total);
}

TEST(UniformPhases, AgentIOfNGetsIOverN) {
  EXPECT_THAT(UniformPhases(4), ElementsAre(0, 0.25, 0.5, 0.75));
  EXPECT_THAT(UniformPhases(1), ElementsAre(0));
}

TEST(PartitionSlots, ContiguousAndDisjoint) {
  const SlotPartition slots = PartitionSlots({3, 2, 2});
  EXPECT_EQ(slots.total_slots, 7u);
  ASSERT_EQ(slots.ranges.size(), 3u);
  EXPECT_EQ(slots.ranges[0].first_slot, 0u);
  EXPECT_EQ(slots.ranges[1].first_slot, 3u);
  EXPECT_EQ(slots.ranges[2].first_slot, 5u);
  EXPECT_EQ(slots.ranges[2].count, 2u);
}

v1::Plan OpenPlan(double rate, uint32_t pool, uint64_t queries) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_target()->set_pool(pool);
  plan.mutable_stop()->set_queries(queries);
  plan.mutable_stop()->set_duration_ns(queries == 0 ? 1'000'000'000 : 0);
  return plan;
}

v1::Plan ClosedPlan(uint32_t clients, uint64_t queries) {
  v1::Plan plan;
  plan.mutable_load()->mutable_closed()->set_clients(clients);
  plan.mutable_target()->set_pool(clients);
  plan.mutable_stop()->set_queries(queries);
  plan.mutable_stop()->set_duration_ns(queries == 0 ? 1'000'000'000 : 0);
  return plan;
}

TEST(SplitPlan, ClosedLoopSevenClientsOverThreeAgents) {
  const std::vector<AgentShare> shares = SplitPlan(ClosedPlan(7, 700), {1, 1, 1});
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].clients, 3u);
  EXPECT_EQ(shares[1].clients, 2u);
  EXPECT_EQ(shares[2].clients, 2u);
  EXPECT_EQ(shares[0].queries, 300u);
  EXPECT_EQ(shares[1].queries, 200u);
  EXPECT_EQ(shares[2].queries, 200u);
  EXPECT_EQ(shares[1].first_slot, 3u);
  EXPECT_EQ(shares[2].first_slot, 5u);
  // As many spare slots as clients, after the agents' ranges: for moving a lost agent's clients
  // or an agent that joins.
  EXPECT_EQ(shares[2].spare_first_slot, 7u);
  EXPECT_EQ(shares[2].total_slots, 14u);
  EXPECT_EQ(shares[2].agent_count, 3u);
  EXPECT_DOUBLE_EQ(shares[1].phase, 1.0 / 3);
}

TEST(SplitPlan, AgentsWithoutClientsAreLeftOut) {
  const std::vector<AgentShare> shares = SplitPlan(ClosedPlan(2, 0), {1, 1, 1});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].agent, 0u);
  EXPECT_EQ(shares[1].agent, 1u);
  EXPECT_EQ(shares[1].agent_index, 1u);
  EXPECT_EQ(shares[1].agent_count, 2u);
  EXPECT_DOUBLE_EQ(shares[1].phase, 0.5);
}

TEST(SplitPlan, AgentsWithoutQueriesAreLeftOut) {
  // Capacity 100:1:1 would give the small agents no query at all: a zero share reads as "no
  // limit" on the agent, so they must not be assigned.
  const std::vector<AgentShare> shares = SplitPlan(OpenPlan(1000, 8, 3), {100, 1, 1});
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_EQ(shares[0].agent, 0u);
  EXPECT_EQ(shares[0].queries, 3u);
  EXPECT_EQ(shares[0].rate, 1000);
}

TEST(SplitPlan, OpenLoopEachAgentOpensThePool) {
  const std::vector<AgentShare> shares = SplitPlan(OpenPlan(900, 4, 0), {1, 2});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].rate, 300);
  EXPECT_EQ(shares[1].rate, 600);
  EXPECT_EQ(shares[1].first_slot, 4u);
  EXPECT_EQ(shares[1].spare_first_slot, 8u);
  EXPECT_EQ(shares[1].total_slots, 16u);
  EXPECT_EQ(shares[0].queries, 0u);
}

// The coordinator never assigns more than the plan asks: for many random plans and agent sets
// the shares add up to exactly the plan's figures, and no agent is assigned nothing.
TEST(SplitPlan, NeverAssignsMoreThanThePlanAsks) {
  std::mt19937_64 random(12345);
  std::uniform_int_distribution<int> agents_dist(1, 40);
  std::uniform_real_distribution<double> capacity_dist(0.0, 8.0);
  std::uniform_real_distribution<double> log_rate_dist(-3, 8);
  std::uniform_int_distribution<uint32_t> clients_dist(1, 500);
  std::uniform_int_distribution<uint64_t> queries_dist(0, 5'000'000);
  for (int trial = 0; trial < 5000; ++trial) {
    const int agents = agents_dist(random);
    std::vector<double> capacities(agents);
    for (double& c : capacities) c = random() % 4 == 0 ? 1 : capacity_dist(random);
    const uint64_t queries =
        random() % 3 == 0 ? 0 : queries_dist(random) % (random() % 2 ? 50 : 5'000'000);
    const bool open = random() % 2 == 0;
    const double rate = std::pow(10.0, log_rate_dist(random));
    const uint32_t clients = clients_dist(random) % (random() % 2 ? 10 : 500) + 1;
    const v1::Plan plan = open ? OpenPlan(rate, 8, queries) : ClosedPlan(clients, queries);
    SCOPED_TRACE(testing::Message()
                 << "trial " << trial << " agents " << agents << " open " << open << " rate "
                 << rate << " clients " << clients << " queries " << queries);

    const std::vector<AgentShare> shares = SplitPlan(plan, capacities);
    ASSERT_FALSE(shares.empty());
    ASSERT_LE(shares.size(), static_cast<size_t>(agents));
    double rate_sum = 0;
    uint64_t clients_sum = 0, queries_sum = 0, slots_sum = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
      const AgentShare& s = shares[i];
      rate_sum += s.rate;
      clients_sum += s.clients;
      queries_sum += s.queries;
      EXPECT_EQ(s.first_slot, slots_sum);
      slots_sum += s.connections;
      EXPECT_EQ(s.agent_index, i);
      EXPECT_EQ(s.agent_count, shares.size());
      if (i > 0) {
        EXPECT_GT(s.agent, shares[i - 1].agent);
      }
      if (queries > 0) {
        EXPECT_GT(s.queries, 0u);
      }
      if (open) {
        EXPECT_GT(s.rate, 0);
      } else {
        EXPECT_GT(s.clients, 0u);
      }
    }
    // As many spare slots as the agents use, after their ranges.
    EXPECT_EQ(2 * slots_sum, shares[0].total_slots);
    EXPECT_EQ(slots_sum, shares[0].spare_first_slot);
    if (open) {
      EXPECT_EQ(rate_sum, rate);
    } else {
      EXPECT_EQ(clients_sum, clients);
    }
    EXPECT_EQ(queries_sum, queries);
  }
}

TEST(SplitRate, RandomSplitsSumExactlyAndStayProportional) {
  std::mt19937_64 random(777);
  std::uniform_real_distribution<double> capacity_dist(0.01, 10.0);
  std::uniform_real_distribution<double> log_rate_dist(-6, 8);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<double> capacities(1 + random() % 100);
    for (double& c : capacities) c = capacity_dist(random);
    const double total = std::pow(10.0, log_rate_dist(random));
    const std::vector<double> shares = SplitRate(total, capacities);
    ASSERT_EQ(Sum(shares), total) << "trial " << trial;
    const double capacity_sum = Sum(capacities);
    for (size_t i = 0; i < shares.size(); ++i) {
      EXPECT_NEAR(shares[i], total * capacities[i] / capacity_sum, total * 1e-9);
    }
    EXPECT_THAT(shares, Each(Gt(0)));
  }
}

TEST(SplitQueries, RandomSplitsSumExactlyWithinOneOfExactShare) {
  std::mt19937_64 random(99);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<double> weights(1 + random() % 50);
    for (double& w : weights) w = static_cast<double>(random() % 1000) / 7.0;
    const uint64_t total = random() % (trial % 2 ? 100 : 10'000'000'000ULL);
    const std::vector<uint64_t> parts = SplitQueries(total, weights);
    ASSERT_EQ(std::accumulate(parts.begin(), parts.end(), uint64_t{0}), total) << trial;
    double weight_sum = Sum(weights);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (weight_sum > 0) {
        EXPECT_NEAR(static_cast<double>(parts[i]), total * weights[i] / weight_sum,
                    1.0 + total * 1e-12);
        if (weights[i] == 0) {
          EXPECT_EQ(parts[i], 0u);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(SplitStagedPlanTest, RatesSplitByCapacityAndClientsByPositionWithTheirSlots) {
  v1::Plan open;
  open.mutable_target()->set_pool(4);
  open.mutable_load()->mutable_open();
  v1::Stage& ramp = *open.add_stages();
  ramp.set_duration_ns(10'000'000'000);
  ramp.mutable_rate()->set_shape(v1::Level::RAMP);
  ramp.mutable_rate()->set_from(100);
  ramp.mutable_rate()->set_to(1000);
  const std::vector<AgentShare> rates = SplitPlan(open, {1, 3});
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_DOUBLE_EQ(rates[0].rate_fraction, 0.25);
  EXPECT_DOUBLE_EQ(rates[1].rate_fraction, 0.75);
  EXPECT_EQ(rates[0].connections, 4u);
  EXPECT_EQ(rates[1].first_slot, 4u);

  // Up to 5 clients then a last stage of 2 clients and 1000 queries, over 3 agents: levels
  // 1…5 spread as 1/0/0 … 2/2/1, so the agents start 2, 2 and 1 clients.
  v1::Plan closed;
  closed.mutable_target()->set_pool(5);
  closed.mutable_load()->mutable_closed();
  v1::Stage& climb = *closed.add_stages();
  climb.mutable_clients()->set_shape(v1::Level::STAIRCASE);
  climb.mutable_clients()->set_from(1);
  climb.mutable_clients()->set_step(1);
  climb.mutable_clients()->set_every_ns(1'000'000'000);
  climb.mutable_clients()->set_max(5);
  v1::Stage& last = *closed.add_stages();
  last.set_queries(1000);
  last.mutable_clients()->set_shape(v1::Level::CONSTANT);
  last.mutable_clients()->set_from(2);
  const std::vector<AgentShare> clients = SplitPlan(closed, {1, 1, 1});
  ASSERT_EQ(clients.size(), 3u);
  EXPECT_EQ(clients[0].connections, 2u);
  EXPECT_EQ(clients[1].connections, 2u);
  EXPECT_EQ(clients[2].connections, 1u);
  EXPECT_EQ(clients[2].first_slot, 4u);
  EXPECT_EQ(clients[2].total_slots, 5u);
  // The last stage's 1000 queries go by its peak spread 1/1/0; the first stage counts none.
  for (const AgentShare& share : clients) {
    ASSERT_EQ(share.stage_queries.size(), 2u);
    EXPECT_EQ(share.stage_queries[0], 0u);
  }
  EXPECT_EQ(clients[0].stage_queries[1] + clients[1].stage_queries[1], 1000u);
  EXPECT_EQ(clients[2].stage_queries[1], 0u);

  // An agent that would never run a client is left out.
  climb.mutable_clients()->set_max(1);
  last.mutable_clients()->set_from(1);
  EXPECT_EQ(SplitPlan(closed, {1, 1, 1}).size(), 1u);
}

}  // namespace
}  // namespace dbload
