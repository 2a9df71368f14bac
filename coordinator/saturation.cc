#include "coordinator/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dbload {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// Where a report's spans end: the warm-up, and each stage.
struct Spans {
  std::optional<double> warmup_end_s;      // none without a warm-up
  std::map<uint32_t, double> stage_end_s;  // by 1-based stage
};

Spans SpansOf(const v1::RunReport& report) {
  Spans spans;
  for (const v1::IntervalSample& sample : report.intervals()) {
    if (sample.warmup()) {
      spans.warmup_end_s = std::max(spans.warmup_end_s.value_or(0), sample.elapsed_s());
    }
    if (!sample.warmup() && sample.stage() > 0) {
      double& end = spans.stage_end_s[sample.stage()];
      end = std::max(end, sample.elapsed_s());
    }
  }
  return spans;
}

}  // namespace

void ProbeRecord::Add(double elapsed_s, const std::vector<ProbeValue>& values) {
  Row row{.elapsed_s = elapsed_s, .values = std::vector<double>(keys_.size(), kMissing)};
  for (const ProbeValue& value : values) {
    const std::string key = absl::StrCat(value.source, "/", value.name);
    auto [it, added] = index_.emplace(key, keys_.size());
    if (added) {
      keys_.push_back({.source = value.source, .name = value.name, .gauge = value.gauge});
      row.values.push_back(kMissing);
    }
    row.values[it->second] = value.value;
  }
  rows_.push_back(std::move(row));
}

std::optional<double> ProbeRecord::Newest(absl::string_view name) const {
  for (size_t key = 0; key < keys_.size(); ++key) {
    if (keys_[key].name != name) continue;
    const Row& newest = rows_.back();
    if (key >= newest.values.size() || std::isnan(newest.values[key])) return std::nullopt;
    return newest.values[key];
  }
  return std::nullopt;
}

size_t ProbeRecord::ReadingAtOrAfter(double elapsed_s) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].elapsed_s >= elapsed_s) return i;
  }
  return rows_.size() - 1;
}

void ProbeRecord::AddSpan(size_t first, size_t last, uint64_t queries,
                          google::protobuf::RepeatedPtrField<v1::SaturationDelta>& out) const {
  if (rows_.empty() || last < first) return;
  for (size_t key = 0; key < keys_.size(); ++key) {
    const Key& k = keys_[key];
    auto at = [&](size_t row) {
      return key < rows_[row].values.size() ? rows_[row].values[key] : kMissing;
    };
    v1::SaturationDelta delta;
    delta.set_source(k.source);
    delta.set_name(k.name);
    delta.set_gauge(k.gauge);
    delta.set_from_s(rows_[first].elapsed_s);
    delta.set_to_s(rows_[last].elapsed_s);
    // The readings that had this value: what its figure rests on.
    uint32_t readings = 0;
    for (size_t row = first; row <= last; ++row) readings += std::isnan(at(row)) ? 0 : 1;
    delta.set_readings(readings);
    if (k.gauge) {
      double low = std::numeric_limits<double>::infinity(), high = -low, newest = kMissing;
      for (size_t row = first; row <= last; ++row) {
        const double value = at(row);
        if (std::isnan(value)) continue;
        low = std::min(low, value);
        high = std::max(high, value);
        newest = value;
      }
      if (std::isnan(newest)) continue;
      delta.set_delta(newest);
      delta.set_min(low);
      delta.set_max(high);
    } else {
      if (std::isnan(at(first)) || std::isnan(at(last))) continue;
      // Summed reading by reading, so that a counter reset (a restarted server counts from
      // zero) is handled as Prometheus' rate() does: the new value was counted from zero, no
      // work was undone. A dip that is no reset counts nothing until the counter passes its
      // highest reading again (CounterWasReset).
      double sum = 0, previous = at(first);
      for (size_t row = first + 1; row <= last; ++row) {
        const double value = at(row);
        if (std::isnan(value)) continue;
        if (value >= previous) {
          sum += value - previous;
          previous = value;
        } else if (CounterWasReset(previous, value)) {
          sum += value;
          previous = value;
        }
      }
      delta.set_delta(sum);
      if (queries > 0) delta.set_per_query(sum / static_cast<double>(queries));
    }
    *out.Add() = std::move(delta);
  }
}

