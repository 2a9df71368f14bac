#include "tests/harness/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace dbload::testing {

std::optional<std::string> HttpGet(int port, const std::string& target, std::string& error) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = absl::StrCat("socket: ", std::strerror(errno));
    return std::nullopt;
  }
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    error = absl::StrCat("connect to port ", port, ": ", std::strerror(errno));
    close(fd);
    return std::nullopt;
  }
  const std::string request =
      absl::StrCat("GET ", target, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    error = absl::StrCat("write: ", std::strerror(errno));
    close(fd);
    return std::nullopt;
  }
  std::string response;
  char buffer[8192];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      error = absl::StrCat("read: ", std::strerror(errno));
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos) {
    error = absl::StrCat("not an HTTP response: ", response.substr(0, 200));
    return std::nullopt;
  }
  if (response.find(" 200 ") > response.find("\r\n")) {
    error = absl::StrCat("HTTP error: ", response.substr(0, 400));
    return std::nullopt;
  }
  return response.substr(body + 4);
}

}  // namespace dbload::testing
