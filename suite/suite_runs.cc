#include "suite/suite_runs.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plan/plan_validation.h"
#include "plan/stage_program.h"
#include "proto/run_outcome.h"

namespace dbload {

std::string FormatSuitePoint(const v1::SuiteCase& suite_case, double point) {
  if (suite_case.points().empty()) return "plan";
  return absl::StrFormat("%.15g", point);
}

std::vector<v1::SuiteRun> ExpandSuite(const v1::Suite& suite) {
  std::vector<v1::SuiteRun> runs;
  const uint32_t repetitions = std::max<uint32_t>(1, suite.settings().repetitions());
  for (const v1::SuiteTarget& target : suite.targets()) {
    for (const v1::SuiteCase& suite_case : suite.cases()) {
      std::vector<double> points(suite_case.points().begin(), suite_case.points().end());
      if (points.empty()) points.push_back(0);
      for (const double point : points) {
        const std::string stem = absl::StrCat("runs/", target.name(), "/", suite_case.name(), "/",
                                              FormatSuitePoint(suite_case, point));
        auto add = [&](uint32_t repetition, uint32_t warmup) {
          v1::SuiteRun& run = runs.emplace_back();
          run.set_target(target.name());
          run.set_case_name(suite_case.name());
          run.set_point(point);
          run.set_repetition(repetition);
          run.set_discarded(repetition == 0);
          SetSuiteRunState(run, v1::SUITE_RUN_STATE_PENDING);
          run.set_report(repetition == 0 ? absl::StrCat(stem, "-w", warmup, ".json")
                                         : absl::StrCat(stem, "-r", repetition, ".json"));
        };
        for (uint32_t k = 1; k <= suite.settings().warmup_runs(); ++k) add(0, k);
        for (uint32_t r = 1; r <= repetitions; ++r) add(r, 0);
      }
    }
  }
  return runs;
}

absl::StatusOr<v1::Plan> PlanOfRunFrom(const v1::Suite& suite, const v1::SuiteRun& run,
                                       const std::string& source) {
  const v1::SuiteTarget* target = nullptr;
  for (const v1::SuiteTarget& candidate : suite.targets()) {
    if (candidate.name() == run.target()) target = &candidate;
  }
  const v1::SuiteCase* suite_case = nullptr;
  for (const v1::SuiteCase& candidate : suite.cases()) {
    if (candidate.name() == run.case_name()) suite_case = &candidate;
  }
  if (target == nullptr || suite_case == nullptr) {
    return absl::NotFoundError(absl::StrCat("suite ", suite.name(), " has no ",
                                            target == nullptr ? "target " : "case ",
                                            target == nullptr ? run.target() : run.case_name()));
  }
  v1::Plan plan = suite_case->plan();
  if (!suite_case->points().empty()) {
    if (plan.load().has_open()) plan.mutable_load()->mutable_open()->set_rate(run.point());
    if (plan.load().has_closed()) {
      plan.mutable_load()->mutable_closed()->set_clients(
          static_cast<uint32_t>(std::llround(run.point())));
    }
  }
  *plan.mutable_target() = target->target();
  if (target->has_probe()) *plan.mutable_probe() = target->probe();
  if (plan.name().empty()) {
    plan.set_name(absl::StrCat(suite.name(), "/", target->name(), "/", suite_case->name(), "/",
                               FormatSuitePoint(*suite_case, run.point())));
  }
  ApplyPlanDefaults(plan);
  if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return valid;
  return plan;
}

absl::StatusOr<v1::Plan> PlanOfRun(const v1::Suite& suite, const v1::SuiteRun& run) {
  return PlanOfRunFrom(suite, run, suite.name());
}

PlannedLength PlannedRunLength(const v1::Plan& plan) {
  PlannedLength planned;
  const bool closed = plan.load().has_closed();
  int64_t length = 0;
  if (plan.stages_size() > 0) {
    for (const v1::Stage& stage : plan.stages()) {
      length += StageLength(stage);
      // A knee search lasts until its knee; StageLength is every step it could take.
      planned.bound = planned.bound || stage.has_knee() || (closed && stage.queries() > 0);
    }
    if (plan.stop().duration_ns() > 0 && (length == 0 || plan.stop().duration_ns() < length)) {
      length = plan.stop().duration_ns();
    }
    planned.bound = planned.bound || (closed && plan.stop().queries() > 0);
  } else if (plan.stop().duration_ns() > 0) {
    length = plan.stop().duration_ns();
    if (plan.stop().queries() > 0 && plan.load().has_open() && plan.load().open().rate() > 0) {
      length = std::min<int64_t>(length,
                                 static_cast<int64_t>(static_cast<double>(plan.stop().queries()) /
                                                      plan.load().open().rate() * 1e9));
    }
    // A closed loop's count may come first: its duration is then only a bound.
    planned.bound = closed && plan.stop().queries() > 0;
  } else if (plan.stop().queries() > 0 && plan.load().has_open() && plan.load().open().rate() > 0) {
    length = static_cast<int64_t>(static_cast<double>(plan.stop().queries()) /
                                  plan.load().open().rate() * 1e9);
  }
  if (length == 0) return {};
  planned.nanos = length + plan.warmup_ns();
  return planned;
}

int64_t PlannedRunNanos(const v1::Plan& plan) { return PlannedRunLength(plan).nanos; }

}  // namespace dbload