void ProbeRecord::FillReport(v1::RunReport& report) const {
  report.clear_probe_samples();
  report.clear_saturation();
  for (v1::StageReport& stage : *report.mutable_stages()) stage.clear_saturation();
  for (const Row& row : rows_) {
    v1::ProbeSample& sample = *report.add_probe_samples();
    sample.set_elapsed_s(row.elapsed_s);
    for (size_t key = 0; key < keys_.size() && key < row.values.size(); ++key) {
      if (std::isnan(row.values[key])) continue;
      (*sample.mutable_values())[absl::StrCat(keys_[key].source, "/", keys_[key].name)] =
          row.values[key];
    }
  }
  if (rows_.empty()) return;
  // Each boundary is the first reading at or after it, and the end the newest reading (taken
  // after the load when the run is over), so that consecutive spans share their boundary
  // readings and the stages' deltas add up to the run's.
  const Spans spans = SpansOf(report);
  // Without a warm-up the run starts with the first reading, the one before the load (its
  // time is slightly negative on the run's clock).
  const size_t start = spans.warmup_end_s ? ReadingAtOrAfter(*spans.warmup_end_s) : 0;
  const size_t newest = rows_.size() - 1;
  AddSpan(start, newest, report.executed(), *report.mutable_saturation());
  size_t stage_start = start;
  uint32_t last_stage = 0;
  for (const auto& [stage, end_s] : spans.stage_end_s) last_stage = std::max(last_stage, stage);
  for (v1::StageReport& stage : *report.mutable_stages()) {
    auto end = spans.stage_end_s.find(stage.index());
    if (end == spans.stage_end_s.end()) continue;  // never reached
    const size_t stage_end = stage.index() == last_stage ? newest : ReadingAtOrAfter(end->second);
    AddSpan(stage_start, stage_end, stage.executed(), *stage.mutable_saturation());
    stage_start = stage_end;
  }
}

GeneratorThresholds ThresholdsOf(const v1::GeneratorLimits& limits) {
  GeneratorThresholds t;
  if (limits.max_agent_cpu() > 0) t.max_cpu = limits.max_agent_cpu();
  if (limits.max_schedule_lag_p99_ns() > 0) {
    t.queue_lag_ms = static_cast<double>(limits.max_schedule_lag_p99_ns()) / 1e6;
  }
  if (limits.max_dispatch_lag_share() > 0) t.max_dispatch_share = limits.max_dispatch_lag_share();
  if (limits.min_dispatch_lag_p99_ns() > 0) {
    t.min_dispatch_lag_ms = static_cast<double>(limits.min_dispatch_lag_p99_ns()) / 1e6;
  }
  return t;
}

std::string DispatchLagMark(const GeneratorThresholds& limits, double dispatch_lag_p99_ms,
                            double response_p99_ms) {
  // Without a response time there is no percentile for the lateness to hide in.
  if (response_p99_ms <= 0 || dispatch_lag_p99_ms <= limits.min_dispatch_lag_ms) return "";
  const double share = dispatch_lag_p99_ms / response_p99_ms;
  if (share <= limits.max_dispatch_share) return "";
  return absl::StrFormat(
      "dispatch lag p99 %.4g ms = %.0f%% of response p99 %.4g ms (limit %.0f%%, above %.4g ms): "
      "transactions that had a free connection started late, and the agent's own lateness can "
      "be that much of the published percentile",
      dispatch_lag_p99_ms, share * 100, response_p99_ms, limits.max_dispatch_share * 100,
      limits.min_dispatch_lag_ms);
}

