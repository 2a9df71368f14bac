#ifndef DBLOAD_DB_DRIVER_FACTORY_H_
#define DBLOAD_DB_DRIVER_FACTORY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "db/driver.h"
#include "dbload/v1/plan.pb.h"

namespace dbload::db {

// The driver a plan's target names: "postgresql", "mysql" (through target.mysql_client's library,
// Connector/C unless it says Connector/C++) or "noop". `password` is the secret
// already read from target.password_file / password_env by the caller (plans never hold one);
// `clock` drives the noop driver's simulated latency and must outlive the driver.
//
// Nothing connects here: call Connect() on the result, whose errors name the server, the user
// and the server's answer. An unknown driver is InvalidArgument naming the value and the
// allowed ones. Errors are classified with each dialect's default ErrorClassifier.
absl::StatusOr<std::unique_ptr<Driver>> MakeDriver(const dbload::v1::Target& target,
                                                   std::string password, Clock& clock);

// The connection settings of a target (no password; MakeDriver adds it).
ConnectionOptions ConnectionOptionsOf(const dbload::v1::Target& target);

}  // namespace dbload::db

#endif  // DBLOAD_DB_DRIVER_FACTORY_H_
