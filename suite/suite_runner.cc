#include "suite/suite_runner.h"

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
#include "base/percentile_interval.h"
#include "process/exit_codes.h"
#include "proto/run_outcome.h"
#include "report/report.h"
#include "suite/suite_index.h"
#include "suite/suite_parser.h"
#include "suite/suite_runs.h"

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
v1::SuiteRunState StateOf(int exit_code) {
  switch (exit_code) {
    case kExitOk:
      return v1::SUITE_RUN_STATE_FINISHED;
    case kExitAborted:
      return v1::SUITE_RUN_STATE_ABORTED;
    case kExitDegraded:
      return v1::SUITE_RUN_STATE_DEGRADED;
    case kExitInterrupted:
      return v1::SUITE_RUN_STATE_INTERRUPTED;
    default:
      return v1::SUITE_RUN_STATE_FAILED;
  }
}

// "1,234,567": whole numbers, grouped.
std::string Grouped(double value) {
  const std::string digits = absl::StrFormat("%.0f", std::max(0.0, value));
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(digits[i]);
  }
  return grouped;
}

// "40 s" under 2 minutes ("0.5 s" under one), else "12 min" (rounded up: a plan's length is
// not undersold).
std::string Span(double seconds) {
  if (seconds < 1) return absl::StrFormat("%.1f s", seconds);
  if (seconds < 120) return absl::StrFormat("%.0f s", seconds);
  return absl::StrFormat("%.0f min", std::ceil(seconds / 60));
}

// "16 clients", "1 client", "2,500/s", or "" for a case's own load.
std::string PointWords(const v1::SuiteCase& suite_case, double point) {
  if (suite_case.points().empty()) return "";
  if (suite_case.plan().load().has_open()) {
    return point >= 100 ? absl::StrCat(Grouped(point), "/s") : absl::StrFormat("%g/s", point);
  }
  return absl::StrFormat("%g client%s", point, point == 1 ? "" : "s");
}

// One run's progress lines, from its per-second samples: one when kSuiteProgressEvery of the
// run's own time passed since the last (the samples' clock, so the pace is the run's, whatever
// the wall clock does), and the last sample's at the end if it was not shown. The rate and p99
// are the last second's (a p99 is never averaged over seconds), errors count the whole run.
class RunProgress {
 public:
  RunProgress(std::ostream& out, std::string head, const v1::Plan& plan)
      : out_(out), head_(std::move(head)), plan_(plan), planned_(PlannedRunLength(plan)) {}

  void Add(const v1::IntervalSample& sample) {
    errors_ += sample.errors();
    last_ = sample;
    received_ = true;
    shown_ = false;
    if (sample.elapsed_s() >= shown_at_ + kSuiteProgressEvery) Show();
  }

  void Finish() {
    if (received_ && !shown_) Show();
  }

 private:
  void Show() {
    const v1::IntervalSample& s = last_;
    std::string line = absl::StrCat(head_, ": ", Span(s.elapsed_s()));
    if (planned_.nanos > 0) {
      absl::StrAppend(&line, " of ", planned_.bound ? "at most " : "",
                      Span(static_cast<double>(planned_.nanos) / 1e9));
    }
    if (s.warmup()) absl::StrAppend(&line, " (warm-up)");
    if (s.stage() > 0) {
      const bool knee = static_cast<int>(s.stage()) <= plan_.stages_size() &&
                        plan_.stages(static_cast<int>(s.stage()) - 1).has_knee();
      absl::StrAppend(&line, ", stage ", s.stage(), knee ? " (knee search)" : "", " at ",
                      plan_.load().has_open()
                          ? absl::StrCat(Grouped(s.target_rate()), "/s")
                          : absl::StrCat(s.clients(), s.clients() == 1 ? " client" : " clients"));
    }
    const uint64_t n = s.executed();
    const uint64_t beyond_p99 =
        n - std::min<uint64_t>(n, static_cast<uint64_t>(std::ceil(0.99 * static_cast<double>(n))));
    absl::StrAppend(&line, ", ", Grouped(s.achieved_rate()), " tx/s, p99 ", FormatMs(s.p99_ms()),
                    n > 0 && beyond_p99 < kFewSamplesBeyond ? "*" : "", " ms, ", errors_,
                    errors_ == 1 ? " error" : " errors");
    out_ << line << std::endl;
    shown_ = true;
    shown_at_ = s.elapsed_s();
  }

  std::ostream& out_;
  const std::string head_;
  const v1::Plan& plan_;
  const PlannedLength planned_;
  v1::IntervalSample last_;
  bool received_ = false;
  bool shown_ = false;
  double shown_at_ = 0;
  uint64_t errors_ = 0;
};

// How the suite was read, as recorded (0: an index from before they were recorded, or none).
double RecordedScale(double scale) { return scale == 0 ? 1 : scale; }

std::string SetsText(const std::vector<std::string>& sets) {
  if (sets.empty()) return "no --set";
  std::vector<std::string> quoted;
  for (const std::string& set : sets) quoted.push_back(absl::StrCat("--set ", set));
  return absl::StrJoin(quoted, " ");
}

