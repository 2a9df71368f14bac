#ifndef DBLOAD_DB_NOOP_DRIVER_H_
#define DBLOAD_DB_NOOP_DRIVER_H_

#include <atomic>
#include <memory>

#include "base/clock.h"
#include "db/driver.h"

namespace dbload::db {

// A database that answers every statement after a configurable latency, for measuring the
// engine itself and for testing it on simulated time.
struct NoopOptions {
  Nanos fixed_latency = 0;
  Nanos exponential_mean = 0;  // when > 0, an exponential draw is added to fixed_latency
  // When > 0, every n-th Execute of a session fails with `injected_error`, for tests of error
  // accounting and reconnects.
  int fail_every = 0;
  DbError injected_error;
  uint64_t seed = 1;
};

class NoopDriver final : public Driver {
 public:
  NoopDriver(NoopOptions options, Clock& clock) : options_(std::move(options)), clock_(clock) {}
  Dialect dialect() const override { return Dialect::kNoop; }
  Capabilities capabilities() const override { return {.returning = true}; }
  absl::StatusOr<std::unique_ptr<Session>> Connect() override;

 private:
  NoopOptions options_;
  Clock& clock_;
  std::atomic<uint64_t> sessions_ = 0;
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_NOOP_DRIVER_H_
