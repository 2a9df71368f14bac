#ifndef DBLOAD_TESTS_HARNESS_TOPOLOGY_H_
#define DBLOAD_TESTS_HARNESS_TOPOLOGY_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace dbload::testing {

// Puts the calling process in a network namespace of its own, with only loopback (up): from then
// on nothing it dials can leave the machine (any address but 127.0.0.0/8 is unreachable), while
// the namespaces of a Topology are still made and entered as usual. Call it first thing in
// main(), before any thread starts (a namespace is per thread; threads started later inherit
// it). Unavailable, with what refused, when the kernel or our privileges do not allow it.
absl::Status IsolateThisProcessNetwork();

// Whether `ipv4` is unreachable from the caller's namespace (connect() fails with ENETUNREACH):
// the check that IsolateThisProcessNetwork() did what it says. No packet leaves either way.
bool Unreachable(const std::string& ipv4);

// One host of a topology: a short name ([a-z0-9], at most 12) and its address in the topology's
// network, with the prefix length (198.18.0.10/24).
struct TopologyHost {
  std::string name;
  std::string address;
};

// Hosts on one machine, for tests (tests/harness/topology, the script this drives): one network
// namespace per host made by the test itself, named dbl-PID-HOST so that parallel runs cannot
// clash, each joined by a veth pair to a bridge in a namespace of its own (dbl-PID-bridge), with
// the addresses given and no route anywhere else. Stop() or the destructor tears it all down:
// the processes still running on the hosts, the dbenv servers adopted, the namespaces. A guard
// process does the same if this process dies first.
class Topology {
 public:
  Topology() = default;
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // Unavailable (with exactly what the kernel refused) when network namespaces cannot be made
  // here: callers skip. Any other error is a failure.
  absl::Status Start(const std::vector<TopologyHost>& hosts);
  // Idempotent; also called by the destructor.
  absl::Status Stop();
  bool started() const { return !dir_.empty(); }

  // The host's network namespace: its name (for `ip -n`) and its path (for setns).
  std::string Netns(std::string_view host) const;
  std::string NetnsPath(std::string_view host) const;
  // The host's IPv4 address, without the prefix length.
  std::string Address(std::string_view host) const;
  // `argv` run on the host: in its network namespace and, unless `hostname` is empty, with that
  // as its host name (a UTS namespace of its own). The PID of a Child started with it is the
  // program's.
  std::vector<std::string> On(std::string_view host, std::vector<std::string> argv,
                              const std::string& hostname = "") const;

  // The host's cable at the bridge, down (every packet to and from the host is lost, silently)
  // or up again.
  absl::Status SetLink(std::string_view host, bool up);
  // Servers that `dbenv start` (tests/harness/dbenv) runs on a host, to be stopped by dbenv
  // before the namespaces go (by Stop() and by the guard).
  absl::Status Adopt(const std::string& dbenv_dir);

  // The path of the topology script and of the netns_exec helper this binary was built with.
  static std::string ScriptPath();
  static std::string NetnsExecPath();

 private:
  std::string dir_;  // the script's DIR (made by mkdtemp, removed by the script)
  std::map<std::string, std::string, std::less<>> values_;
};

// tests/harness/http_get.h's HttpGet, from a thread inside the network namespace `netns_path`:
// GET http://127.0.0.1:PORT/TARGET as that host sees it (a coordinator's /metrics, its
// Prometheus), without the test process itself dialling anything outside its own namespace.
std::optional<std::string> HttpGetInNetns(const std::string& netns_path, int port,
                                          const std::string& target, std::string& error);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_TOPOLOGY_H_
