// The `dbload` command. Subcommands parse their own arguments; every failure is reported as
// one line naming what was wrong and where, and the exit code says what happened:
// 0 success, 1 a run that ended with a fatal database error, 2 bad input or set-up failure,
// 130 interrupted.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/local_run.h"
#include "common/clock.h"
#include "common/db/driver_factory.h"
#include "common/plan_parser.h"
#include "common/report.h"
#include "common/workload.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

std::atomic<bool> interrupted{false};

void OnSignal(int) { interrupted.store(true); }

constexpr char kUsage[] = R"(usage: dbload COMMAND [ARGS]

Commands:
  run PLAN.yaml [--set PATH=VALUE ...] [--report FILE]
        Run a plan on this machine: one line per second, then the report.
        --report FILE also writes the report as JSON.
  prepare PLAN.yaml [--set PATH=VALUE ...]
        Create the plan's workload tables and load its data set.
  cleanup PLAN.yaml [--set PATH=VALUE ...]
        Drop the tables that prepare created.
  report FILE.json
        Print a saved JSON report as text.
  workloads
        List the built-in workloads and their scenarios.
  version
)";

struct PlanArgs {
  std::string plan_path;
  std::vector<std::string> overrides;
  std::string report_path;
};

absl::StatusOr<PlanArgs> ParsePlanArgs(const std::string& command, const std::vector<std::string>& args,
                                       bool allow_report) {
  PlanArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (const size_t eq = arg.find('='); eq != std::string::npos) return arg.substr(eq + 1);
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": ", arg, " needs a value"));
      }
      return args[++i];
    };
    if (arg == "--set" || absl::StartsWith(arg, "--set=")) {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      parsed.overrides.push_back(*v);
    } else if (allow_report && (arg == "--report" || absl::StartsWith(arg, "--report="))) {
      absl::StatusOr<std::string> v = value();
      if (!v.ok()) return v.status();
      parsed.report_path = *v;
    } else if (absl::StartsWith(arg, "-")) {
      return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": unknown option '", arg, "'"));
    } else if (parsed.plan_path.empty()) {
      parsed.plan_path = arg;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("dbload ", command, ": unexpected argument '", arg, "' (one plan file only)"));
    }
  }
  if (parsed.plan_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": no plan file given"));
  }
  return parsed;
}

// Everything a command needs from a plan. Every failure names the plan file, and where it is
// about one field, that field's line and column.
struct LoadedPlan {
  v1::Plan plan;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Scenario> scenario;
  std::unique_ptr<db::Driver> driver;
};

std::map<std::string, std::string> WorkloadOptionsOf(const v1::Plan& plan) {
  return {plan.workload_options().begin(), plan.workload_options().end()};
}

absl::StatusOr<LoadedPlan> LoadPlan(const PlanArgs& args, Clock& clock) {
  // The workload judges its own name, options and scenario; the parser places its verdict.
  const PlanCheck workload_knows_it = [](const v1::Plan& plan) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Workload>> workload =
        MakeWorkload(plan.workload(), WorkloadOptionsOf(plan));
    if (!workload.ok()) return workload.status();
    return (*workload)->MakeScenario(plan.scenario()).status();
  };
  absl::StatusOr<v1::Plan> plan = LoadPlanFile(args.plan_path, args.overrides, workload_knows_it);
  if (!plan.ok()) return plan.status();
  LoadedPlan loaded;
  loaded.plan = *std::move(plan);
  absl::StatusOr<std::string> password = ReadTargetPassword(loaded.plan.target());
  if (!password.ok()) {
    // Its message already names the field (target.password_file / target.password_env).
    return absl::Status(password.status().code(),
                        absl::StrCat(args.plan_path, ": ", password.status().message()));
  }
  absl::StatusOr<std::unique_ptr<Workload>> workload =
      MakeWorkload(loaded.plan.workload(), WorkloadOptionsOf(loaded.plan));
  if (!workload.ok()) return workload.status();  // checked above: cannot happen
  loaded.workload = *std::move(workload);
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = loaded.workload->MakeScenario(loaded.plan.scenario());
  if (!scenario.ok()) return scenario.status();
  loaded.scenario = *std::move(scenario);
  absl::StatusOr<std::unique_ptr<db::Driver>> driver =
      db::MakeDriver(loaded.plan.target(), *std::move(password), clock);
  if (!driver.ok()) {
    return absl::Status(driver.status().code(),
                        absl::StrCat(args.plan_path, ": target: ", driver.status().message()));
  }
  loaded.driver = *std::move(driver);
  return loaded;
}

// Writes next to the destination and renames, so a reader never sees half a report.
absl::Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", temporary));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", temporary, " to ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::cerr << "dbload: " << status.message() << "\n";
  return kExitUsage;
}

