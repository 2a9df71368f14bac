// The `dbload` command. Subcommands parse their own arguments; every failure is reported as
// one line naming what was wrong and where, and the exit code says what happened:
// 0 success, 1 a run that ended with a fatal database error, 2 bad input or set-up failure,
// 3 aborted by the plan's abort rules, 4 degraded (the run finished but lost an agent before its
// final report; a suite with a degraded run and nothing worse), 130 interrupted.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/control_client.h"
#include "cli/local_cluster.h"
#include "cli/suite_runner.h"
#include "net/transport_security.h"
#include "net/target_allow_list.h"
#include "base/clock.h"
#include "db/driver_factory.h"
#include "plan/plan_parser.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_csv.h"
#include "report/report_html.h"
#include "suite/suite_report.h"
#include "suite/suite_parser.h"
#include "base/field_error.h"
#include "workload/workload.h"
#include "workload/workload_parser.h"
#include "workload/loader.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

std::atomic<bool> interrupted{false};

void OnSignal(int) { interrupted.store(true); }

constexpr char kUsage[] = R"(usage: dbload COMMAND [ARGS]

Commands:
  run PLAN.yaml [--agents N] [--set PATH=VALUE ...] [--report FILE] [--allow-target LIST]
        Run a plan from this machine: a coordinator and N agents (default 1) in this process,
        linked on loopback. One line per second, then the report; --report FILE also writes it
        as JSON. --allow-target: the targets it may reach (see dbload --help).
  prepare PLAN.yaml [--parallel N] [--agents N | --coordinator ADDR] [--set PATH=VALUE ...]
          [--allow-target LIST]
        Create the plan's workload tables, load its data set in N parts on N connections
        (default: the cores here, at most 8; resumable: run it again after an interruption,
        with the parts it started with) and validate it. With
        --agents or --coordinator the parts are loaded by agents (in this process, or those
        of a running coordinator); the tables, indexes and checks are done here.
  cleanup PLAN.yaml [--set PATH=VALUE ...] [--allow-target LIST]
        Drop the tables that prepare created (and only those).
  report FILE.json [--format text|json|csv|html] [--output FILE]
        Print a saved JSON report (default: text). csv: one row per scope (the run, each
        stage) and query type; html: one self-contained page with charts (no network).
        --output FILE writes it there instead (whole or not at all).
  compare A.json B.json [C.json ...] [--format text|markdown|html] [--output FILE]
        Compare reports, the first as the baseline: the whole run and each stage (matched by
        name), per query type; throughput, mean, p50, p99, p99.9 and errors, with ratios
        ("4.87x higher throughput").
  suite report DIR [--format text|markdown|html] [--output FILE]
        Compare a suite's runs (DIR/suite.json and the run reports it names) across its
        targets, the first as the baseline: per case and load point throughput, mean and p99
        with ratios, medians and spreads of repetitions, the summary by category; html: one
        self-contained page with charts.
  workloads
        List the built-in workloads and their scenarios.
  workload check FILE.yaml [--set OPTION=VALUE ...]
        Check a workload file: every error names its line and field.
  suite run SUITE [--agents N | --coordinator ADDR [--min-agents N] [--wait-for-agents D]]
            [--set PATH=VALUE ...] [--scale X] [--time-scale T] [--out DIR] [--resume]
            [--allow-target LIST]
        Run a suite (a file, or a built-in one by name): each target x case x load point,
        warm-up runs and repetitions, as plans, in order; prepare once per target, cleanup if
        asked. A line as each run starts and ends, and inside it one every 10 s of the run at
        most and at its end (the last second's rate and p99, the run's errors so far).
        Reports in DIR/runs/TARGET/CASE/POINT-rN.json, the index in DIR/suite.json
        (default DIR: out/suites/NAME-TIMESTAMP). --set PATH=VALUE changes the suite (the
        value is YAML; null removes the field; * for a list index sets every element:
        --set 'cases.*.plan.stop.duration=30s'; a target's password_file or password_env
        replaces the other). --scale X multiplies every open-loop rate and query count (the
        load, not the time). --time-scale T (0 < T <= 1000) multiplies every duration of every
        case (warm-up, stop, stages, knee steps, think time) and every query count again, so
        that each case takes T times as long at the same rates (whole ms, at least 1 ms, at
        least 1 query); limits are checked after scaling. --resume continues DIR (the same
        suite, --set, --scale and --time-scale) from its first unfinished run; a refused run
        (DIR holds a suite, or another one) prints one line and writes nothing.
  suite check SUITE [--set PATH=VALUE ...] [--scale X] [--time-scale T]
        Check a suite file without running it: every error names its line, column and field
        (its path in the suite: cases.2.plan.stop.duration, targets.0.target.port).
  suite list | suites
        List the built-in suites: their runs and how long their load lasts (about, or at most
        for a knee search, which ends at its knee).
  version

--allow-target LIST (run, prepare, cleanup, suite run: the commands that connect to the target
from this process): the database targets they may connect to. Repeatable; comma-separated
CIDR (10.1.0.0/16), IP (127.0.0.2, ::1) or HOST (db.example.com), each optionally with :PORT
(10.0.0.0/8:5432, [::1]:3306, db:5432). Default: 127.0.0.0/8,::1,localhost. A host name is
resolved once and that address dialed for the whole run; unix sockets are always allowed. A
target outside is refused before any connection. Agents of a coordinator (submit, prepare
--coordinator) judge with their own dbload-agent --allow-target.

