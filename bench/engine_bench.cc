// engine_bench: the whole agent engine on the noop driver, through the same code path as
// `dbload run` (RunPlanLocally: LoadRunner + IntervalRecorder drained every second into a
// RunReportBuilder) on a SteadyClock, open loop at a fixed rate. It answers two budget questions
// of DESIGN.md:
//   - throughput: run pinned to one core (`taskset -c 0 engine_bench --rate=1000000`) and check
//     that the achieved rate is within 1 % of the target and how large the schedule lag gets;
//   - memory: `engine_bench --connections=128 --query-types=20 ...` and read peak RSS.
//
// The scenario is synthetic: --query-types statements, the worker cycles through them and each
// transaction is one Execute on the noop session (zero latency unless --latency is given), so
// what is measured is the engine: pacing, tickets, clock reads, recording, draining.
//
// Output: one line of key=value pairs (easy to grep / parse from a script), or with --verbose
// also the per-second lines of the run.
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/local_run.h"
#include "base/clock.h"
#include "db/noop_driver.h"
#include "report/report.h"
#include "workload/workload.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

class FakeWorker final : public ScenarioWorker {
 public:
  explicit FakeWorker(int query_types) : query_types_(query_types) {}
  int NextQueryType() override {
    const int type = next_;
    if (++next_ == query_types_) next_ = 0;
    return type;
  }
  db::ExecOutcome Run(int query_type, db::Session& session) override {
    return session.Execute(query_type, {});
  }

 private:
  const int query_types_;
  int next_ = 0;
};

// N query types "q0" … "qN-1", one statement each.
class FakeScenario final : public Scenario {
 public:
  explicit FakeScenario(int query_types) {
    for (int i = 0; i < query_types; ++i) names_.push_back(absl::StrCat("q", i));
  }
  const std::vector<std::string>& query_types() const override { return names_; }
  std::vector<db::StatementSpec> Statements(db::Dialect) const override {
    std::vector<db::StatementSpec> statements;
    for (size_t i = 0; i < names_.size(); ++i) {
      statements.push_back({names_[i], absl::StrCat("SELECT ", i)});
    }
    return statements;
  }
  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot&) const override {
    return std::make_unique<FakeWorker>(static_cast<int>(names_.size()));
  }

 private:
  std::vector<std::string> names_;
};

// VmRSS / VmHWM of this process in KiB.
int64_t StatusKib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t key_len = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, key_len, key) == 0 && line.size() > key_len && line[key_len] == ':') {
      return std::strtoll(line.c_str() + key_len + 1, nullptr, 10);
    }
  }
  return -1;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

int AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

