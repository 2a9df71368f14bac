// --allow-target: parsing with errors that name the entry, matching of CIDR, IP, HOST and
// :PORT, and host names resolved once (a fake resolver, and the system's for "localhost").
#include "net/target_allow_list.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Names = std::map<std::string, std::vector<std::string>>;

class FakeResolver final : public Resolver {
 public:
  explicit FakeResolver(Names names)
      : names_(std::move(names)) {}
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) override {
    ++calls_;
    auto it = names_.find(host);
    if (it == names_.end()) return absl::NotFoundError(absl::StrCat("no such host '", host, "'"));
    return it->second;
  }
  int calls() const { return calls_; }

 private:
  std::map<std::string, std::vector<std::string>> names_;
  int calls_ = 0;
};

const TargetRefuser kAgent{.subject = "agent 'agent-2'", .remedy = "the agent"};

dbload::v1::Target Tcp(const std::string& host, uint32_t port = 5432) {
  dbload::v1::Target target;
  target.set_driver("postgresql");
  target.set_host(host);
  target.set_port(port);
  return target;
}

TargetAllowList List(const std::vector<std::string>& values) {
  absl::StatusOr<TargetAllowList> list = TargetAllowList::Parse(values);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : TargetAllowList::LoopbackDefault();
}

absl::Status CheckOf(const TargetAllowList& list, const dbload::v1::Target& target,
                     Resolver& resolver) {
  return list.Check(target, resolver, kAgent).status();
}

TEST(TargetAllowListTest, OneAddressIsNotItsNeighbour) {
  FakeResolver resolver(Names{});
  const TargetAllowList list = List({"127.0.0.1/32"});
  EXPECT_TRUE(CheckOf(list, Tcp("127.0.0.1"), resolver).ok());
  const absl::Status refused = CheckOf(list, Tcp("127.0.0.2"), resolver);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "agent 'agent-2' refuses target 127.0.0.2:5432: not in its --allow-target "
            "(127.0.0.1/32); start the agent with --allow-target 127.0.0.2 (or a CIDR that "
            "holds it) to send load there");
  EXPECT_EQ(resolver.calls(), 0);  // IP literals are not resolved
}

TEST(TargetAllowListTest, NetworksHoldTheirAddressesOnly) {
  FakeResolver resolver(Names{});
  const TargetAllowList list = List({"127.0.0.0/8", "10.1.0.0/16,192.168.7.0/25"});
  EXPECT_TRUE(CheckOf(list, Tcp("127.0.0.2"), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("127.255.255.254"), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("10.1.200.3"), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("10.2.0.1"), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("192.168.7.127"), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("192.168.7.128"), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("128.0.0.1"), resolver).ok());
  EXPECT_THAT(list.entries(), ElementsAre("127.0.0.0/8", "10.1.0.0/16", "192.168.7.0/25"));
}

TEST(TargetAllowListTest, PortsRestrictEntriesThatHaveOne) {
  FakeResolver resolver(Names{});
  const TargetAllowList list = List({"127.0.0.2:5432,10.0.0.0/8:3306,[::1]:6432"});
  EXPECT_TRUE(CheckOf(list, Tcp("127.0.0.2", 5432), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("127.0.0.2", 5433), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("10.9.8.7", 3306), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("10.9.8.7", 5432), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("::1", 6432), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("::1", 5432), resolver).ok());
}

TEST(TargetAllowListTest, Ipv6NetworksAndMappedIpv4) {
  FakeResolver resolver(Names{});
  const TargetAllowList list = List({"::1,fd00::/8,127.0.0.0/8"});
  EXPECT_TRUE(CheckOf(list, Tcp("::1"), resolver).ok());
  EXPECT_TRUE(CheckOf(list, Tcp("fd12:3456::9"), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("fe80::1"), resolver).ok());
  EXPECT_FALSE(CheckOf(list, Tcp("::2"), resolver).ok());
  // An IPv4 address written as IPv6 is the IPv4 address.
  EXPECT_TRUE(CheckOf(list, Tcp("::ffff:127.0.0.9"), resolver).ok());
  const absl::Status refused = CheckOf(list, Tcp("2001:db8::1", 5432), resolver);
  EXPECT_THAT(refused.message(), HasSubstr("refuses target [2001:db8::1]:5432: not in its"));
}