namespace {

// A stall: connections in database calls or reconnecting for at least this share of the
// interval beyond what its completions took at the run's usual pace (completions per second of
// database calls, the median over the measured intervals) ...
constexpr double kStalledExcess = 0.3;
// ... so that they completed under this share of the usual per second of it. A second split
// between a stall and normal work still shows: a 1 s stall puts half a second into one of them.
constexpr double kStalledRate = 0.5;
// An interval shorter than this (the run's last, cut short as the run ends) is not judged a
// stall: a few milliseconds of the last transactions still in their calls are the end of the
// run, not an outage (measured: a 3 ms tail after 1 s of 81,000 point selects/s, its 8
// connections in calls throughout for 7 completions, was marked DATABASE-STALLED).
constexpr double kMinStallJudgedS = 0.25;
// Connections in database calls at least this share of the time make queueing the pool's ...
constexpr double kPoolBusy = 0.5;
// ... unless the agent's own work took at least this share: then the calls are as short as
// the work between them (the noop driver flat out), and the agent sets the pace.
constexpr double kAgentBusy = 0.25;
// Agents' intervals reach the coordinator's ticks up to about a second late.
constexpr double kTickSlackS = 1.0;

struct Shares {
  bool known = false;  // the agents measured their connections' time
  double db = 0, connecting = 0, idle = 0, agent = 0;
  double busy_s = 0;   // in database calls or reconnecting, connection-seconds
  double total_s = 0;  // in all states
  double busy() const { return db + connecting; }
};

Shares SharesOf(const v1::IntervalSample& sample) {
  const v1::ConnectionTime& t = sample.connection_time();
  const double total = t.in_db_call_s() + t.connecting_s() + t.idle_s() + t.in_agent_s();
  Shares shares;
  if (total <= 0) return shares;
  shares.known = true;
  shares.db = t.in_db_call_s() / total;
  shares.connecting = t.connecting_s() / total;
  shares.idle = t.idle_s() / total;
  shares.agent = t.in_agent_s() / total;
  shares.busy_s = t.in_db_call_s() + t.connecting_s();
  shares.total_s = total;
  return shares;
}

// Every transaction that ended: an ignored error's (a rolled-back one) took database time too.
uint64_t Completions(const v1::IntervalSample& sample) {
  return sample.executed() + sample.errors() + sample.ignored();
}

double CompletionsPerBusySecond(const v1::IntervalSample& sample, const Shares& shares) {
  return static_cast<double>(Completions(sample)) / shares.busy_s;
}

std::string DescribeShares(const Shares& s) {
  return absl::StrFormat(
      "connections were in database calls %.0f%%, reconnecting %.0f%%, idle %.0f%% and in the "
      "agent's own work %.0f%% of the time",
      s.db * 100, s.connecting * 100, s.idle * 100, s.agent * 100);
}

// The interval a sample covers: from the previous sample's end (0 for the first).
std::string IntervalSpan(const std::vector<const v1::IntervalSample*>& samples, size_t i) {
  const double from = i > 0 ? samples[i - 1]->elapsed_s() : 0;
  return absl::StrFormat("%.1f–%.1f s", from, samples[i]->elapsed_s());
}

}  // namespace

