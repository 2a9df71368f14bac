#include "cli/cli_common.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "cli/control_client.h"
#include "db/driver_factory.h"
#include "process/exit_codes.h"
#include "process/flag_args.h"
#include "report/report.h"
#include "workload/loader.h"
#include "workload/workload_parser.h"
#include "plan/durations.h"
#include "plan/target_secrets.h"

namespace dbload::cli {

// Options and positional arguments of one command. `--name value` and `--name=value` both work.
absl::StatusOr<Flags> ParseFlags(const std::string& command, const std::vector<std::string>& args,
                                 const std::set<std::string>& with_value,
                                 const std::set<std::string>& switches) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      flags.positional.push_back(arg);
      continue;
    }
    const FlagArg flag = SplitFlagArg(arg);
    const std::string& name = flag.name;
    // Every command that talks to a coordinator takes the link's TLS and token flags too.
    bool takes_value = false;
    const bool security =
        with_value.contains("--coordinator") && IsSecurityFlag(name, &takes_value);
    if (with_value.contains(name) || (security && takes_value)) {
      absl::StatusOr<std::string> value = TakeFlagValue(flag, args, i);
      if (!value.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("dbload ", command, ": ", value.status().message()));
      }
      flags.values[name].push_back(*std::move(value));
    } else if (switches.contains(arg) || security) {
      flags.switches.insert(arg);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("dbload ", command, ": unknown option '", arg, "'"));
    }
  }
  return flags;
}

// The coordinator link's TLS files and token (--tls-*, --token-file), read and checked.
absl::StatusOr<TransportSecurity> SecurityOf(const std::string& command, const Flags& flags) {
  SecurityFlags security;
  for (const auto& [name, values] : flags.values) {
    bool takes_value = false;
    if (!IsSecurityFlag(name, &takes_value)) continue;
    if (absl::Status set = SetSecurityFlag(name, values.back(), security); !set.ok()) {
      return absl::Status(set.code(), absl::StrCat("dbload ", command, ": ", set.message()));
    }
  }
  security.allow_insecure_remote = flags.switches.contains("--allow-insecure-remote");
  absl::StatusOr<TransportSecurity> loaded = LoadTransportSecurity(security, /*server=*/false);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat("dbload ", command, ": ", loaded.status().message()));
  }
  return loaded;
}

// The plan file (exactly one) and its --set overrides from parsed flags.
absl::StatusOr<PlanArgs> PlanArgsOf(const std::string& command, const Flags& flags) {
  PlanArgs parsed;
  if (flags.positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": no plan file given"));
  }
  if (flags.positional.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": unexpected argument '",
                                                   flags.positional[1], "' (one plan file only)"));
  }
  parsed.plan_path = flags.positional[0];
  parsed.overrides = flags.All("--set");
  parsed.report_path = flags.Get("--report");
  return parsed;
}

// The plan, parsed and validated, with the workload's verdict on its name, options and
// scenario: all `submit` can check here (the password and the database are the agents').
// A YAML workload is read into the plan here (plan.workload_spec), so that the coordinator and
// the agents receive it whole. A relative path is relative to the plan file.
// (Suites do the same with their cases' plans, relative to the suite file.)
absl::Status ResolveWorkloadAt(v1::Plan& plan, const std::string& base_dir) {
  if (IsYamlWorkload(plan.workload()) && !BuiltinWorkloadFiles().contains(plan.workload()) &&
      !absl::StartsWith(plan.workload(), "/") && !base_dir.empty()) {
    plan.set_workload(absl::StrCat(base_dir, "/", plan.workload()));
  }
  absl::Status status = ResolvePlanWorkload(plan);
  // A problem inside the workload file already names its file, line and field.
  if (!status.ok() && !FieldOf(status))
    return FieldError("workload", std::string(status.message()));
  return status;
}

// The PlanCheck of every plan read here: the workload knows its options and scenario.
PlanCheck WorkloadKnowsIt(const std::string& base_dir) {
  return [base_dir](const v1::Plan& plan) -> absl::Status {
    v1::Plan resolved = plan;
    if (absl::Status status = ResolveWorkloadAt(resolved, base_dir); !status.ok()) return status;
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(resolved);
    if (!workload.ok()) return workload.status();
    return (*workload)->MakeScenario(plan.scenario()).status();
  };
}

absl::StatusOr<v1::Plan> ParsePlan(const PlanArgs& args) {
  const std::string plan_dir = std::filesystem::path(args.plan_path).parent_path().string();
  absl::StatusOr<v1::Plan> plan =
      LoadPlanFile(args.plan_path, args.overrides, WorkloadKnowsIt(plan_dir));
  if (!plan.ok()) return plan.status();
  // Checked: cannot fail.
  if (absl::Status status = ResolveWorkloadAt(*plan, plan_dir); !status.ok()) return status;
  return plan;
}

// --allow-target of a command that connects to the plan's target itself (run, prepare,
// cleanup, suite run), or the loopback default.
absl::StatusOr<TargetAllowList> AllowTargetOf(const std::string& command, const Flags& flags) {
  absl::StatusOr<TargetAllowList> allow = TargetAllowList::Parse(flags.All("--allow-target"));
  if (!allow.ok()) {
    return absl::Status(allow.status().code(),
                        absl::StrCat("dbload ", command, ": ", allow.status().message()));
  }
  return allow;
}

// Who refuses a target, in the messages of the commands that connect from here.
TargetRefuser RefuserOf(const std::string& command) {
  return {.subject = absl::StrCat("dbload ", command), .remedy = absl::StrCat("dbload ", command)};
}

