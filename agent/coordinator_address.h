#ifndef DBLOAD_AGENT_COORDINATOR_ADDRESS_H_
#define DBLOAD_AGENT_COORDINATOR_ADDRESS_H_

#include <string>

#include "absl/status/status.h"
#include "net/transport_security.h"

namespace dbload {

// Accepts HOST:PORT or [IPV6]:PORT; a host off this machine (not 127.0.0.0/8, ::1, localhost)
// only with TLS or security.allow_insecure_remote (CheckAddressSecurity). The error says what
// was wrong with `address`.
absl::Status CheckCoordinatorAddress(const std::string& address,
                                     const TransportSecurity& security = {});

}  // namespace dbload

#endif  // DBLOAD_AGENT_COORDINATOR_ADDRESS_H_
