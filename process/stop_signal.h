#ifndef DBLOAD_PROCESS_STOP_SIGNAL_H_
#define DBLOAD_PROCESS_STOP_SIGNAL_H_

#include <atomic>

namespace dbload {

// The stop scheme of `dbload` and `dbload-coordinator`: SIGINT and SIGTERM only set a flag
// (the one thing a handler may safely do), and the program polls it where it can stop cleanly
// (between intervals, batches, runs). Until InstallStopSignalHandlers() is called the signals
// keep their default action, so a command that has started nothing yet simply dies.
//
// dbload-agent does not use it: it blocks in its link to the coordinator rather than polling,
// so it wakes a watcher thread through a self-pipe instead (agent/agent_main.cc).

// Installs the handlers (again: harmless). Repeated signals keep setting the flag.
void InstallStopSignalHandlers();

// Set once SIGINT or SIGTERM arrived after InstallStopSignalHandlers().
std::atomic<bool>& StopRequested();

}  // namespace dbload

#endif  // DBLOAD_PROCESS_STOP_SIGNAL_H_
