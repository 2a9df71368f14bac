// dbload-coordinator: accepts agents' links and the CLI's plans, splits runs across agents and
// merges their reports. Exit codes: 0 after a clean shutdown, 2 bad arguments or cannot listen.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/metrics_exposition.h"
#include "coordinator/metrics_http_server.h"
#include "coordinator/run_store.h"
#include "net/transport_security.h"
#include "process/exit_codes.h"
#include "process/flag_args.h"
#include "process/stop_signal.h"
#include "proto/run_outcome.h"

namespace dbload {
namespace {

// How long agents get to confirm a stop and send their final reports at shutdown: longer than an
// interval, shorter than their dead-man timeout.
constexpr Nanos kShutdownGrace = 3 * kSecond;

constexpr char kUsage[] =
    R"(usage: dbload-coordinator --listen ADDR
                          [--metrics ADDR [--metrics-buckets SPEC] [--metrics-native-schema N]]
                          [--state-dir DIR] [--max-rate N] [--max-clients N] [--allow-target LIST]
                          [--tls-cert FILE --tls-key FILE [--tls-ca FILE]] [--token-file FILE]

Accepts dbload agents (they dial in) and the dbload CLI's plans on ADDR, splits each run's load
across the connected agents and merges their reports.

  --listen ADDR     host:port for agents and the control API, e.g. 127.0.0.1:7000 (port 0 picks
                    one), or unix:PATH. Without TLS only loopback addresses (127.0.0.0/8, [::1],
                    localhost) unless --allow-insecure-remote.
  --metrics ADDR    Serve Prometheus metrics at http://ADDR/metrics, e.g. 127.0.0.1:9464 (port 0
                    picks one). IPv4 only. Scrapes are served at once however many
                    clients sit idle on the port (each must send its request within 10 s);
                    an address off loopback (e.g. 0.0.0.0:9464, for a Prometheus on another
                    machine) needs --allow-insecure-remote: the page has no TLS or token (it
                    holds run ids, scenario names and figures, never a password).
  --metrics-buckets SPEC
                    The classic buckets of the exported latency histograms: "default" (14
                    bounds, 50 us to 10 s: about 850 series for a run of 20 query types;
                    histogram_quantile within the bucket holding the true value, bounds at
                    most 2.5x apart up to 100 ms, 5x up to 1 s, 10x up to 10 s), "fine" (5 %
                    steps, 288 bounds: within 5 %, 14x the series), or bounds in seconds,
                    ascending, comma-separated (0.001,0.005,0.02,0.1,1; at most 1000). Exact
                    quantiles are in the *_window_seconds gauges and the reports whatever
                    this is.
  --metrics-native-schema N
                    A Prometheus with native histograms enabled (it asks for the protobuf
                    exposition) also gets each latency histogram as a native one, still one
                    series, with 2^N exponential buckets per power of two: histogram_quantile
                    within one bucket, 2^(2^-N) - 1 (N from -4 to 8; default 5: 2.2 %; 8:
                    0.27 %). "off": the text exposition only, classic buckets only.
  --state-dir DIR   Keep every run's report in DIR/runs/RUN.json (written when the run starts,
                    every 5 s, and when it ends), so that a restarted coordinator still serves
                    them; a run cut off by a crash is served as interrupted with the numbers
                    last saved. Without it reports live in memory until the coordinator exits.
  --max-rate N      Refuse plans whose open-loop rate (at its peak, over all stages and knee
                    steps) is above N transactions per second, before any load.
  --max-clients N   The same for closed-loop clients.
  --allow-target LIST
                    The database targets the coordinator's probe (the server's own statistics,
                    read during each run) may connect to, repeatable: comma-separated CIDR
                    (10.1.0.0/16), IP (127.0.0.2, ::1) or HOST (db.example.com), each
                    optionally with :PORT. Default: 127.0.0.0/8,::1,localhost. A run whose
                    target is outside still runs, with the probe off and a note naming this
                    flag. Where load may go is each agent's own --allow-target.
)"
    "%SECURITY%"
    R"(  --help            This text.

Once listening, stdout gets one line per address, with the real port:
  listening on HOST:PORT
  metrics on http://HOST:PORT/metrics

SIGINT or SIGTERM: running runs are told to stop, their final reports are awaited for up to 3 s,
then the coordinator exits.
)";

std::string Usage() {
  return absl::StrReplaceAll(kUsage, {{"%SECURITY%", SecurityFlagsHelp(/*server=*/true)}});
}