absl::StatusOr<v1::RunReport> ReadReport(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("no report at ", path));
  std::stringstream text;
  text << file.rdbuf();
  return ParseReportJson(text.str());
}

// Distinct workloads (with their options) of runs [first, end) of one target, each as the plan
// of its first run: what prepare and cleanup work on.
std::vector<v1::Plan> DataPlans(const v1::Suite& suite, const std::vector<v1::SuiteRun>& runs,
                                size_t first, size_t end, std::ostream& out) {
  std::vector<v1::Plan> plans;
  std::set<std::string> seen;
  for (size_t i = first; i < end; ++i) {
    absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, runs[i]);
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

// The end of the block of runs that share prepared data from `first`: the target's runs with
// prepare "once" (or "none"), the case's runs on that target with "per_case".
size_t DataBlockEnd(const v1::Suite& suite, const std::vector<v1::SuiteRun>& runs, size_t first) {
  const bool per_case = suite.settings().prepare() == kSuitePreparePerCase;
  size_t end = first;
  while (end < runs.size() && runs[end].target() == runs[first].target() &&
         (!per_case || runs[end].case_name() == runs[first].case_name())) {
    ++end;
  }
  return end;
}

}  // namespace

bool SuiteRunDone(const v1::SuiteRun& run) {
  const v1::SuiteRunState state = SuiteRunStateOf(run);
  return state == v1::SUITE_RUN_STATE_FINISHED || state == v1::SUITE_RUN_STATE_ABORTED ||
         state == v1::SUITE_RUN_STATE_DEGRADED;
}

absl::Status CheckSuiteDirectory(const v1::Suite& suite, const SuiteRunOptions& options) {
  namespace fs = std::filesystem;
  const std::string index_path = (fs::path(options.directory) / "suite.json").string();
  std::error_code error;
  if (!fs::exists(index_path, error)) {
    if (fs::exists(options.directory, error) && !fs::is_directory(options.directory, error)) {
      return absl::FailedPreconditionError(
          absl::StrCat("--out ", options.directory, " is a file, not a directory"));
    }
    return absl::OkStatus();
  }
  if (!options.resume) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.directory,
                     " already holds a suite (suite.json); --resume continues it, or choose "
                     "another --out"));
  }
  absl::StatusOr<v1::SuiteIndex> recorded = LoadSuiteIndex(index_path);
  if (!recorded.ok()) return recorded.status();
  const std::string resume = absl::StrCat("--resume ", options.directory, ": ");
  // How it was read first: a different --set may still give the same suite, but not the same
  // intent, and "--scale 1 -> 2" says more than the rates it changed.
  auto differs = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(
        resume, "the suite was run with ", what, "; run it the same way, or choose another --out"));
  };
  const double scale = RecordedScale(recorded->scale());
  const double time_scale = RecordedScale(recorded->time_scale());
  if (scale != options.scale) {
    return differs(absl::StrFormat("--scale %g, not %g", scale, options.scale));
  }
  if (time_scale != options.time_scale) {
    return differs(absl::StrFormat("--time-scale %g, not %g", time_scale, options.time_scale));
  }
  const std::vector<std::string> sets(recorded->overrides().begin(), recorded->overrides().end());
  if (sets != options.overrides) {
    return differs(absl::StrCat(SetsText(sets), ", not ", SetsText(options.overrides)));
  }
  if (absl::Status same = MatchSuites(recorded->suite(), suite); !same.ok()) {
    return absl::Status(same.code(), absl::StrCat(resume, same.message()));
  }
  const size_t expected = ExpandSuite(suite).size();
  if (static_cast<size_t>(recorded->runs_size()) != expected) {
    return absl::FailedPreconditionError(absl::StrCat(index_path, " lists ", recorded->runs_size(),
                                                      " runs, the suite has ", expected));
  }
  return absl::OkStatus();
}

std::string DescribePlannedLoad(const v1::Suite& suite) {
  const std::vector<v1::SuiteRun> runs = ExpandSuite(suite);
  int64_t total = 0;
  bool bound = false;
  size_t unknown = 0;
  for (const v1::SuiteRun& run : runs) {
    absl::StatusOr<v1::Plan> plan = PlanOfRun(suite, run);
    const PlannedLength length = plan.ok() ? PlannedRunLength(*plan) : PlannedLength();
    total += length.nanos;
    bound = bound || length.bound;
    unknown += length.nanos == 0;
  }
  std::string text = absl::StrCat(runs.size(), runs.size() == 1 ? " run" : " runs");
  if (unknown == runs.size()) return absl::StrCat(text, " of unknown length");
  absl::StrAppend(&text, ", ", bound ? "at most " : "about ",
                  Span(static_cast<double>(total) / 1e9), " of load planned");
  if (unknown > 0) {
    absl::StrAppend(&text, " + ", unknown, unknown == 1 ? " run" : " runs",
                    " of unknown length (a closed loop ended by its query count)");
  }
  if (bound) {
    absl::StrAppend(&text,
                    " (a bound: a knee search ends at its knee, a closed loop at its query "
                    "count, often well before)");
  }
  return text;
}