Commands for a running dbload-coordinator (ADDR is HOST:PORT; RUN defaults to the latest run).
They, and prepare --coordinator, take the link's TLS and token options:
  --tls-ca FILE [--tls-cert FILE --tls-key FILE] [--token-file FILE] [--allow-insecure-remote]
  (TLS when --tls-ca is given; without it ADDR must be on loopback unless
  --allow-insecure-remote; see dbload-agent --help)
  submit PLAN.yaml --coordinator ADDR [--min-agents N] [--wait-for-agents DURATION]
         [--set PATH=VALUE ...] [--wait] [--report FILE]
        Start a run split across the connected agents and print its id. --min-agents: agents
        the run needs (default 1); --wait-for-agents: how long to wait for them (default 0s).
        --wait: follow it like run (one line per second, the report, the exit code).
  watch [RUN] --coordinator ADDR
        Print a run's per-second lines until it ends.
  stop [RUN] --coordinator ADDR
        Stop a run; its agents send their final reports.
  agents --coordinator ADDR
        List the connected agents: name, host, cores, version, run.
  report [RUN] --coordinator ADDR [--format text|json|csv|html] [--output FILE]
        Print a run's report (so far, while it runs), as report FILE.json does.

Exit codes: 0 success; 1 the run ended by a fatal database error (or failed); 2 bad input or
set-up failure (plan, database unreachable, wrong password, missing table, coordinator
unreachable, unknown run); 3 the plan's abort rules ended the run; 4 degraded: the run
finished but lost an agent before its final report (the report's DEGRADED block, JSON
lost_agents, bounds what it ran uncounted; a suite: some run degraded, none failed);
130 interrupted or stopped.
)";

// The usage of one command, from kUsage's entries (a line indented by two spaces that names the
// command, and the lines indented further below it), so that `dbload COMMAND --help` can never
// disagree with `dbload --help`. `words`: the command and, where there is one, what follows it
// (`suite run`, `report FILE.json`); an entry naming both words wins over one naming the first.
// Empty when no entry names the command.
std::string CommandUsage(const std::vector<std::string>& words) {
  struct Entry {
    std::vector<std::vector<std::string>> names;  // "suite list | suites": two names
    std::string text;
    bool remote = false;  // in the section of commands for a running coordinator
  };
  std::vector<Entry> entries;
  std::string remote_options;  // that section's paragraph on the link's options
  bool in_remote = false;
  for (absl::string_view line : absl::StrSplit(kUsage, '\n')) {
    if (absl::StartsWith(line, "Commands for a running")) in_remote = true;
    if (line.size() > 2 && line.substr(0, 2) == "  " && line[2] != ' ' && line[2] != '-' &&
        line[2] != '(') {
      Entry entry;
      entry.remote = in_remote;
      entry.text = std::string(line.substr(2));
      // The names end where the arguments begin (an upper-case, bracketed or dashed word).
      for (absl::string_view form : absl::StrSplit(line.substr(2), " | ")) {
        std::vector<std::string> name;
        for (absl::string_view word : absl::StrSplit(form, ' ', absl::SkipEmpty())) {
          if (!absl::ascii_islower(word[0])) break;
          name.emplace_back(word);
        }
        entry.names.push_back(std::move(name));
      }
      entries.push_back(std::move(entry));
    } else if (!entries.empty() && absl::StartsWith(line, "   ")) {
      absl::StrAppend(&entries.back().text, "\n", line);
    } else if (in_remote && !line.empty() && !entries.empty() && !entries.back().remote) {
      absl::StrAppend(&remote_options, line, "\n");
    }
  }
  auto names = [&](const Entry& entry, size_t count) {
    for (const std::vector<std::string>& name : entry.names) {
      if (name.size() >= count && std::equal(words.begin(), words.begin() + count, name.begin())) {
        return true;
      }
    }
    return false;
  };
  std::vector<const Entry*> chosen;
  for (size_t count = std::min<size_t>(words.size(), 2); count > 0 && chosen.empty(); --count) {
    for (const Entry& entry : entries) {
      if (names(entry, count)) chosen.push_back(&entry);
    }
  }
  if (chosen.empty()) return "";
  std::string usage = "usage:\n";
  bool remote = false;
  for (const Entry* entry : chosen) {
    // "suite list | suites": "dbload suite list | dbload suites".
    std::string text = entry->text;
    for (size_t i = 1; i < entry->names.size(); ++i) {
      if (entry->names[i].empty()) continue;  // "[--agents N | --coordinator ADDR]"
      const std::string name = absl::StrJoin(entry->names[i], " ");
      text = absl::StrReplaceAll(text, {{" | " + name, " | dbload " + name}});
    }
    absl::StrAppend(&usage, "  dbload ", text, "\n");
    // prepare and suite run take --coordinator too, and with it the link's options.
    remote = remote || entry->remote || absl::StrContains(entry->text, "--coordinator");
  }
  if (remote) absl::StrAppend(&usage, "\n", remote_options);
  return usage;
}

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
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    // Every command that talks to a coordinator takes the link's TLS and token flags too.
    bool takes_value = false;
    const bool security =
        with_value.contains("--coordinator") && IsSecurityFlag(name, &takes_value);
    if (with_value.contains(name) || (security && takes_value)) {
      if (eq != std::string::npos) {
        flags.values[name].push_back(arg.substr(eq + 1));
      } else if (i + 1 < args.size()) {
        flags.values[name].push_back(args[++i]);
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("dbload ", command, ": ", arg, " needs a value"));
      }
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

struct PlanArgs {
  std::string plan_path;
  std::vector<std::string> overrides;
  std::string report_path;
};

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

