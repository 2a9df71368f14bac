#include "suite/suite_ramp.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "suite/suite_ramp_words.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

const v1::Stage* KneeStageOf(const v1::Plan& plan, uint32_t* index) {
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (plan.stages(i).has_knee()) {
      *index = static_cast<uint32_t>(i + 1);
      return &plan.stages(i);
    }
  }
  return nullptr;
}

bool AtLevel(const v1::IntervalSample& sample, double level, bool open) {
  if (!open) return static_cast<int64_t>(sample.clients()) == std::llround(level);
  return std::fabs(sample.target_rate() - level) <= 1e-6 * std::max(1.0, level);
}

RampRun BuildRun(const v1::RunReport& report, uint32_t stage_index, const v1::KneeSearch& spec,
                 bool open) {
  RampRun run;
  const v1::StageReport* stage = nullptr;
  for (const v1::StageReport& s : report.stages()) {
    if (s.index() == stage_index) stage = &s;
  }
  if (stage == nullptr) return run;
  run.stage = stage->name();
  run.knee = stage->knee();
  bool missed = false;
  for (int j = 0; j < stage->knee_steps_size(); ++j) {
    RampStep& step = run.steps.emplace_back();
    step.number = static_cast<uint32_t>(j + 1);
    step.refine = missed;
    step.step = stage->knee_steps(j);
    missed = missed || !step.step.met();
    run.highest_level = std::max(run.highest_level, step.step.level());
    if (step.step.met() &&
        (run.reference < 0 || step.step.level() > run.steps[run.reference].step.level())) {
      run.reference = j;
    }
    int first = -1, last = -1;
    for (int i = 0; i < report.intervals_size(); ++i) {
      const v1::IntervalSample& sample = report.intervals(i);
      if (sample.warmup() || sample.stage() != stage_index) continue;
      if (!AtLevel(sample, step.step.level(), open)) continue;
      if (first < 0) first = i;
      last = i;
    }
    if (first >= 0) {
      step.found = true;
      step.start_s = first > 0 ? report.intervals(first - 1).elapsed_s() : 0;
      step.end_s = report.intervals(last).elapsed_s();
      step.saturation = SaturationOver(report, step.start_s, step.end_s);
    }
  }
  if (run.steps.empty()) {
    run.outcome = KneeOutcome::kNoSteps;
  } else if (run.reference < 0) {
    run.outcome = KneeOutcome::kNoStepMet;
  } else if (missed) {
    run.outcome = KneeOutcome::kKnee;
  } else {
    run.outcome =
        run.highest_level >= spec.max() ? KneeOutcome::kNoKneeUpToMax : KneeOutcome::kSearchCut;
  }
  return run;
}

}  // namespace

bool IsRampCase(const dbload::v1::SuiteCase& suite_case) {
  for (const dbload::v1::Stage& stage : suite_case.plan().stages()) {
    if (stage.has_knee()) return true;
  }
  return false;
}

std::vector<RampCase> BuildRampCases(const v1::SuiteIndex& index,
                                     const std::vector<v1::RunReport>& reports,
                                     const std::vector<bool>& measured) {
  std::vector<RampCase> cases;
  for (const v1::SuiteCase& suite_case : index.suite().cases()) {
    uint32_t stage_index = 0;
    const v1::Stage* stage = KneeStageOf(suite_case.plan(), &stage_index);
    if (stage == nullptr) continue;
    RampCase& out = cases.emplace_back();
    out.name = suite_case.name();
    out.category = suite_case.category();
    out.spec = stage->knee();
    out.open_loop = suite_case.plan().load().has_open();
    for (const v1::SuiteTarget& target : index.suite().targets()) {
      RampTarget& t = out.targets.emplace_back();
      t.name = target.name();
      std::vector<size_t> runs;
      for (int r = 0; r < index.runs_size(); ++r) {
        const v1::SuiteRun& run = index.runs(r);
        const size_t i = static_cast<size_t>(r);
        if (run.case_name() != out.name || run.target() != t.name) continue;
        if (i >= measured.size() || !measured[i] || i >= reports.size()) continue;
        runs.push_back(i);
      }
      for (size_t i : runs) {
        RampRun run = BuildRun(reports[i], stage_index, out.spec, out.open_loop);
        run.run = i;
        if (runs.size() > 1) {
          const v1::SuiteRun& r = index.runs(static_cast<int>(i));
          std::vector<std::string> parts;
          if (r.point() != 0) parts.push_back(absl::StrCat("point ", ramp::Trimmed(r.point(), 3)));
          parts.push_back(absl::StrCat("repetition ", r.repetition()));
          run.label = absl::StrJoin(parts, ", ");
        }
        t.runs.push_back(std::move(run));
      }
    }
  }
  return cases;
}

}  // namespace dbload
