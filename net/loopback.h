#ifndef DBLOAD_NET_LOOPBACK_H_
#define DBLOAD_NET_LOOPBACK_H_

#include <string>

namespace dbload {

// This build sends load, and listens, only on this machine: these decide what "this machine"
// means, in one place for the plan parser, the agent and the coordinator.

// 127.0.0.0/8, ::1, ::ffff:127.x.y.z, or "localhost" (any case).
bool IsLoopbackHost(const std::string& host);

// "HOST:PORT", "[IPv6]:PORT" or "unix:PATH" (a socket file is reachable from here only), whose
// host is loopback.
bool IsLoopbackAddress(const std::string& address);

}  // namespace dbload

#endif  // DBLOAD_NET_LOOPBACK_H_