// Everything a command needs from a plan. Every failure names the plan file, and where it is
// about one field, that field's line and column.
struct LoadedPlan {
  v1::Plan plan;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Scenario> scenario;
  std::unique_ptr<db::Driver> driver;
};

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
  if (!status.ok() && !FieldOf(status)) return FieldError("workload", std::string(status.message()));
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
                                          const TargetAllowList& allow,
                                          const TargetRefuser& who) {
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

// Sends the plan through the Control API; the coordinator waits up to `wait_for_agents` for
// `min_agents` idle agents.
// `in_process`: the coordinator is this process's own (dbload run): it is known to be up, so a
// first connection attempt that fails (rarely, on a loaded machine) is retried until the
// deadline rather than reported as an unreachable coordinator.
absl::StatusOr<v1::SubmitResponse> Submit(v1::Control::Stub& stub, const std::string& coordinator,
                                          const v1::Plan& plan, const std::string& plan_path,
                                          uint32_t min_agents, Nanos wait_for_agents,
                                          bool in_process = false) {
  v1::SubmitRequest request;
  *request.mutable_plan() = plan;
  request.set_source_name(plan_path);
  request.set_min_agents(min_agents);
  request.set_wait_for_agents_ns(wait_for_agents);
  grpc::ClientContext context;
  const Nanos wait = std::max(wait_for_agents, plan.agents().wait_ns());  // as the coordinator
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(wait) +
                       std::chrono::seconds(30));
  context.set_wait_for_ready(in_process);
  v1::SubmitResponse response;
  const grpc::Status status = stub.Submit(&context, request, &response);
  if (!status.ok()) return ControlCallError(coordinator, status);
  return response;
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

// More agents than this in one process would only compete for its cores.
constexpr uint32_t kMaxLocalAgents = 64;
// How long `dbload run` waits for its own in-process agents to connect.
constexpr Nanos kLocalAgentWait = 10 * kSecond;

// The rows each query type of the plan's scenario says it adds or removes, by table
// (the workload's `changes`; empty for workloads that declare none).
std::map<std::string, std::map<std::string, int64_t>> DeclaredChanges(const v1::Plan& plan) {
  std::map<std::string, std::map<std::string, int64_t>> changes;  // query type → table → rows
  for (const v1::Scenario& scenario : plan.workload_spec().scenarios()) {
    if (scenario.name() != plan.scenario()) continue;
    for (const v1::QueryType& query_type : scenario.query_types()) {
      for (const auto& [table, rows] : query_type.changes()) changes[query_type.name()][table] = rows;
    }
  }
  return changes;
}

// COUNT(*) of each table, on a session of its own (table names are plain identifiers: the
// workload parser checks them).
absl::StatusOr<std::map<std::string, int64_t>> CountRows(db::Driver& driver,
                                                         const std::set<std::string>& tables) {
  driver.ThreadStart();
  absl::StatusOr<std::map<std::string, int64_t>> counts = std::map<std::string, int64_t>();
  if (absl::StatusOr<std::unique_ptr<db::Session>> session = driver.Connect(); !session.ok()) {
    counts = absl::Status(session.status().code(),
                          absl::StrCat("target: ", session.status().message()));
  } else {
    for (const std::string& table : tables) {
      absl::StatusOr<std::vector<std::string>> rows =
          (*session)->FetchColumn(absl::StrCat("SELECT COUNT(*) FROM ", table), 1);
      int64_t count = 0;
      if (!rows.ok() || rows->empty() || !absl::SimpleAtoi(rows->front(), &count)) {
        counts = absl::InternalError(absl::StrCat(
            "counting the rows of ", table, ": ",
            rows.ok() ? "no number returned" : std::string(rows.status().message())));
        break;
      }
      (*counts)[table] = count;
    }
  }
  driver.ThreadEnd();
  return counts;
}

// Checks that the tables changed by exactly what the report's executed transactions declare,
// and records both in the report.
absl::Status CheckRowChanges(
    const std::map<std::string, std::map<std::string, int64_t>>& declared,
    const std::map<std::string, int64_t>& before, const std::map<std::string, int64_t>& after,
    v1::RunReport& report) {
  std::map<std::string, int64_t> expected;
  for (const auto& by_query_type : declared) {
    for (const auto& table_rows : by_query_type.second) expected[table_rows.first];  // 0 at least
  }
  for (const v1::QueryTypeReport& type : report.query_types()) {
    auto it = declared.find(type.name());
    if (it == declared.end()) continue;
    for (const auto& [table, rows] : it->second) {
      expected[table] += static_cast<int64_t>(type.executed()) * rows;
    }
  }
  std::vector<std::string> mismatches;
  for (const auto& [table, rows] : expected) {
    v1::RowChange& change = *report.add_row_changes();
    change.set_table(table);
    change.set_before(before.at(table));
    change.set_after(after.at(table));
    change.set_expected(rows);
    if (change.after() - change.before() != rows) {
      mismatches.push_back(absl::StrFormat("%s changed by %+d rows, the executed transactions say %+d",
                                           table, change.after() - change.before(), rows));
    }
  }
  if (mismatches.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("the database disagrees with the report: ",
                                          absl::StrJoin(mismatches, "; ")));
}

// Where a run goes: this process's coordinator and agents (`dbload run`), or a running
// coordinator (`dbload submit --wait`, `dbload suite run --coordinator`).
struct RunVia {
  v1::Control::Stub* stub = nullptr;
  std::string address;
  uint32_t min_agents = 1;
  Nanos wait_for_agents = 0;
  LocalCluster* cluster = nullptr;  // in this process: Ctrl-C interrupts it
  // Told the run's id and agents once it is submitted (may be null).
  std::function<void(const v1::SubmitResponse&)> on_submitted;
};

// Submits a plan and follows it to its report and exit code, as `dbload run` does. `driver`
// (may be null: the run is on other machines) counts the rows of write scenarios before and
// after, to check them against the report.
int RunPlanVia(const RunVia& via, const v1::Plan& plan, db::Driver* driver,
               const std::string& source, FollowOptions options) {
  // Write scenarios that declare their row changes are checked against the database's own
  // counts. Not with a warm-up: its transactions change rows but are not in the report.
  const auto declared = DeclaredChanges(plan);
  std::set<std::string> changed_tables;
  for (const auto& by_query_type : declared) {
    for (const auto& table_rows : by_query_type.second) changed_tables.insert(table_rows.first);
  }
  std::map<std::string, int64_t> rows_before;
  const bool check_rows = driver != nullptr && !changed_tables.empty() && plan.warmup_ns() == 0;
  if (check_rows) {
    absl::StatusOr<std::map<std::string, int64_t>> counted = CountRows(*driver, changed_tables);
    if (!counted.ok()) {
      return Fail(absl::Status(counted.status().code(),
                               absl::StrCat(source, ": ", counted.status().message())));
    }
    rows_before = *std::move(counted);
  } else if (!changed_tables.empty() && driver != nullptr) {
    std::cout << "(rows changed are not checked: the warm-up's transactions change rows but are "
                 "not in the report)\n";
  }
  if (interrupted.load()) return kExitInterrupted;
  absl::StatusOr<v1::SubmitResponse> submitted =
      Submit(*via.stub, via.address, plan, source, via.min_agents, via.wait_for_agents,
             /*in_process=*/via.cluster != nullptr);
  if (!submitted.ok()) {
    if (interrupted.load()) return kExitInterrupted;
    return Fail(absl::Status(submitted.status().code(),
                             absl::StrCat(source, ": ", submitted.status().message())));
  }
  if (via.on_submitted) via.on_submitted(*submitted);
  const std::string run_id = submitted->run_id();
  options.coordinator = via.address;
  options.plan_path = source;
  options.interrupted = &interrupted;
  if (via.cluster != nullptr) {
    options.on_interrupt = [&via] { via.cluster->Interrupt(); };
  } else {
    options.on_interrupt = [&via, run_id] {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::StopRequest request;
      request.set_run_id(run_id);
      v1::StopResponse response;
      via.stub->Stop(&context, request, &response);
    };
  }
  if (check_rows) {
    options.complete_report = [&](v1::RunReport& report) -> absl::Status {
      absl::StatusOr<std::map<std::string, int64_t>> after = CountRows(*driver, changed_tables);
      if (!after.ok()) return after.status();
      return CheckRowChanges(declared, rows_before, *after, report);
    };
  }
  return FollowRun(*via.stub, run_id, options);
}

int RunCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags =
      ParseFlags("run", args, {"--set", "--report", "--agents", "--allow-target"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf("run", *flags);
  if (!allow.ok()) return Fail(allow.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf("run", *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  absl::StatusOr<uint32_t> agents =
      PositiveCount("run", "--agents", flags->Get("--agents", "1"), kMaxLocalAgents);
  if (!agents.ok()) return Fail(agents.status());
  SteadyClock clock;
  // Everything that can be checked here is, before any load: the plan, the password, the
  // target against --allow-target, the driver.
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock, *allow, RefuserOf("run"));
  if (!loaded.ok()) return Fail(loaded.status());
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(*agents, clock, *allow);
  if (!cluster.ok()) return Fail(cluster.status());
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub =
      DialControl((*cluster)->address(), (*cluster)->security());
  if (!stub.ok()) return Fail(stub.status());
  const RunVia via{.stub = stub->get(),
                   .address = (*cluster)->address(),
                   .min_agents = *agents,
                   .wait_for_agents = kLocalAgentWait,
                   .cluster = cluster->get()};
  return RunPlanVia(via, loaded->plan, loaded->driver.get(), parsed->plan_path,
                    {.report_path = parsed->report_path});
}

int SubmitCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags(
      "submit", args, {"--set", "--report", "--coordinator", "--min-agents", "--wait-for-agents"},
      {"--wait"});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf("submit", *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  const std::string coordinator = flags->Get("--coordinator");
  if (coordinator.empty())
    return Fail(absl::InvalidArgumentError("dbload submit: --coordinator ADDR is required"));
  const bool wait = flags->switches.contains("--wait");
  if (!parsed->report_path.empty() && !wait) {
    return Fail(absl::InvalidArgumentError("dbload submit: --report needs --wait"));
  }
  absl::StatusOr<uint32_t> min_agents =
      PositiveCount("submit", "--min-agents", flags->Get("--min-agents", "1"), 100000);
  if (!min_agents.ok()) return Fail(min_agents.status());
  Nanos wait_for_agents = 0;
  if (const std::string text = flags->Get("--wait-for-agents"); !text.empty()) {
    absl::StatusOr<int64_t> nanos = ParseDurationNanos(text);
    if (!nanos.ok() || *nanos < 0) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "dbload submit: --wait-for-agents: ",
          nanos.ok() ? "must not be negative" : std::string(nanos.status().message()))));
    }
    wait_for_agents = *nanos;
  }
  absl::StatusOr<TransportSecurity> security = SecurityOf("submit", *flags);
  if (!security.ok()) return Fail(security.status());
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub = DialControl(coordinator, *security);
  if (!stub.ok()) return Fail(stub.status());
  absl::StatusOr<v1::Plan> plan = ParsePlan(*parsed);
  if (!plan.ok()) return Fail(plan.status());

  if (!wait) {
    absl::StatusOr<v1::SubmitResponse> submitted =
        Submit(**stub, coordinator, *plan, parsed->plan_path, *min_agents, wait_for_agents);
    if (!submitted.ok()) {
      return Fail(absl::Status(submitted.status().code(), absl::StrCat(parsed->plan_path, ": ",
                                                                       submitted.status().message())));
    }
    std::cout << submitted->run_id() << "\n";
    return kExitOk;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  // The path of `dbload run` and `dbload suite run --coordinator`: Ctrl-C stops the run.
  const RunVia via{.stub = stub->get(),
                   .address = coordinator,
                   .min_agents = *min_agents,
                   .wait_for_agents = wait_for_agents,
                   .on_submitted = [](const v1::SubmitResponse& submitted) {
                     std::cout << "run " << submitted.run_id() << " across "
                               << submitted.agents_size() << " agent"
                               << (submitted.agents_size() == 1 ? "" : "s") << ": "
                               << absl::StrJoin(submitted.agents(), ", ") << std::endl;
                   }};
  return RunPlanVia(via, *plan, nullptr, parsed->plan_path, {.report_path = parsed->report_path});
}

