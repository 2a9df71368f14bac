#ifndef DBLOAD_AGENT_RECONNECT_POLICY_H_
#define DBLOAD_AGENT_RECONNECT_POLICY_H_

#include <cstdint>
#include <random>

#include "absl/status/status.h"
#include "base/clock.h"

namespace dbload {

// Whether a coordinator that ended the link with `code` will refuse this agent every time, so
// that retrying only repeats the refusal: a missing or wrong token, another protocol version, a
// call it does not serve. Not for a coordinator that is down or restarting.
bool IsPermanentLinkRefusal(absl::StatusCode code);

// How long the link waits before dialing the coordinator again: from `min`, doubling after each
// attempt up to `max`, back to `min` after a connection on which the coordinator said anything;
// each wait jittered to 50-100 % of the backoff, so that agents that lost the same coordinator
// do not all come back at once. Expects 0 < min <= max.
class ReconnectBackoff {
 public:
  ReconnectBackoff(Nanos min, Nanos max, uint64_t seed);

  // The wait after an attempt; `heard`: the coordinator said something on it.
  Nanos NextWait(bool heard);

 private:
  const Nanos min_;
  const Nanos max_;
  Nanos backoff_;
  std::mt19937_64 random_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_RECONNECT_POLICY_H_