std::vector<IntervalJudgement> JudgeIntervals(const v1::GeneratorLimits& plan_limits,
                                              const std::vector<const v1::IntervalSample*>& samples,
                                              uint32_t pool) {
  using Cause = IntervalJudgement::Cause;
  const GeneratorThresholds limits = ThresholdsOf(plan_limits);
  std::vector<Shares> shares;
  std::vector<double> rates;  // completions per busy connection-second, measured intervals
  for (const v1::IntervalSample* sample : samples) {
    shares.push_back(SharesOf(*sample));
    // The usual pace is that of seconds in which something executed: an outage longer than
    // half the run must not become the usual.
    if (!sample->warmup() && shares.back().busy_s > 0 && sample->executed() > 0) {
      rates.push_back(CompletionsPerBusySecond(*sample, shares.back()));
    }
  }
  double usual = 0;
  if (!rates.empty()) {
    std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
    usual = rates[rates.size() / 2];
  }
  // First the stalls, so that queueing in the second before one (a stall that began late in
  // it, the server's processes frozen one after another) can be laid at its door too.
  std::vector<bool> stalled(samples.size(), false);
  for (size_t i = 0; i < samples.size(); ++i) {
    const v1::IntervalSample& sample = *samples[i];
    const Shares& s = shares[i];
    if (sample.warmup()) continue;
    if (sample.length_s() > 0 && sample.length_s() < kMinStallJudgedS) continue;
    const double completions = static_cast<double>(Completions(sample));
    // The share of the interval stuck beyond the usual pace; without one (nothing executed in
    // the whole run), all of the time in calls or reconnecting of a second that executed none.
    const double excess = !s.known                 ? 0
                          : usual > 0              ? (s.busy_s - completions / usual) / s.total_s
                          : sample.executed() == 0 ? s.busy()
                                                   : 0;
    stalled[i] = excess >= kStalledExcess &&
                 (usual == 0 || CompletionsPerBusySecond(sample, s) < kStalledRate * usual);
  }
  std::vector<IntervalJudgement> out(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const v1::IntervalSample& sample = *samples[i];
    const Shares& s = shares[i];
    if (sample.warmup()) continue;
    IntervalJudgement& judged = out[i];
    auto set = [&](Cause cause, v1::IntervalLimit limit, std::string why) {
      judged.cause = cause;
      judged.limit = limit;
      judged.why = std::move(why);
    };
    if (stalled[i]) {
      set(Cause::kDatabaseStalled, v1::INTERVAL_LIMIT_DATABASE_STALLED,
          absl::StrFormat("at %s %s, and completed %d transactions (%.3g per second of database "
                          "calls or reconnecting, against the run's usual %.0f)",
                          IntervalSpan(samples, i), DescribeShares(s), Completions(sample),
                          CompletionsPerBusySecond(sample, s), usual));
      continue;
    }
    if (sample.max_agent_cpu() > limits.max_cpu) {
      set(Cause::kAgentCpu, v1::INTERVAL_LIMIT_GENERATOR,
          absl::StrFormat("at %s an agent used %.0f%% of its cores (limit %.0f%%): the database "
                          "may have more to give",
                          IntervalSpan(samples, i), sample.max_agent_cpu() * 100,
                          limits.max_cpu * 100));
      continue;
    }
    if (std::string lag = DispatchLagMark(limits, sample.dispatch_lag_p99_ms(), sample.p99_ms());
        !lag.empty()) {
      set(Cause::kDispatchLag, v1::INTERVAL_LIMIT_GENERATOR,
          absl::StrCat("at ", IntervalSpan(samples, i), " ", lag));
      continue;
    }
    const double lag_ms = sample.schedule_lag_p99_ms();
    if (lag_ms <= limits.queue_lag_ms) continue;
    // Arrivals queued. They waited from as early as this far back: whatever the connections
    // did then held them up.
    const double waited_from_s =
        (i > 0 ? samples[i - 1]->elapsed_s() : 0) - lag_ms / 1e3 - kTickSlackS;
    size_t busiest = i;
    std::optional<size_t> stall;
    if (i + 1 < samples.size() && stalled[i + 1]) stall = i + 1;
    for (size_t j = i + 1; j-- > 0;) {
      if (j < i && samples[j]->elapsed_s() < waited_from_s) break;
      if (stalled[j] && !stall) stall = j;
      if (shares[j].busy() > shares[busiest].busy()) busiest = j;
    }
    const std::string queued = absl::StrFormat(
        "at %s arrivals queued (schedule lag p99 %.4g ms, limit %.4g ms, against %.4g ms with a "
        "free connection)",
        IntervalSpan(samples, i), lag_ms, limits.queue_lag_ms, sample.dispatch_lag_p99_ms());
    if (stall) {
      set(Cause::kQueuedBehindStall, v1::INTERVAL_LIMIT_DATABASE_STALLED,
          absl::StrCat(queued, " behind the database's stall at ", IntervalSpan(samples, *stall)));
    } else if (!shares[busiest].known ||
               (shares[busiest].busy() >= kPoolBusy && shares[busiest].agent < kAgentBusy)) {
      set(Cause::kPool, v1::INTERVAL_LIMIT_POOL,
          absl::StrCat(
              queued,
              shares[busiest].known
                  ? absl::StrFormat(" for busy connections (in database calls %.0f%%, "
                                    "reconnecting %.0f%% of the time)",
                                    shares[busiest].db * 100, shares[busiest].connecting * 100)
                  : " for busy connections",
              absl::StrFormat(": the database, or a pool of %d per agent too small for "
                              "its latency, limited the load",
                              pool)));
    } else {
      set(Cause::kQueuedBehindAgent, v1::INTERVAL_LIMIT_GENERATOR,
          absl::StrCat(queued,
                       absl::StrFormat(" for connections that were in database calls or "
                                       "reconnecting only %.0f%% of the time, in the agent's own "
                                       "work %.0f%% (%s): the agent's own work held them up",
                                       shares[busiest].busy() * 100, shares[busiest].agent * 100,
                                       DescribeShares(shares[busiest]))));
    }
  }
  return out;
}