// RUN (optional) and --coordinator of watch, stop, agents and report.
struct RunRef {
  std::string coordinator;
  std::string run_id;  // empty: the latest
  std::unique_ptr<v1::Control::Stub> stub;
};

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
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub =
      DialControl(ref.coordinator, *security);
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

int WatchCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("watch", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("watch", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  // Whether the run exists, and its real id, before following it.
  v1::GetReportRequest request;
  request.set_run_id(ref->run_id);
  v1::RunReport report;
  const grpc::Status found = ref->stub->GetReport(CallContext().get(), request, &report);
  if (!found.ok()) return Fail(RunCallError(*ref, found));
  FollowOptions options{.coordinator = ref->coordinator, .print_report = false};
  return FollowRun(*ref->stub, ref->run_id, options);
}

int StopCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("stop", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("stop", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  v1::StopRequest request;
  request.set_run_id(ref->run_id);
  v1::StopResponse response;
  const grpc::Status stopped = ref->stub->Stop(CallContext().get(), request, &response);
  if (!stopped.ok()) return Fail(RunCallError(*ref, stopped));
  std::cout << "stop requested for "
            << (ref->run_id.empty() ? "the latest run" : "run " + ref->run_id) << "\n";
  return kExitOk;
}

int AgentsCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("agents", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("agents", *flags, /*takes_run=*/false);
  if (!ref.ok()) return Fail(ref.status());
  v1::ListAgentsResponse response;
  const grpc::Status listed =
      ref->stub->ListAgents(CallContext().get(), v1::ListAgentsRequest(), &response);
  if (!listed.ok()) return Fail(ControlCallError(ref->coordinator, listed));
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "HOST", "CORES", "VERSION", "RUN", "CONNECTED"}};
  for (const v1::AgentInfo& agent : response.agents()) {
    rows.push_back({agent.name(), agent.host(), absl::StrCat(agent.cores()), agent.version(),
                    agent.run_id().empty() ? "-" : agent.run_id(),
                    absl::StrFormat("%.0fs", agent.connected_s())});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i],
                      i + 1 < row.size() ? std::string(widths[i] - row[i].size() + 2, ' ') : "");
    }
    std::cout << line << "\n";
  }
  if (response.agents().empty()) std::cout << "(no agents connected)\n";
  return kExitOk;
}

