#ifndef DBLOAD_TESTS_HARNESS_HTTP_GET_H_
#define DBLOAD_TESTS_HARNESS_HTTP_GET_H_

#include <optional>
#include <string>

namespace dbload::testing {

// GET http://127.0.0.1:port/target over HTTP/1.0 (the server closes after the response), 5 s
// timeouts: the body of a 200 response, or nullopt with the reason in `error`. Enough for the
// coordinator's /metrics and Prometheus's API, without an HTTP library.
std::optional<std::string> HttpGet(int port, const std::string& target, std::string& error);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_HTTP_GET_H_
