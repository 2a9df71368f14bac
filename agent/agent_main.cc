// The `dbload-agent` command: dials a coordinator, runs the load it assigns and streams reports
// back, until SIGINT or SIGTERM. Exit codes: 0 after a shutdown by signal, 2 bad arguments or
// the coordinator refused the agent for good (a wrong or missing token, another version).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_link.h"
#include "base/clock.h"
#include "db/driver_factory.h"
#include "plan/durations.h"
#include "process/exit_codes.h"
#include "process/flag_args.h"

namespace dbload {
namespace {

// Shorter than this, an ordinary scheduling hiccup would read as a lost coordinator.
constexpr Nanos kMinDeadManTimeout = 100 * kMillisecond;
constexpr double kMaxCapacity = 1e6;

constexpr char kUsage[] = R"(usage: dbload-agent --coordinator HOST:PORT [OPTIONS]

Connects to a dbload coordinator, runs the load it assigns and streams one report per second
back, until interrupted (SIGINT, SIGTERM). Reconnects by itself when the coordinator goes away;
a run in progress then stops (within the dead-man timeout) and is not resumed. Exits with
status 2 when the coordinator refuses it for good (a wrong or missing token, another protocol
version): retrying would not help.

Options:
  --coordinator HOST:PORT  the coordinator (required). Without TLS it must be on this
                           machine (127.0.0.0/8, [::1], localhost) unless
                           --allow-insecure-remote.
  --name NAME              unique among the coordinator's agents (default: HOSTNAME-PID)
  --capacity X             relative share of an open-loop rate this agent takes (default 1)
  --dead-man-timeout D     stop the load when the coordinator has been silent this long, unless
                           its assignment says otherwise (default 5s; e.g. 500ms, 10s)
%ALLOW%  --version                print the version
  --help                   print this help
TLS and the shared token:
)";

std::string Usage() {
  std::string usage = kUsage;
  usage.replace(usage.find("%ALLOW%"), 7, AllowTargetFlagHelp("this agent"));
  return absl::StrCat(usage, SecurityFlagsHelp(/*server=*/false));
}

struct Args {
  AgentLinkOptions options;
  SecurityFlags security;
  std::vector<std::string> allow_target;  // --allow-target values, parsed once all are seen
  bool help = false;
  bool version = false;
};

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& args) {
  Args parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const FlagArg split = SplitFlagArg(arg);
    const std::string& flag = split.name;
    auto value = [&] { return TakeFlagValue(split, args, i); };
    if (bool takes_value = false; IsSecurityFlag(flag, &takes_value)) {
      std::string file;
      if (takes_value) {
        absl::StatusOr<std::string> v = value();
        if (!v.ok()) return v.status();
        file = *v;
      }
      if (absl::Status set = SetSecurityFlag(flag, file, parsed.security); !set.ok()) return set;
    } else if (flag == "--help" || flag == "-h") {
      parsed.help = true;
    } else if (flag == "--version") {
      parsed.version = true;
    } else if (flag == "--coordinator") {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      parsed.options.coordinator = *v;
    } else if (flag == "--allow-target") {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      parsed.allow_target.push_back(*v);
    } else if (flag == "--name") {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      if (v->empty()) return absl::InvalidArgumentError("--name: must not be empty");
      parsed.options.name = *v;
    } else if (flag == "--capacity") {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      double capacity = 0;
      if (!absl::SimpleAtod(*v, &capacity) || !std::isfinite(capacity) || capacity <= 0 ||
          capacity > kMaxCapacity) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--capacity: expected a number > 0 and at most ", kMaxCapacity, ", got \"", *v, "\""));
      }
      parsed.options.capacity = capacity;
    } else if (flag == "--dead-man-timeout") {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> nanos = ParseDurationNanos(*v);
      if (!nanos.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dead-man-timeout: ", nanos.status().message()));
      }
      if (*nanos < kMinDeadManTimeout) {
        return absl::InvalidArgumentError(absl::StrCat("--dead-man-timeout: must be at least ",
                                                       FormatDurationNanos(kMinDeadManTimeout),
                                                       ", got ", *v));
      }
      parsed.options.dead_man_timeout = *nanos;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", arg, "'"));
    }
  }
  absl::StatusOr<TargetAllowList> allow = TargetAllowList::Parse(parsed.allow_target);
  if (!allow.ok()) return allow.status();
  parsed.options.allow_target = *std::move(allow);
  return parsed;
}

