#include "agent/reconnect_policy.h"

#include <algorithm>

namespace dbload {

bool IsPermanentLinkRefusal(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnauthenticated:  // a missing or wrong token
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:  // another agent protocol version
    case absl::StatusCode::kInvalidArgument:     // a hello the coordinator cannot take
    case absl::StatusCode::kUnimplemented:       // no agent link there: not a dbload-coordinator
      return true;
    default:
      // UNAVAILABLE (down, restarting, shutting down), ALREADY_EXISTS (this name's previous
      // connection not yet dropped), DEADLINE_EXCEEDED, CANCELLED …: it may work next time.
      return false;
  }
}

ReconnectBackoff::ReconnectBackoff(Nanos min, Nanos max, uint64_t seed)
    : min_(min), max_(max), backoff_(min), random_(seed) {}

Nanos ReconnectBackoff::NextWait(bool heard) {
  // A connection that worked resets the backoff; repeated failures lengthen it.
  if (heard) backoff_ = min_;
  const Nanos wait = static_cast<Nanos>(static_cast<double>(backoff_) *
                                        std::uniform_real_distribution<double>(0.5, 1.0)(random_));
  backoff_ = std::min(backoff_ * 2, max_);
  return wait;
}

}  // namespace dbload