TEST(TargetAllowListTest, HostNamesResolveOnceAndTheCheckedAddressIsDialed) {
  FakeResolver resolver({{"db.example", {"10.1.2.3"}}, {"outside.example", {"192.0.2.7"}}});
  const TargetAllowList list = List({"10.1.0.0/16"});
  absl::StatusOr<AllowedTarget> allowed = list.Check(Tcp("db.example"), resolver, kAgent);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(allowed->dial_address, "10.1.2.3");
  EXPECT_EQ(allowed->endpoint, "10.1.2.3:5432");
  EXPECT_EQ(resolver.calls(), 1);

  const absl::Status refused = CheckOf(list, Tcp("outside.example"), resolver);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "agent 'agent-2' refuses target outside.example:5432 (resolved to 192.0.2.7): not in "
            "its --allow-target (10.1.0.0/16); start the agent with --allow-target "
            "outside.example (or a CIDR that holds 192.0.2.7) to send load there");

  const absl::Status unknown = CheckOf(list, Tcp("nowhere.example"), resolver);
  EXPECT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.message(), HasSubstr("no such host 'nowhere.example'"));
}

TEST(TargetAllowListTest, HostEntriesNameTheTargetWhateverItResolvesTo) {
  FakeResolver resolver(Names{{"db.example", {"192.0.2.7"}}, {"db.Example.", {"192.0.2.7"}}});
  const TargetAllowList list = List({"DB.example:5432"});
  absl::StatusOr<AllowedTarget> allowed = list.Check(Tcp("db.Example."), resolver, kAgent);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(allowed->dial_address, "192.0.2.7");
  EXPECT_FALSE(CheckOf(list, Tcp("db.example", 5433), resolver).ok());
  // A HOST entry allows the name, not the address behind it.
  EXPECT_FALSE(CheckOf(list, Tcp("192.0.2.7"), resolver).ok());
}

TEST(TargetAllowListTest, OfSeveralAddressesTheFirstAllowedOneIsDialedIpv4First) {
  FakeResolver resolver({{"both.example", {"::1", "192.0.2.7", "127.0.0.5"}}});
  absl::StatusOr<AllowedTarget> loopback =
      List({"127.0.0.0/8,::1"}).Check(Tcp("both.example"), resolver, kAgent);
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(loopback->dial_address, "127.0.0.5");
  absl::StatusOr<AllowedTarget> v6 = List({"::1"}).Check(Tcp("both.example"), resolver, kAgent);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->endpoint, "[::1]:5432");
}

TEST(TargetAllowListTest, LocalhostThroughTheSystemResolver) {
  SystemResolver resolver;
  absl::StatusOr<AllowedTarget> allowed =
      List({"127.0.0.1/32"}).Check(Tcp("localhost"), resolver, kAgent);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(allowed->dial_address, "127.0.0.1");
  const absl::Status refused = CheckOf(List({"10.0.0.0/8"}), Tcp("localhost"), resolver);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("refuses target localhost:5432 (resolved to 127.0.0.1"));
  EXPECT_TRUE(TargetAllowList::LoopbackDefault().Check(Tcp("localhost"), resolver, kAgent).ok());
}

TEST(TargetAllowListTest, DefaultIsLoopbackAndSocketsAndNoopAreAlwaysAllowed) {
  FakeResolver resolver(Names{});
  const TargetAllowList none = List({});
  EXPECT_THAT(none.entries(), ElementsAre("127.0.0.0/8", "::1", "localhost"));
  EXPECT_TRUE(CheckOf(none, Tcp("127.3.2.1"), resolver).ok());
  EXPECT_TRUE(CheckOf(none, Tcp("::1"), resolver).ok());
  EXPECT_FALSE(CheckOf(none, Tcp("10.0.0.1"), resolver).ok());

  dbload::v1::Target socket;
  socket.set_driver("postgresql");
  socket.set_socket("/tmp/pg");
  absl::StatusOr<AllowedTarget> local = List({"10.0.0.1"}).Check(socket, resolver, kAgent);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->endpoint, "/tmp/pg");
  dbload::v1::Target noop;
  noop.set_driver("noop");
  EXPECT_TRUE(List({"10.0.0.1"}).Check(noop, resolver, kAgent).ok());
}