int RunCommand(const std::vector<std::string>& args) {
  absl::StatusOr<PlanArgs> parsed = ParsePlanArgs("run", args, /*allow_report=*/true);
  if (!parsed.ok()) return Fail(parsed.status());
  SteadyClock clock;
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock);
  if (!loaded.ok()) return Fail(loaded.status());

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  LocalRunHooks hooks{
      .on_interval = [](const v1::IntervalSample& s) { std::cout << RenderIntervalLine(s) << std::endl; },
      .interrupted = &interrupted};
  absl::StatusOr<v1::RunReport> report =
      RunPlanLocally(loaded->plan, *loaded->driver, *loaded->scenario, clock, hooks);
  if (!report.ok()) {
    return Fail(absl::Status(report.status().code(),
                             absl::StrCat(parsed->plan_path, ": ", report.status().message())));
  }
  std::cout << "\n" << RenderReportText(*report);
  if (!parsed->report_path.empty()) {
    if (absl::Status written = WriteFileAtomically(parsed->report_path, RenderReportJson(*report)); !written.ok()) {
      return Fail(written);
    }
    std::cout << "\nReport written to " << parsed->report_path << "\n";
  }
  if (report->end_reason() == "interrupted") return kExitInterrupted;
  if (absl::StartsWith(report->end_reason(), "fatal")) {
    // The report above says it too, but a script reading stderr must not miss it.
    std::cerr << "dbload: " << parsed->plan_path << ": run ended by " << report->end_reason() << "\n";
    return kExitRunFailed;
  }
  return kExitOk;
}

// Opens one session for set-up work (prepare, cleanup).
absl::StatusOr<std::unique_ptr<db::Session>> SetupSession(LoadedPlan& loaded, const std::string& plan_path) {
  loaded.driver->ThreadStart();
  absl::StatusOr<std::unique_ptr<db::Session>> session = loaded.driver->Connect();
  if (!session.ok()) {
    return absl::Status(session.status().code(), absl::StrCat(plan_path, ": target: ", session.status().message()));
  }
  return session;
}

int PrepareCommand(const std::vector<std::string>& args, bool cleanup) {
  const char* name = cleanup ? "cleanup" : "prepare";
  absl::StatusOr<PlanArgs> parsed = ParsePlanArgs(name, args, /*allow_report=*/false);
  if (!parsed.ok()) return Fail(parsed.status());
  SteadyClock clock;
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock);
  if (!loaded.ok()) return Fail(loaded.status());
  absl::StatusOr<std::unique_ptr<db::Session>> session = SetupSession(*loaded, parsed->plan_path);
  if (!session.ok()) return Fail(session.status());
  absl::Status status;
  if (cleanup) {
    status = loaded->workload->Cleanup(**session);
  } else {
    const Nanos start = clock.Now();
    Nanos last_print = 0;
    status = loaded->workload->Prepare(
        **session, loaded->driver->dialect(), [&](const PrepareProgress& p) {
          const Nanos now = clock.Now();
          if (now - last_print < kSecond && p.rows_done < p.rows_total) return;
          last_print = now;
          const double seconds = static_cast<double>(now - start) / kSecond;
          std::cout << absl::StrFormat("%s: %d / %d rows (%.0f rows/s)", p.table, p.rows_done,
                                       p.rows_total, seconds > 0 ? p.rows_done / seconds : 0)
                    << std::endl;
        });
    if (status.ok()) {
      std::cout << absl::StrFormat("prepared in %.1f s\n", static_cast<double>(clock.Now() - start) / kSecond);
    }
  }
  session->reset();
  loaded->driver->ThreadEnd();
  if (!status.ok()) return Fail(absl::Status(status.code(), absl::StrCat(parsed->plan_path, ": ", name, ": ", status.message())));
  return kExitOk;
}

int ReportCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) return Fail(absl::InvalidArgumentError("dbload report: give one JSON report file"));
  std::ifstream in(args[0], std::ios::binary);
  if (!in) return Fail(absl::NotFoundError(absl::StrCat("dbload report: cannot read ", args[0])));
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<v1::RunReport> report = ParseReportJson(json);
  if (!report.ok()) return Fail(absl::InvalidArgumentError(absl::StrCat(args[0], ": ", report.status().message())));
  std::cout << RenderReportText(*report);
  return kExitOk;
}

int WorkloadsCommand() {
  for (const std::string& name : BuiltinWorkloadNames()) {
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(name, {});
    if (!workload.ok()) continue;
    std::cout << name << ":";
    for (const std::string& scenario : (*workload)->ScenarioNames()) std::cout << " " << scenario;
    std::cout << "\n";
  }
  return kExitOk;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return RunCommand(args);
  if (command == "prepare") return PrepareCommand(args, /*cleanup=*/false);
  if (command == "cleanup") return PrepareCommand(args, /*cleanup=*/true);
  if (command == "report") return ReportCommand(args);
  if (command == "workloads") return WorkloadsCommand();
  if (command == "version" || command == "--version") {
    std::cout << "dbload " << DBLOAD_VERSION_STRING << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return kExitOk;
  }
  std::cerr << "dbload: unknown command '" << command << "'\n\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) { return dbload::Main(argc, argv); }
