// The /metrics HTTP server on loopback sockets: it answers a scrape at once while many clients
// sit idle or trickle a request byte by byte, closes them at their deadline, refuses malformed
// or oversized requests with 400 without harming the others, and makes room past its
// connection limit. Real sockets and real time: the deadlines are short, the margins wide.
#include "coordinator/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Steady = std::chrono::steady_clock;

// A client socket, closed when it goes.
class Socket {
 public:
  explicit Socket(int port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool connected() const { return connected_; }
  bool Send(const std::string& data) {
    return send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Everything the server sends until it closes, or until `timeout` (then `closed` is false).
  std::string ReadUntilClosed(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string got;
    const auto deadline = Steady::now() + timeout;
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
      if (left.count() <= 0) break;
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        if (closed != nullptr) *closed = true;
        return got;
      }
      got.append(buffer, static_cast<size_t>(n));
    }
    if (closed != nullptr) *closed = false;
    return got;
  }

 private:
  int fd_;
  bool connected_ = false;
};

constexpr char kPage[] = "# TYPE dbload_agents_connected gauge\ndbload_agents_connected 2\n";
constexpr char kScrape[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n";

// `accepted`, when given, gets the Accept header of each request (read after the server stops).
std::unique_ptr<MetricsHttpServer> StartServer(MetricsHttpServer::Options options,
                                               std::atomic<int>* pages = nullptr,
                                               std::vector<std::string>* accepted = nullptr) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server = MetricsHttpServer::Start(
      "127.0.0.1:0",
      [pages, accepted](std::string_view accept) {
        if (pages != nullptr) ++*pages;
        if (accepted != nullptr) accepted->emplace_back(accept);
        return ExposedPage{"text/plain; version=0.0.4; charset=utf-8", kPage};
      },
      options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// One scrape on a fresh connection: the whole response, and how long it took.
std::string Scrape(int port, double* seconds = nullptr, const std::string& request = kScrape) {
  const auto start = Steady::now();
  Socket client(port);
  EXPECT_TRUE(client.connected());
  EXPECT_TRUE(client.Send(request));
  bool closed = false;
  std::string response = client.ReadUntilClosed(std::chrono::seconds(30), &closed);
  EXPECT_TRUE(closed) << "the server keeps the connection after its response";
  if (seconds != nullptr) *seconds = std::chrono::duration<double>(Steady::now() - start).count();
  return response;
}

TEST(MetricsHttpServerTest, ServesThePageAsPrometheusText) {
  std::unique_ptr<MetricsHttpServer> server = StartServer({});
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->port(), 0);
  const std::string response = Scrape(server->port());
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response,
              HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(response, HasSubstr(absl::StrCat("\r\nContent-Length: ", sizeof(kPage) - 1, "\r\n")));
  EXPECT_TRUE(absl::EndsWith(response, absl::StrCat("\r\n\r\n", kPage))) << response;
  // HTTP/1.0 (as the tests' HttpGet speaks), a query string, HEAD.
  EXPECT_THAT(Scrape(server->port(), nullptr, "GET /metrics?x=1 HTTP/1.0\r\n\r\n"),
              StartsWith("HTTP/1.1 200 OK\r\n"));
  const std::string head = Scrape(server->port(), nullptr, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(absl::EndsWith(head, "\r\n\r\n")) << "no body for HEAD";
}

// The page chooses its format by the request's Accept header (the protobuf exposition for a
// Prometheus with native histograms): it gets the header's value, whatever the name's case.
TEST(MetricsHttpServerTest, HandsThePageTheAcceptHeader) {
  std::vector<std::string> accepted;
  std::unique_ptr<MetricsHttpServer> server = StartServer({}, nullptr, &accepted);
  ASSERT_NE(server, nullptr);
  Scrape(server->port());
  Scrape(server->port(), nullptr,
         "GET /metrics HTTP/1.1\r\nHost: x\r\naCCept:  application/vnd.google.protobuf;q=0.5 "
         "\r\nX-Accept: no\r\n\r\n");
  Scrape(server->port(), nullptr, "GET /metrics HTTP/1.1\r\nX-Accept: no\r\n\r\n");
  server.reset();
  EXPECT_THAT(accepted, ::testing::ElementsAre("*/*", "application/vnd.google.protobuf;q=0.5", ""));
}

// The defect: prometheus-cpp's civetweb kept a worker thread per connection until its 30 s
// request timeout, so one silent client froze every scrape behind it.
TEST(MetricsHttpServerTest, ScrapesAreServedAtOnceWhileIdleAndSlowClientsHoldConnections) {
  MetricsHttpServer::Options options;
  options.request_timeout = std::chrono::nanoseconds(std::chrono::seconds(2)).count();
  std::unique_ptr<MetricsHttpServer> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<Socket>> idle, slow;
  for (int i = 0; i < 150; ++i) {
    idle.push_back(std::make_unique<Socket>(server->port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x";
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<Socket>(server->port()));
    ASSERT_TRUE(slow.back()->connected());
  }
  const auto opened = Steady::now();
  for (size_t byte = 0; byte < 5; ++byte) {
    for (auto& s : slow) ASSERT_TRUE(s->Send(partial.substr(byte, 1)));
    double seconds = 0;
    EXPECT_THAT(Scrape(server->port(), &seconds), StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_LT(seconds, 1.0) << "a scrape waited behind idle connections";
  }
  // A garbage request is answered 400 and closed; the scrape after it is served.
  EXPECT_THAT(Scrape(server->port(), nullptr, "\x16\x03\x01 garbage\r\n\r\n"),
              StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  double seconds = 0;
  EXPECT_THAT(Scrape(server->port(), &seconds), StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_LT(seconds, 1.0);

  // At their deadline (2 s after connecting, however slowly they trickle) the server closes
  // them, with a 408.
  for (auto* group : {&idle, &slow}) {
    for (auto& s : *group) {
      bool closed = false;
      const std::string said = s->ReadUntilClosed(std::chrono::seconds(20), &closed);
      EXPECT_TRUE(closed);
      EXPECT_THAT(said, StartsWith("HTTP/1.1 408 Request Timeout\r\n"));
    }
  }
  const double held = std::chrono::duration<double>(Steady::now() - opened).count();
  EXPECT_GT(held, 1.0) << "closed before the deadline";
  EXPECT_LT(held, 20.0);
}

TEST(MetricsHttpServerTest, RefusesWhatIsNotAScrapeOfTheMetrics) {
  MetricsHttpServer::Options options;
  options.max_request_bytes = 1024;
  std::atomic<int> pages = 0;
  std::unique_ptr<MetricsHttpServer> server = StartServer(options, &pages);
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  EXPECT_THAT(Scrape(port, nullptr, "GET / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Scrape(port, nullptr, "GET /metricsx HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Scrape(port, nullptr, "POST /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Scrape(port, nullptr, "GET /metrics\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Scrape(port, nullptr, "hello\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  // Too large, with or without an end: 400 as soon as it passes the limit.
  EXPECT_THAT(Scrape(port, nullptr, std::string(2000, 'G')), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(
      Scrape(port, nullptr,
             absl::StrCat("GET /metrics HTTP/1.1\r\nX: ", std::string(2000, 'a'), "\r\n\r\n")),
      StartsWith("HTTP/1.1 400 "));
  EXPECT_EQ(pages.load(), 0) << "rendered the page for a refused request";
  EXPECT_THAT(Scrape(port), StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(pages.load(), 1);
}

TEST(MetricsHttpServerTest, PastItsConnectionLimitTheOldestMakesRoom) {
  MetricsHttpServer::Options options;
  options.max_connections = 10;
  std::unique_ptr<MetricsHttpServer> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<Socket>> idle;
  for (int i = 0; i < 30; ++i) {
    idle.push_back(std::make_unique<Socket>(server->port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  double seconds = 0;
  EXPECT_THAT(Scrape(server->port(), &seconds), StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_LT(seconds, 1.0);
  bool closed = false;
  idle.front()->ReadUntilClosed(std::chrono::seconds(5), &closed);
  EXPECT_TRUE(closed) << "the oldest connection is still open past the limit";
}

TEST(MetricsHttpServerTest, RefusesAnAddressItCannotListenOn) {
  std::unique_ptr<MetricsHttpServer> first = StartServer({});
  ASSERT_NE(first, nullptr);
  const absl::StatusOr<std::unique_ptr<MetricsHttpServer>> taken = MetricsHttpServer::Start(
      absl::StrCat("127.0.0.1:", first->port()), [](std::string_view) { return ExposedPage(); });
  EXPECT_FALSE(taken.ok());
  EXPECT_THAT(std::string(taken.status().message()), HasSubstr("cannot listen on 127.0.0.1:"));
  EXPECT_FALSE(
      MetricsHttpServer::Start("127.0.0.1", [](std::string_view) { return ExposedPage(); }).ok());
  EXPECT_FALSE(MetricsHttpServer::Start("127.0.0.1:99999", [](std::string_view) {
                 return ExposedPage();
               }).ok());
}

}  // namespace
}  // namespace dbload
