#ifndef DBLOAD_PLAN_PLAN_VALIDATION_H_
#define DBLOAD_PLAN_PLAN_VALIDATION_H_

// A plan's defaults and value rules, on the Plan proto alone: the CLI (after reading YAML), the
// coordinator (on Submit) and each agent (on its assignment) check the same rules with the same
// messages, and the latter two need no YAML reader for it.
//
// Defaults (ApplyPlanDefaults; the plan parser applies them and those only YAML can tell):
//   target.host  127.0.0.1 for postgresql/mysql when neither host nor socket is given
//   target.port  5432 (postgresql) or 3306 (mysql) when absent, also with a socket (PostgreSQL
//                names its socket file after the port)
//   target.pool  load.closed.clients for a closed loop (with stages: the most clients any stage
//                runs), 8 for an open loop
//   load.open.arrival  uniform
//   target.engine  event_loops for an open loop on postgresql or noop, threads otherwise. Open
//                loops on event loops cost less client CPU per query and hold their rate where
//                threads fall behind (bench/RESULTS.md 19a-19b), and they survive 1,000
//                connections, which starved the threads engine's agent (19d); closed loops of a
//                few clients were as fast or faster on threads (25). MySQL keeps threads: at
//                128 connections they cost MariaDB's client less than event loops (29c).
//   target.mysql_client  connector_c for driver mysql
// The plan parser also defaults what a proto cannot tell from 0: abort.for (5s when an abort
// map is given without it), stages.N.knee.refine (3) and the seed (1 when absent, so that every
// run is reproducible). No stop rule is ever defaulted: a plan must bound its run by
// stop.duration, stop.queries or both.
//
// target.host may name any machine: whether load may go there is decided by the process that
// connects (--allow-target, net/target_allow_list.h), not by the plan.

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "dbload/v1/plan.pb.h"
#include "plan/field_messages.h"

namespace dbload {

// Upper bounds that protect the machine from a typo ("rate: 2000000000").
inline constexpr double kMaxOpenRate = 100'000'000;
inline constexpr uint32_t kMaxClosedClients = 100'000;
inline constexpr uint32_t kMaxPool = 100'000;
inline constexpr uint32_t kMaxPort = 65535;
inline constexpr uint32_t kMaxEventLoops = 1'024;
// Target.timer_slack: more lateness than this is a different load, not a cheaper one.
inline constexpr int64_t kMaxTimerSlack = 10'000'000;  // 10 ms

// Fills the defaults listed above into a plan built in code (ParsePlan already did this).
// The seed is not defaulted here: in a proto, 0 is a valid seed and cannot be told from "unset".
void ApplyPlanDefaults(dbload::v1::Plan& plan);

// Semantic checks of a complete plan (ParsePlan calls it after applying defaults): returns the
// first problem, naming the field: `plan.yaml: load.open.rate: must be > 0, got -5`.
absl::Status ValidatePlan(const dbload::v1::Plan& plan, std::string_view source_name);

// As ValidatePlan, with each message placed where `where` says its field came from (the YAML
// reader's file positions and --set overrides).
absl::Status ValidatePlanAt(const dbload::v1::Plan& plan, const FieldLocator& where);

}  // namespace dbload

#endif  // DBLOAD_PLAN_PLAN_VALIDATION_H_