void LogLine(const std::string& line) {
  // One line per event, stamped, flushed at once: the coordinator usually runs under a service
  // manager that collects stderr.
  std::fprintf(stderr, "%s %s\n",
               absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()).c_str(),
               line.c_str());
}

// host:port with the port replaced ("127.0.0.1:0", 4711 -> "127.0.0.1:4711").
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(colon == std::string::npos ? address : address.substr(0, colon), ":", port);
}

int Main(int argc, char** argv) {
  std::string listen, metrics, metrics_buckets = "default", state_dir, max_rate, max_clients;
  std::string metrics_native_schema = std::to_string(kDefaultNativeSchema);
  SecurityFlags security_flags;
  std::vector<std::string> allow_target;
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(Usage().c_str(), stdout);
      return kExitOk;
    }
    std::string* value = nullptr;
    const FlagArg flag = SplitFlagArg(arg);
    const std::string& name = flag.name;
    if (bool takes_value = false; IsSecurityFlag(name, &takes_value)) {
      std::string file = flag.value.value_or("");
      if (takes_value) {
        absl::StatusOr<std::string> given = TakeFlagValue(flag, args, i);
        if (!given.ok()) {
          std::cerr << "dbload-coordinator: " << given.status().message() << "\n";
          return kExitUsage;
        }
        file = *given;
      }
      if (absl::Status set = SetSecurityFlag(name, file, security_flags); !set.ok()) {
        std::cerr << "dbload-coordinator: " << set.message() << "\n";
        return kExitUsage;
      }
      continue;
    }
    if (name == "--listen") value = &listen;
    if (name == "--metrics") value = &metrics;
    if (name == "--metrics-buckets") value = &metrics_buckets;
    if (name == "--metrics-native-schema") value = &metrics_native_schema;
    if (name == "--state-dir") value = &state_dir;
    if (name == "--max-rate") value = &max_rate;
    if (name == "--max-clients") value = &max_clients;
    if (name == "--allow-target") value = &allow_target.emplace_back();
    if (value == nullptr) {
      std::cerr << "dbload-coordinator: unknown argument '" << arg << "'\n" << Usage();
      return kExitUsage;
    }
    absl::StatusOr<std::string> given = TakeFlagValue(flag, args, i);
    if (!given.ok()) {
      std::cerr << "dbload-coordinator: " << given.status().message() << "\n";
      return kExitUsage;
    }
    *value = *std::move(given);
  }
  if (listen.empty()) {
    std::cerr << "dbload-coordinator: --listen is required\n" << Usage();
    return kExitUsage;
  }
  absl::StatusOr<TargetAllowList> probe_allow_target = TargetAllowList::Parse(allow_target);
  if (!probe_allow_target.ok()) {
    std::cerr << "dbload-coordinator: " << probe_allow_target.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<TransportSecurity> security =
      LoadTransportSecurity(security_flags, /*server=*/true);
  if (!security.ok()) {
    std::cerr << "dbload-coordinator: " << security.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::vector<double>> bucket_bounds = ParseBucketBounds(metrics_buckets);
  if (!bucket_bounds.ok()) {
    std::cerr << "dbload-coordinator: --metrics-buckets: " << bucket_bounds.status().message()
              << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::optional<int>> native_schema = ParseNativeSchema(metrics_native_schema);
  if (!native_schema.ok()) {
    std::cerr << "dbload-coordinator: --metrics-native-schema: " << native_schema.status().message()
              << "\n";
    return kExitUsage;
  }
  double max_rate_value = 0;
  uint32_t max_clients_value = 0;
  if (!max_rate.empty() &&
      (!absl::SimpleAtod(max_rate, &max_rate_value) || !(max_rate_value > 0))) {
    std::cerr << "dbload-coordinator: --max-rate: expected a positive number of transactions "
                 "per second, got '"
              << max_rate << "'\n";
    return kExitUsage;
  }
  if (!max_clients.empty() &&
      (!absl::SimpleAtoi(max_clients, &max_clients_value) || max_clients_value == 0)) {
    std::cerr << "dbload-coordinator: --max-clients: expected a positive whole number, got '"
              << max_clients << "'\n";
    return kExitUsage;
  }
  if (!metrics.empty() && (absl::StartsWith(metrics, "unix:") || absl::StartsWith(metrics, "[") ||
                           metrics.find(':') == std::string::npos)) {
    std::cerr << "dbload-coordinator: --metrics '" << metrics
              << "': expected an IPv4 host:port, e.g. 127.0.0.1:9464\n";
    return kExitUsage;
  }
  if (!metrics.empty() && !IsLoopbackListenAddress(metrics) &&
      !security_flags.allow_insecure_remote) {
    std::cerr << "dbload-coordinator: --metrics '" << metrics
              << "': not a loopback address (127.0.0.0/8, localhost); the metrics page has no TLS "
                 "or token, so serving it to other machines needs --allow-insecure-remote\n";
    return kExitUsage;
  }
  std::unique_ptr<RunStore> run_store;
  std::vector<v1::RunReport> restored;
  if (!state_dir.empty()) {
    absl::StatusOr<std::unique_ptr<RunStore>> opened = RunStore::Open(state_dir);
    if (!opened.ok()) {
      std::cerr << "dbload-coordinator: " << opened.status().message() << "\n";
      return kExitUsage;
    }
    run_store = *std::move(opened);
    absl::StatusOr<std::vector<v1::RunReport>> loaded = run_store->LoadAll();
    if (!loaded.ok()) {
      // A report that cannot be read is not skipped: someone should look at it first.
      std::cerr << "dbload-coordinator: --state-dir " << state_dir << ": "
                << loaded.status().message() << "\n";
      return kExitUsage;
    }
    restored = *std::move(loaded);
    for (v1::RunReport& report : restored) {
      if (RunStateOf(report) != v1::RUN_STATE_RUNNING) continue;
      MarkInterruptedByRestart(report);
      if (absl::Status saved = run_store->Save(report); !saved.ok()) {
        std::cerr << "dbload-coordinator: " << saved.message() << "\n";
        return kExitUsage;
      }
    }
  }

  // The exporter outlives the service (which publishes into it) and the HTTP server (which
  // collects from it); the server stops serving before either goes.
  auto exporter = std::make_shared<MetricsExporter>(10, *std::move(bucket_bounds), *native_schema);
  std::unique_ptr<MetricsHttpServer> metrics_server;
  int metrics_port = 0;
  if (!metrics.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started = MetricsHttpServer::Start(
        metrics,
        [exporter = exporter.get()](std::string_view accept) { return exporter->Render(accept); });
    if (!started.ok()) {
      std::cerr << "dbload-coordinator: cannot serve metrics on '" << metrics
                << "': " << started.status().message() << "\n";
      return kExitUsage;
    }
    metrics_server = *std::move(started);
    metrics_port = metrics_server->port();
  }

  SteadyClock clock;
  CoordinatorOptions options;
  options.log = LogLine;
  if (metrics_server != nullptr) options.metrics = exporter.get();
  options.run_store = run_store.get();
  options.max_rate = max_rate_value;
  options.max_clients = max_clients_value;
  options.restored_runs = std::move(restored);
  options.token = security->token;
  options.probe_allow_target = *std::move(probe_allow_target);
  options.probe_remedy = "the coordinator";
  CoordinatorService service(clock, options);
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start(listen, service, *security);
  if (!server.ok()) {
    std::cerr << "dbload-coordinator: " << server.status().message() << "\n";
    return kExitUsage;
  }
  InstallStopSignalHandlers();
  LogLine(absl::StrCat("listening on ", listen,
                       (*server)->port() > 0 && listen.rfind("unix:", 0) != 0
                           ? absl::StrCat(" (port ", (*server)->port(), ")")
                           : "",
                       security->tls ? (security->ca_pem.empty() ? ", TLS" : ", mutual TLS")
                                     : ", plain text",
                       security->token.empty() ? "" : ", token required"));
  // On stdout, with the real ports, for whoever started us with port 0 (tests, scripts).
  const bool unix_socket = absl::StartsWith(listen, "unix:");
  std::printf("listening on %s\n",
              unix_socket ? listen.c_str()
                          : WithPort(listen, (*server)->port()).c_str());
  if (metrics_server != nullptr) {
    const std::string where = WithPort(metrics, metrics_port);
    std::printf("metrics on http://%s/metrics\n", where.c_str());
    LogLine(absl::StrCat("metrics on http://", where, "/metrics"));
  }
  std::fflush(stdout);
  // The signal handler only sets a flag; the work happens here, outside it.
  while (!StopRequested().load()) clock.SleepUntil(clock.Now() + 100 * kMillisecond);
  LogLine("shutting down: stopping runs and waiting for their final reports");
  service.Shutdown(kShutdownGrace);
  (*server)->Shutdown();
  metrics_server.reset();
  LogLine("stopped");
  return kExitOk;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) { return dbload::Main(argc, argv); }
