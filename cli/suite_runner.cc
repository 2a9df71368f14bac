#include "cli/suite_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/control_client.h"
#include "common/report.h"
#include "common/suite_parser.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

std::string Eta(int64_t nanos) {
  const int64_t seconds = (nanos + 999'999'999) / 1'000'000'000;
  if (seconds >= 3600) return absl::StrFormat("%dh%02dm", seconds / 3600, seconds / 60 % 60);
  if (seconds >= 60) return absl::StrFormat("%dm%02ds", seconds / 60, seconds % 60);
  return absl::StrFormat("%ds", seconds);
}

std::string Label(const v1::Suite& suite, const v1::SuiteRun& run) {
  std::string point = "plan";
  for (const v1::SuiteCase& suite_case : suite.cases()) {
    if (suite_case.name() == run.case_name()) point = FormatSuitePoint(suite_case, run.point());
  }
  return absl::StrCat(run.target(), "/", run.case_name(), "/", point);
}

// The state a run ended in, from dbload's exit code for it (the report's state can say
// "finished" for a run whose row check then failed).
std::string StateOf(int exit_code) {
  switch (exit_code) {
    case kExitOk:
      return "finished";
    case kExitAborted:
      return "aborted";
    case kExitDegraded:
      return "degraded";
    case kExitInterrupted:
      return "interrupted";
    default:
      return "failed";
  }
}

absl::StatusOr<v1::RunReport> ReadReport(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("no report at ", path));
  std::stringstream text;
  text << file.rdbuf();
  return ParseReportJson(text.str());
}

// Distinct workloads (with their options) of the suite's cases, each as the plan of its first
// case on `target`: what prepare and cleanup work on.
std::vector<v1::Plan> DataPlans(const v1::Suite& suite, const std::vector<v1::SuiteRun>& runs,
                                const std::string& target, std::ostream& out) {
  std::vector<v1::Plan> plans;
  std::set<std::string> seen;
  for (const v1::SuiteRun& run : runs) {
    if (run.target() != target) continue;
    absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, run);
    if (!plan.ok()) {
      out << "suite: " << plan.status().message() << std::endl;
      continue;
    }
    std::string key = plan->workload();
    for (const auto& [name, value] : std::map<std::string, std::string>(
             plan->workload_options().begin(), plan->workload_options().end())) {
      absl::StrAppend(&key, " ", name, "=", value);
    }
    if (seen.insert(key).second) plans.push_back(*std::move(plan));
  }
  return plans;
}

}  // namespace

bool SuiteRunDone(const v1::SuiteRun& run) {
  return run.state() == "finished" || run.state() == "aborted" || run.state() == "degraded";
}