int RunSuite(const v1::Suite& suite, const SuiteRunOptions& options, SuiteExecutor& executor) {
  std::ostream& out = *options.out;
  namespace fs = std::filesystem;
  const std::string index_path = (fs::path(options.directory) / "suite.json").string();
  auto fail = [&](const std::string& message) {
    out << "dbload: suite: " << message << std::endl;
    return kExitUsage;
  };

  if (absl::Status usable = CheckSuiteDirectory(suite, options); !usable.ok()) {
    return fail(std::string(usable.message()));  // refused: nothing written
  }
  v1::SuiteIndex index;
  std::error_code error;
  if (options.resume && fs::exists(index_path, error)) {
    absl::StatusOr<v1::SuiteIndex> recorded = LoadSuiteIndex(index_path);
    if (!recorded.ok()) return fail(std::string(recorded.status().message()));
    index = *std::move(recorded);
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
    index.set_scale(options.scale);
    index.set_time_scale(options.time_scale);
    for (const std::string& set : options.overrides) index.add_overrides(set);
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
  const bool per_case = suite.settings().prepare() == kSuitePreparePerCase;
  for (size_t first = 0; first < runs.size();) {
    const std::string target = runs[first].target();
    const size_t end = DataBlockEnd(suite, runs, first);
    bool untouched = true;
    bool any_left = false;
    for (size_t i = first; i < end; ++i) {
      untouched = untouched && SuiteRunStateOf(index.runs(i)) == v1::SUITE_RUN_STATE_PENDING;
      any_left = any_left || !SuiteRunDone(index.runs(i));
    }
    if (!any_left) {
      first = end;
      continue;
    }
    const std::vector<v1::Plan> data = DataPlans(suite, runs, first, end, out);
    bool prepared = true;
    if ((suite.settings().prepare() == kSuitePrepareOnce || per_case) && untouched) {
      for (const v1::Plan& plan : data) {
        if (options.interrupted->load()) break;
        // Per case, the tables of the same name may still hold another case's data (a suite
        // stopped between a case's last run and its cleanup): dropped first, as dbload cleanup
        // does (only what dbload prepare created).
        absl::Status status = per_case ? executor.Cleanup(plan) : absl::OkStatus();
        if (status.ok()) {
          out << "suite: preparing " << plan.workload()
              << (per_case ? absl::StrCat(" for ", runs[first].case_name()) : "") << " on "
              << target << std::endl;
          status = executor.Prepare(plan);
        }
        if (!status.ok()) {
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
        SetSuiteRunState(run, v1::SUITE_RUN_STATE_FAILED);
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
        const v1::SuiteCase* suite_case = nullptr;
        for (const v1::SuiteCase& candidate : suite.cases()) {
          if (candidate.name() == run.case_name()) suite_case = &candidate;
        }
        const std::string point = suite_case == nullptr ? "" : PointWords(*suite_case, run.point());
        RunProgress progress(out,
                             absl::StrCat("  [", i + 1, "/", runs.size(), "] ", run.target(), " ",
                                          run.case_name(), point.empty() ? "" : " ", point),
                             *plan);
        code = executor.Run(*plan, report_path, [&progress](const v1::IntervalSample& sample) {
          progress.Add(sample);
        });
        progress.Finish();
      }
      const v1::SuiteRunState state =
          options.interrupted->load() ? v1::SUITE_RUN_STATE_INTERRUPTED : StateOf(code);
      SetSuiteRunState(run, state);
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
      if (state == v1::SUITE_RUN_STATE_INTERRUPTED) return kExitInterrupted;
      if (state == v1::SUITE_RUN_STATE_DEGRADED) {
        some_degraded = true;  // its report stands, marked; the suite goes on
      } else if (state != v1::SUITE_RUN_STATE_FINISHED) {
        some_failed = true;
      }
    }
    // Per case, the next case on this target loads its own data into the same tables.
    const bool target_goes_on = end < runs.size() && runs[end].target() == target;
    if (prepared && (suite.settings().cleanup() || (per_case && target_goes_on))) {
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
  for (const v1::SuiteRun& run : index.runs()) {
    finished += SuiteRunStateOf(run) == v1::SUITE_RUN_STATE_FINISHED;
  }
  out << "suite: " << suite.name() << ": " << finished << " of " << index.runs_size()
      << " runs finished; index " << index_path << std::endl;
  // Degraded runs of an earlier invocation (--resume does not run them again) count too.
  for (const v1::SuiteRun& run : index.runs()) {
    some_degraded |= SuiteRunStateOf(run) == v1::SUITE_RUN_STATE_DEGRADED;
  }
  if (some_failed) return kExitRunFailed;
  return some_degraded ? kExitDegraded : kExitOk;
}

}  // namespace dbload