// The report in the format asked for (checked by ReportFormatOf).
std::string RenderReportAs(const v1::RunReport& report, const std::string& format) {
  if (format == "json") return RenderReportJson(report);
  if (format == "csv") return RenderReportCsv(report);
  if (format == "html") return RenderReportHtml(report);
  return RenderReportText(report);
}

absl::StatusOr<std::string> FormatOf(const std::string& command, const Flags& flags,
                                     const std::vector<std::string>& formats) {
  const std::string format = flags.Get("--format", formats.front());
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    return absl::InvalidArgumentError(absl::StrCat("dbload ", command, ": --format: expected ",
                                                   absl::StrJoin(formats, ", "), "; got \"",
                                                   format, "\""));
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
    return Fail(absl::Status(written.code(), absl::StrCat("dbload ", command, ": --output ",
                                                          output, ": ", written.message())));
  }
  return kExitOk;
}

const std::vector<std::string> kReportFormats = {"text", "json", "csv", "html"};

int ReportFileCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("report", args, {"--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("report", *flags, kReportFormats);
  if (!format.ok()) return Fail(format.status());
  if (flags->positional.size() != 1)
    return Fail(absl::InvalidArgumentError(
        "dbload report: give one JSON report file, or [RUN] --coordinator ADDR"));
  absl::StatusOr<ReportFile> file = LoadReportFile(flags->positional[0]);
  if (!file.ok()) return Fail(absl::Status(file.status().code(),
                                           absl::StrCat("dbload report: ", file.status().message())));
  return Emit("report", *flags, RenderReportAs(file->report, *format));
}

int ReportCommand(const std::vector<std::string>& args) {
  const bool remote = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "--coordinator" || absl::StartsWith(arg, "--coordinator=");
  });
  if (!remote) return ReportFileCommand(args);
  absl::StatusOr<Flags> flags =
      ParseFlags("report", args, {"--coordinator", "--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("report", *flags, kReportFormats);
  if (!format.ok()) return Fail(format.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("report", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  v1::GetReportRequest request;
  request.set_run_id(ref->run_id);
  v1::RunReport report;
  const grpc::Status got = ref->stub->GetReport(CallContext().get(), request, &report);
  if (!got.ok()) return Fail(RunCallError(*ref, got));
  return Emit("report", *flags, RenderReportAs(report, *format));
}

// `dbload compare A.json B.json […]`: the first report is the baseline.
int CompareCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("compare", args, {"--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("compare", *flags, {"text", "markdown", "html"});
  if (!format.ok()) return Fail(format.status());
  if (flags->positional.size() < 2) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "dbload compare: give at least 2 JSON report files (the first is the baseline), got ",
        flags->positional.size())));
  }
  std::vector<ReportFile> reports;
  for (const std::string& path : flags->positional) {
    absl::StatusOr<ReportFile> file = LoadReportFile(path);
    if (!file.ok()) {
      return Fail(absl::Status(file.status().code(),
                               absl::StrCat("dbload compare: ", file.status().message())));
    }
    reports.push_back(*std::move(file));
  }
  absl::StatusOr<Comparison> comparison = CompareReports(reports);
  if (!comparison.ok()) {
    return Fail(absl::Status(comparison.status().code(),
                             absl::StrCat("dbload compare: ", comparison.status().message())));
  }
  if (*format == "markdown") return Emit("compare", *flags, RenderComparisonMarkdown(*comparison));
  if (*format == "html") return Emit("compare", *flags, RenderComparisonHtml(*comparison, reports));
  return Emit("compare", *flags, RenderComparisonText(*comparison));
}

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


