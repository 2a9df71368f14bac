#ifndef DBLOAD_COORDINATOR_METRICS_HTTP_SERVER_H_
#define DBLOAD_COORDINATOR_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "coordinator/metrics_exposition.h"

namespace dbload {

// Serves one page, GET /metrics, on one thread that polls non-blocking sockets, so that clients
// that connect and send nothing, or send a byte at a time, cost a file descriptor each and never
// hold up a scrape. prometheus-cpp's Exposer (civetweb) gives each connection a worker thread
// until its 30 s request timeout: a single idle socket froze every scrape behind it.
//
// Each connection must deliver its request within `request_timeout` of being accepted and take
// its response within `response_timeout` (deadlines that trickling bytes do not extend), in at
// most `max_request_bytes`; otherwise it is answered 400 (malformed, too large) or 408 and
// closed. Only GET and HEAD of /metrics (any query string) are served, 404 or 405 else; every
// response closes its connection. Past `max_connections` the oldest connection makes room, so
// that a flood of sockets cannot lock a scraper out.
class MetricsHttpServer {
 public:
  struct Options {
    Nanos request_timeout = 10 * kSecond;
    Nanos response_timeout = 10 * kSecond;
    size_t max_request_bytes = 16 * 1024;
    size_t max_connections = 1000;
  };
  // Renders the page for a request whose Accept header is `accept` ("" without one), so that
  // the page can choose its format; called on the server's thread for each request.
  using Page = std::function<ExposedPage(std::string_view accept)>;

  // Listens on `address` ("HOST:PORT", IPv4; port 0 picks one) and starts the thread.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& address,
                                                                  Page page, Options options);
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& address,
                                                                  Page page) {
    return Start(address, std::move(page), Options());
  }
  // Stops the thread (a page being rendered is finished first) and closes every socket.
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The port it listens on (the real one when asked for port 0).
  int port() const { return port_; }

 private:
  MetricsHttpServer(int listen_fd, int wake_fd_read, int wake_fd_write, int port, Page page,
                    Options options);
  void Loop();

  const int listen_fd_, wake_read_, wake_write_, port_;
  const Page page_;
  const Options options_;
  std::thread thread_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_METRICS_HTTP_SERVER_H_