// A parsed plan (workload resolved) with its password read and its driver made. The driver
// dials only a target in `allow` (the command's --allow-target), at the address checked here;
// the plan itself is left as written (agents check and resolve it themselves).
absl::StatusOr<LoadedPlan> LoadParsedPlan(v1::Plan plan, const std::string& source, Clock& clock,
                                          const TargetAllowList& allow, const TargetRefuser& who) {
  LoadedPlan loaded;
  loaded.plan = std::move(plan);
  absl::StatusOr<std::string> password = ReadTargetPassword(loaded.plan.target());
  if (!password.ok()) {
    // Its message already names the field (target.password_file / target.password_env).
    return absl::Status(password.status().code(),
                        absl::StrCat(source, ": ", password.status().message()));
  }
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(loaded.plan);
  if (!workload.ok()) return workload.status();  // checked above: cannot happen
  loaded.workload = *std::move(workload);
  absl::StatusOr<std::unique_ptr<Scenario>> scenario =
      loaded.workload->MakeScenario(loaded.plan.scenario());
  if (!scenario.ok()) return scenario.status();
  loaded.scenario = *std::move(scenario);
  v1::Target dialed = loaded.plan.target();
  SystemResolver resolver;
  if (absl::StatusOr<std::string> endpoint = ApplyAllowTarget(allow, resolver, who, dialed);
      !endpoint.ok()) {
    return absl::Status(endpoint.status().code(),
                        absl::StrCat(source, ": ", endpoint.status().message()));
  }
  absl::StatusOr<std::unique_ptr<db::Driver>> driver =
      db::MakeDriver(dialed, *std::move(password), clock);
  if (!driver.ok()) {
    return absl::Status(driver.status().code(),
                        absl::StrCat(source, ": target: ", driver.status().message()));
  }
  loaded.driver = *std::move(driver);
  return loaded;
}

absl::StatusOr<LoadedPlan> LoadPlan(const PlanArgs& args, Clock& clock,
                                    const TargetAllowList& allow, const TargetRefuser& who) {
  absl::StatusOr<v1::Plan> plan = ParsePlan(args);
  if (!plan.ok()) return plan.status();
  return LoadParsedPlan(*std::move(plan), args.plan_path, clock, allow, who);
}

int Fail(const absl::Status& status) {
  std::cerr << "dbload: " << status.message() << "\n";
  return kExitUsage;
}

absl::StatusOr<uint32_t> PositiveCount(const std::string& command, const std::string& flag,
                                       const std::string& text, uint32_t max) {
  uint32_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 1 || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": ", flag,
                                                   ": expected an integer from 1 to ", max,
                                                   ", got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<Nanos> WaitForAgentsOf(const std::string& command, const Flags& flags) {
  const std::string text = flags.Get("--wait-for-agents");
  if (text.empty()) return 0;
  absl::StatusOr<int64_t> nanos = ParseDurationNanos(text);
  if (!nanos.ok() || *nanos < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dbload ", command, ": --wait-for-agents: ",
                     nanos.ok() ? "must not be negative" : std::string(nanos.status().message())));
  }
  return *nanos;
}

absl::StatusOr<RunRef> ParseRunRef(const std::string& command, const Flags& flags, bool takes_run) {
  RunRef ref;
  ref.coordinator = flags.Get("--coordinator");
  if (ref.coordinator.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dbload ", command, ": --coordinator ADDR is required"));
  }
  const size_t max_positional = takes_run ? 1 : 0;
  if (flags.positional.size() > max_positional) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": unexpected argument '",
                                                   flags.positional[max_positional], "'"));
  }
  if (!flags.positional.empty()) ref.run_id = flags.positional[0];
  absl::StatusOr<TransportSecurity> security = SecurityOf(command, flags);
  if (!security.ok()) return security.status();
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub = DialControl(ref.coordinator, *security);
  if (!stub.ok())
    return absl::Status(stub.status().code(),
                        absl::StrCat("dbload ", command, ": ", stub.status().message()));
  ref.stub = *std::move(stub);
  return ref;
}

// An unknown run names itself and the coordinator; anything else is ControlCallError's line.
absl::Status RunCallError(const RunRef& ref, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return absl::NotFoundError(
        ref.run_id.empty()
            ? absl::StrCat("the coordinator at ", ref.coordinator, " has no runs yet")
            : absl::StrCat("the coordinator at ", ref.coordinator, " has no run '", ref.run_id,
                           "'"));
  }
  return ControlCallError(ref.coordinator, status);
}

std::unique_ptr<grpc::ClientContext> CallContext() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return context;
}

absl::StatusOr<std::string> FormatOf(const std::string& command, const Flags& flags,
                                     const std::vector<std::string>& formats) {
  const std::string format = flags.Get("--format", formats.front());
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": --format: expected ",
                                                   absl::StrJoin(formats, ", "), "; got \"", format,
                                                   "\""));
  }
  return format;
}

// To stdout, or with --output FILE into FILE, written whole or not at all (temporary + rename).
int Emit(const std::string& command, const Flags& flags, const std::string& content) {
  const std::string output = flags.Get("--output");
  if (output.empty()) {
    std::cout << content;
    return kExitOk;
  }
  if (absl::Status written = WriteFileAtomically(output, content); !written.ok()) {
    return Fail(absl::Status(written.code(), absl::StrCat("dbload ", command, ": --output ", output,
                                                          ": ", written.message())));
  }
  return kExitOk;
}

}  // namespace dbload::cli
