#include <csignal>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "process/flag_args.h"
#include "process/stop_signal.h"

namespace dbload {
namespace {

TEST(FlagArgTest, SplitsAtTheFirstEquals) {
  const FlagArg flag = SplitFlagArg("--set=a.b=c");
  EXPECT_EQ(flag.name, "--set");
  ASSERT_TRUE(flag.value.has_value());
  EXPECT_EQ(*flag.value, "a.b=c");
}

TEST(FlagArgTest, WithoutEqualsTheWholeArgumentIsTheName) {
  const FlagArg flag = SplitFlagArg("--wait");
  EXPECT_EQ(flag.name, "--wait");
  EXPECT_FALSE(flag.value.has_value());
}

TEST(FlagArgTest, AnEmptyValueAfterEqualsIsAValue) {
  const FlagArg flag = SplitFlagArg("--name=");
  EXPECT_EQ(flag.name, "--name");
  ASSERT_TRUE(flag.value.has_value());
  EXPECT_EQ(*flag.value, "");
}

TEST(FlagArgTest, TakesTheInlineValueWithoutConsumingTheNextArgument) {
  const std::vector<std::string> args = {"--listen=127.0.0.1:0", "--metrics"};
  size_t i = 0;
  absl::StatusOr<std::string> value = TakeFlagValue(SplitFlagArg(args[0]), args, i);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "127.0.0.1:0");
  EXPECT_EQ(i, 0u);
}

TEST(FlagArgTest, TakesTheNextArgumentAndAdvances) {
  const std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--help"};
  size_t i = 0;
  absl::StatusOr<std::string> value = TakeFlagValue(SplitFlagArg(args[0]), args, i);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "127.0.0.1:0");
  EXPECT_EQ(i, 1u);
}

TEST(FlagArgTest, AFlagAtTheEndNeedsAValue) {
  const std::vector<std::string> args = {"--coordinator"};
  size_t i = 0;
  absl::StatusOr<std::string> value = TakeFlagValue(SplitFlagArg(args[0]), args, i);
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(value.status().message(), "--coordinator needs a value");
  EXPECT_EQ(i, 0u);
}

TEST(StopSignalTest, SigtermAndSigintSetTheFlagOnceInstalled) {
  StopRequested().store(false);
  InstallStopSignalHandlers();
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_TRUE(StopRequested().load());
  StopRequested().store(false);
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_TRUE(StopRequested().load());
  // A second signal sets it again rather than taking the default action.
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_TRUE(StopRequested().load());
  StopRequested().store(false);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace
}  // namespace dbload
