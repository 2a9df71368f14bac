// Coordinator load: N simulated agents, each holding one real AgentLink stream to a coordinator
// and sending one AgentReport per second with Q query types of realistic sparse histograms.
// Issue 3, benchmark 2 (figures and commands: bench/results/2026-11-30-distributed.md).
// Its length: both roles are one binary, so that the agents' reports and the coordinator they
// load are built from the same code and flags.
//
// Two roles, meant to run as two processes so that the coordinator's CPU and memory can be read
// from /proc without the load generator's share:
//
//   coordinator_load_bench serve --listen 127.0.0.1:0 [--metrics 127.0.0.1:0]
//       [--metrics-buckets default|fine|LIST]
//       The real CoordinatorService and CoordinatorServer (coordinator/coordinator_service.cc),
//       exactly as dbload-coordinator builds them (same options; MetricsExporter published into
//       when --metrics is given, as dbload-coordinator does), in this process. The one
//       difference: the workload factory (CoordinatorOptions::make_workload). The built-in
//       workloads have one query type (oltp point_select), so this binary injects a workload
//       "bench" whose scenario "mixed" has --query-types (default 20) query types; the
//       coordinator only needs their names (Submit validates the workload and scenario and sizes
//       the RunAggregator with them).
//
//   coordinator_load_bench agents --coordinator ADDR [--agents 100] [--query-types 20]
//       [--duration 40] [--workload bench --scenario mixed] [--coordinator-pid PID]
//       [--samples-min 200] [--templates 8] [--out per_second.tsv] [--dry 1]
//       100 AgentLink streams (sync gRPC, one writer thread and one reader thread each): hello,
//       heartbeats while idle, then submits a noop open-loop plan through Control.Submit, handles
//       each Assignment, sends one AgentReport per second per agent (built with Histogram and
//       SnapshotToReport, like agent/agent_link.cc) and a final one, waits for the run to end and
//       fetches its report. With --coordinator-pid it samples the coordinator's utime+stime and
//       VmRSS/VmHWM from /proc every second. Against a real dbload-coordinator use
//       --workload oltp --scenario point_select --query-types 1.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/clock.h"
#include "base/histogram.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/metrics_http_server.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.grpc.pb.h"
#include "interval/interval_snapshot.h"
#include "plan/plan_parser.h"
#include "proto/agent_protocol.h"
#include "workload/workload.h"

namespace v1 = dbload::v1;

// ---------------------------------------------------------------------------------------------
// The bench-only workload factory (see the header comment). Query-type count from the
// environment so that `serve` needs no extra plumbing: DBLOAD_BENCH_QUERY_TYPES (default 20).
namespace dbload {
namespace {

int BenchQueryTypes() {
  const char* env = std::getenv("DBLOAD_BENCH_QUERY_TYPES");
  return env != nullptr ? std::max(1, std::atoi(env)) : 20;
}

class BenchScenario final : public Scenario {
 public:
  explicit BenchScenario(int n) {
    for (int i = 0; i < n; ++i) names_.push_back(absl::StrCat("query_", i));
  }
  const std::vector<std::string>& query_types() const override { return names_; }
  std::vector<db::StatementSpec> Statements(db::Dialect) const override { return {}; }
  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot&) const override { return nullptr; }

 private:
  std::vector<std::string> names_;
};

class BenchWorkload final : public Workload {
 public:
  std::vector<std::string> ScenarioNames() const override { return {"mixed"}; }
  absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const override {
    if (name != "mixed") return absl::InvalidArgumentError("workload bench has scenario 'mixed'");
    return std::make_unique<BenchScenario>(BenchQueryTypes());
  }
  v1::WorkloadSpec DataSpec() const override { return {}; }  // no tables: nothing to load
};

absl::StatusOr<std::unique_ptr<Workload>> MakeBenchWorkload(const v1::Plan& plan) {
  if (plan.workload() != "bench") {
    return absl::InvalidArgumentError("coordinator_load_bench knows only workload 'bench'");
  }
  return std::make_unique<BenchWorkload>();
}

}  // namespace

}  // namespace dbload

