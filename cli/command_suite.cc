// `dbload suite run|check|report|list` and `dbload suites`: a suite's runs through the same code
// as prepare, run / submit --wait and cleanup (CliSuiteExecutor), then its report.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/usable_cores.h"
#include "cli/cli_common.h"
#include "cli/command_prepare.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/local_cluster.h"
#include "cli/run_via.h"
#include "plan/target_secrets.h"
#include "process/exit_codes.h"
#include "process/stop_signal.h"
#include "report/report.h"
#include "suite/suite_parser.h"
#include "suite/suite_report.h"
#include "suite/suite_runner.h"
#include "suite/suite_runs.h"
#include "workload/workload.h"

namespace dbload::cli {
namespace {

class CliSuiteExecutor : public SuiteExecutor {
 public:
  // `local`: the runs go to this process's agents, so the row checks of `dbload run` apply.
  CliSuiteExecutor(const RunVia& via, bool local, std::string base_dir, Clock& clock,
                   TargetAllowList allow)
      : via_(via),
        local_(local),
        base_dir_(std::move(base_dir)),
        clock_(clock),
        allow_(std::move(allow)) {}

  absl::Status Prepare(const v1::Plan& plan) override {
    absl::StatusOr<LoadedPlan> loaded = Load(plan);
    if (!loaded.ok()) return loaded.status();
    // As `dbload prepare` without --parallel: one part per core here, at most 8.
    const uint32_t parallel = std::clamp(UsableCores(), 1u, 8u);
    if (PrepareData(*loaded, plan.name(), clock_, parallel, nullptr) != kExitOk) {
      return absl::InternalError("dbload prepare failed (the reason is above)");
    }
    return absl::OkStatus();
  }

  absl::Status Cleanup(const v1::Plan& plan) override {
    absl::StatusOr<LoadedPlan> loaded = Load(plan);
    if (!loaded.ok()) return loaded.status();
    if (CleanupData(*loaded, plan.name()) != kExitOk) {
      return absl::InternalError("dbload cleanup failed (the reason is above)");
    }
    return absl::OkStatus();
  }

  int Run(const v1::Plan& plan, const std::string& report_path,
          const IntervalSink& on_interval) override {
    const FollowOptions options{.report_path = report_path,
                                .print_intervals = false,
                                .on_interval = on_interval,
                                .print_report = false};
    if (!local_) {
      v1::Plan resolved = plan;
      if (absl::Status status = ResolveWorkloadAt(resolved, base_dir_); !status.ok()) {
        return Fail(status);
      }
      return RunPlanVia(via_, resolved, plan.name(), options);
    }
    absl::StatusOr<LoadedPlan> loaded = Load(plan);
    if (!loaded.ok()) return Fail(loaded.status());
    return RunPlanVia(via_, loaded->plan, plan.name(), options);
  }

 private:
  absl::StatusOr<LoadedPlan> Load(const v1::Plan& plan) {
    v1::Plan resolved = plan;
    if (absl::Status status = ResolveWorkloadAt(resolved, base_dir_); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat(plan.name(), ": ", status.message()));
    }
    return LoadParsedPlan(std::move(resolved), plan.name(), clock_, allow_, RefuserOf("suite run"));
  }

  RunVia via_;
  bool local_;
  std::string base_dir_;
  Clock& clock_;
  TargetAllowList allow_;
};

// With prepare "once", a target gets each distinct workload and options loaded once, all into the
// same tables: two cases of one workload whose data differs (tpcc at 1 and at 10 warehouses)
// cannot both be prepared. Refused before any load, naming both cases.
absl::Status CheckPreparedOnce(const v1::Suite& suite, const std::string& source,
                               const std::string& base_dir) {
  if (suite.settings().prepare() != kSuitePrepareOnce) return absl::OkStatus();
  struct Loaded {
    int case_index;
    std::string tables;  // the DataSpec's tables, serialized: what prepare creates and loads
  };
  std::map<std::string, Loaded> by_workload;
  const std::vector<v1::SuiteRun> runs = ExpandSuite(suite);
  for (int c = 0; c < suite.cases_size(); ++c) {
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const v1::SuiteRun& r) {
      return r.case_name() == suite.cases(c).name();
    });
    if (run == runs.end()) continue;
    absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, *run);
    if (!plan.ok()) return plan.status();
    if (absl::Status status = ResolveWorkloadAt(*plan, base_dir); !status.ok()) return status;
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(*plan);
    if (!workload.ok()) return workload.status();
    const v1::WorkloadSpec data = (*workload)->DataSpec();
    std::string tables;
    for (const v1::Table& table : data.tables()) tables.append(table.SerializeAsString());
    const auto [first, inserted] = by_workload.try_emplace(plan->workload(), Loaded{c, tables});
    if (!inserted && first->second.tables != tables) {
      return absl::FailedPreconditionError(absl::StrCat(
          source, ": cases.", c, " (", suite.cases(c).name(), ") loads other data of workload ",
          plan->workload(), " than cases.", first->second.case_index, " (",
          suite.cases(first->second.case_index).name(),
          ") into the same tables, and settings.prepare is once: set settings.prepare to "
          "per_case to load each case's own before it"));
    }
  }
  return absl::OkStatus();
}

