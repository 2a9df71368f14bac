#ifndef DBLOAD_SUITE_SUITE_RAMP_H_
#define DBLOAD_SUITE_SUITE_RAMP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"
#include "suite/suite_ramp_saturation.h"

namespace dbload {

// The ramp view of a suite report (issue 17): for every case whose plan has a knee stage, each
// target's staircase (one row per step the knee search held: clients, throughput, p99, whether
// it met the SLO, the database's saturation counters over the step) and its knee, or "no knee
// up to N". The suite report (suite/suite_report.cc) leaves such cases to this view. This file
// reads the staircases and knees out of the run reports (the saturation over a step:
// suite_ramp_saturation.h); suite_ramp_render.h renders them, in the words of
// suite_ramp_words.h.

// Whether the case's plan has a knee stage: the case belongs to the ramp view.
bool IsRampCase(const dbload::v1::SuiteCase& suite_case);

// How a knee search ended, from its steps (coordinator/knee_search.h: StageReport.knee is the
// highest level that met the SLO, 0 when none did; the search stops at `max` when no step missed).
enum class KneeOutcome {
  kKnee,           // a step missed the SLO, and a lower one met it: the knee is the highest met
  kNoKneeUpToMax,  // every step met the SLO, up to the search's `max`
  kSearchCut,      // every step met the SLO, but the search ended below its `max`
  kNoStepMet,      // even the first step missed the SLO
  kNoSteps,        // the report holds no step of the search
};

// One step of the search as it ran.
struct RampStep {
  uint32_t number = 0;  // 1-based, in the order the steps ran
  bool refine = false;  // a bisecting step (after the first step that missed)
  dbload::v1::KneeStep step;
  // The step's seconds on the run's clock, from the intervals that ran at its level (see
  // BuildRampCases); found false when no interval did.
  bool found = false;
  double start_s = 0;
  double end_s = 0;
  StepSaturation saturation;
};

// One measured run of a ramp case on one target.
struct RampRun {
  size_t run = 0;        // index into SuiteIndex.runs
  std::string label;     // "" for a target's only run, else "repetition 2", "point 8, repetition 1"
  std::string stage;     // the knee stage's name
  std::vector<RampStep> steps;
  KneeOutcome outcome = KneeOutcome::kNoSteps;
  double knee = 0;            // StageReport.knee
  double highest_level = 0;   // the highest level any step ran at
  // The step the comparison uses: the knee's step (the highest level that met the SLO); -1 when
  // no step met it.
  int reference = -1;
};

struct RampTarget {
  std::string name;
  std::vector<RampRun> runs;  // empty: no measured run of the case
};

struct RampCase {
  std::string name;
  std::string category;
  dbload::v1::KneeSearch spec;  // the plan's first knee stage
  bool open_loop = false;       // levels are rates (/s), else clients
  std::vector<RampTarget> targets;  // in the suite's target order; the first is the baseline
};

// Every ramp case of the index, its measured runs' staircases, knees and saturation. A step's
// seconds are the intervals of the knee stage that ran at the step's level (IntervalSample.clients
// for closed loops, target_rate for open ones): the intervals carry no step number, but every
// level of a search is distinct (it climbs, then bisects strictly between levels it has not run),
// so the level names the step exactly. The span runs from the end of the interval before the
// step's first to the end of its last; the probe's counters over it are read, as the run report's
// stages are (coordinator/saturation.cc), from the first reading at or after each bound.
std::vector<RampCase> BuildRampCases(const dbload::v1::SuiteIndex& index,
                                     const std::vector<dbload::v1::RunReport>& reports,
                                     const std::vector<bool>& measured);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_RAMP_H_
