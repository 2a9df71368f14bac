#include "tests/harness/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dbload::testing {

namespace {

// Small writes (gRPC pings, heartbeats) must not wait for Nagle: the relay would otherwise add
// latency the processes on either side do not have without it.
void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Sends everything or fails; MSG_NOSIGNAL because a peer gone mid-write must end the pair, not
// the test process.
bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

TcpRelay::TcpRelay(const std::string& target) {
  const size_t colon = target.rfind(':');
  uint32_t port = 0;
  in_addr ip{};
  if (colon == std::string::npos || inet_pton(AF_INET, target.substr(0, colon).c_str(), &ip) != 1 ||
      !absl::SimpleAtoi(target.substr(colon + 1), &port) || port == 0 || port > 65535) {
    ADD_FAILURE() << "TcpRelay: expected IPV4:PORT, got \"" << target << "\"";
    return;
  }
  target_ip_ = ip.s_addr;
  target_port_ = static_cast<uint16_t>(port);

  // Close-on-exec everywhere: the tests spawn children, which must not hold relayed sockets open
  // after a cut.
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  local.sin_port = 0;
  socklen_t length = sizeof local;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0 ||
      pipe2(wake_, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "TcpRelay: cannot listen on 127.0.0.1: " << std::strerror(errno);
    return;
  }
  port_ = ntohs(local.sin_port);
  acceptor_ = std::thread([this] { AcceptMain(); });
}

TcpRelay::~TcpRelay() {
  if (acceptor_.joinable()) {
    const char byte = 0;
    while (write(wake_[1], &byte, 1) < 0 && errno == EINTR) {
    }
    acceptor_.join();
  }
  // The acceptor is gone, so pairs_ only shrinks now; the threads take mu_ to close their
  // sockets, so they are joined without it.
  std::vector<std::unique_ptr<Pair>> pairs;
  {
    std::lock_guard lock(mu_);
    for (const std::unique_ptr<Pair>& pair : pairs_) ShutDownLocked(*pair);
    pairs.swap(pairs_);
  }
  for (const std::unique_ptr<Pair>& pair : pairs) {
    if (pair->thread.joinable()) pair->thread.join();
  }
  for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

std::string TcpRelay::address() const { return absl::StrCat("127.0.0.1:", port_); }

void TcpRelay::Cut() {
  std::lock_guard lock(mu_);
  cut_ = true;
  for (const std::unique_ptr<Pair>& pair : pairs_) ShutDownLocked(*pair);
}

void TcpRelay::Restore() {
  std::lock_guard lock(mu_);
  cut_ = false;
}

void TcpRelay::Freeze() { frozen_ = true; }
void TcpRelay::Thaw() { frozen_ = false; }

void TcpRelay::ShutDownLocked(Pair& pair) {
  if (pair.done) return;
  if (pair.client >= 0) shutdown(pair.client, SHUT_RDWR);
  if (pair.upstream >= 0) shutdown(pair.upstream, SHUT_RDWR);
}

void TcpRelay::ReapDoneLocked() {
  // A pair's thread takes no lock after marking itself done, so joining it here cannot wait on
  // this lock.
  for (auto it = pairs_.begin(); it != pairs_.end();) {
    if ((*it)->done) {
      if ((*it)->thread.joinable()) (*it)->thread.join();
      it = pairs_.erase(it);
    } else {
      ++it;
    }
  }
}

void TcpRelay::AcceptMain() {
  for (;;) {
    pollfd polled[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(polled, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (polled[1].revents != 0) return;  // the destructor
    if ((polled[0].revents & POLLIN) == 0) continue;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard lock(mu_);
    ReapDoneLocked();
    if (cut_) {
      // The network is down: the client sees its connection closed before any byte arrives.
      close(client);
      continue;
    }
    // Dialled while holding mu_ so that a Cut() cannot slip in between the dial and the pair's
    // registration and miss it; a connect on loopback does not block for long.
    const int upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_addr.s_addr = target_ip_;
    target.sin_port = htons(target_port_);
    if (upstream < 0 ||
        connect(upstream, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
      // The target is down: the client sees what it would see without the relay, a closed
      // connection.
      if (upstream >= 0) close(upstream);
      close(client);
      continue;
    }
    NoDelay(client);
    NoDelay(upstream);
    auto pair = std::make_unique<Pair>();
    pair->client = client;
    pair->upstream = upstream;
    Pair& started = *pair;
    pairs_.push_back(std::move(pair));
    started.thread = std::thread([this, &started] { PumpMain(started); });
  }
}

void TcpRelay::PumpMain(Pair& pair) {
  // Read only here, and pair.client / pair.upstream change only below, under mu_.
  const int client = pair.client;
  const int upstream = pair.upstream;
  char buffer[16384];
  bool open = true;
  while (open) {
    if (frozen_) {
      // Nothing is read, so nothing is forwarded and the kernel's buffers fill: to both ends
      // the peer has simply gone quiet. Cut() still wakes this thread through shutdown().
      // (Asking for no event still reports POLLHUP / POLLERR: a Cut() or a reset ends it.)
      pollfd hung[2] = {{client, 0, 0}, {upstream, 0, 0}};
      poll(hung, 2, 20);
      if ((hung[0].revents | hung[1].revents) & (POLLHUP | POLLERR | POLLNVAL)) break;
      continue;
    }
    pollfd polled[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
    // A timeout, so that a Freeze() is noticed while both ends are quiet.
    const int ready = poll(polled, 2, 20);
    if (ready == 0) continue;
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2 && open; ++i) {
      if (polled[i].revents == 0) continue;
      const ssize_t got = read(polled[i].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      // EOF or an error on either side ends both: gRPC never half-closes its TCP connection, so
      // there is no one-way tail worth forwarding, and a cut must look the same from both ends.
      open = got > 0 && SendAll(polled[1 - i].fd, buffer, static_cast<size_t>(got));
    }
  }
  std::lock_guard lock(mu_);
  shutdown(client, SHUT_RDWR);
  shutdown(upstream, SHUT_RDWR);
  close(client);
  close(upstream);
  pair.client = -1;
  pair.upstream = -1;
  pair.done = true;
}

}  // namespace dbload::testing