namespace {

using dbload::Histogram;
using Clock = std::chrono::steady_clock;

// ----- /proc -----

double ProcCpuSeconds(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {  // field 3 is state; 14 utime, 15 stime
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// VmRSS and VmHWM in KiB.
std::pair<long, long> ProcRss(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  long rss = -1, hwm = -1;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::atol(line.c_str() + 6);
  }
  return {rss, hwm};
}

int ProcThreads(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

double LoadAvg1() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

// ----- serve -----

volatile std::sig_atomic_t signalled = 0;
void OnSignal(int) { signalled = 1; }

std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(address.substr(0, colon), ":", port);
}

int Serve(const std::string& listen, const std::string& metrics, const std::string& buckets) {
  absl::StatusOr<std::vector<double>> bounds = dbload::ParseBucketBounds(buckets);
  if (!bounds.ok()) {
    std::fprintf(stderr, "--metrics-buckets: %s\n", std::string(bounds.status().message()).c_str());
    return 2;
  }
  auto exporter = std::make_shared<dbload::MetricsExporter>(10, *std::move(bounds));
  // The coordinator's own /metrics server and page (text, or protobuf with native histograms
  // for a client that asks for it).
  std::unique_ptr<dbload::MetricsHttpServer> exposer;
  if (!metrics.empty()) {
    auto started = dbload::MetricsHttpServer::Start(
        metrics,
        [exporter = exporter.get()](std::string_view accept) { return exporter->Render(accept); });
    if (!started.ok()) {
      std::fprintf(stderr, "--metrics: %s\n", std::string(started.status().message()).c_str());
      return 2;
    }
    exposer = *std::move(started);
  }
  dbload::SteadyClock clock;
  dbload::CoordinatorOptions options;
  options.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  if (exposer != nullptr) options.metrics = exporter.get();
  options.make_workload = dbload::MakeBenchWorkload;
  dbload::CoordinatorService service(clock, options);
  auto server = dbload::CoordinatorServer::Start(listen, service);
  if (!server.ok()) {
    std::fprintf(stderr, "serve: %s\n", std::string(server.status().message()).c_str());
    return 2;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::printf("listening on %s\n", WithPort(listen, (*server)->port()).c_str());
  if (exposer != nullptr) {
    std::printf("metrics on http://%s/metrics\n", WithPort(metrics, exposer->port()).c_str());
  }
  std::printf("query types per scenario: %d\n", dbload::BenchQueryTypes());
  std::fflush(stdout);
  while (signalled == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  service.Shutdown(3 * dbload::kSecond);
  (*server)->Shutdown();
  exposer.reset();
  return 0;
}

// ----- agents -----

struct Options {
  std::string coordinator;
  int agents = 100;
  int query_types = 20;
  int duration_s = 40;
  std::string workload = "bench";
  std::string scenario = "mixed";
  int coordinator_pid = 0;
  int templates = 8;
  uint64_t seed = 1;
  std::string out;  // per-second samples, TSV
  int samples_min = 200;
  bool dry = false;  // print the report templates' statistics and exit
};

// Samples of one query type in one interval: a lognormal latency (median `median_ns`, sigma
// `sigma`). Service time = response time less a small lognormal queueing delay.
struct QtShape {
  int samples;
  double median_ns;
  double sigma;
};

v1::AgentReport BuildTemplate(const Options& o, std::mt19937_64& rng, std::vector<int>* buckets,
                              uint64_t* executed) {
  dbload::IntervalSnapshot snapshot;
  snapshot.query_types.resize(o.query_types);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  *executed = 0;
  for (int q = 0; q < o.query_types; ++q) {
    // SAMPLES_MIN … SAMPLES_MIN×16 samples per query type per second (log-uniform), median
    // 100 µs … 10 ms, sigma 0.4 … 1.0: a few hundred to about two thousand non-zero buckets per
    // histogram (printed at start).
    const int samples = static_cast<int>(o.samples_min * std::pow(16.0, unit(rng)));
    const double median = 100e3 * std::pow(100.0, unit(rng));  // 100 µs … 10 ms
    const double sigma = 0.4 + 0.6 * unit(rng);
    Histogram& response = snapshot.query_types[q].response_time;
    Histogram& service = snapshot.query_types[q].service_time;
    for (int i = 0; i < samples; ++i) {
      const double svc = median * std::exp(sigma * normal(rng));
      const double queue = 5e3 * std::exp(1.0 * normal(rng));  // ~5 µs typical
      service.Record(static_cast<int64_t>(svc));
      response.Record(static_cast<int64_t>(svc + queue));
      snapshot.schedule_lag.Record(static_cast<int64_t>(queue));
    }
    *executed += samples;
  }
  v1::AgentReport report;
  dbload::SnapshotToReport(snapshot, &report);
  for (const v1::QueryTypeDelta& d : report.query_types()) {
    buckets->push_back(d.response_time().counts_size());
    buckets->push_back(d.service_time().counts_size());
  }
  return report;
}

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::string run_id;  // set once Submit returns
  std::atomic<int> assigned{0};
  std::atomic<int> finals_sent{0};
  std::atomic<int> streams_up{0};
  std::atomic<uint64_t> reports_sent{0};
  std::atomic<uint64_t> executed_sent{0};  // transactions in the interval reports written
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> write_ns_total{0};
  std::atomic<uint64_t> write_ns_max{0};
  std::atomic<uint64_t> late_ns_max{0};  // a report sent later than its tick
  std::atomic<bool> failed{false};
  std::atomic<bool> quit{false};
};

void AtomicMax(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load();
  while (v > cur && !a.compare_exchange_weak(cur, v)) {
  }
}

void RunAgent(int index, const Options& o, const std::shared_ptr<grpc::Channel>& channel,
              const std::vector<v1::AgentReport>& templates,
              const std::vector<uint64_t>& template_executed, Shared& shared) {
  auto stub = v1::AgentLink::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);
  v1::AgentMessage hello;
  v1::AgentHello& h = *hello.mutable_hello();
  h.set_protocol_version(dbload::kAgentProtocolVersion);
  h.set_name(absl::StrFormat("sim-%03d", index));
  h.set_host("127.0.0.1");
  h.set_cores(2);
  h.set_version("bench");
  h.set_capacity(1);
  if (!stream->Write(hello)) {
    std::fprintf(stderr, "agent %d: hello failed\n", index);
    shared.failed = true;
    return;
  }
  shared.streams_up++;

  std::mutex mu;
  std::condition_variable cv;
  std::string run_id;
  bool stop = false, gone = false;
  std::thread reader([&] {
    v1::CoordinatorMessage message;
    while (stream->Read(&message)) {
      std::lock_guard lock(mu);
      if (message.has_assign()) {
        run_id = message.assign().run_id();
        shared.assigned++;
        cv.notify_all();
      } else if (message.has_stop()) {
        stop = true;
        cv.notify_all();
      }
    }
    std::lock_guard lock(mu);
    gone = true;
    cv.notify_all();
  });

  // Idle: heartbeats every second until assigned.
  uint64_t heartbeat = 0;
  {
    std::unique_lock lock(mu);
    while (run_id.empty() && !gone && !shared.quit) {
      cv.wait_for(lock, std::chrono::seconds(1));
      if (!run_id.empty() || gone) break;
      lock.unlock();
      v1::AgentMessage m;
      m.mutable_heartbeat()->set_sequence(++heartbeat);
      stream->Write(m);
      lock.lock();
    }
  }
  std::string my_run;
  {
    std::lock_guard lock(mu);
    my_run = run_id;
  }
  if (!my_run.empty()) {
    const auto start = Clock::now();
    uint64_t sequence = 0;
    for (int second = 1; second <= o.duration_s; ++second) {
      const auto tick = start + std::chrono::seconds(second);
      bool stopped = false;
      {
        std::unique_lock lock(mu);
        cv.wait_until(lock, tick, [&] { return stop || gone; });
        stopped = stop || gone;
      }
      if (stopped) break;
      v1::AgentMessage m;
      v1::AgentReport& r = *m.mutable_report();
      const size_t t = (index + second) % templates.size();
      r = templates[t];
      r.set_run_id(my_run);
      r.set_sequence(++sequence);
      r.set_in_flight(3);
      r.set_connections(4);
      r.set_cpu_seconds(0.05);
      r.set_interval_s(1.0);
      r.set_elapsed_s(second);
      const auto before = Clock::now();
      AtomicMax(shared.late_ns_max,
                std::chrono::duration_cast<std::chrono::nanoseconds>(before - tick).count());
      const size_t bytes = m.ByteSizeLong();
      if (!stream->Write(m)) break;
      const uint64_t took =
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - before).count();
      shared.write_ns_total += took;
      AtomicMax(shared.write_ns_max, took);
      shared.reports_sent++;
      shared.executed_sent += template_executed[t];
      shared.bytes_sent += bytes;
    }
    v1::AgentMessage m;
    v1::AgentReport& f = *m.mutable_report();
    f.set_run_id(my_run);
    f.set_sequence(++sequence);
    f.set_final(true);
    f.set_elapsed_s(static_cast<double>(sequence - 1));
    f.set_end_reason("duration");
    f.set_end_reason_kind(v1::END_REASON_DURATION);
    f.set_measured_s(static_cast<double>(sequence - 1));
    if (stream->Write(m)) shared.finals_sent++;
  }
  // Stay connected (heartbeats) until told to quit, like an idle agent.
  {
    std::unique_lock lock(mu);
    while (!shared.quit && !gone) {
      cv.wait_for(lock, std::chrono::seconds(1));
      if (shared.quit || gone) break;
      lock.unlock();
      v1::AgentMessage hb;
      hb.mutable_heartbeat()->set_sequence(++heartbeat);
      stream->Write(hb);
      lock.lock();
    }
  }
  stream->WritesDone();
  context.TryCancel();
  reader.join();
  stream->Finish();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * v.size()))];
}

