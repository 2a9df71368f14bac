#ifndef DBLOAD_PLAN_TARGET_SECRETS_H_
#define DBLOAD_PLAN_TARGET_SECRETS_H_

// A target's password, read where the connection is made (the agent, the coordinator's probe,
// the CLI's prepare): a plan only names where the password is, never the password itself.

#include <string>

#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// Reads the password of a target: from password_file (trailing newlines stripped; an error if
// unreadable, naming the file but never showing its content), or from the environment variable
// named by password_env (an error if unset), or "" if neither is given. Both given is an error.
absl::StatusOr<std::string> ReadTargetPassword(const dbload::v1::Target& target);

}  // namespace dbload

#endif  // DBLOAD_PLAN_TARGET_SECRETS_H_
