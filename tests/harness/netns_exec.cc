// netns_exec NETNS_PATH [--hostname NAME] -- PROGRAM [ARGS...]
//
// Runs PROGRAM as a process of one host of tests/harness/topology: in that host's network
// namespace (NETNS_PATH, e.g. /run/netns/dbl-123-agent1) and, with --hostname, in a UTS
// namespace of its own whose host name is NAME, so that what the program reports about its
// machine (gethostname) is the host's. Unlike `ip netns exec` it leaves the mount namespace
// alone. PROGRAM is executed in place of this process (same PID), so a test that started this
// holds the program's PID. Exit 127 with the reason on stderr when any step is refused.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

int Refuse(const std::string& what) {
  std::cerr << "netns_exec: " << what << ": " << std::strerror(errno) << "\n";
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  std::string netns;
  std::string hostname;
  int i = 1;
  if (i < argc) netns = argv[i++];
  if (i + 1 < argc && std::string(argv[i]) == "--hostname") {
    hostname = argv[i + 1];
    i += 2;
  }
  if (netns.empty() || i >= argc || std::string(argv[i]) != "--" || i + 1 >= argc) {
    std::cerr << "usage: netns_exec NETNS_PATH [--hostname NAME] -- PROGRAM [ARGS...]\n";
    return 2;
  }
  ++i;
  const int fd = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Refuse("open " + netns);
  if (setns(fd, CLONE_NEWNET) != 0) return Refuse("setns " + netns);
  close(fd);
  if (!hostname.empty()) {
    if (unshare(CLONE_NEWUTS) != 0) return Refuse("unshare(CLONE_NEWUTS)");
    if (sethostname(hostname.data(), hostname.size()) != 0) return Refuse("sethostname " + hostname);
  }
  execvp(argv[i], argv + i);
  return Refuse(std::string("exec ") + argv[i]);
}
