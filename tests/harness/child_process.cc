#include "tests/harness/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

extern char** environ;

namespace dbload::testing {

namespace {

using Clock = std::chrono::steady_clock;

void Drain(const pollfd& polled, int& fd, std::string& into) {
  if (fd < 0 || (polled.revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
  char buffer[8192];
  const ssize_t got = read(fd, buffer, sizeof(buffer));
  if (got > 0) {
    into.append(buffer, static_cast<size_t>(got));
  } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
    close(fd);
    fd = -1;
  }
}

}  // namespace

std::string ProcessResult::Describe() const {
  return absl::StrCat("exit ", exit_code, term_signal ? absl::StrCat(" signal ", term_signal) : "",
                      timed_out ? " (timed out, killed)" : "", "\n--- stdout ---\n", out,
                      "--- stderr ---\n", err);
}

Child::Child(const std::vector<std::string>& argv) : started_(Clock::now()) {
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(spawned);
    pid_ = -1;
  }
}

Child::~Child() {
  if (running()) {
    kill(pid_, SIGTERM);
    Wait(std::chrono::seconds(5));  // kills it if it does not exit
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void Child::Signal(int signal_number) {
  if (running()) kill(pid_, signal_number);
}

void Child::Pump(std::chrono::milliseconds duration) { ReadUntil(Clock::now() + duration); }

ProcessResult Child::Wait(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  ReadUntil(deadline);
  if (pid_ <= 0 || reaped_) return result_;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (Clock::now() >= deadline) {
      result_.timed_out = true;
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      ReadUntil(Clock::now() + std::chrono::milliseconds(200));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  reaped_ = true;
  result_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.term_signal = WTERMSIG(status);
  return result_;
}

void Child::ReadUntil(Clock::time_point deadline) {
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 100)));
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    Drain(fds[0], out_fd_, result_.out);
    Drain(fds[1], err_fd_, result_.err);
  }
}

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  Child child(argv);
  return child.Wait(timeout);
}

}  // namespace dbload::testing
