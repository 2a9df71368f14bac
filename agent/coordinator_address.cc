#include "agent/coordinator_address.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dbload {

absl::Status CheckCoordinatorAddress(const std::string& address,
                                     const TransportSecurity& security) {
  const auto malformed = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator address: expected HOST:PORT (e.g. 127.0.0.1:7000 or [::1]:7000), got \"",
        address, "\""));
  };
  if (address.empty()) return absl::InvalidArgumentError("coordinator address: missing");
  std::string host;
  std::string port;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return malformed();
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return malformed();
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    // A bare IPv6 address or a gRPC scheme ("dns:///", "ipv4:") would be ambiguous here.
    if (host.find(':') != std::string::npos || host.find('/') != std::string::npos) {
      return malformed();
    }
  }
  uint32_t port_number = 0;
  if (host.empty() || port.empty() || !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535) {
    return malformed();
  }
  return CheckAddressSecurity(address, security, "coordinator address");
}

}  // namespace dbload
