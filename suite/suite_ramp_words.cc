#include "suite/suite_ramp_words.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"

namespace dbload::ramp {

namespace v1 = dbload::v1;

namespace {

// How a target's reference step is named in the comparison: "24 clients" at a knee, "64
// clients, no knee up to there" otherwise.
std::string SideLabel(const RampCase& c, const RampRun& run) {
  const std::string level = LevelText(run.steps[run.reference].step.level(), c.open_loop);
  return run.outcome == KneeOutcome::kKnee ? level : absl::StrCat(level, ", no knee up to there");
}

}  // namespace

std::string Trimmed(double value, int decimals) {
  std::string text = absl::StrFormat("%.*f", decimals, value);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string HumanPercent(double fraction) {
  const double percent = fraction * 100;
  const double a = std::fabs(percent);
  return absl::StrCat(Trimmed(percent, a >= 10 ? 1 : a >= 1 ? 2 : 3), " %");
}

std::string LevelCell(double level, bool open) {
  return open ? FormatPerSecond(level) : FormatCount(level);
}

std::string LevelText(double level, bool open) {
  if (open) return FormatPerSecond(level);
  return absl::StrCat(FormatCount(level), std::llround(level) == 1 ? " client" : " clients");
}

std::string SloText(const v1::KneeSearch& spec, bool open) {
  std::vector<std::string> limits;
  if (spec.p99_ns() > 0) {
    limits.push_back("p99 ≤ " + FormatSpan(static_cast<double>(spec.p99_ns()) / 1e9));
  }
  if (spec.errors() > 0) limits.push_back("errors ≤ " + HumanPercent(spec.errors()));
  if (open && spec.achieved() > 0) {
    limits.push_back(absl::StrCat("achieved ≥ ", HumanPercent(spec.achieved()), " of the rate"));
  }
  if (limits.empty()) return "something completed";
  return absl::StrJoin(limits, " and ");
}

std::string MissedWords(const v1::KneeStep& step, const v1::KneeSearch& spec, bool open) {
  std::vector<std::string> parts;
  const uint64_t completed = step.executed() + step.errors();
  if (completed == 0) parts.push_back("nothing completed");
  const double p99_limit_ms = static_cast<double>(spec.p99_ns()) / 1e6;
  if (spec.p99_ns() > 0 && step.p99_ms() > p99_limit_ms) {
    parts.push_back(absl::StrCat("p99 ", FormatLatency(step.p99_ms()), " above ",
                                 FormatSpan(p99_limit_ms / 1e3)));
  }
  if (spec.errors() > 0 && completed > 0) {
    const double rate = static_cast<double>(step.errors()) / static_cast<double>(completed);
    if (rate > spec.errors()) {
      parts.push_back(
          absl::StrCat("errors ", HumanPercent(rate), " above ", HumanPercent(spec.errors())));
    }
  }
  if (open && spec.achieved() > 0 && step.achieved_rate() < spec.achieved() * step.level()) {
    parts.push_back(absl::StrCat("achieved ", FormatPerSecond(step.achieved_rate()), ", below ",
                                 HumanPercent(spec.achieved()), " of ",
                                 FormatPerSecond(step.level())));
  }
  if (parts.empty()) return step.missed();
  return absl::StrJoin(parts, ", ");
}

std::string KneeLine(const RampCase& c, const RampRun& run) {
  const bool open = c.open_loop;
  switch (run.outcome) {
    case KneeOutcome::kKnee:
      return absl::StrCat("Knee: ", LevelText(run.steps[run.reference].step.level(), open),
                          " (the highest step that met ", SloText(c.spec, open), ")");
    case KneeOutcome::kNoKneeUpToMax:
      return absl::StrCat("No knee up to ", LevelText(run.highest_level, open),
                          ": every step met the SLO (", SloText(c.spec, open), ")");
    case KneeOutcome::kSearchCut:
      return absl::StrCat("No knee up to ", LevelText(run.highest_level, open),
                          ": every step met the SLO (", SloText(c.spec, open),
                          "), but the search ended before its maximum of ",
                          LevelText(c.spec.max(), open));
    case KneeOutcome::kNoStepMet: {
      const v1::KneeStep& first = run.steps.front().step;
      return absl::StrCat("No knee: no step met the SLO (", SloText(c.spec, open),
                          "); the first, at ", LevelText(first.level(), open),
                          ", missed: ", MissedWords(first, c.spec, open));
    }
    case KneeOutcome::kNoSteps:
      break;
  }
  return "No knee: the run's report holds no step of the knee search";
}

std::string SearchLine(const RampCase& c) {
  const bool open = c.open_loop;
  return absl::StrCat("Knee search: from ", LevelText(c.spec.from(), open), ", +",
                      open ? FormatPerSecond(c.spec.step()) : FormatCount(c.spec.step()), " every ",
                      FormatSpan(static_cast<double>(c.spec.every_ns()) / 1e9), " up to ",
                      LevelText(c.spec.max(), open), ", then at most ", c.spec.refine(),
                      " bisecting steps, while ", SloText(c.spec, open),
                      ". Each step's throughput and p99 are the search's own judgement of it; "
                      "its saturation is the database probe's over the step's seconds.");
}

RampComparison Compare(const RampCase& c, size_t i) {
  RampComparison out;
  const RampTarget& base = c.targets[0];
  const RampTarget& other = c.targets[i];
  for (const RampTarget* t : {&other, &base}) {
    if (t->runs.empty()) {
      out.why_not = absl::StrCat(t->name, " has no measured run");
      return out;
    }
    if (t->runs.front().reference < 0) {
      out.why_not = absl::StrCat("no step of ", t->name, " met the SLO");
      return out;
    }
  }
  const RampRun& b = base.runs.front();
  const RampRun& o = other.runs.front();
  const v1::KneeStep& bs = b.steps[b.reference].step;
  const v1::KneeStep& os = o.steps[o.reference].step;
  out.comparable = true;
  out.both_knees = b.outcome == KneeOutcome::kKnee && o.outcome == KneeOutcome::kKnee;
  out.ratios = absl::StrCat(RatioPhrase(bs.achieved_rate(), os.achieved_rate(), "throughput"), ", ",
                            RatioPhrase(bs.p99_ms(), os.p99_ms(), "p99"));
  return out;
}

std::string CompareLine(const RampCase& c, size_t i) {
  const RampComparison cmp = Compare(c, i);
  if (!cmp.comparable) {
    return absl::StrCat("At the knees: ", c.targets[i].name, " against ", c.targets[0].name,
                        ": not comparable (", cmp.why_not, ")");
  }
  bool several = false;
  for (const RampTarget& t : c.targets) several = several || t.runs.size() > 1;
  const RampRun& b = c.targets[0].runs.front();
  const RampRun& o = c.targets[i].runs.front();
  return absl::StrCat(cmp.both_knees ? "At the knees" : "At the highest steps that met the SLO",
                      several ? " (each target's first measured run)" : "", ": ", c.targets[i].name,
                      " (", SideLabel(c, o), ") ", cmp.ratios, " than ", c.targets[0].name, " (",
                      SideLabel(c, b), ")");
}

std::string OutcomeWords(const RampCase& c, const RampTarget& t) {
  if (t.runs.empty()) return "no measured run";
  const RampRun& run = t.runs.front();
  switch (run.outcome) {
    case KneeOutcome::kKnee:
      return absl::StrCat("knee at ",
                          LevelText(run.steps[run.reference].step.level(), c.open_loop));
    case KneeOutcome::kNoKneeUpToMax:
    case KneeOutcome::kSearchCut:
      return absl::StrCat("no knee up to ", LevelText(run.highest_level, c.open_loop));
    case KneeOutcome::kNoStepMet:
      return "no step met the SLO";
    case KneeOutcome::kNoSteps:
      break;
  }
  return "no knee step in the report";
}

}  // namespace dbload::ramp
