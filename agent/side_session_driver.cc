#include "agent/side_session_driver.h"

#include <utility>

#include "db/forwarding_session.h"

namespace dbload {
namespace {

// Tells the recorder of its session's own work when it closes.
class SideSession final : public db::ForwardingSession {
 public:
  SideSession(std::unique_ptr<db::Session> inner, IntervalRecorder& recorder)
      : ForwardingSession(std::move(inner)), recorder_(recorder) {}
  ~SideSession() override {
    IntervalRecorder::SessionWorkSeen seen;
    recorder_.RecordSessionWork(inner(), seen);
  }

 private:
  IntervalRecorder& recorder_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<db::Session>> SideSessionDriver::Connect() {
  absl::StatusOr<std::unique_ptr<db::Session>> connected = inner_.Connect();
  if (!connected.ok()) return connected.status();
  return std::make_unique<SideSession>(*std::move(connected), recorder_);
}

}  // namespace dbload
