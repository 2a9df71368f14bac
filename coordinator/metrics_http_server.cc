#include "coordinator/metrics_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/background_thread.h"
#include "base/thread_name.h"

namespace dbload {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

std::string Errno(const char* what) { return absl::StrCat(what, ": ", std::strerror(errno)); }

std::string Response(absl::string_view status, absl::string_view content_type,
                     absl::string_view body, bool head) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                      head ? "" : body);
}

std::string Plain(absl::string_view status) {
  return Response(status, "text/plain; charset=utf-8", absl::StrCat(status, "\n"), false);
}

// How long a connection that has its response may take to close its end. Closing a socket with
// unread input makes the kernel reset the connection, which can destroy the response in flight
// (a 400 for an oversized request): the server stops writing, reads what is left, then closes.
constexpr auto kLinger = std::chrono::seconds(1);

struct Connection {
  int fd = -1;
  SteadyTime deadline;  // of the request, then of the response, then of the linger
  std::string in;
  std::string out;  // the response once there is one
  size_t sent = 0;
  bool lingering = false;  // response sent, write side shut
};

// The value of the request head's Accept header ("" without one); header names are
// case-insensitive.
absl::string_view AcceptHeader(absl::string_view head) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos &&
        absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(line.substr(0, colon)), "accept")) {
      return absl::StripAsciiWhitespace(line.substr(colon + 1));
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& address, Page page, Options options) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "': expected an IPv4 host:port, e.g. 127.0.0.1:9464"));
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string host = address.substr(0, colon);
  if (const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), nullptr, &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "': cannot resolve '", host, "': ", gai_strerror(rc)));
  }
  sockaddr_in bind_to = *reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  freeaddrinfo(found);
  bind_to.sin_port = htons(static_cast<uint16_t>(port));

  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(Errno("socket"));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&bind_to), sizeof(bind_to)) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    const std::string why = Errno(absl::StrCat("cannot listen on ", address).c_str());
    close(fd);
    return absl::UnavailableError(why);
  }
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string why = Errno("pipe");
    close(fd);
    return absl::InternalError(why);
  }
  options.max_connections = std::max<size_t>(1, options.max_connections);
  options.max_request_bytes = std::max<size_t>(64, options.max_request_bytes);
  return std::unique_ptr<MetricsHttpServer>(
      new MetricsHttpServer(fd, wake[0], wake[1], ntohs(bound.sin_port), std::move(page), options));
}

MetricsHttpServer::MetricsHttpServer(int listen_fd, int wake_fd_read, int wake_fd_write, int port,
                                     Page page, Options options)
    : listen_fd_(listen_fd),
      wake_read_(wake_fd_read),
      wake_write_(wake_fd_write),
      port_(port),
      page_(std::move(page)),
      options_(options) {
  thread_ = std::thread([this] {
    NameThisThread("dbload-metrics");
    MakeThisThreadBackground();
    Loop();
  });
}

