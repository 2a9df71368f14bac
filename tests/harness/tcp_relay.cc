#include "tests/harness/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dbload::testing {

namespace {

using Clock = std::chrono::steady_clock;

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

bool ParseIpv4Port(const std::string& text, uint32_t& ip, uint16_t& port) {
  const size_t colon = text.rfind(':');
  in_addr address{};
  uint32_t number = 0;
  if (colon == std::string::npos || inet_pton(AF_INET, text.substr(0, colon).c_str(), &address) != 1 ||
      !absl::SimpleAtoi(text.substr(colon + 1), &number) || number > 65535) {
    return false;
  }
  ip = address.s_addr;
  port = static_cast<uint16_t>(number);
  return true;
}

std::string Ipv4Text(uint32_t ip) {
  char text[INET_ADDRSTRLEN] = "";
  in_addr address{.s_addr = ip};
  inet_ntop(AF_INET, &address, text, sizeof text);
  return text;
}

uint32_t Ipv4Of(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1) {
    ADD_FAILURE() << "TcpRelay: not an IPv4 address: \"" << text << "\"";
  }
  return address.s_addr;
}

}  // namespace

TcpRelay::TcpRelay(const std::string& target, TcpRelayOptions options) {
  uint16_t listen_port = 0;
  if (!ParseIpv4Port(target, target_ip_, target_port_) || target_port_ == 0) {
    ADD_FAILURE() << "TcpRelay: expected IPV4:PORT, got \"" << target << "\"";
    return;
  }
  if (!ParseIpv4Port(options.listen, listen_ip_, listen_port)) {
    ADD_FAILURE() << "TcpRelay: expected IPV4:PORT to listen on, got \"" << options.listen << "\"";
    return;
  }
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "TcpRelay: pipe2: " << std::strerror(errno);
    return;
  }
  delay_us_ = options.delay.count();
  // The acceptor creates every socket (the listening one, and each upstream it dials), so that
  // when it has entered a namespace they all belong to it; it says once it listens (it owns
  // the promise, which must outlive its set_value()).
  std::promise<std::string> listening;
  std::future<std::string> started = listening.get_future();
  acceptor_ = std::thread([this, listening = std::move(listening), netns = options.netns,
                           listen_port]() mutable {
    std::string error;
    if (!netns.empty()) {
      const int fd = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        error = absl::StrCat("cannot enter network namespace ", netns, ": ", std::strerror(errno));
      }
      if (fd >= 0) close(fd);
    }
    if (error.empty()) {
      listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const int one = 1;
      if (listen_fd_ >= 0) setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_addr.s_addr = listen_ip_;
      local.sin_port = htons(listen_port);
      socklen_t length = sizeof local;
      if (listen_fd_ < 0 ||
          bind(listen_fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
          listen(listen_fd_, 64) != 0 ||
          getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
        error = absl::StrCat("cannot listen on ", Ipv4Text(listen_ip_), ":", listen_port, ": ",
                             std::strerror(errno));
      } else {
        port_ = ntohs(local.sin_port);
      }
    }
    listening.set_value(error);
    if (error.empty()) AcceptMain();
  });
  const std::string error = started.get();
  if (!error.empty()) {
    ADD_FAILURE() << "TcpRelay: " << error;
    port_ = 0;
  }
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

std::string TcpRelay::address() const { return absl::StrCat(Ipv4Text(listen_ip_), ":", port_); }

void TcpRelay::Cut() {
  std::lock_guard lock(mu_);
  cut_ = true;
  for (const std::unique_ptr<Pair>& pair : pairs_) ShutDownLocked(*pair);
}

void TcpRelay::Restore() {
  std::lock_guard lock(mu_);
  cut_ = false;
}

void TcpRelay::CutPeer(const std::string& ip) {
  const uint32_t peer = Ipv4Of(ip);
  std::lock_guard lock(mu_);
  cut_peers_.insert(peer);
  for (const std::unique_ptr<Pair>& pair : pairs_) {
    if (pair->peer == peer) ShutDownLocked(*pair);
  }
}

void TcpRelay::RestorePeer(const std::string& ip) {
  const uint32_t peer = Ipv4Of(ip);
  std::lock_guard lock(mu_);
  cut_peers_.erase(peer);
}

void TcpRelay::Freeze() { frozen_ = true; }
void TcpRelay::Thaw() { frozen_ = false; }