namespace {

// "4.0–6.0 s, 9.0–10.0 s": the spans of the runs of consecutive intervals in `marked`.
std::string SpanList(const std::vector<const v1::IntervalSample*>& samples,
                     const std::vector<size_t>& marked) {
  constexpr size_t kShown = 6;
  std::vector<std::string> parts;
  size_t shown_runs = 0, runs = 0;
  for (size_t k = 0; k < marked.size();) {
    size_t end = k;
    while (end + 1 < marked.size() && marked[end + 1] == marked[end] + 1) ++end;
    ++runs;
    if (shown_runs < kShown) {
      const double from = marked[k] > 0 ? samples[marked[k] - 1]->elapsed_s() : 0;
      parts.push_back(absl::StrFormat("%.1f–%.1f s", from, samples[marked[end]]->elapsed_s()));
      ++shown_runs;
    }
    k = end + 1;
  }
  std::string text = absl::StrJoin(parts, ", ");
  if (runs > shown_runs) absl::StrAppend(&text, " and ", runs - shown_runs, " more");
  return text;
}

struct ScopeMarks {
  std::string stalled, generator, pool;
};

// The marks of a scope (the run, or a stage) from the judgements of its intervals `in_scope`
// (indices into `samples`) and its own merged dispatch lag and response time.
ScopeMarks MarkScope(const GeneratorThresholds& limits,
                     const std::vector<const v1::IntervalSample*>& samples,
                     const std::vector<IntervalJudgement>& judged,
                     const std::vector<size_t>& in_scope, double dispatch_lag_p99_ms,
                     double response_p99_ms) {
  using Cause = IntervalJudgement::Cause;
  std::vector<size_t> stalled, pool, cpu, queued_agent;
  const IntervalJudgement* first_stall = nullptr;
  const IntervalJudgement* worst_stall = nullptr;  // the stalled interval with the busiest
  double worst_busy = -1;
  for (size_t i : in_scope) {
    const IntervalJudgement& j = judged[i];
    switch (j.cause) {
      case Cause::kDatabaseStalled: {
        stalled.push_back(i);
        const double busy = SharesOf(*samples[i]).busy();
        if (busy > worst_busy) {
          worst_busy = busy;
          worst_stall = &j;
        }
        break;
      }
      case Cause::kQueuedBehindStall:
        stalled.push_back(i);
        if (first_stall == nullptr) first_stall = &j;
        break;
      case Cause::kPool:
        pool.push_back(i);
        break;
      case Cause::kAgentCpu:
        cpu.push_back(i);
        break;
      case Cause::kQueuedBehindAgent:
        queued_agent.push_back(i);
        break;
      case Cause::kDispatchLag:
      case Cause::kNone:
        break;
    }
  }
  auto first_why = [&](const std::vector<size_t>& marked) { return judged[marked[0]].why; };
  ScopeMarks marks;
  if (!stalled.empty()) {
    const IntervalJudgement& shown = worst_stall != nullptr ? *worst_stall : *first_stall;
    marks.stalled = absl::StrCat("at ", SpanList(samples, stalled),
                                 ": the database stopped answering (a stall, a restart or an "
                                 "outage), and arrivals that waited through it are the "
                                 "database's, not the generator's; ",
                                 shown.why);
  }
  std::vector<std::string> why;
  if (!cpu.empty()) why.push_back(first_why(cpu));
  if (std::string lag = DispatchLagMark(limits, dispatch_lag_p99_ms, response_p99_ms);
      !lag.empty()) {
    why.push_back(lag);
  }
  if (!queued_agent.empty()) {
    why.push_back(
        absl::StrCat("at ", SpanList(samples, queued_agent), ": ", first_why(queued_agent)));
  }
  marks.generator = absl::StrJoin(why, "; ");
  // Queueing in a scope where the agent itself fell behind (its CPU, its lateness) is not
  // the pool's to answer for: the connections' time in "database calls" then includes the
  // agent's own work between its clock readings (the noop driver flat out).
  if (!pool.empty() && marks.generator.empty()) {
    marks.pool = absl::StrCat("at ", SpanList(samples, pool), ": ", first_why(pool));
  }
  return marks;
}

template <typename Scope>
void SetMarks(const ScopeMarks& marks, Scope& scope) {
  scope.set_database_stalled(!marks.stalled.empty());
  scope.set_database_stalled_reason(marks.stalled);
  scope.set_generator_limited(!marks.generator.empty());
  scope.set_generator_limited_reason(marks.generator);
  scope.set_pool_limited(!marks.pool.empty());
  scope.set_pool_limited_reason(marks.pool);
  const double response = scope.response_time().p99_ms();
  scope.set_dispatch_lag_share(response > 0 ? scope.dispatch_lag().p99_ms() / response : 0);
}

}  // namespace