MetricsHttpServer::~MetricsHttpServer() {
  const char byte = 0;
  while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

void MetricsHttpServer::Loop() {
  const auto request_timeout = std::chrono::nanoseconds(options_.request_timeout);
  const auto response_timeout = std::chrono::nanoseconds(options_.response_timeout);
  // Oldest first: accepted connections go to the back, so the front is the one to make room.
  std::list<Connection> connections;
  std::vector<pollfd> polled;
  std::vector<std::list<Connection>::iterator> polled_connection;

  // Parses a complete request head and sets the response.
  auto respond = [&](Connection& c, absl::string_view head) {
    c.deadline = std::chrono::steady_clock::now() + response_timeout;
    const absl::string_view request_line = head.substr(0, head.find("\r\n"));
    const std::vector<absl::string_view> parts = absl::StrSplit(request_line, ' ');
    if (parts.size() != 3 || !absl::StartsWith(parts[2], "HTTP/1.") || parts[1].empty() ||
        parts[1][0] != '/') {
      c.out = Plain("400 Bad Request");
      return;
    }
    const bool head_only = parts[0] == "HEAD";
    if (parts[0] != "GET" && !head_only) {
      c.out = Plain("405 Method Not Allowed");
      return;
    }
    if (parts[1].substr(0, parts[1].find('?')) != "/metrics") {
      c.out = Plain("404 Not Found");
      return;
    }
    const absl::string_view accept = AcceptHeader(head);
    const ExposedPage page = page_(std::string_view(accept.data(), accept.size()));
    c.out = Response("200 OK", page.content_type, page.body, head_only);
  };

  // Out of file descriptors with no connection of ours to close: accepting waits a little
  // rather than spin on a listening socket that stays readable.
  SteadyTime accept_paused_until;
  while (true) {
    polled.clear();
    polled_connection.clear();
    polled.push_back({.fd = wake_read_, .events = POLLIN, .revents = 0});
    const bool accepting = std::chrono::steady_clock::now() >= accept_paused_until;
    polled.push_back({.fd = accepting ? listen_fd_ : -1, .events = POLLIN, .revents = 0});
    SteadyTime next_deadline = accepting ? SteadyTime::max() : accept_paused_until;
    for (auto it = connections.begin(); it != connections.end(); ++it) {
      const bool reading = it->out.empty() || it->lingering;
      polled.push_back(
          {.fd = it->fd, .events = static_cast<short>(reading ? POLLIN : POLLOUT), .revents = 0});
      polled_connection.push_back(it);
      next_deadline = std::min(next_deadline, it->deadline);
    }
    int timeout_ms = -1;
    if (next_deadline != SteadyTime::max()) {
      const auto left = next_deadline - std::chrono::steady_clock::now();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::ceil<std::chrono::milliseconds>(left).count(), 0, 60'000));
    }
    if (poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (polled[0].revents != 0) break;  // asked to stop

    const SteadyTime now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < polled_connection.size(); ++i) {
      Connection& c = *polled_connection[i];
      const short events = polled[i + 2].revents;
      bool done = false;
      if (c.lingering) {
        char buffer[4096];
        if ((events & (POLLIN | POLLHUP | POLLERR)) != 0) {
          const ssize_t got = recv(c.fd, buffer, sizeof(buffer), 0);
          done = got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
        }
      } else if (c.out.empty() && (events & (POLLIN | POLLHUP | POLLERR)) != 0) {
        char buffer[4096];
        const ssize_t got = recv(c.fd, buffer, sizeof(buffer), 0);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
          done = true;  // the client went away before its request was complete
        } else if (got > 0) {
          c.in.append(buffer, static_cast<size_t>(got));
          const size_t end = c.in.find("\r\n\r\n");
          if (end != std::string::npos && end + 4 <= options_.max_request_bytes) {
            respond(c, absl::string_view(c.in).substr(0, end));
          } else if (c.in.size() > options_.max_request_bytes) {
            c.out = Plain("400 Bad Request");
            c.deadline = now + response_timeout;
          }
        }
      } else if (!c.out.empty() && (events & (POLLOUT | POLLHUP | POLLERR)) != 0) {
        const ssize_t sent = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (sent > 0) c.sent += static_cast<size_t>(sent);
        if (sent < 0 && errno != EAGAIN && errno != EINTR) {
          done = true;
        } else if (c.sent == c.out.size()) {
          shutdown(c.fd, SHUT_WR);
          c.lingering = true;
          c.deadline = now + kLinger;
        }
      }
      if (!done && now >= c.deadline && c.lingering) {
        done = true;
      } else if (!done && now >= c.deadline) {
        // Too slow: a request not complete in time is told so (best effort, never waited for).
        if (c.out.empty()) {
          const std::string timed_out = Plain("408 Request Timeout");
          (void)send(c.fd, timed_out.data(), timed_out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        done = true;
      }
      if (done) {
        close(c.fd);
        connections.erase(polled_connection[i]);
      }
    }

    if ((polled[1].revents & POLLIN) != 0) {
      while (true) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
          if (connections.empty()) {
            accept_paused_until = now + std::chrono::milliseconds(100);
            break;
          }
          close(connections.front().fd);  // the oldest makes room, as past max_connections
          connections.pop_front();
          continue;
        }
        if (fd < 0) break;  // EAGAIN: no more for now
        if (connections.size() >= options_.max_connections) {
          close(connections.front().fd);
          connections.pop_front();
        }
        connections.push_back(
            {.fd = fd, .deadline = now + request_timeout, .in = {}, .out = {}, .sent = 0});
      }
    }
  }
  for (Connection& c : connections) close(c.fd);
}

}  // namespace dbload
