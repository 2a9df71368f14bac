#include "coordinator/knee_search.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dbload {

KneeSearch::KneeSearch(const v1::KneeSearch& spec, bool open, bool whole)
    : spec_(spec), open_(open), whole_(whole), level_(spec.from()) {}

void KneeSearch::Judge(const KneeStepCounts& counts) {
  if (done_) return;
  v1::KneeStep& step = steps_.emplace_back();
  step.set_level(level_);
  step.set_judged_s(counts.judged_s);
  step.set_executed(counts.executed);
  step.set_errors(counts.errors);
  const double p99_ms =
      counts.response != nullptr ? counts.response->ValueAtPercentile(99) / 1e6 : 0;
  step.set_p99_ms(p99_ms);
  step.set_achieved_rate(counts.achieved_rate);

  std::vector<std::string> missed;
  const uint64_t completed = counts.executed + counts.errors;
  if (completed == 0) missed.push_back("nothing completed");
  if (spec_.p99_ns() > 0 && p99_ms > static_cast<double>(spec_.p99_ns()) / 1e6) {
    missed.push_back(absl::StrFormat("p99 %.3g ms above %.3g ms", p99_ms,
                                     static_cast<double>(spec_.p99_ns()) / 1e6));
  }
  if (spec_.errors() > 0 && completed > 0) {
    const double rate = static_cast<double>(counts.errors) / static_cast<double>(completed);
    if (rate > spec_.errors()) {
      missed.push_back(absl::StrFormat("error rate %.3g above %.3g", rate, spec_.errors()));
    }
  }
  if (open_ && spec_.achieved() > 0 && counts.achieved_rate < spec_.achieved() * level_) {
    missed.push_back(absl::StrFormat("achieved %.0f/s, below %.3g of %.0f/s",
                                     counts.achieved_rate, spec_.achieved(), level_));
  }
  step.set_met(missed.empty());
  step.set_missed(absl::StrJoin(missed, ", "));

  if (step.met()) {
    best_ = std::max(best_, level_);
  } else {
    failed_ = failed_ < 0 ? level_ : std::min(failed_, level_);
  }
  if (failed_ < 0) {  // still climbing
    if (level_ >= spec_.max()) {
      done_ = true;
      return;
    }
    Next(std::min(spec_.max(), level_ + spec_.step()));
    return;
  }
  // Bisecting between best_ (met; 0 if nothing did) and failed_.
  if (best_ == 0 || refinements_ >= spec_.refine()) {
    done_ = true;
    return;
  }
  double middle = (best_ + failed_) / 2;
  if (whole_) middle = std::floor(middle);
  if (middle <= best_ || middle >= failed_) {  // neighbours: nothing left between them
    done_ = true;
    return;
  }
  ++refinements_;
  Next(middle);
}

void KneeSearch::Next(double level) {
  level_ = level;
  ++step_;
}

}  // namespace dbload