int Agents(const Options& o) {
  std::printf("agents %d, query types %d, duration %d s, workload %s/%s, coordinator %s pid %d\n",
              o.agents, o.query_types, o.duration_s, o.workload.c_str(), o.scenario.c_str(),
              o.coordinator.c_str(), o.coordinator_pid);
  // Report templates: distinct histograms, reused round-robin (building them live would put
  // the generator's cost on the same 2 cores as the coordinator).
  std::mt19937_64 rng(o.seed);
  std::vector<v1::AgentReport> templates;
  std::vector<int> buckets;
  std::vector<double> sizes;
  std::vector<uint64_t> template_executed;
  uint64_t executed_per_report = 0;
  for (int t = 0; t < o.templates; ++t) {
    uint64_t executed = 0;
    templates.push_back(BuildTemplate(o, rng, &buckets, &executed));
    template_executed.push_back(executed);
    executed_per_report += executed;
    v1::AgentMessage m;
    *m.mutable_report() = templates.back();
    m.mutable_report()->set_run_id("run-1-0123abcd");
    m.mutable_report()->set_sequence(17);
    m.mutable_report()->set_cpu_seconds(0.05);
    m.mutable_report()->set_interval_s(1);
    m.mutable_report()->set_elapsed_s(17);
    m.mutable_report()->set_in_flight(3);
    m.mutable_report()->set_connections(4);
    sizes.push_back(static_cast<double>(m.report().ByteSizeLong()));
  }
  executed_per_report /= o.templates;
  std::vector<double> b(buckets.begin(), buckets.end());
  std::printf(
      "report templates: %d; AgentReport.ByteSizeLong min %.0f median %.0f max %.0f bytes; "
      "non-zero buckets per histogram min %.0f median %.0f max %.0f (response and service, "
      "%d query types); transactions per report (mean) %llu\n",
      o.templates, Percentile(sizes, 0), Percentile(sizes, 50), Percentile(sizes, 100),
      Percentile(b, 0), Percentile(b, 50), Percentile(b, 100), o.query_types,
      static_cast<unsigned long long>(executed_per_report));
  std::fflush(stdout);
  if (o.dry) return 0;

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  // One channel (one HTTP/2 connection) per agent, as separate agent processes would have.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < o.agents; ++i) {
    args.SetInt("bench.agent", i);  // distinct args: no subchannel sharing
    channels.push_back(
        grpc::CreateCustomChannel(o.coordinator, grpc::InsecureChannelCredentials(), args));
  }
  Shared shared;
  std::vector<std::thread> threads;
  for (int i = 0; i < o.agents; ++i) {
    threads.emplace_back(RunAgent, i, std::cref(o), channels[i], std::cref(templates),
                         std::cref(template_executed), std::ref(shared));
  }
  auto control = v1::Control::NewStub(
      grpc::CreateChannel(o.coordinator, grpc::InsecureChannelCredentials()));

  // Submit: waits on the coordinator side until all agents are connected and idle.
  const std::string yaml = absl::StrFormat(
      "name: coordinator-load\n"
      "target: {driver: noop, noop: {fixed: 50us}, pool: 4}\n"
      "workload: %s\nscenario: %s\n"
      "load: {open: {rate: %d}}\n"
      "stop: {duration: %ds}\n",
      o.workload, o.scenario, static_cast<int>(executed_per_report * o.agents), o.duration_s);
  absl::StatusOr<v1::Plan> plan = dbload::ParsePlan(yaml, "coordinator-load");
  if (!plan.ok()) {
    std::fprintf(stderr, "plan: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  v1::SubmitRequest submit;
  *submit.mutable_plan() = *plan;
  submit.set_source_name("coordinator-load");
  submit.set_min_agents(o.agents);
  submit.set_wait_for_agents_ns(int64_t{60} * 1000000000);
  v1::SubmitResponse submitted;
  {
    grpc::ClientContext ctx;
    const grpc::Status s = control->Submit(&ctx, submit, &submitted);
    if (!s.ok()) {
      std::fprintf(stderr, "submit: %s\n", s.error_message().c_str());
      shared.quit = true;
      for (auto& t : threads) t.join();
      return 1;
    }
  }
  const auto submitted_at = Clock::now();
  std::printf("run %s across %d agents\n", submitted.run_id().c_str(), submitted.agents_size());
  std::fflush(stdout);

  // Per-second samples of the coordinator process.
  FILE* tsv = o.out.empty() ? nullptr : std::fopen(o.out.c_str(), "w");
  if (tsv) std::fprintf(tsv, "t_s\tcoord_cpu_s\tcpu_s_per_s\trss_kib\thwm_kib\tthreads\treports_sent\tload1\n");
  const int pid = o.coordinator_pid;
  const double cpu0 = pid ? ProcCpuSeconds(pid) : 0;
  const uint64_t reports0 = shared.reports_sent.load();
  const double self_cpu0 = ProcCpuSeconds(getpid());
  double prev_cpu = cpu0;
  long max_rss = 0;
  std::vector<double> per_second;
  bool done = false;
  std::string end_state;
  v1::RunReport report;
  for (int t = 1; t <= o.duration_s + 30 && !done; ++t) {
    std::this_thread::sleep_until(submitted_at + std::chrono::seconds(t));
    if (pid) {
      const double cpu = ProcCpuSeconds(pid);
      auto [rss, hwm] = ProcRss(pid);
      max_rss = std::max(max_rss, rss);
      if (t >= 3 && t <= o.duration_s - 1) per_second.push_back(cpu - prev_cpu);
      if (tsv) {
        std::fprintf(tsv, "%d\t%.2f\t%.3f\t%ld\t%ld\t%d\t%llu\t%.2f\n", t, cpu - cpu0,
                     cpu - prev_cpu, rss, hwm, ProcThreads(pid),
                     static_cast<unsigned long long>(shared.reports_sent.load()), LoadAvg1());
        std::fflush(tsv);
      }
      prev_cpu = cpu;
    }
    // Every agent sent its final report, or (agents lost by the coordinator never do) the run's
    // length plus the coordinator's 3-s silence limit has passed.
    if (shared.finals_sent.load() >= o.agents || t >= o.duration_s + 4) {
      grpc::ClientContext ctx;
      v1::GetReportRequest req;
      req.set_run_id(submitted.run_id());
      if (control->GetReport(&ctx, req, &report).ok() &&
          report.run_state() != v1::RUN_STATE_RUNNING &&
          report.run_state() != v1::RUN_STATE_UNSPECIFIED) {
        done = true;
      }
    }
  }
  const auto ended_at = Clock::now();
  const double wall = std::chrono::duration<double>(ended_at - submitted_at).count();
  const double cpu1 = pid ? ProcCpuSeconds(pid) : 0;
  const double self_cpu1 = ProcCpuSeconds(getpid());
  const uint64_t reports = shared.reports_sent.load() - reports0;
  auto [rss, hwm] = pid ? ProcRss(pid) : std::pair<long, long>{0, 0};

  std::printf("run ended: %s (end_reason '%s'), %.1f s after submit\n", done ? "yes" : "NO",
              report.end_reason().c_str(), wall);
  std::printf("report: executed %llu, intervals %d, query types %d, agents %d, agents without final report: ",
              static_cast<unsigned long long>(report.executed()), report.intervals_size(),
              report.query_types_size(), report.agents_size());
  int not_final = 0;
  for (const auto& a : report.agents()) {
    if (a.end_reason().empty()) ++not_final;
  }
  std::printf("%d\n", not_final);
  // The simulated agents' final reports carry no transactions: the report's count must be
  // exactly that of the interval reports written, or some were not merged.
  std::printf("merged exactly: %s (the report's executed %llu, the interval reports' %llu)\n",
              report.executed() == shared.executed_sent.load() ? "yes" : "NO",
              static_cast<unsigned long long>(report.executed()),
              static_cast<unsigned long long>(shared.executed_sent.load()));
  std::printf("sent: %llu interval reports (+%d final), %.1f MB, mean payload %.0f bytes; "
              "Write() mean %.0f us, max %.1f ms; latest report started %.1f ms after its tick\n",
              static_cast<unsigned long long>(reports), shared.finals_sent.load(),
              shared.bytes_sent.load() / 1e6,
              reports ? static_cast<double>(shared.bytes_sent.load()) / reports : 0.0,
              reports ? shared.write_ns_total.load() / 1e3 / reports : 0.0,
              shared.write_ns_max.load() / 1e6, shared.late_ns_max.load() / 1e6);
  if (pid) {
    const double cpu = cpu1 - cpu0;
    std::printf("coordinator pid %d: CPU %.2f s over %.1f s = %.3f CPU-s/s; per interval report "
                "%.0f us (%llu reports; includes finals, heartbeats, Submit, GetReport, ticks)\n",
                pid, cpu, wall, cpu / wall, reports ? cpu / reports * 1e6 : 0.0,
                static_cast<unsigned long long>(reports));
    std::printf("coordinator steady state (seconds 3..%d): CPU-s/s median %.3f, p90 %.3f, max %.3f\n",
                o.duration_s - 1, Percentile(per_second, 50), Percentile(per_second, 90),
                Percentile(per_second, 100));
    std::printf("coordinator memory: VmRSS now %ld KiB (%.1f MiB), max sampled %ld KiB, VmHWM %ld KiB "
                "(%.1f MiB); threads %d\n",
                rss, rss / 1024.0, max_rss, hwm, hwm / 1024.0, ProcThreads(pid));
  }
  std::printf("bench process (simulated agents) CPU: %.2f s\n", self_cpu1 - self_cpu0);
  std::printf("load average (1 min) at end: %.2f\n", LoadAvg1());
  if (tsv) std::fclose(tsv);
  shared.quit = true;
  for (auto& t : threads) t.join();
  return done ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s serve --listen ADDR [--metrics ADDR] | agents --coordinator ADDR ...\n",
                 argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  auto get = [&](const std::string& k, const std::string& d) {
    auto it = flags.find(k);
    return it == flags.end() ? d : it->second;
  };
  if (role == "serve") {
    return Serve(get("--listen", "127.0.0.1:0"), get("--metrics", ""),
                 get("--metrics-buckets", "default"));
  }
  if (role == "agents") {
    Options o;
    o.coordinator = get("--coordinator", "");
    o.agents = std::stoi(get("--agents", "100"));
    o.query_types = std::stoi(get("--query-types", "20"));
    o.duration_s = std::stoi(get("--duration", "40"));
    o.workload = get("--workload", "bench");
    o.scenario = get("--scenario", "mixed");
    o.coordinator_pid = std::stoi(get("--coordinator-pid", "0"));
    o.templates = std::stoi(get("--templates", "8"));
    o.out = get("--out", "");
    o.samples_min = std::stoi(get("--samples-min", "200"));
    o.dry = get("--dry", "0") == "1";
    if (o.coordinator.empty()) {
      std::fprintf(stderr, "agents: --coordinator is required\n");
      return 2;
    }
    return Agents(o);
  }
  std::fprintf(stderr, "unknown role '%s'\n", role.c_str());
  return 2;
}
