#ifndef DBLOAD_AGENT_ACTIVE_RUN_H_
#define DBLOAD_AGENT_ACTIVE_RUN_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "agent/run_executor.h"
#include "db/driver.h"
#include "dbload/v1/plan.pb.h"
#include "workload/workload.h"

namespace dbload {

class CoordinatorConnection;

// A run this agent is executing. Created and started by the reader thread, ended by its own
// thread, reaped by whoever next needs the slot (one run at a time).
struct ActiveRun {
  std::string run_id;
  // Its reports go only where its assignment came from.
  std::shared_ptr<CoordinatorConnection> connection;
  dbload::v1::Plan plan;
  RunShare share;
  // Closed loop: the clients its slots allow, its own (the assignment's) and those a
  // LoadChange added; and where its own range ends.
  uint32_t slot_capacity = 0;
  uint32_t own_slots_end = 0;
  bool nothing_to_run = false;  // a zero share of a query-limited plan
  std::string password;         // kept only to scrub it from error messages
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Scenario> scenario;  // may refer to the workload: destroyed first
  std::unique_ptr<db::Driver> driver;
  std::string target_address;  // where its connections go, after the --allow-target check
  RunControl control;
  uint64_t sequence = 0;  // reports sent; touched only by the run's thread
  std::atomic<bool> finished{false};
  std::thread thread;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_ACTIVE_RUN_H_