struct Args {
  double rate = 1'000'000;
  int workers = 1;  // connections = worker threads
  int query_types = 1;
  double seconds = 10;
  double warmup = 1;
  double latency_us = 0;
  bool poisson = false;
  bool verbose = false;
  std::string report_path;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::cerr << "engine_bench: " << problem << "\n"
            << "usage: engine_bench [--rate=N] [--workers=N|--connections=N] [--query-types=N]\n"
               "                    [--seconds=S] [--warmup=S] [--latency-us=U] [--poisson]\n"
               "                    [--report=FILE.json] [--verbose]\n";
  std::exit(2);
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    auto number = [&](double& out) {
      if (!absl::SimpleAtod(value, &out)) Usage(absl::StrCat(key, ": expected a number"));
    };
    auto integer = [&](int& out) {
      if (!absl::SimpleAtoi(value, &out) || out <= 0) Usage(absl::StrCat(key, ": expected an integer > 0"));
    };
    if (key == "--rate") {
      number(args.rate);
    } else if (key == "--workers" || key == "--connections") {
      integer(args.workers);
    } else if (key == "--query-types") {
      integer(args.query_types);
    } else if (key == "--seconds") {
      number(args.seconds);
    } else if (key == "--warmup") {
      number(args.warmup);
    } else if (key == "--latency-us") {
      number(args.latency_us);
    } else if (key == "--poisson") {
      args.poisson = true;
    } else if (key == "--verbose") {
      args.verbose = true;
    } else if (key == "--report") {
      args.report_path = value;
    } else {
      Usage(absl::StrCat("unknown argument ", arg));
    }
  }
  if (args.rate <= 0 || args.rate > 50'000'000) Usage("--rate must be in (0, 5e7]");
  if (args.seconds <= 0 || args.seconds > 600) Usage("--seconds must be in (0, 600]");
  if (args.warmup < 0 || args.warmup > 60) Usage("--warmup must be in [0, 60]");
  if (args.workers > 10'000) Usage("--workers must be <= 10000");
  if (args.query_types > 1'000) Usage("--query-types must be <= 1000");
  return args;
}

int Main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  const int64_t rss_start_kib = StatusKib("VmRSS");

  v1::Plan plan;
  plan.set_name("engine_bench");
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(static_cast<uint32_t>(args.workers));
  plan.set_workload("fake");
  plan.set_scenario("fake");
  plan.mutable_load()->mutable_open()->set_rate(args.rate);
  plan.mutable_load()->mutable_open()->set_arrival(args.poisson ? v1::OpenLoad::POISSON
                                                                : v1::OpenLoad::UNIFORM);
  plan.set_warmup_ns(static_cast<int64_t>(args.warmup * kSecond));
  plan.mutable_stop()->set_duration_ns(static_cast<int64_t>(args.seconds * kSecond));
  plan.set_seed(1);

  SteadyClock clock;
  db::NoopOptions noop;
  noop.fixed_latency = static_cast<Nanos>(args.latency_us * kMicrosecond);
  db::NoopDriver driver(noop, clock);
  FakeScenario scenario(args.query_types);

  int64_t rss_peak_during_kib = 0;
  LocalRunHooks hooks{.on_interval = [&](const v1::IntervalSample& sample) {
    rss_peak_during_kib = std::max(rss_peak_during_kib, StatusKib("VmRSS"));
    if (args.verbose) std::cerr << RenderIntervalLine(sample) << "\n";
  }};

  const double cpu_before = CpuSeconds();
  const Nanos wall_before = clock.Now();
  absl::StatusOr<v1::RunReport> report = RunPlanLocally(plan, driver, scenario, clock, hooks);
  const double wall = static_cast<double>(clock.Now() - wall_before) / kSecond;
  const double cpu = CpuSeconds() - cpu_before;
  if (!report.ok()) {
    std::cerr << "engine_bench: run failed: " << report.status().message() << "\n";
    return 1;
  }
  if (!args.report_path.empty()) {
    std::ofstream(args.report_path) << RenderReportJson(*report);
  }
  // CPU covers warm-up and measured part alike, so divide by every completed transaction.
  uint64_t total = 0;
  for (const v1::IntervalSample& sample : report->intervals()) total += sample.executed() + sample.errors();
  const double achieved_ratio = report->actual_rate() / args.rate;
  std::printf(
      "rate=%.0f workers=%d query_types=%d cpus=%d seconds=%.1f executed=%llu errors=%llu "
      "not_started=%llu actual_rate=%.0f achieved_pct=%.2f within_1pct=%s "
      "lag_p50_us=%.1f lag_p99_us=%.1f lag_p999_us=%.1f lag_max_us=%.1f resp_p99_us=%.1f "
      "resp_max_us=%.1f cpu_s=%.2f wall_s=%.2f cpu_ns_per_txn=%.0f "
      "rss_start_mib=%.1f rss_peak_mib=%.1f rss_end_mib=%.1f end=%s\n",
      args.rate, args.workers, args.query_types, AllowedCpus(), report->total_duration_s(),
      static_cast<unsigned long long>(report->executed()),
      static_cast<unsigned long long>(report->errors()),
      static_cast<unsigned long long>(report->not_started()), report->actual_rate(),
      100.0 * achieved_ratio, (achieved_ratio >= 0.99 && achieved_ratio <= 1.01) ? "yes" : "no",
      report->schedule_lag().p50_ms() * 1e3, report->schedule_lag().p99_ms() * 1e3,
      report->schedule_lag().p999_ms() * 1e3, report->schedule_lag().max_ms() * 1e3,
      report->response_time().p99_ms() * 1e3, report->response_time().max_ms() * 1e3, cpu, wall,
      total > 0 ? cpu * 1e9 / static_cast<double>(total) : 0.0, rss_start_kib / 1024.0,
      std::max<int64_t>(StatusKib("VmHWM"), rss_peak_during_kib) / 1024.0,
      StatusKib("VmRSS") / 1024.0, report->end_reason().c_str());
  return 0;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) { return dbload::Main(argc, argv); }
