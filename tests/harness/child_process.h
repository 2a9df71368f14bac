#ifndef DBLOAD_TESTS_HARNESS_CHILD_PROCESS_H_
#define DBLOAD_TESTS_HARNESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace dbload::testing {

// What a child process did: its exit, and everything it wrote.
struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int term_signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  double seconds = 0;  // from start to exit

  // Exit, signal and both outputs, for test failure messages.
  std::string Describe() const;
};

// A child started by the integration tests (dbload, its daemons, psql), stdout and stderr
// captured through pipes, stdin /dev/null. A child still running when this goes is stopped by
// its PID: SIGTERM, 5 s to exit, then SIGKILL. Failures to start are test failures.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !reaped_; }
  // Both of its pipes are closed (it exited, or closed them): no more output will come.
  bool outputs_closed() const { return out_fd_ < 0 && err_fd_ < 0; }
  const std::string& out() const { return result_.out; }
  const std::string& err() const { return result_.err; }
  // Sends a signal to the child (by its PID), e.g. SIGKILL to simulate a crash.
  void Signal(int signal_number);

  // Reads output until `predicate(stdout)` holds or `timeout` passes; returns whether it held.
  template <typename Predicate>
  bool PumpUntil(Predicate predicate, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!predicate(result_.out)) {
      if (std::chrono::steady_clock::now() >= deadline || (out_fd_ < 0 && err_fd_ < 0)) {
        return false;
      }
      ReadUntil(std::min(deadline, std::chrono::steady_clock::now() +
                                       std::chrono::milliseconds(20)));
    }
    return true;
  }
  // Reads output for `duration` (so that a chatty child never blocks on a full pipe).
  void Pump(std::chrono::milliseconds duration);
  // Reads until both pipes close and the child exits, or `timeout` passes (then it is killed).
  ProcessResult Wait(std::chrono::milliseconds timeout);

 private:
  void ReadUntil(std::chrono::steady_clock::time_point deadline);

  std::chrono::steady_clock::time_point started_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_fd_ = -1;
  int err_fd_ = -1;
  ProcessResult result_;
};

// Runs a child to its end (killed after `timeout`).
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_CHILD_PROCESS_H_