// Opens one session for set-up work (prepare, cleanup).
absl::StatusOr<std::unique_ptr<db::Session>> SetupSession(LoadedPlan& loaded,
                                                          const std::string& plan_path) {
  loaded.driver->ThreadStart();
  absl::StatusOr<std::unique_ptr<db::Session>> session = loaded.driver->Connect();
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat(plan_path, ": target: ", session.status().message()));
  }
  return session;
}

// Step 2 of a split prepare: a prepare-only run (plan.prepare_only) on a coordinator, with one
// closed-loop client per part, so that the planner hands each agent a share of the parts.
// `local_agents` > 0: a coordinator and that many agents in this process instead.
int LoadPartsOnAgents(const LoadedPlan& loaded, const PlanArgs& args,
                      const std::string& coordinator, const TransportSecurity& security,
                      uint32_t local_agents, uint32_t parts, Clock& clock,
                      const TargetAllowList& allow) {
  v1::Plan plan = loaded.plan;
  plan.set_prepare_only(true);
  plan.clear_stages();
  plan.clear_abort();
  plan.clear_agents();
  plan.set_warmup_ns(0);
  plan.mutable_load()->mutable_closed()->set_clients(parts);
  plan.mutable_load()->mutable_closed()->set_think_time_ns(0);
  plan.mutable_target()->set_pool(parts);
  plan.mutable_stop()->Clear();
  // Bounded like every run; loading that takes longer is resumed by running prepare again.
  plan.mutable_stop()->set_duration_ns(24 * 3600 * kSecond);

  std::unique_ptr<LocalCluster> cluster;
  std::string address = coordinator;
  TransportSecurity link_security = security;
  if (local_agents > 0) {
    absl::StatusOr<std::unique_ptr<LocalCluster>> started =
        LocalCluster::Start(local_agents, clock, allow);
    if (!started.ok()) return Fail(started.status());
    cluster = *std::move(started);
    address = cluster->address();
    link_security = cluster->security();
  }
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub = DialControl(address, link_security);
  if (!stub.ok()) return Fail(stub.status());
  absl::StatusOr<v1::SubmitResponse> submitted =
      Submit(**stub, address, plan, args.plan_path, std::max<uint32_t>(1, local_agents),
             local_agents > 0 ? kLocalAgentWait : 0, /*in_process=*/local_agents > 0);
  if (!submitted.ok()) {
    return Fail(absl::Status(submitted.status().code(),
                             absl::StrCat(args.plan_path, ": ", submitted.status().message())));
  }
  std::cout << "loading " << parts << " parts on " << submitted->agents_size() << " agent"
            << (submitted->agents_size() == 1 ? "" : "s") << " (run " << submitted->run_id()
            << ")" << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  FollowOptions options{.coordinator = address,
                        .plan_path = args.plan_path,
                        .print_intervals = false,
                        .print_report = false,
                        .interrupted = &interrupted};
  if (cluster != nullptr) options.on_interrupt = [&cluster] { cluster->Interrupt(); };
  return FollowRun(**stub, submitted->run_id(), options);
}

int CleanupData(LoadedPlan& loaded, const std::string& source);
int PrepareData(LoadedPlan& loaded, const std::string& source, Clock& clock, uint32_t parallel,
                const std::function<int()>& load_parts);