// A suite file, or the name of a built-in suite ("sysbench-sweep", also "sysbench-sweep.yaml").
absl::StatusOr<v1::Suite> LoadSuiteArg(const std::string& command, const Flags& flags,
                                       std::string* source, std::string* base_dir) {
  if (flags.positional.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dbload ", command, ": give one suite file or built-in suite name (dbload suite list)"));
  }
  SuiteOptions options;
  options.overrides = flags.All("--set");
  if (const std::string scale = flags.Get("--scale"); !scale.empty()) {
    if (!absl::SimpleAtod(scale, &options.scale) || !(options.scale > 0) ||
        !std::isfinite(options.scale)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dbload ", command, ": --scale: expected a number > 0, got \"", scale, "\""));
    }
  }
  if (const std::string time_scale = flags.Get("--time-scale"); !time_scale.empty()) {
    if (!absl::SimpleAtod(time_scale, &options.time_scale) || !(options.time_scale > 0) ||
        !(options.time_scale <= kMaxSuiteTimeScale)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dbload %s: --time-scale: expected a number > 0 and at most %g, got \"%s\"", command,
          kMaxSuiteTimeScale, time_scale));
    }
  }
  const std::string& arg = flags.positional[0];
  std::string builtin = arg;
  if (absl::EndsWith(builtin, ".yaml")) builtin.resize(builtin.size() - 5);
  std::error_code error;
  if (!std::filesystem::exists(arg, error) && BuiltinSuiteFiles().contains(builtin)) {
    *source = absl::StrCat("suites/", builtin, ".yaml");
    base_dir->clear();
    options.check = WorkloadKnowsIt("");
    return ParseSuite(BuiltinSuiteFiles().at(builtin), *source, options);
  }
  if (!std::filesystem::exists(arg, error) && arg.find('/') == std::string::npos &&
      !absl::EndsWith(arg, ".yaml")) {
    std::vector<std::string> names;
    for (const auto& entry : BuiltinSuiteFiles()) names.push_back(entry.first);
    return absl::NotFoundError(absl::StrCat("dbload ", command,
                                            ": no suite file or built-in suite ", arg,
                                            " (built-in: ", absl::StrJoin(names, ", "), ")"));
  }
  *source = arg;
  *base_dir = std::filesystem::path(arg).parent_path().string();
  options.check = WorkloadKnowsIt(*base_dir);
  return LoadSuiteFile(arg, options);
}

// LoadSuiteArg, then what only the workloads themselves can say of the suite.
absl::StatusOr<v1::Suite> LoadCheckedSuiteArg(const std::string& command, const Flags& flags,
                                              std::string* source, std::string* base_dir) {
  absl::StatusOr<v1::Suite> suite = LoadSuiteArg(command, flags, source, base_dir);
  if (!suite.ok()) return suite;
  if (absl::Status status = CheckPreparedOnce(*suite, *source, *base_dir); !status.ok()) {
    return status;
  }
  return suite;
}

std::string Rfc3339Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

// "2 targets x 3 cases, 12 runs, about 40 s of load planned"
std::string SuiteSummary(const v1::Suite& suite) {
  return absl::StrFormat("%d targets x %d cases, %s", suite.targets_size(), suite.cases_size(),
                         DescribePlannedLoad(suite));
}

// A number as the user gave it, for the suite's index (1 when not given; LoadSuiteArg has
// already refused one that is not a number).
double FlagNumber(const Flags& flags, const std::string& name) {
  double value = 1;
  const std::string text = flags.Get(name);
  if (text.empty() || !absl::SimpleAtod(text, &value)) return 1;
  return value;
}

int SuiteRunCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags =
      ParseFlags("suite run", args,
                 {"--set", "--scale", "--time-scale", "--agents", "--coordinator", "--min-agents",
                  "--wait-for-agents", "--out", "--allow-target"},
                 {"--resume"});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf("suite run", *flags);
  if (!allow.ok()) return Fail(allow.status());
  std::string source, base_dir;
  absl::StatusOr<v1::Suite> suite = LoadCheckedSuiteArg("suite run", *flags, &source, &base_dir);
  if (!suite.ok()) return Fail(suite.status());
  const std::string coordinator = flags->Get("--coordinator");
  if (!coordinator.empty() && !flags->Get("--agents").empty()) {
    return Fail(absl::InvalidArgumentError(
        "dbload suite run: --agents (in this process) and --coordinator exclude each other"));
  }
  absl::StatusOr<uint32_t> agents =
      PositiveCount("suite run", "--agents", flags->Get("--agents", "1"), kMaxLocalAgents);
  if (!agents.ok()) return Fail(agents.status());
  absl::StatusOr<uint32_t> min_agents =
      PositiveCount("suite run", "--min-agents", flags->Get("--min-agents", "1"), 100000);
  if (!min_agents.ok()) return Fail(min_agents.status());
  absl::StatusOr<Nanos> wait_for_agents = WaitForAgentsOf("suite run", *flags);
  if (!wait_for_agents.ok()) return Fail(wait_for_agents.status());
  const bool resume = flags->switches.contains("--resume");
  std::string out = flags->Get("--out");
  if (out.empty()) {
    if (resume) {
      return Fail(absl::InvalidArgumentError("dbload suite run: --resume needs --out DIR"));
    }
    out = absl::StrCat("out/suites/", suite->name(), "-",
                       absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone()));
  }
  const SuiteRunOptions run_options{.directory = out,
                                    .resume = resume,
                                    .interrupted = &StopRequested(),
                                    .out = &std::cout,
                                    .now = Rfc3339Now,
                                    .scale = FlagNumber(*flags, "--scale"),
                                    .time_scale = FlagNumber(*flags, "--time-scale"),
                                    .overrides = flags->All("--set")};
  // Refused (DIR holds a suite, or another one than --resume continues): one line, nothing
  // started, printed or written.
  if (absl::Status usable = CheckSuiteDirectory(*suite, run_options); !usable.ok()) {
    return Fail(absl::Status(usable.code(), absl::StrCat("suite run: ", usable.message())));
  }
  // Passwords are read here for prepare, cleanup and the local agents: a missing one is found
  // before any load, not at the first run of its target.
  if (coordinator.empty() || suite->settings().prepare() != kSuitePrepareNone ||
      suite->settings().cleanup()) {
    for (int t = 0; t < suite->targets_size(); ++t) {
      if (absl::StatusOr<std::string> password = ReadTargetPassword(suite->targets(t).target());
          !password.ok()) {
        return Fail(
            absl::Status(password.status().code(),
                         absl::StrCat(source, ": targets.", t, " (", suite->targets(t).name(),
                                      "): ", password.status().message())));
      }
    }
  }
  InstallStopSignalHandlers();
  SteadyClock clock;
  std::unique_ptr<LocalCluster> cluster;
  std::unique_ptr<v1::Control::Stub> stub;
  RunVia via;
  if (coordinator.empty()) {
    absl::StatusOr<std::unique_ptr<LocalCluster>> started =
        LocalCluster::Start(*agents, clock, *allow);
    if (!started.ok()) return Fail(started.status());
    cluster = *std::move(started);
    absl::StatusOr<std::unique_ptr<v1::Control::Stub>> dialled =
        DialControl(cluster->address(), cluster->security());
    if (!dialled.ok()) return Fail(dialled.status());
    stub = *std::move(dialled);
    via = {.stub = stub.get(),
           .address = cluster->address(),
           .min_agents = *agents,
           .wait_for_agents = kLocalAgentWait,
           .cluster = cluster.get()};
  } else {
    absl::StatusOr<TransportSecurity> security = SecurityOf("suite run", *flags);
    if (!security.ok()) return Fail(security.status());
    absl::StatusOr<std::unique_ptr<v1::Control::Stub>> dialled =
        DialControl(coordinator, *security);
    if (!dialled.ok()) return Fail(dialled.status());
    stub = *std::move(dialled);
    via = {.stub = stub.get(),
           .address = coordinator,
           .min_agents = *min_agents,
           .wait_for_agents = *wait_for_agents};
  }
  std::cout << "suite " << suite->name() << " (" << source << "): " << SuiteSummary(*suite)
            << "; writing " << out << std::endl;
  CliSuiteExecutor executor(via, coordinator.empty(), base_dir, clock, *allow);
  const int exit_code = RunSuite(*suite, run_options, executor);
  if (exit_code == kExitInterrupted) return exit_code;  // `--resume` finishes it, then reports
  // The suite report, as `dbload suite report DIR` would print it, and as files beside the runs.
  absl::StatusOr<LoadedSuite> loaded = LoadSuite(out);
  if (!loaded.ok()) {
    std::cerr << "dbload suite run: the suite report: " << loaded.status().message() << "\n";
    return exit_code == kExitOk ? kExitRunFailed : exit_code;
  }
  std::cout << "\n"
            << RenderSuiteReport(loaded->index, loaded->reports, SuiteFormat::kText,
                                 loaded->problems);
  for (const auto& [format, file] : {std::pair{SuiteFormat::kMarkdown, "report.md"},
                                     std::pair{SuiteFormat::kHtml, "report.html"}}) {
    const std::string path = absl::StrCat(out, "/", file);
    if (absl::Status written = WriteFileAtomically(
            path, RenderSuiteReport(loaded->index, loaded->reports, format, loaded->problems));
        !written.ok()) {
      std::cerr << "dbload suite run: " << written.message() << "\n";
      return exit_code == kExitOk ? kExitRunFailed : exit_code;
    }
  }
  std::cout << "Suite report: " << out << "/report.html (also report.md; print it again with "
            << "dbload suite report " << out << ")\n";
  return exit_code;
}

}  // namespace

