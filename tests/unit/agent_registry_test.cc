#include "coordinator/agent_registry.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/agent_protocol.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

v1::AgentMessage Hello(const std::string& name, uint32_t version = kAgentProtocolVersion) {
  v1::AgentMessage message;
  message.mutable_hello()->set_name(name);
  message.mutable_hello()->set_protocol_version(version);
  message.mutable_hello()->set_version("9.9");
  message.mutable_hello()->set_host("host-" + name);
  return message;
}

std::shared_ptr<AgentConn> Agent(const std::string& name) {
  auto agent = std::make_shared<AgentConn>();
  agent->hello = Hello(name).hello();
  return agent;
}

TEST(CheckHelloTest, TheFirstMessageMustBeAHelloOfOurVersionWithAName) {
  EXPECT_TRUE(CheckHello(Hello("a"), "1.0").ok());
  v1::AgentMessage report;
  report.mutable_report()->set_run_id("run-1");
  EXPECT_EQ(CheckHello(report, "1.0").code(), absl::StatusCode::kFailedPrecondition);
  const absl::Status old = CheckHello(Hello("a", kAgentProtocolVersion + 1), "1.0");
  EXPECT_EQ(old.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(old.message(), HasSubstr("agent dbload 9.9, coordinator dbload 1.0"));
  EXPECT_EQ(CheckHello(Hello(""), "1.0").code(), absl::StatusCode::kInvalidArgument);
}

TEST(AgentRegistryTest, NamesAreUniqueAndANewerAgentKeepsItsName) {
  std::mutex mu;
  AgentRegistry registry(mu, nullptr);
  std::lock_guard lock(mu);
  auto first = Agent("a");
  ASSERT_TRUE(registry.Add("a", first, 5 * kSecond).ok());
  EXPECT_EQ(first->connected_at, 5 * kSecond);
  EXPECT_EQ(first->last_heard, 5 * kSecond);
  const absl::Status taken = registry.Add("a", Agent("a"), 6 * kSecond);
  EXPECT_EQ(taken.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(taken.message(), HasSubstr("from host 'host-a'"));

  registry.Remove("a", first);
  EXPECT_TRUE(registry.agents().empty());
  auto second = Agent("a");
  ASSERT_TRUE(registry.Add("a", second, 7 * kSecond).ok());
  registry.Remove("a", first);  // the older life leaving late does not remove the newer one
  EXPECT_EQ(registry.agents().size(), 1u);
}

TEST(AgentRegistryTest, FindsIdleAgentsAndThoseWorkingForARun) {
  std::mutex mu;
  AgentRegistry registry(mu, nullptr);
  std::lock_guard lock(mu);
  auto a = Agent("a"), b = Agent("b"), c = Agent("c");
  ASSERT_TRUE(registry.Add("b", b, 0).ok());
  ASSERT_TRUE(registry.Add("a", a, 0).ok());
  ASSERT_TRUE(registry.Add("c", c, 0).ok());
  b->run_id = "run-1";
  b->participant = "b";
  c->lost = true;
  const auto idle = registry.Idle();
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].first, "a");
  EXPECT_EQ(registry.Working("b", "run-1", "b"), b.get());
  EXPECT_EQ(registry.Working("b", "run-1", "b#2"), nullptr);
  EXPECT_EQ(registry.Working("b", "run-2", "b"), nullptr);
  EXPECT_EQ(registry.AssignedTo("b", "run-1"), b.get());
  EXPECT_EQ(registry.AssignedTo("a", "run-1"), nullptr);
  EXPECT_EQ(registry.AssignedTo("z", "run-1"), nullptr);

  const std::string why = registry.WaitFailure(3, 0);
  EXPECT_THAT(why, HasSubstr("needs 3 agents"));
  EXPECT_THAT(why, HasSubstr("1 is connected and idle (a)"));
  EXPECT_THAT(why, HasSubstr("1 more busy with another run"));
  EXPECT_THAT(why, HasSubstr("set wait_for_agents"));

  v1::ListAgentsResponse list;
  registry.List(10 * kSecond, list);
  ASSERT_EQ(list.agents_size(), 3);
  EXPECT_EQ(list.agents(1).name(), "b");
  EXPECT_EQ(list.agents(1).run_id(), "run-1");
  EXPECT_DOUBLE_EQ(list.agents(1).connected_s(), 10);
}

TEST(AgentRegistryTest, HeartbeatsGoToAgentsHeardFromAndNothingToClosingOnes) {
  std::mutex mu;
  AgentRegistry registry(mu, nullptr);
  std::lock_guard lock(mu);
  auto a = Agent("a"), b = Agent("b");
  ASSERT_TRUE(registry.Add("a", a, 0).ok());
  ASSERT_TRUE(registry.Add("b", b, 0).ok());
  AgentRegistry::Close(*b);
  std::vector<std::string> lost;
  registry.Beat(
      kSecond, 3 * kSecond, 7,
      [&](const std::string& name, AgentConn&, const std::string&) { lost.push_back(name); });
  EXPECT_TRUE(lost.empty());
  ASSERT_EQ(a->outbox.size(), 1u);
  EXPECT_EQ(a->outbox.front().heartbeat().sequence(), 7u);
  EXPECT_TRUE(b->outbox.empty());
}

}  // namespace
}  // namespace dbload
