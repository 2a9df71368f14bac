// `dbload prepare` and `dbload cleanup`: the workload's tables and data set, loaded here or split
// across agents.
#include "cli/command_prepare.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/usable_cores.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/local_cluster.h"
#include "cli/run_via.h"
#include "process/exit_codes.h"
#include "process/stop_signal.h"
#include "workload/loader.h"

namespace dbload::cli {
namespace {

// Opens one session for set-up work (prepare, cleanup).
absl::StatusOr<std::unique_ptr<db::Session>> SetupSession(LoadedPlan& loaded,
                                                          const std::string& plan_path) {
  loaded.driver->ThreadStart();
  absl::StatusOr<std::unique_ptr<db::Session>> session = loaded.driver->Connect();
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat(plan_path, ": target: ", session.status().message()));
  }
  return session;
}

// Step 2 of a split prepare: a prepare-only run (plan.prepare_only) on a coordinator, with one
// closed-loop client per part, so that the planner hands each agent a share of the parts.
// `local_agents` > 0: a coordinator and that many agents in this process instead.
int LoadPartsOnAgents(const LoadedPlan& loaded, const PlanArgs& args,
                      const std::string& coordinator, const TransportSecurity& security,
                      uint32_t local_agents, uint32_t parts, Clock& clock,
                      const TargetAllowList& allow) {
  v1::Plan plan = loaded.plan;
  plan.set_prepare_only(true);
  plan.clear_stages();
  plan.clear_abort();
  plan.clear_agents();
  plan.set_warmup_ns(0);
  plan.mutable_load()->mutable_closed()->set_clients(parts);
  plan.mutable_load()->mutable_closed()->set_think_time_ns(0);
  plan.mutable_target()->set_pool(parts);
  plan.mutable_stop()->Clear();
  // Bounded like every run; loading that takes longer is resumed by running prepare again.
  plan.mutable_stop()->set_duration_ns(24 * 3600 * kSecond);

  std::unique_ptr<LocalCluster> cluster;
  std::string address = coordinator;
  TransportSecurity link_security = security;
  if (local_agents > 0) {
    absl::StatusOr<std::unique_ptr<LocalCluster>> started =
        LocalCluster::Start(local_agents, clock, allow);
    if (!started.ok()) return Fail(started.status());
    cluster = *std::move(started);
    address = cluster->address();
    link_security = cluster->security();
  }
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub = DialControl(address, link_security);
  if (!stub.ok()) return Fail(stub.status());
  absl::StatusOr<v1::SubmitResponse> submitted =
      Submit(**stub, address, plan, args.plan_path, std::max<uint32_t>(1, local_agents),
             local_agents > 0 ? kLocalAgentWait : 0, /*in_process=*/local_agents > 0);
  if (!submitted.ok()) {
    return Fail(absl::Status(submitted.status().code(),
                             absl::StrCat(args.plan_path, ": ", submitted.status().message())));
  }
  std::cout << "loading " << parts << " parts on " << submitted->agents_size() << " agent"
            << (submitted->agents_size() == 1 ? "" : "s") << " (run " << submitted->run_id() << ")"
            << std::endl;
  InstallStopSignalHandlers();
  FollowOptions options{.coordinator = address,
                        .plan_path = args.plan_path,
                        .print_intervals = false,
                        .print_report = false,
                        .interrupted = &StopRequested()};
  if (cluster != nullptr) options.on_interrupt = [&cluster] { cluster->Interrupt(); };
  return FollowRun(**stub, submitted->run_id(), options);
}

}  // namespace