int PrepareCommand(const std::vector<std::string>& args, bool cleanup) {
  const char* name = cleanup ? "cleanup" : "prepare";
  std::set<std::string> with_value = {"--set", "--allow-target"};
  if (!cleanup) with_value.insert({"--parallel", "--agents", "--coordinator"});
  absl::StatusOr<Flags> flags = ParseFlags(name, args, with_value, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf(name, *flags);
  if (!allow.ok()) return Fail(allow.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf(name, *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  const std::string coordinator = flags->Get("--coordinator");
  absl::StatusOr<uint32_t> agents =
      PositiveCount(name, "--agents", flags->Get("--agents", "0"), kMaxLocalAgents);
  const bool split = !coordinator.empty() || flags->Get("--agents", "0") != "0";
  if (flags->Get("--agents", "0") != "0" && !agents.ok()) return Fail(agents.status());
  if (!coordinator.empty() && flags->Get("--agents", "0") != "0") {
    return Fail(absl::InvalidArgumentError(
        "dbload prepare: --agents (in this process) and --coordinator exclude each other"));
  }
  absl::StatusOr<TransportSecurity> security = SecurityOf(name, *flags);
  if (!security.ok()) return Fail(security.status());
  // By default one part per local agent, or per core of this machine (client-side generation
  // and the server's inserts then overlap; more parts than cores only adds contention).
  const uint32_t cores = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  const std::string default_parallel =
      split && coordinator.empty() ? absl::StrCat(*agents) : absl::StrCat(cores);
  absl::StatusOr<uint32_t> parallel = PositiveCount(
      name, "--parallel", flags->Get("--parallel", default_parallel), kMaxLoadParallel);
  if (!parallel.ok()) return Fail(parallel.status());
  SteadyClock clock;
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock, *allow, RefuserOf(name));
  if (!loaded.ok()) return Fail(loaded.status());
  if (cleanup) return CleanupData(*loaded, parsed->plan_path);
  std::function<int()> load_parts;
  if (split) {
    load_parts = [&] {
      return LoadPartsOnAgents(*loaded, *parsed, coordinator, *security,
                               coordinator.empty() ? *agents : 0, *parallel, clock, *allow);
    };
  }
  return PrepareData(*loaded, parsed->plan_path, clock, *parallel, load_parts);
}

// `dbload cleanup` of a loaded plan: drops the tables its prepare created.
int CleanupData(LoadedPlan& loaded, const std::string& source) {
  absl::StatusOr<std::unique_ptr<db::Session>> session = SetupSession(loaded, source);
  if (!session.ok()) return Fail(session.status());
  const absl::Status status = DropWorkloadData(loaded.workload->DataSpec(), **session);
  session->reset();
  loaded.driver->ThreadEnd();
  if (!status.ok()) {
    return Fail(absl::Status(status.code(),
                             absl::StrCat(source, ": cleanup: ", status.message())));
  }
  return kExitOk;
}

// `dbload prepare` of a loaded plan, `parallel` parts; `load_parts` (may be null) has agents
// load the parts between the set-up here and the rest (indexes, checks), and returns its exit
// code.
int PrepareData(LoadedPlan& loaded, const std::string& source, Clock& clock, uint32_t parallel,
                const std::function<int()>& load_parts) {
  absl::Status status;
  const bool split = load_parts != nullptr;
  {
    const Nanos start = clock.Now();
    Nanos last_print = 0;
    // Per table: when its first report came and how many rows it had then (a resumed load
    // starts part-way), for its own rate and ETA.
    std::map<std::string, std::pair<Nanos, uint64_t>> table_start;
    const auto print_progress = [&](const PrepareProgress& p) {
          if (!p.note.empty()) {
            std::cout << p.note << std::endl;
            return;
          }
          const Nanos now = clock.Now();
          auto [first, inserted] = table_start.try_emplace(p.table, now, p.rows_done);
          if (now - last_print < kSecond && p.rows_done < p.rows_total && !inserted) return;
          last_print = now;
          const double seconds = static_cast<double>(now - first->second.first) / kSecond;
          const double rate =
              seconds > 0 ? static_cast<double>(p.rows_done - first->second.second) / seconds : 0;
          std::string eta;
          if (p.rows_done < p.rows_total && rate > 0) {
            eta = absl::StrFormat(", ETA %.0f s",
                                  static_cast<double>(p.rows_total - p.rows_done) / rate);
          }
          std::cout << absl::StrFormat("%s: %d / %d rows", p.table, p.rows_done, p.rows_total);
          if (seconds > 0) std::cout << absl::StrFormat(" (%.0f rows/s%s)", rate, eta);
          std::cout << std::endl;
        };
    const v1::WorkloadSpec data = loaded.workload->DataSpec();
    if (split) {
      // 1. Here: record the parts and create the tables; 2. the agents load the parts; 3. here
      // again: the parts are found done, and the indexes, after_load steps and checks follow.
      status = LoadWorkloadData(data, *loaded.driver,
                                {.parallel = static_cast<int>(parallel),
                                 .stage = LoadOptions::Stage::kSetUpOnly},
                                print_progress);
      if (status.ok()) {
        const int code = load_parts();
        if (code != kExitOk) return code;
      }
    }
    if (status.ok()) {
      // Ctrl-C (where a handler is installed: dbload suite run) stops between batches; a rerun
      // resumes.
      status = LoadWorkloadData(
          data, *loaded.driver,
          {.parallel = static_cast<int>(parallel), .should_stop = [] { return interrupted.load(); }},
          print_progress);
    }
    if (status.ok()) {
      std::cout << absl::StrFormat("prepared in %.1f s (row counts and checks validated)\n",
                                   static_cast<double>(clock.Now() - start) / kSecond);
    }
  }
  if (!status.ok())
    return Fail(absl::Status(status.code(), absl::StrCat(source, ": prepare: ", status.message())));
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// dbload suite: runs of a suite through the same code as prepare, run / submit --wait, cleanup.

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
    const uint32_t parallel = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
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
      return RunPlanVia(via_, resolved, nullptr, plan.name(), options);
    }
    absl::StatusOr<LoadedPlan> loaded = Load(plan);
    if (!loaded.ok()) return Fail(loaded.status());
    return RunPlanVia(via_, loaded->plan, loaded->driver.get(), plan.name(), options);
  }

 private:
  absl::StatusOr<LoadedPlan> Load(const v1::Plan& plan) {
    v1::Plan resolved = plan;
    if (absl::Status status = ResolveWorkloadAt(resolved, base_dir_); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat(plan.name(), ": ", status.message()));
    }
    return LoadParsedPlan(std::move(resolved), plan.name(), clock_, allow_,
                          RefuserOf("suite run"));
  }

  RunVia via_;
  bool local_;
  std::string base_dir_;
  Clock& clock_;
  TargetAllowList allow_;
};

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
    return absl::NotFoundError(absl::StrCat("dbload ", command, ": no suite file or built-in suite ",
                                            arg, " (built-in: ", absl::StrJoin(names, ", "), ")"));
  }
  *source = arg;
  *base_dir = std::filesystem::path(arg).parent_path().string();
  options.check = WorkloadKnowsIt(*base_dir);
  return LoadSuiteFile(arg, options);
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
  absl::StatusOr<Flags> flags = ParseFlags(
      "suite run", args,
      {"--set", "--scale", "--time-scale", "--agents", "--coordinator", "--min-agents",
       "--wait-for-agents", "--out", "--allow-target"},
      {"--resume"});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf("suite run", *flags);
  if (!allow.ok()) return Fail(allow.status());
  std::string source, base_dir;
  absl::StatusOr<v1::Suite> suite = LoadSuiteArg("suite run", *flags, &source, &base_dir);
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
  Nanos wait_for_agents = 0;
  if (const std::string text = flags->Get("--wait-for-agents"); !text.empty()) {
    absl::StatusOr<int64_t> nanos = ParseDurationNanos(text);
    if (!nanos.ok() || *nanos < 0) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "dbload suite run: --wait-for-agents: ",
          nanos.ok() ? "must not be negative" : std::string(nanos.status().message()))));
    }
    wait_for_agents = *nanos;
  }
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
                                    .interrupted = &interrupted,
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
  if (coordinator.empty() || suite->settings().prepare() == "once" || suite->settings().cleanup()) {
    for (int t = 0; t < suite->targets_size(); ++t) {
      if (absl::StatusOr<std::string> password = ReadTargetPassword(suite->targets(t).target());
          !password.ok()) {
        return Fail(absl::Status(password.status().code(),
                                 absl::StrCat(source, ": targets.", t, " (",
                                              suite->targets(t).name(), "): ",
                                              password.status().message())));
      }
    }
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
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
    absl::StatusOr<std::unique_ptr<v1::Control::Stub>> dialled = DialControl(coordinator, *security);
    if (!dialled.ok()) return Fail(dialled.status());
    stub = *std::move(dialled);
    via = {.stub = stub.get(),
           .address = coordinator,
           .min_agents = *min_agents,
           .wait_for_agents = wait_for_agents};
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
    absl::StatusOr<v1::Suite> suite = LoadSuiteArg("suite check", *flags, &source, &base_dir);
    if (!suite.ok()) return Fail(suite.status());
    std::cout << source << ": suite " << suite->name() << ", " << SuiteSummary(*suite) << "\n";
    return kExitOk;
  }
  return Fail(absl::InvalidArgumentError(
      "dbload suite: expected `dbload suite run SUITE [...]`, `dbload suite check SUITE "
      "[--set PATH=VALUE ...] [--scale X] [--time-scale T]`, `dbload suite report DIR [...]` or "
      "`dbload suite list`"));
}

