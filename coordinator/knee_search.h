#ifndef DBLOAD_COORDINATOR_KNEE_SEARCH_H_
#define DBLOAD_COORDINATOR_KNEE_SEARCH_H_

#include <cstdint>
#include <vector>

#include "base/histogram.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// What one step of a knee search did, merged over its agents.
struct KneeStepCounts {
  uint64_t executed = 0;
  uint64_t errors = 0;
  const Histogram* response = nullptr;  // every query type's response times
  double achieved_rate = 0;  // the sum of each agent's executed / its own seconds
  double judged_s = 0;       // the longest agent's seconds of data
};

// The decisions of a knee search (plan.proto KneeSearch), apart from any clock or network: it
// climbs from `from` by `step` while steps meet the SLO, then bisects `refine` times between the
// last level that met it and the first that did not. The coordinator feeds it each step's
// merged counts and sends agents the level it names next.
class KneeSearch {
 public:
  // `whole`: the level is a number of clients, so bisection stops at neighbouring integers.
  KneeSearch(const dbload::v1::KneeSearch& spec, bool open, bool whole);

  uint32_t step() const { return step_; }  // 1-based
  double level() const { return level_; }
  bool done() const { return done_; }
  // Judges the current step and moves to the next, or ends the search.
  void Judge(const KneeStepCounts& counts);

  // The highest level that met the SLO; 0 when none did.
  double knee() const { return best_; }
  const std::vector<dbload::v1::KneeStep>& steps() const { return steps_; }

 private:
  void Next(double level);

  dbload::v1::KneeSearch spec_;
  bool open_;
  bool whole_;
  uint32_t step_ = 1;
  double level_;
  bool done_ = false;
  double best_ = 0;      // highest level that met the SLO
  double failed_ = -1;   // lowest level that did not; < 0 while climbing
  uint32_t refinements_ = 0;
  std::vector<dbload::v1::KneeStep> steps_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_KNEE_SEARCH_H_
