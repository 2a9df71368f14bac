#ifndef DBLOAD_NET_TARGET_ALLOW_LIST_H_
#define DBLOAD_NET_TARGET_ALLOW_LIST_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// Consent for database targets is given at the machine the load comes from: every process that
// connects to a plan's target (dbload-agent, `dbload run`'s agents, `dbload prepare` and
// `cleanup`, the coordinator's probe) holds a list of the targets it may reach (--allow-target)
// and refuses any other before opening a connection. Plans may name any host; a load
// generator pointed at the wrong machine is dangerous, and only the operator of the load machine
// can say which machines are right.

// Host names to IP addresses. Injected, so that unit tests can say what a name resolves to.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // The IP literals (e.g. "10.1.2.3", "::1") `host` resolves to, in the resolver's order, or an
  // error naming the host and the resolver's answer.
  virtual absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) = 0;
};

// The system's resolver (getaddrinfo, stream sockets, IPv4 and IPv6).
class SystemResolver final : public Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) override;
};

// Who refuses, for the messages: "agent 'agent-2'" refuses …; start "the agent" with ….
struct TargetRefuser {
  std::string subject;  // e.g. "agent 'agent-2'", "dbload prepare", "the coordinator's probe"
  std::string remedy;   // e.g. "the agent", "dbload prepare", "the coordinator"
  std::string purpose = "to send load there";  // the probe only reads statistics
};

// What a checked target dials for the whole run.
struct AllowedTarget {
  // The IP literal to connect to (a host name resolved once); empty when the target is dialed
  // as written (an IP literal, a unix socket) or has no database (noop).
  std::string dial_address;
  // Where the connections go, for the manifest: "127.0.0.2:5432", "[::1]:3306", a socket path;
  // empty for noop.
  std::string endpoint;
};

// A parsed --allow-target list. Entries (comma-separated; the flag may repeat):
//   CIDR  10.1.0.0/16, ::1/128          IP  127.0.0.2, ::1 (a /32 or /128)
//   HOST  db.example.com (a target named by exactly that name, case-insensitive)
//   any of them with :PORT: 127.0.0.2:5432, [::1]:3306, db:5432, 10.0.0.0/8:5432
class TargetAllowList {
 public:
  // 127.0.0.0/8, ::1 and localhost: what dbload may reach when no --allow-target is given.
  static TargetAllowList LoopbackDefault();
  // The values of every --allow-target flag, in order; none: LoopbackDefault(). Errors name the
  // flag and the entry, and say what is wrong with it.
  static absl::StatusOr<TargetAllowList> Parse(const std::vector<std::string>& flag_values);

  // The entries as the operator wrote them (the default spelled out): for AgentHello, messages.
  const std::vector<std::string>& entries() const { return entries_text_; }
  // "127.0.0.1/32, db:5432", for messages.
  std::string Describe() const;

  // The process that connects: a host name is resolved once (through `resolver`) and allowed if
  // a HOST entry names it or one of its addresses lies in a CIDR/IP entry; an IP literal if a
  // CIDR/IP entry holds it; the port must match an entry that has one. Unix sockets are on this
  // machine and always allowed; so is the noop driver, which connects nowhere. Refusals are
  // PermissionDenied naming the target (and what it resolved to), `who`, the list and the flag
  // that would allow it.
  absl::StatusOr<AllowedTarget> Check(const dbload::v1::Target& target, Resolver& resolver,
                                      const TargetRefuser& who) const;

  // Without resolving, for the coordinator on behalf of an agent: PermissionDenied (as Check)
  // when the agent would certainly refuse; OK when it allows the target, or when only the
  // agent's own resolution of a host name can tell.
  absl::Status PreCheck(const dbload::v1::Target& target, const TargetRefuser& who) const;

 private:
  struct Entry {
    bool is_host = false;
    std::string host;                 // is_host: lower case, no trailing dot
    bool v6 = false;                  // otherwise: the address family,
    std::array<uint8_t, 16> bytes{};  // the network (IPv4 in the first 4 bytes)
    int prefix_length = 0;            // and its length
    uint32_t port = 0;                // 0: any port
  };

  TargetAllowList() = default;
  // Whether an entry holds the IP literal `address` at `port` (false when it is no IP literal).
  bool AllowsAddress(const std::string& address, uint32_t port) const;
  bool AllowsHostName(const std::string& host, uint32_t port) const;
  absl::Status Refusal(const dbload::v1::Target& target, const std::string& resolved,
                       const TargetRefuser& who) const;

  std::vector<Entry> entries_;
  std::vector<std::string> entries_text_;
};

// `host:port` as one would type it: "[::1]:5432" for IPv6.
std::string JoinHostPort(const std::string& host, uint32_t port);

// Check() on `target` and, when a host name was resolved, target.dial_address set to the
// address that every connection of the run dials (any dial_address a coordinator sent is
// replaced). Returns where the connections go (AllowedTarget::endpoint).
absl::StatusOr<std::string> ApplyAllowTarget(const TargetAllowList& allow, Resolver& resolver,
                                             const TargetRefuser& who,
                                             dbload::v1::Target& target);

// The --help text of the flag, shared by every binary that has it (indented for an options
// list; `who` is "the agent", "dbload", "the coordinator's probe" …).
std::string AllowTargetFlagHelp(const std::string& who);

}  // namespace dbload

#endif  // DBLOAD_NET_TARGET_ALLOW_LIST_H_