// `dbload suite report DIR`: the suite's index and run reports, compared across targets.
int SuiteReportCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("suite report", args, {"--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format =
      FormatOf("suite report", *flags, {"text", "markdown", "html"});
  if (!format.ok()) return Fail(format.status());
  if (flags->positional.size() != 1) {
    return Fail(absl::InvalidArgumentError(
        "dbload suite report: give one suite directory (where suite.json is)"));
  }
  absl::StatusOr<LoadedSuite> suite = LoadSuite(flags->positional[0]);
  if (!suite.ok()) {
    return Fail(absl::Status(suite.status().code(),
                             absl::StrCat("dbload suite report: ", suite.status().message())));
  }
  const SuiteFormat as = *format == "markdown" ? SuiteFormat::kMarkdown
                         : *format == "html"   ? SuiteFormat::kHtml
                                               : SuiteFormat::kText;
  return Emit("suite report", *flags,
              RenderSuiteReport(suite->index, suite->reports, as, suite->problems));
}

int SuiteListCommand() {
  for (const auto& [name, text] : BuiltinSuiteFiles()) {
    absl::StatusOr<v1::Suite> suite = ParseSuite(text, absl::StrCat("suites/", name, ".yaml"), {});
    std::cout << name << ": "
              << (suite.ok() ? SuiteSummary(*suite) : std::string(suite.status().message()))
              << "\n";
  }
  return kExitOk;
}

// `dbload suite run|check|list`.
int SuiteCommand(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "run") return SuiteRunCommand(rest);
  if (sub == "report") return SuiteReportCommand(rest);
  if (sub == "list" && rest.empty()) return SuiteListCommand();
  if (sub == "check") {
    absl::StatusOr<Flags> flags =
        ParseFlags("suite check", rest, {"--set", "--scale", "--time-scale"}, {});
    if (!flags.ok()) return Fail(flags.status());
    std::string source, base_dir;
    absl::StatusOr<v1::Suite> suite =
        LoadCheckedSuiteArg("suite check", *flags, &source, &base_dir);
    if (!suite.ok()) return Fail(suite.status());
    std::cout << source << ": suite " << suite->name() << ", " << SuiteSummary(*suite) << "\n";
    return kExitOk;
  }
  return Fail(absl::InvalidArgumentError(
      "dbload suite: expected `dbload suite run SUITE [...]`, `dbload suite check SUITE "
      "[--set PATH=VALUE ...] [--scale X] [--time-scale T]`, `dbload suite report DIR [...]` or "
      "`dbload suite list`"));
}

}  // namespace dbload::cli