TEST(TargetAllowListTest, MalformedEntriesAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1,,::1", "empty entry in '127.0.0.1,,::1'"},
      {"127.0.0.300", "entry '127.0.0.300': '127.0.0.300' is neither an IP address nor a host"},
      {"10.0.0.0/33", "entry '10.0.0.0/33': prefix length must be 0 to 32, got 33"},
      {"fd00::/129", "prefix length must be 0 to 128, got 129"},
      {"10.0.0.0/x", "entry '10.0.0.0/x': prefix length 'x' is no number"},
      {"10.1.2.3/16", "bits are set after the prefix; did you mean 10.1.0.0/16"},
      {"db:0", "entry 'db:0': port must be a number from 1 to 65535, got '0'"},
      {"db:70000", "got '70000'"},
      {"db:", "entry 'db:': empty port"},
      {"[::1", "entry '[::1': no ']'"},
      {"[::1]5432", "after ']' only :PORT may follow"},
      {"db.example/24", "'db.example' before the '/' is no IP address"},
      {"db_ex!", "neither an IP address nor a host name"},
  };
  for (const auto& [value, expected] : cases) {
    absl::StatusOr<TargetAllowList> list = TargetAllowList::Parse({value});
    ASSERT_FALSE(list.ok()) << value;
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(list.status().message(), HasSubstr(expected)) << value;
    EXPECT_THAT(list.status().message(), HasSubstr("--allow-target")) << value;
  }
}

TEST(TargetAllowListTest, PreCheckRefusesOnlyWhatTheAgentCertainlyWould) {
  const TargetAllowList list = List({"127.0.0.1/32"});
  EXPECT_TRUE(list.PreCheck(Tcp("127.0.0.1"), kAgent).ok());
  EXPECT_EQ(list.PreCheck(Tcp("127.0.0.2"), kAgent).code(), absl::StatusCode::kPermissionDenied);
  // A name may resolve into 127.0.0.1 on the agent: only the agent can tell.
  EXPECT_TRUE(list.PreCheck(Tcp("db.example"), kAgent).ok());
  // No entry could hold it at this port.
  EXPECT_FALSE(List({"127.0.0.1:3306"}).PreCheck(Tcp("db.example", 5432), kAgent).ok());
  EXPECT_FALSE(List({"other.example"}).PreCheck(Tcp("db.example"), kAgent).ok());
  EXPECT_TRUE(List({"db.example"}).PreCheck(Tcp("db.example"), kAgent).ok());
}

TEST(TargetAllowListTest, ApplyReplacesWhateverDialAddressCameWithTheTarget) {
  FakeResolver resolver(Names{{"db.example", {"127.0.0.7"}}});
  dbload::v1::Target target = Tcp("db.example");
  target.set_dial_address("192.0.2.1");  // e.g. from a coordinator: never trusted
  absl::StatusOr<std::string> endpoint =
      ApplyAllowTarget(TargetAllowList::LoopbackDefault(), resolver, kAgent, target);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(*endpoint, "127.0.0.7:5432");
  EXPECT_EQ(target.dial_address(), "127.0.0.7");
  dbload::v1::Target literal = Tcp("127.0.0.1");
  literal.set_dial_address("192.0.2.1");
  ASSERT_TRUE(ApplyAllowTarget(TargetAllowList::LoopbackDefault(), resolver, kAgent, literal).ok());
  EXPECT_EQ(literal.dial_address(), "");
}

}  // namespace
}  // namespace dbload