void MarkGeneratorLimits(const v1::GeneratorLimits& limits, v1::RunReport& report) {
  std::vector<const v1::IntervalSample*> samples;
  for (const v1::IntervalSample& sample : report.intervals()) samples.push_back(&sample);
  const uint32_t pool = report.plan().target().pool();
  const std::vector<IntervalJudgement> judged = JudgeIntervals(limits, samples, pool);
  for (size_t i = 0; i < judged.size(); ++i) {
    report.mutable_intervals(static_cast<int>(i))->set_limit(judged[i].limit);
  }
  const GeneratorThresholds thresholds = ThresholdsOf(limits);
  auto mark = [&](auto& scope, const std::vector<size_t>& in_scope) {
    SetMarks(MarkScope(thresholds, samples, judged, in_scope, scope.dispatch_lag().p99_ms(),
                       scope.response_time().p99_ms()),
             scope);
  };
  std::vector<size_t> measured;
  std::map<uint32_t, std::vector<size_t>> by_stage;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i]->warmup()) continue;
    measured.push_back(i);
    by_stage[samples[i]->stage()].push_back(i);
  }
  if (report.stages_size() == 0) {
    mark(report, measured);
    return;
  }
  // With stages the run's marks are its stages': figures over a load that changed from stage
  // to stage (a staircase that saturates only at its top) would blur the run's own.
  ScopeMarks run;
  for (v1::StageReport& stage : *report.mutable_stages()) {
    mark(stage, by_stage[stage.index()]);
    const std::string where = absl::StrCat("stage ", stage.index(), ": ");
    if (stage.database_stalled() && run.stalled.empty()) {
      run.stalled = where + stage.database_stalled_reason();
    }
    if (stage.generator_limited() && run.generator.empty()) {
      run.generator = where + stage.generator_limited_reason();
    }
    if (stage.pool_limited() && run.pool.empty()) run.pool = where + stage.pool_limited_reason();
  }
  SetMarks(run, report);
}

}  // namespace dbload
