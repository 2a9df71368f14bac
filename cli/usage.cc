#include "cli/usage.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace dbload::cli {

const char kUsage[] = R"(usage: dbload COMMAND [ARGS]

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
        warm-up runs and repetitions, as plans, in order; prepare once per target (or per case:
        settings.prepare per_case), cleanup if asked. A line as each run starts and ends, and inside it one every 10 s of the run at
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
lost_agents, bounds what it ran uncounted; a suite: some run degraded, none failed); 5 an
invariant of the workload was broken (the report's Invariants); 130 interrupted or stopped.
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

}  // namespace dbload::cli