int RunSuite(const v1::Suite& suite, const SuiteRunOptions& options, SuiteExecutor& executor) {
  std::ostream& out = *options.out;
  namespace fs = std::filesystem;
  const std::string index_path = (fs::path(options.directory) / "suite.json").string();
  auto fail = [&](const std::string& message) {
    out << "dbload: suite: " << message << std::endl;
    return kExitUsage;
  };

  v1::SuiteIndex index;
  std::error_code error;
  if (fs::exists(index_path, error)) {
    if (!options.resume) {
      return fail(absl::StrCat(options.directory,
                               " already holds a suite (suite.json); --resume continues it, or "
                               "choose another --out"));
    }
    absl::StatusOr<v1::SuiteIndex> recorded = LoadSuiteIndex(index_path);
    if (!recorded.ok()) return fail(std::string(recorded.status().message()));
    if (absl::Status same = MatchSuites(recorded->suite(), suite); !same.ok()) {
      return fail(absl::StrCat("--resume ", options.directory, ": ", same.message()));
    }
    index = *std::move(recorded);
    // The runs as this suite expands them, with what the index knows of each.
    const std::vector<v1::SuiteRun> expected = ExpandSuite(suite);
    if (static_cast<size_t>(index.runs_size()) != expected.size()) {
      return fail(absl::StrCat(index_path, " lists ", index.runs_size(), " runs, the suite has ",
                               expected.size()));
    }
  } else {
    if (options.resume) {
      out << "suite: nothing to resume in " << options.directory << "; starting it" << std::endl;
    }
    fs::create_directories(options.directory, error);
    if (error) {
      return fail(absl::StrCat("cannot create ", options.directory, ": ", error.message()));
    }
    index.set_format_version(kSuiteIndexFormat);
    *index.mutable_suite() = suite;
    for (v1::SuiteRun& run : ExpandSuite(suite)) *index.add_runs() = std::move(run);
    index.set_started_at(options.now());
  }
  index.clear_finished_at();
  auto save = [&]() -> bool {
    if (absl::Status saved = SaveSuiteIndex(index_path, index); !saved.ok()) {
      out << "dbload: suite: " << saved.message() << std::endl;
      return false;
    }
    return true;
  };
  if (!save()) return kExitUsage;

  const std::vector<v1::SuiteRun> runs(index.runs().begin(), index.runs().end());
  // Planned durations, for the ETA of what is left.
  std::vector<int64_t> planned(runs.size(), 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, runs[i]);
    if (plan.ok()) planned[i] = PlannedRunNanos(*plan);
  }
  auto remaining = [&](size_t from) {
    int64_t total = 0;
    bool unknown = false;
    for (size_t i = from; i < runs.size(); ++i) {
      if (SuiteRunDone(index.runs(i))) continue;
      total += planned[i];
      unknown = unknown || planned[i] == 0;
    }
    return absl::StrCat("ETA ", Eta(total), unknown ? " + runs of unknown length" : "");
  };

  bool some_failed = false;
  bool some_degraded = false;  // finished, but lost an agent
  for (size_t first = 0; first < runs.size();) {
    const std::string target = runs[first].target();
    size_t end = first;
    while (end < runs.size() && runs[end].target() == target) ++end;
    bool untouched = true;
    bool any_left = false;
    for (size_t i = first; i < end; ++i) {
      untouched = untouched && index.runs(i).state() == "pending";
      any_left = any_left || !SuiteRunDone(index.runs(i));
    }
    if (!any_left) {
      first = end;
      continue;
    }
    const std::vector<v1::Plan> data = DataPlans(suite, runs, target, out);
    bool prepared = true;
    if (suite.settings().prepare() == "once" && untouched) {
      for (const v1::Plan& plan : data) {
        if (options.interrupted->load()) break;
        out << "suite: preparing " << plan.workload() << " on " << target << std::endl;
        if (absl::Status status = executor.Prepare(plan); !status.ok()) {
          out << "suite: prepare on " << target << " failed: " << status.message()
              << "; its runs are skipped" << std::endl;
          prepared = false;
          break;
        }
      }
    }
    if (options.interrupted->load()) {
      save();
      return kExitInterrupted;
    }
    for (size_t i = first; i < end; ++i) {
      v1::SuiteRun& run = *index.mutable_runs(static_cast<int>(i));
      if (SuiteRunDone(run)) continue;
      if (!prepared) {
        run.set_state("failed");
        some_failed = true;
        continue;
      }
      if (options.interrupted->load()) {
        save();
        return kExitInterrupted;
      }
      out << "suite: run " << i + 1 << " of " << runs.size() << ": " << Label(suite, run)
          << (run.discarded() ? absl::StrCat(" (warm-up, discarded)")
                              : absl::StrCat(" (rep ", run.repetition(), ")"))
          << ", " << remaining(i) << std::endl;
      const std::string report_path = (fs::path(options.directory) / run.report()).string();
      fs::create_directories(fs::path(report_path).parent_path(), error);
      absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, run);
      int code = kExitUsage;
      if (!plan.ok()) {
        out << "suite: " << plan.status().message() << std::endl;
      } else {
        fs::remove(report_path, error);  // a report there is an earlier attempt's
        code = executor.Run(*plan, report_path);
      }
      run.set_state(options.interrupted->load() ? "interrupted" : StateOf(code));
      absl::StatusOr<v1::RunReport> report = ReadReport(report_path);
      run.set_run_id(report.ok() ? report->run_id() : "");
      if (report.ok()) {
        out << absl::StrFormat("suite: %s %s: executed %d, %.0f/s, p99 %.3f ms, errors %d",
                               Label(suite, run), run.state(), report->executed(),
                               report->actual_rate(), report->response_time().p99_ms(),
                               report->errors())
            << std::endl;
      } else {
        out << "suite: " << Label(suite, run) << " " << run.state() << " (no report)" << std::endl;
      }
      if (!save()) return kExitUsage;
      if (run.state() == "interrupted") return kExitInterrupted;
      if (run.state() == "degraded") {
        some_degraded = true;  // its report stands, marked; the suite goes on
      } else if (run.state() != "finished") {
        some_failed = true;
      }
    }
    if (suite.settings().cleanup() && prepared) {
      for (const v1::Plan& plan : data) {
        out << "suite: cleaning up " << plan.workload() << " on " << target << std::endl;
        if (absl::Status status = executor.Cleanup(plan); !status.ok()) {
          out << "suite: cleanup on " << target << " failed: " << status.message() << std::endl;
          some_failed = true;
        }
      }
    }
    first = end;
  }
  index.set_finished_at(options.now());
  if (!save()) return kExitUsage;
  int finished = 0;
  for (const v1::SuiteRun& run : index.runs()) finished += run.state() == "finished";
  out << "suite: " << suite.name() << ": " << finished << " of " << index.runs_size()
      << " runs finished; index " << index_path << std::endl;
  // Degraded runs of an earlier invocation (--resume does not run them again) count too.
  for (const v1::SuiteRun& run : index.runs()) some_degraded |= run.state() == "degraded";
  if (some_failed) return kExitRunFailed;
  return some_degraded ? kExitDegraded : kExitOk;
}

}  // namespace dbload
