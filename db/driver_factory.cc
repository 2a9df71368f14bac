#include "db/driver_factory.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "db/dialect_sql.h"
#include "db/mysql_connector_c_driver.h"
#include "db/mysql_driver.h"
#include "db/noop_driver.h"
#include "db/postgresql_driver.h"

namespace dbload::db {

ConnectionOptions ConnectionOptionsOf(const dbload::v1::Target& target) {
  ConnectionOptions options;
  options.host = target.host();
  options.host_address = target.dial_address();
  options.port = target.port();
  options.socket = target.socket();
  options.user = target.user();
  options.database = target.database();
  if (target.connect_timeout_ns() > 0) options.connect_timeout_ns = target.connect_timeout_ns();
  const Dialect dialect = target.driver() == "mysql" ? Dialect::kMySql : Dialect::kPostgreSql;
  if (target.isolation() != v1::ISOLATION_UNSPECIFIED) {
    options.session_setup.push_back(
        IsolationSql(dialect, absl::AsciiStrToLower(v1::Isolation_Name(target.isolation()))));
  }
  options.session_setup.insert(options.session_setup.end(), target.session().begin(),
                               target.session().end());
  return options;
}

absl::StatusOr<std::unique_ptr<Driver>> MakeDriver(const dbload::v1::Target& target,
                                                   std::string password, Clock& clock) {
  const std::string& name = target.driver();
  if (name == "postgresql" || name == "mysql") {
    ConnectionOptions options = ConnectionOptionsOf(target);
    options.password = std::move(password);
    if (name == "postgresql") return std::make_unique<PostgreSqlDriver>(std::move(options));
    if (target.mysql_client() == v1::MY_SQL_CLIENT_CONNECTOR_CPP) {
      return std::make_unique<MySqlDriver>(std::move(options));
    }
    return std::make_unique<MySqlConnectorCDriver>(std::move(options));
  }
  if (name == "noop") {
    NoopOptions options;
    options.fixed_latency = target.noop().fixed_ns();
    options.exponential_mean = target.noop().exponential_mean_ns();
    return std::make_unique<NoopDriver>(std::move(options), clock);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown driver \"", name, "\"; expected one of: postgresql, mysql, noop"));
}

}  // namespace dbload::db