int WorkloadsCommand() {
  for (const std::string& name : BuiltinWorkloadNames()) {
    v1::Plan plan;
    plan.set_workload(name);
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(plan);
    if (!workload.ok()) {
      std::cout << name << ": " << workload.status().message() << "\n";
      continue;
    }
    std::cout << name << ":";
    for (const std::string& scenario : (*workload)->ScenarioNames()) std::cout << " " << scenario;
    std::cout << "\n";
  }
  return kExitOk;
}

// `dbload workload check FILE [--set option=value …]`: parses and checks a workload file.
int WorkloadCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "check") {
    return Fail(absl::InvalidArgumentError(
        "dbload workload: expected `dbload workload check FILE [--set option=value ...]`"));
  }
  absl::StatusOr<Flags> flags =
      ParseFlags("workload check", {args.begin() + 1, args.end()}, {"--set"}, {});
  if (!flags.ok()) return Fail(flags.status());
  if (flags->positional.size() != 1) {
    return Fail(absl::InvalidArgumentError("dbload workload check: expected one workload file"));
  }
  std::map<std::string, std::string> options;
  for (const std::string& set : flags->All("--set")) {
    const size_t equals = set.find('=');
    if (equals == std::string::npos) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("dbload workload check: --set ", set, ": expected option=value")));
    }
    options[set.substr(0, equals)] = set.substr(equals + 1);
  }
  const std::string& path = flags->positional[0];
  absl::StatusOr<v1::WorkloadSpec> spec = BuiltinWorkloadFiles().contains(path)
                                              ? ResolveWorkload(path, options)
                                              : LoadWorkloadFile(path, options);
  if (!spec.ok()) {
    const std::optional<std::string> field = FieldOf(spec.status());
    return Fail(absl::Status(spec.status().code(),
                             field ? absl::StrCat(path, ": --set ", field->substr(17), ": ",
                                                  spec.status().message())
                                   : std::string(spec.status().message())));
  }
  std::cout << path << ": workload " << spec->name() << ", " << spec->tables_size()
            << " tables, " << spec->scenarios_size() << " scenarios:";
  for (const v1::Scenario& scenario : spec->scenarios()) std::cout << " " << scenario.name();
  std::cout << "\n";
  return kExitOk;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  // --help or -h anywhere after a command asks for that command's usage, whatever else is given.
  if (std::find_if(args.begin(), args.end(),
                   [](const std::string& arg) { return arg == "--help" || arg == "-h"; }) !=
          args.end() ||
      (command == "help" && !args.empty())) {
    std::vector<std::string> words;
    if (command != "help") words.push_back(command);
    for (const std::string& arg : args) {
      if (words.size() == 2 || absl::StartsWith(arg, "-")) break;
      words.push_back(arg);
    }
    const std::string usage = words.empty() ? "" : CommandUsage(words);
    if (usage.empty()) {
      std::cerr << "dbload: unknown command '" << (words.empty() ? command : words[0]) << "'\n\n"
                << kUsage;
      return kExitUsage;
    }
    std::cout << usage;
    return kExitOk;
  }
  if (command == "run") return RunCommand(args);
  if (command == "prepare") return PrepareCommand(args, /*cleanup=*/false);
  if (command == "cleanup") return PrepareCommand(args, /*cleanup=*/true);
  if (command == "report") return ReportCommand(args);
  if (command == "compare") return CompareCommand(args);
  if (command == "submit") return SubmitCommand(args);
  if (command == "watch") return WatchCommand(args);
  if (command == "stop") return StopCommand(args);
  if (command == "agents") return AgentsCommand(args);
  if (command == "workloads") return WorkloadsCommand();
  if (command == "suite") return SuiteCommand(args);
  if (command == "suites") return SuiteListCommand();
  if (command == "workload") return WorkloadCommand(args);
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
