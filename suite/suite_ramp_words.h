#ifndef DBLOAD_SUITE_SUITE_RAMP_WORDS_H_
#define DBLOAD_SUITE_SUITE_RAMP_WORDS_H_

// A ramp case (suite_ramp.h) in words, the same in text, Markdown and HTML: levels, the SLO,
// what a step missed, the knee, the search, and two targets compared at their knees. Used by
// suite_ramp_render.cc.

#include <cstddef>
#include <string>

#include "dbload/v1/report.pb.h"
#include "suite/suite_ramp.h"

namespace dbload::ramp {

// `value` with `decimals` decimals, trailing zeros (and a bare point) removed: "1", "2.5".
std::string Trimmed(double value, int decimals);
// A fraction as a percentage: 0.01 → "1 %", 0.0123 → "1.23 %".
std::string HumanPercent(double fraction);

// A level in a table cell ("24", "2,500/s") and in a sentence ("24 clients", "1 client",
// "2,500/s").
std::string LevelCell(double level, bool open);
std::string LevelText(double level, bool open);

// The SLO as the search judged it: "p99 ≤ 50 ms and errors ≤ 1 %".
std::string SloText(const dbload::v1::KneeSearch& spec, bool open);

// What a step broke, in human units, from its own figures and the search's limits (the same
// comparisons as coordinator/knee_search.cc); the coordinator's words when those find nothing.
std::string MissedWords(const dbload::v1::KneeStep& step, const dbload::v1::KneeSearch& spec,
                        bool open);

// How the run's search ended, as the line under its table: "Knee: 24 clients (the highest step
// that met p99 ≤ 50 ms)", "No knee up to 64 clients: ...".
std::string KneeLine(const RampCase& c, const RampRun& run);

// The search as the plan asked for it: "from 1 client, +1 per 60 s up to 64 clients, then at
// most 3 bisecting steps, while p99 ≤ 50 ms and errors ≤ 1 %".
std::string SearchLine(const RampCase& c);

// Target i against the baseline (target 0) at their reference steps (the knees, or the highest
// steps where there was none), each one's first measured run.
struct RampComparison {
  bool comparable = false;
  bool both_knees = false;
  std::string why_not;
  std::string ratios;  // "1.52× lower throughput, 1.10× higher p99"
};
RampComparison Compare(const RampCase& c, size_t i);

// "At the knees: mariadb (12 clients) 1.52× lower throughput, 1.10× higher p99 than postgresql
// (24 clients)".
std::string CompareLine(const RampCase& c, size_t i);

// A target's outcome in a headline: "knee at 24 clients", "no knee up to 64 clients".
std::string OutcomeWords(const RampCase& c, const RampTarget& t);

}  // namespace dbload::ramp

#endif  // DBLOAD_SUITE_SUITE_RAMP_WORDS_H_