int PrepareCommand(const std::vector<std::string>& args, bool cleanup) {
  const char* name = cleanup ? "cleanup" : "prepare";
  std::set<std::string> with_value = {"--set", "--allow-target"};
  if (!cleanup) with_value.insert({"--parallel", "--agents", "--coordinator"});
  absl::StatusOr<Flags> flags = ParseFlags(name, args, with_value, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf(name, *flags);
  if (!allow.ok()) return Fail(allow.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf(name, *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  const std::string coordinator = flags->Get("--coordinator");
  absl::StatusOr<uint32_t> agents =
      PositiveCount(name, "--agents", flags->Get("--agents", "0"), kMaxLocalAgents);
  const bool split = !coordinator.empty() || flags->Get("--agents", "0") != "0";
  if (flags->Get("--agents", "0") != "0" && !agents.ok()) return Fail(agents.status());
  if (!coordinator.empty() && flags->Get("--agents", "0") != "0") {
    return Fail(absl::InvalidArgumentError(
        "dbload prepare: --agents (in this process) and --coordinator exclude each other"));
  }
  absl::StatusOr<TransportSecurity> security = SecurityOf(name, *flags);
  if (!security.ok()) return Fail(security.status());
  // By default one part per local agent, or per core of this machine (client-side generation
  // and the server's inserts then overlap; more parts than cores only adds contention).
  const uint32_t cores = std::clamp(UsableCores(), 1u, 8u);
  const std::string default_parallel =
      split && coordinator.empty() ? absl::StrCat(*agents) : absl::StrCat(cores);
  absl::StatusOr<uint32_t> parallel = PositiveCount(
      name, "--parallel", flags->Get("--parallel", default_parallel), kMaxLoadParallel);
  if (!parallel.ok()) return Fail(parallel.status());
  SteadyClock clock;
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock, *allow, RefuserOf(name));
  if (!loaded.ok()) return Fail(loaded.status());
  if (cleanup) return CleanupData(*loaded, parsed->plan_path);
  std::function<int()> load_parts;
  if (split) {
    load_parts = [&] {
      return LoadPartsOnAgents(*loaded, *parsed, coordinator, *security,
                               coordinator.empty() ? *agents : 0, *parallel, clock, *allow);
    };
  }
  return PrepareData(*loaded, parsed->plan_path, clock, *parallel, load_parts);
}

// `dbload cleanup` of a loaded plan: drops the tables its prepare created.
int CleanupData(LoadedPlan& loaded, const std::string& source) {
  absl::StatusOr<std::unique_ptr<db::Session>> session = SetupSession(loaded, source);
  if (!session.ok()) return Fail(session.status());
  const absl::Status status =
      DropWorkloadData(loaded.workload->DataSpec(), **session, loaded.driver->dialect());
  session->reset();
  loaded.driver->ThreadEnd();
  if (!status.ok()) {
    return Fail(absl::Status(status.code(), absl::StrCat(source, ": cleanup: ", status.message())));
  }
  return kExitOk;
}

// `dbload prepare` of a loaded plan, `parallel` parts; `load_parts` (may be null) has agents
// load the parts between the set-up here and the rest (indexes, checks), and returns its exit
// code.
int PrepareData(LoadedPlan& loaded, const std::string& source, Clock& clock, uint32_t parallel,
                const std::function<int()>& load_parts) {
  absl::Status status;
  const bool split = load_parts != nullptr;
  {
    const Nanos start = clock.Now();
    Nanos last_print = 0;
    // Per table: when its first report came and how many rows it had then (a resumed load
    // starts part-way), for its own rate and ETA.
    std::map<std::string, std::pair<Nanos, uint64_t>> table_start;
    const auto print_progress = [&](const PrepareProgress& p) {
      if (!p.note.empty()) {
        std::cout << p.note << std::endl;
        return;
      }
      const Nanos now = clock.Now();
      auto [first, inserted] = table_start.try_emplace(p.table, now, p.rows_done);
      if (now - last_print < kSecond && p.rows_done < p.rows_total && !inserted) return;
      last_print = now;
      const double seconds = static_cast<double>(now - first->second.first) / kSecond;
      const double rate =
          seconds > 0 ? static_cast<double>(p.rows_done - first->second.second) / seconds : 0;
      std::string eta;
      if (p.rows_done < p.rows_total && rate > 0) {
        eta =
            absl::StrFormat(", ETA %.0f s", static_cast<double>(p.rows_total - p.rows_done) / rate);
      }
      std::cout << absl::StrFormat("%s: %d / %d rows", p.table, p.rows_done, p.rows_total);
      if (seconds > 0) std::cout << absl::StrFormat(" (%.0f rows/s%s)", rate, eta);
      std::cout << std::endl;
    };
    const v1::WorkloadSpec data = loaded.workload->DataSpec();
    if (split) {
      // 1. Here: record the parts and create the tables; 2. the agents load the parts; 3. here
      // again: the parts are found done, and the indexes, after_load steps and checks follow.
      status = LoadWorkloadData(
          data, *loaded.driver,
          {.parallel = static_cast<int>(parallel), .stage = LoadOptions::Stage::kSetUpOnly},
          print_progress);
      if (status.ok()) {
        const int code = load_parts();
        if (code != kExitOk) return code;
      }
    }
    if (status.ok()) {
      // Ctrl-C (where a handler is installed: dbload suite run) stops between batches; a rerun
      // resumes.
      status = LoadWorkloadData(data, *loaded.driver,
                                {.parallel = static_cast<int>(parallel),
                                 .should_stop = [] { return StopRequested().load(); }},
                                print_progress);
    }
    if (status.ok()) {
      std::cout << absl::StrFormat("prepared in %.1f s (row counts and checks validated)\n",
                                   static_cast<double>(clock.Now() - start) / kSecond);
    }
  }
  if (!status.ok())
    return Fail(absl::Status(status.code(), absl::StrCat(source, ": prepare: ", status.message())));
  return kExitOk;
}

}  // namespace dbload::cli
