#ifndef DBLOAD_PROTO_AGENT_PROTOCOL_H_
#define DBLOAD_PROTO_AGENT_PROTOCOL_H_

#include <cstdint>

namespace dbload {

// The version of the agent link (proto/dbload/v1/agent.proto) that this build speaks, sent in
// AgentHello.protocol_version. Bump it on any change an older peer would misread (a new field
// that must not be ignored, a changed meaning); the coordinator refuses a mismatch rather than
// running a load that one side misunderstands.
// 2: LoadOver and CloseSessions (an agent of 1 would close its sessions without waiting, and one
// of 2 would wait for a CloseSessions that a coordinator of 1 never sends).
// 3: SessionsReady and StartLoad (an agent of 2 would start its load without waiting, and one of
// 3 would wait for a StartLoad that a coordinator of 2 never sends).
inline constexpr uint32_t kAgentProtocolVersion = 3;

}  // namespace dbload

#endif  // DBLOAD_PROTO_AGENT_PROTOCOL_H_
