#ifndef DBLOAD_CLI_CLI_COMMON_H_
#define DBLOAD_CLI_CLI_COMMON_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/clock.h"
#include "db/driver.h"
#include "dbload/v1/control.grpc.pb.h"
#include "dbload/v1/plan.pb.h"
#include "net/target_allow_list.h"
#include "net/transport_security.h"
#include "plan/plan_parser.h"
#include "workload/workload.h"

// What several commands of `dbload` share: their flags, the plan they load, the coordinator
// they name, the way they fail and print. Every message starts "dbload COMMAND: ".
namespace dbload::cli {

// Options and positional arguments of one command. `--name value` and `--name=value` both work.
struct Flags {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // by name, in order given
  std::set<std::string> switches;

  std::string Get(const std::string& name, const std::string& fallback = "") const {
    auto it = values.find(name);
    return it == values.end() || it->second.empty() ? fallback : it->second.back();
  }
  std::vector<std::string> All(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

// `with_value`: the options that take a value; `switches`: those that do not. A command that
// takes --coordinator also takes the link's TLS and token flags.
absl::StatusOr<Flags> ParseFlags(const std::string& command, const std::vector<std::string>& args,
                                 const std::set<std::string>& with_value,
                                 const std::set<std::string>& switches);

// The coordinator link's TLS files and token (--tls-*, --token-file), read and checked.
absl::StatusOr<TransportSecurity> SecurityOf(const std::string& command, const Flags& flags);

struct PlanArgs {
  std::string plan_path;
  std::vector<std::string> overrides;
  std::string report_path;
};

// The plan file (exactly one) and its --set overrides from parsed flags.
absl::StatusOr<PlanArgs> PlanArgsOf(const std::string& command, const Flags& flags);

// Everything a command needs from a plan. Every failure names the plan file, and where it is
// about one field, that field's line and column.
struct LoadedPlan {
  v1::Plan plan;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Scenario> scenario;
  std::unique_ptr<db::Driver> driver;
};

// Reads a YAML workload into the plan (plan.workload_spec); a relative path is relative to
// `base_dir` (the plan's or the suite's folder).
absl::Status ResolveWorkloadAt(v1::Plan& plan, const std::string& base_dir);

// The PlanCheck of every plan read here: the workload knows its options and scenario.
PlanCheck WorkloadKnowsIt(const std::string& base_dir);

// The plan, parsed and validated, its workload resolved: all `submit` can check here.
absl::StatusOr<v1::Plan> ParsePlan(const PlanArgs& args);

// --allow-target of a command that connects to the plan's target itself (run, prepare,
// cleanup, suite run), or the loopback default.
absl::StatusOr<TargetAllowList> AllowTargetOf(const std::string& command, const Flags& flags);

// Who refuses a target, in the messages of the commands that connect from here.
TargetRefuser RefuserOf(const std::string& command);

// A parsed plan (workload resolved) with its password read and its driver made, dialling only
// a target in `allow`.
absl::StatusOr<LoadedPlan> LoadParsedPlan(v1::Plan plan, const std::string& source, Clock& clock,
                                          const TargetAllowList& allow, const TargetRefuser& who);

// ParsePlan, then LoadParsedPlan.
absl::StatusOr<LoadedPlan> LoadPlan(const PlanArgs& args, Clock& clock,
                                    const TargetAllowList& allow, const TargetRefuser& who);

// Prints "dbload: MESSAGE" and returns kExitUsage.
int Fail(const absl::Status& status);

// A count flag from 1 to `max`.
absl::StatusOr<uint32_t> PositiveCount(const std::string& command, const std::string& flag,
                                       const std::string& text, uint32_t max);

// --wait-for-agents (submit, suite run --coordinator): a duration, not negative; 0 if not given.
absl::StatusOr<Nanos> WaitForAgentsOf(const std::string& command, const Flags& flags);

// More agents than this in one process would only compete for its cores.
constexpr uint32_t kMaxLocalAgents = 64;
// How long `dbload run` waits for its own in-process agents to connect.
constexpr Nanos kLocalAgentWait = 10 * kSecond;

// RUN (optional) and --coordinator of watch, stop, agents and report.
struct RunRef {
  std::string coordinator;
  std::string run_id;  // empty: the latest
  std::unique_ptr<v1::Control::Stub> stub;
};

absl::StatusOr<RunRef> ParseRunRef(const std::string& command, const Flags& flags, bool takes_run);

// An unknown run names itself and the coordinator; anything else is ControlCallError's line.
absl::Status RunCallError(const RunRef& ref, const grpc::Status& status);

// A Control call's context, with its deadline.
std::unique_ptr<grpc::ClientContext> CallContext();

// --format, one of `formats` (the first is the default).
absl::StatusOr<std::string> FormatOf(const std::string& command, const Flags& flags,
                                     const std::vector<std::string>& formats);

// To stdout, or with --output FILE into FILE, written whole or not at all; the exit code.
int Emit(const std::string& command, const Flags& flags, const std::string& content);

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_CLI_COMMON_H_
