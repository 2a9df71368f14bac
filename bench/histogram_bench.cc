// Micro-benchmarks of the recording hot path (DESIGN.md, Budgets: recording a sample <= 10 ns,
// no lock shared by all workers) and of the per-interval work around it (drain, encode).
//
// Values are precomputed lognormal latencies so that neither the RNG nor the distribution is
// measured, only the record. Run pinned, e.g.:
//   taskset -c 0 build-bench/bench/histogram_bench                       (single thread)
//   build-bench/bench/histogram_bench --benchmark_filter='/threads:2'    (2 threads, 2 cores)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "agent/interval_recorder.h"
#include "base/histogram.h"
#include "dbload/v1/histogram.pb.h"

namespace dbload {
namespace {

constexpr size_t kValueCount = size_t{1} << 16;  // 64 Ki values = 512 KiB, fits L2
constexpr size_t kValueMask = kValueCount - 1;

// Lognormal latencies in ns. `median_ns` and `sigma` pick the shape:
//  - "db"   : median 250 us, sigma 0.6 -> p99 ~1 ms (a point select on a loaded server)
//  - "wide" : median 2 ms,   sigma 1.5 -> p99 ~65 ms (a mixed OLTP workload with stalls)
std::vector<int64_t> MakeLognormal(double median_ns, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(median_ns), sigma);
  std::vector<int64_t> values(kValueCount);
  for (int64_t& v : values) v = static_cast<int64_t>(dist(rng));
  return values;
}

const std::vector<int64_t>& DbValues() {
  static const std::vector<int64_t> values = MakeLognormal(250e3, 0.6, 1);
  return values;
}
const std::vector<int64_t>& WideValues() {
  static const std::vector<int64_t> values = MakeLognormal(2e6, 1.5, 2);
  return values;
}
const std::vector<int64_t>& ValuesFor(int64_t which) {
  return which == 0 ? DbValues() : WideValues();
}
const char* NameOf(int64_t which) { return which == 0 ? "db" : "wide"; }

// ---------------------------------------------------------------------------------------------
// Record

// Histogram::Record: the plain, one-owner histogram (each thread its own).
void BM_Histogram_Record(benchmark::State& state) {
  const std::vector<int64_t>& values = ValuesFor(state.range(0));
  state.SetLabel(NameOf(state.range(0)));
  Histogram histogram;
  size_t i = static_cast<size_t>(state.thread_index()) * 4099;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  benchmark::DoNotOptimize(histogram.TotalCount());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Histogram_Record)->Arg(0)->Arg(1);
BENCHMARK(BM_Histogram_Record)->Arg(0)->Threads(2)->UseRealTime();

// ConcurrentHistogram::Record, one thread.
void BM_ConcurrentHistogram_Record(benchmark::State& state) {
  const std::vector<int64_t>& values = ValuesFor(state.range(0));
  state.SetLabel(NameOf(state.range(0)));
  ConcurrentHistogram histogram;
  size_t i = 0;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConcurrentHistogram_Record)->Arg(0)->Arg(1);

// Two threads recording into the SAME ConcurrentHistogram (what workers of one query type do):
// the hot buckets' cache lines bounce between the cores.
ConcurrentHistogram& SharedHistogram() {
  static ConcurrentHistogram* histogram = new ConcurrentHistogram();
  return *histogram;
}
void BM_ConcurrentHistogram_Record_Shared(benchmark::State& state) {
  const std::vector<int64_t>& values = ValuesFor(state.range(0));
  state.SetLabel(std::string(NameOf(state.range(0))) + " shared");
  ConcurrentHistogram& histogram = SharedHistogram();
  // Threads start at different offsets so they do not record identical sequences in lockstep.
  size_t i = static_cast<size_t>(state.thread_index()) * 4099;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConcurrentHistogram_Record_Shared)->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

// Two threads, each its own ConcurrentHistogram (no sharing; baseline for the shared case).
void BM_ConcurrentHistogram_Record_Separate(benchmark::State& state) {
  const std::vector<int64_t>& values = ValuesFor(state.range(0));
  state.SetLabel(std::string(NameOf(state.range(0))) + " separate");
  ConcurrentHistogram histogram;
  size_t i = static_cast<size_t>(state.thread_index()) * 4099;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConcurrentHistogram_Record_Separate)->Arg(0)->Threads(2)->UseRealTime();

// What LoadRunner::RunTransaction records for one successful transaction: schedule lag plus
// response and service time and the statements it sent (four relaxed atomic increments), into a
// recorder shared by all workers, with 20 query types.
IntervalRecorder& SharedRecorder() {
  static IntervalRecorder* recorder = new IntervalRecorder(20);
  return *recorder;
}
void BM_IntervalRecorder_RecordTransaction(benchmark::State& state) {
  const std::vector<int64_t>& values = DbValues();
  IntervalRecorder& recorder = SharedRecorder();
  size_t i = static_cast<size_t>(state.thread_index()) * 4099;
  int query_type = state.thread_index();
  for (auto _ : state) {
    const int64_t response = values[i & kValueMask];
    const int64_t lag = values[(i + 17) & kValueMask] >> 8;  // lag: a few us
    recorder.RecordScheduleLag(lag, /*had_free_connection=*/true);
    recorder.RecordSuccess(query_type, response + lag, response, /*statements=*/20);
    ++i;
    if (++query_type == 20) query_type = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("4 records per transaction");
}
BENCHMARK(BM_IntervalRecorder_RecordTransaction)->Threads(1)->Threads(2)->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Per-interval work: drain, encode, merge, percentiles.
//
// A "typical 1-s interval": state.range(0) samples of the db distribution in one histogram
// (one query type's response time). 10k/s is a modest database run, 1M/s the engine's budget.

void FillConcurrent(ConcurrentHistogram& histogram, int64_t samples) {
  const std::vector<int64_t>& values = DbValues();
  for (int64_t k = 0; k < samples; ++k) histogram.Record(values[static_cast<size_t>(k) & kValueMask]);
}

void BM_ConcurrentHistogram_DrainInto(benchmark::State& state) {
  ConcurrentHistogram histogram;
  Histogram out;
  for (auto _ : state) {
    state.PauseTiming();
    FillConcurrent(histogram, state.range(0));
    out.Reset();
    state.ResumeTiming();
    histogram.DrainInto(out);
    benchmark::DoNotOptimize(out.TotalCount());
  }
  state.counters["samples"] = static_cast<double>(state.range(0));
}
// Fixed iteration counts: refilling between iterations (untimed) dominates the wall time.
BENCHMARK(BM_ConcurrentHistogram_DrainInto)->Arg(10'000)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ConcurrentHistogram_DrainInto)->Arg(1'000'000)->Iterations(200)->Unit(benchmark::kMicrosecond);

// A drain of an interval in which nothing was recorded still scans every bucket.
void BM_ConcurrentHistogram_DrainInto_Empty(benchmark::State& state) {
  ConcurrentHistogram histogram;
  Histogram out;
  for (auto _ : state) {
    histogram.DrainInto(out);
    benchmark::DoNotOptimize(out.TotalCount());
  }
}
BENCHMARK(BM_ConcurrentHistogram_DrainInto_Empty)->Unit(benchmark::kMicrosecond);

// IntervalRecorder::Drain with 20 query types (41 histograms: 20 x response, 20 x service,
// schedule lag), each with range(0) samples; includes allocating the snapshot's histograms.
void BM_IntervalRecorder_Drain20(benchmark::State& state) {
  IntervalRecorder recorder(20);
  const std::vector<int64_t>& values = DbValues();
  for (auto _ : state) {
    state.PauseTiming();
    for (int q = 0; q < 20; ++q) {
      for (int64_t k = 0; k < state.range(0); ++k) {
        const int64_t v = values[static_cast<size_t>(k + q) & kValueMask];
        recorder.RecordSuccess(q, v, v, /*statements=*/1);
        if (q == 0) recorder.RecordScheduleLag(v >> 8, /*had_free_connection=*/true);
      }
    }
    state.ResumeTiming();
    IntervalSnapshot snapshot = recorder.Drain();
    benchmark::DoNotOptimize(snapshot.Executed());
  }
  state.counters["samples_per_type"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_IntervalRecorder_Drain20)->Arg(500)->Arg(50'000)->Iterations(50)->Unit(benchmark::kMicrosecond);

// What every drain pays per histogram before copying a single count: a Histogram allocates and
// zeroes all of its buckets (kBucketCount x 8 bytes) up front.
void BM_Histogram_Construct(benchmark::State& state) {
  for (auto _ : state) {
    Histogram histogram;
    benchmark::DoNotOptimize(histogram.TotalCount());
  }
  state.counters["bytes"] = static_cast<double>(histogram_layout::kBucketCount * sizeof(uint64_t));
}
BENCHMARK(BM_Histogram_Construct)->Unit(benchmark::kMicrosecond);

Histogram MakeInterval(int64_t samples, const std::vector<int64_t>& values) {
  Histogram histogram;
  for (int64_t k = 0; k < samples; ++k) histogram.Record(values[static_cast<size_t>(k) & kValueMask]);
  return histogram;
}

void BM_Histogram_ToProto(benchmark::State& state) {
  const std::vector<int64_t>& values = ValuesFor(state.range(1));
  const Histogram histogram = MakeInterval(state.range(0), values);
  dbload::v1::Histogram proto;
  std::string wire;
  for (auto _ : state) {
    histogram.ToProto(&proto);
    proto.SerializeToString(&wire);
    benchmark::DoNotOptimize(wire.data());
  }
  state.SetLabel(NameOf(state.range(1)));
  state.counters["samples"] = static_cast<double>(state.range(0));
  state.counters["buckets"] = static_cast<double>(proto.counts_size());
  state.counters["bytes"] = static_cast<double>(wire.size());
}
BENCHMARK(BM_Histogram_ToProto)
    ->Args({1'000, 0})
    ->Args({10'000, 0})
    ->Args({1'000'000, 0})
    ->Args({10'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMicrosecond);

// Histogram::FromProto (the coordinator's side of one report).
void BM_Histogram_FromProto(benchmark::State& state) {
  const Histogram histogram = MakeInterval(state.range(0), DbValues());
  dbload::v1::Histogram proto;
  histogram.ToProto(&proto);
  for (auto _ : state) {
    absl::StatusOr<Histogram> decoded = Histogram::FromProto(proto);
    benchmark::DoNotOptimize(decoded->TotalCount());
  }
  state.counters["buckets"] = static_cast<double>(proto.counts_size());
}
BENCHMARK(BM_Histogram_FromProto)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

// Merging one interval into a cumulative histogram, and reading percentiles from it.
void BM_Histogram_Add(benchmark::State& state) {
  const Histogram interval = MakeInterval(state.range(0), DbValues());
  Histogram total;
  for (auto _ : state) {
    total.Add(interval);
    benchmark::DoNotOptimize(total.TotalCount());
  }
}
BENCHMARK(BM_Histogram_Add)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

void BM_Histogram_Percentiles(benchmark::State& state) {
  const Histogram histogram = MakeInterval(1'000'000, DbValues());
  for (auto _ : state) {
    for (double p : {50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
      benchmark::DoNotOptimize(histogram.ValueAtPercentile(p));
    }
  }
  state.SetLabel("7 percentiles");
}
BENCHMARK(BM_Histogram_Percentiles)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dbload

BENCHMARK_MAIN();