std::set<std::string> TcpRelay::PeersSeen() const {
  std::lock_guard lock(mu_);
  std::set<std::string> seen;
  for (uint32_t peer : peers_seen_) seen.insert(Ipv4Text(peer));
  return seen;
}

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
    sockaddr_in from{};
    socklen_t from_length = sizeof from;
    const int client =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_length, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard lock(mu_);
    ReapDoneLocked();
    peers_seen_.insert(from.sin_addr.s_addr);
    if (cut_ || cut_peers_.contains(from.sin_addr.s_addr)) {
      // The network is down: the client sees its connection closed before any byte arrives.
      close(client);
      continue;
    }
    // Dialled while holding mu_ so that a Cut() cannot slip in between the dial and the pair's
    // registration and miss it; the targets are on the same machine, so a connect does not
    // block for long.
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
    pair->peer = from.sin_addr.s_addr;
    Pair& started = *pair;
    pairs_.push_back(std::move(pair));
    started.thread = std::thread([this, &started] { PumpMain(started); });
  }
}

void TcpRelay::PumpMain(Pair& pair) {
  // Read only here, and pair.client / pair.upstream change only below, under mu_.
  const int fds[2] = {pair.client, pair.upstream};
  // Bytes read from fds[i] wait in waiting[i] until their time to go to fds[1 - i] (with no
  // delay they go at once).
  struct Chunk {
    Clock::time_point due;
    std::string bytes;
  };
  std::deque<Chunk> waiting[2];
  char buffer[16384];
  // EOF or an error on either side ends both: gRPC never half-closes its TCP connection, so
  // there is no one-way tail worth keeping open for, and a cut must look the same from both
  // ends. What was read before it still arrives (after its delay), then both close.
  bool reading = true;
  bool open = true;
  while (open) {
    if (frozen_) {
      // Nothing is read or sent, so the kernel's buffers fill: to both ends the peer has simply
      // gone quiet. Cut() still wakes this thread through shutdown(). (Asking for no event still
      // reports POLLHUP / POLLERR: a Cut() or a reset ends it.)
      pollfd hung[2] = {{fds[0], 0, 0}, {fds[1], 0, 0}};
      poll(hung, 2, 20);
      if ((hung[0].revents | hung[1].revents) & (POLLHUP | POLLERR | POLLNVAL)) break;
      continue;
    }
    Clock::time_point now = Clock::now();
    for (int i = 0; i < 2 && open; ++i) {
      while (open && !waiting[i].empty() && waiting[i].front().due <= now) {
        open = SendAll(fds[1 - i], waiting[i].front().bytes.data(),
                       waiting[i].front().bytes.size());
        waiting[i].pop_front();
      }
    }
    if (!open || (!reading && waiting[0].empty() && waiting[1].empty())) break;
    // Wake for the next chunk due, for a Freeze() while both ends are quiet, and for input.
    std::chrono::nanoseconds wait = std::chrono::milliseconds(20);
    for (const std::deque<Chunk>& queue : waiting) {
      if (!queue.empty()) wait = std::min<std::chrono::nanoseconds>(wait, queue.front().due - now);
    }
    wait = std::max<std::chrono::nanoseconds>(wait, std::chrono::nanoseconds(0));
    const timespec timeout{.tv_sec = static_cast<time_t>(wait.count() / 1'000'000'000),
                           .tv_nsec = static_cast<long>(wait.count() % 1'000'000'000)};
    if (!reading) {
      // Only what was read before the end is left to send, when it is due.
      ppoll(nullptr, 0, &timeout, nullptr);
      continue;
    }
    pollfd polled[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    const int ready = ppoll(polled, 2, &timeout, nullptr);
    if (ready == 0) continue;
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2 && open; ++i) {
      if (polled[i].revents == 0 || !reading) continue;
      const ssize_t got = read(fds[i], buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        reading = false;
        continue;
      }
      const std::chrono::microseconds delay(delay_us_.load());
      if (delay.count() == 0 && waiting[i].empty()) {
        open = SendAll(fds[1 - i], buffer, static_cast<size_t>(got));
      } else {
        waiting[i].push_back({Clock::now() + delay, std::string(buffer, static_cast<size_t>(got))});
      }
    }
  }
  std::lock_guard lock(mu_);
  shutdown(fds[0], SHUT_RDWR);
  shutdown(fds[1], SHUT_RDWR);
  close(fds[0]);
  close(fds[1]);
  pair.client = -1;
  pair.upstream = -1;
  pair.done = true;
}

}  // namespace dbload::testing