// Signals reach the program through a pipe: the handler only writes one byte (write is
// async-signal-safe), and a watcher thread does the rest. Not the polled stop flag of dbload and
// dbload-coordinator (process/stop_signal.h): the main thread blocks in AgentLink::Run, so
// something must wake at once and call Shutdown; and a second signal must kill at once
// (SA_RESETHAND), in case stopping the load ever hangs.
int signal_pipe[2] = {-1, -1};

void OnSignal(int) {
  const int saved_errno = errno;
  const char byte = 1;
  if (write(signal_pipe[1], &byte, 1) < 0) {
    // Nothing safe to do about it here; the second signal takes the default action.
  }
  errno = saved_errno;
}

absl::Status InstallSignalHandlers() {
  if (pipe2(signal_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe2");
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // A second Ctrl-C kills the process at once, in case stopping ever hangs.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  if (sigaction(SIGINT, &action, nullptr) != 0 || sigaction(SIGTERM, &action, nullptr) != 0) {
    return absl::ErrnoToStatus(errno, "sigaction");
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::cerr << "dbload-agent: " << status.message()
            << "\n(dbload-agent --help shows the options)\n";
  return kExitUsage;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Args> args = ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!args.ok()) return Fail(args.status());
  if (args->help) {
    std::cout << Usage();
    return kExitOk;
  }
  if (args->version) {
    std::cout << "dbload-agent " << DBLOAD_VERSION_STRING << "\n";
    return kExitOk;
  }
  if (args->options.coordinator.empty()) {
    return Fail(absl::InvalidArgumentError("--coordinator HOST:PORT is required"));
  }
  absl::StatusOr<TransportSecurity> security =
      LoadTransportSecurity(args->security, /*server=*/false);
  if (!security.ok()) return Fail(security.status());
  args->options.security = *std::move(security);
  if (absl::Status address =
          CheckCoordinatorAddress(args->options.coordinator, args->options.security);
      !address.ok()) {
    return Fail(address);
  }
  if (absl::Status installed = InstallSignalHandlers(); !installed.ok()) return Fail(installed);

  args->options.on_event = [](const std::string& line) {
    std::cerr << "dbload-agent: " << line << std::endl;
  };
  std::cerr << "dbload-agent: load goes only to targets in --allow-target ("
            << args->options.allow_target.Describe() << ")" << std::endl;
  SteadyClock clock;
  AgentLink link(args->options, db::MakeDriver, clock);

  std::thread watcher([&link] {
    char byte = 0;
    ssize_t got;
    do {
      got = read(signal_pipe[0], &byte, 1);
    } while (got < 0 && errno == EINTR);
    // 1: a signal; 0: Run() returned on its own and the watcher is released.
    if (got == 1 && byte == 1) {
      std::cerr << "dbload-agent: stopping (a second signal kills at once)" << std::endl;
    }
    link.Shutdown();
  });
  const absl::Status ended = link.Run();
  const char release = 0;
  if (write(signal_pipe[1], &release, 1) < 0) {
    // The pipe cannot fail while both ends are open; if it did, the watcher would hang: say so.
    std::cerr << "dbload-agent: cannot release the signal watcher" << std::endl;
  }
  watcher.join();
  if (!ended.ok()) {
    // A refusal that every retry would repeat (a wrong or missing token, another protocol
    // version): a set-up failure to fix, not an outage to wait out. systemd does not restart
    // on it (RestartPreventExitStatus=2).
    std::cerr << "dbload-agent: " << ended.message() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) { return dbload::Main(argc, argv); }
