#include "process/stop_signal.h"

#include <csignal>

namespace dbload {
namespace {

// A signal handler may only touch lock-free atomics.
static_assert(std::atomic<bool>::is_always_lock_free);

std::atomic<bool> stop_requested{false};

void OnStopSignal(int) { stop_requested.store(true); }

}  // namespace

void InstallStopSignalHandlers() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

std::atomic<bool>& StopRequested() { return stop_requested; }

}  // namespace dbload
