#include "tests/harness/topology.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/harness/child_process.h"
#include "tests/harness/http_get.h"

#if !defined(DBLOAD_TOPOLOGY_SCRIPT) || !defined(DBLOAD_NETNS_EXEC)
#error "DBLOAD_TOPOLOGY_SCRIPT and DBLOAD_NETNS_EXEC must be defined"
#endif

namespace dbload::testing {

namespace {

// The script's exit code when the kernel refuses network namespaces.
constexpr int kExitUnsupported = 3;
constexpr std::chrono::seconds kScriptTimeout{120};

std::string Errno(const std::string& what) { return absl::StrCat(what, ": ", std::strerror(errno)); }

}  // namespace

absl::Status IsolateThisProcessNetwork() {
  if (unshare(CLONE_NEWNET) != 0) {
    return absl::UnavailableError(Errno("unshare(CLONE_NEWNET)"));
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(Errno("socket in the new network namespace"));
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (up) {
    request.ifr_flags |= IFF_UP;
    up = ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  const std::string error = up ? "" : Errno("bringing lo up");
  close(fd);
  if (!up) return absl::UnavailableError(error);
  return absl::OkStatus();
}

bool Unreachable(const std::string& ipv4) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(9);  // discard; never reached either way
  if (inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool refused = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
                       errno == ENETUNREACH;
  close(fd);
  return refused;
}

std::string Topology::ScriptPath() { return DBLOAD_TOPOLOGY_SCRIPT; }
std::string Topology::NetnsExecPath() { return DBLOAD_NETNS_EXEC; }

Topology::~Topology() {
  const absl::Status stopped = Stop();
  if (!stopped.ok()) std::cerr << "Topology: " << stopped << "\n";
}

absl::Status Topology::Start(const std::vector<TopologyHost>& hosts) {
  if (started()) return absl::FailedPreconditionError("Topology already started in " + dir_);
  char parent[] = "/tmp/dbload-topology.XXXXXX";
  if (mkdtemp(parent) == nullptr) return absl::InternalError(Errno("mkdtemp"));
  // The script's DIR itself: it takes an empty directory and removes it on down.
  dir_ = parent;
  std::vector<std::string> argv = {"/bin/bash", ScriptPath(), "up", dir_,
                                   absl::StrCat("dbl-", getpid())};
  for (const TopologyHost& host : hosts) argv.push_back(host.name + "=" + host.address);
  argv.push_back("--owner-pid");
  argv.push_back(std::to_string(getpid()));
  const ProcessResult up = RunProcess(argv, kScriptTimeout);
  for (absl::string_view line : absl::StrSplit(up.out, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq != absl::string_view::npos) values_[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  if (up.exit_code == kExitUnsupported) {
    const std::string refused = values_["TOPOLOGY_REFUSED"];
    dir_.clear();
    return absl::UnavailableError(absl::StrCat("network namespaces refused here: ", refused));
  }
  if (up.exit_code != 0) {
    dir_.clear();  // the script tore down what it made, DIR too
    return absl::InternalError("topology up failed: " + up.Describe());
  }
  return absl::OkStatus();
}

absl::Status Topology::Stop() {
  if (!started()) return absl::OkStatus();
  const ProcessResult down = RunProcess({"/bin/bash", ScriptPath(), "down", dir_}, kScriptTimeout);
  dir_.clear();
  values_.clear();
  if (down.exit_code != 0) return absl::InternalError("topology down failed: " + down.Describe());
  return absl::OkStatus();
}

std::string Topology::Netns(std::string_view host) const {
  auto it = values_.find("NETNS_" + std::string(host));
  return it == values_.end() ? "" : it->second;
}

std::string Topology::NetnsPath(std::string_view host) const {
  return "/run/netns/" + Netns(host);
}

std::string Topology::Address(std::string_view host) const {
  auto it = values_.find("ADDR_" + std::string(host));
  return it == values_.end() ? "" : it->second;
}

std::vector<std::string> Topology::On(std::string_view host, std::vector<std::string> argv,
                                      const std::string& hostname) const {
  std::vector<std::string> on = {NetnsExecPath(), NetnsPath(host)};
  if (!hostname.empty()) {
    on.push_back("--hostname");
    on.push_back(hostname);
  }
  on.push_back("--");
  on.insert(on.end(), std::make_move_iterator(argv.begin()), std::make_move_iterator(argv.end()));
  return on;
}

absl::Status Topology::SetLink(std::string_view host, bool up) {
  const ProcessResult set = RunProcess(
      {"/bin/bash", ScriptPath(), "link", dir_, std::string(host), up ? "up" : "down"});
  if (set.exit_code != 0) return absl::InternalError("topology link failed: " + set.Describe());
  return absl::OkStatus();
}

absl::Status Topology::Adopt(const std::string& dbenv_dir) {
  const ProcessResult adopted = RunProcess({"/bin/bash", ScriptPath(), "adopt", dir_, dbenv_dir});
  if (adopted.exit_code != 0) {
    return absl::InternalError("topology adopt failed: " + adopted.Describe());
  }
  return absl::OkStatus();
}

std::optional<std::string> HttpGetInNetns(const std::string& netns_path, int port,
                                          const std::string& target, std::string& error) {
  std::optional<std::string> body;
  // A thread of its own: entering a namespace changes only the calling thread, and this one
  // ends with the request.
  std::thread inside([&] {
    const int fd = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      error = Errno("entering " + netns_path);
      if (fd >= 0) close(fd);
      return;
    }
    close(fd);
    body = HttpGet(port, target, error);
  });
  inside.join();
  return body;
}

}  // namespace dbload::testing
