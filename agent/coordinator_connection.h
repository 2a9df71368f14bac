#ifndef DBLOAD_AGENT_COORDINATOR_CONNECTION_H_
#define DBLOAD_AGENT_COORDINATOR_CONNECTION_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "dbload/v1/agent.grpc.pb.h"

namespace dbload {

// Messages queued for a coordinator that does not read them. Reports and heartbeats come about
// twice a second, so this is minutes of backlog: a coordinator that far behind is treated as
// lost rather than letting the queue grow without bound.
inline constexpr size_t kMaxQueuedMessages = 256;

// One Connect call: the stream, and the single thread that writes to it. Other threads only
// queue messages (Send), so that a coordinator that stops reading can block nobody but the
// writer: the heartbeats and the dead-man timer keep running, and cancelling unblocks it.
class CoordinatorConnection {
 public:
  explicit CoordinatorConnection(std::shared_ptr<grpc::Channel> channel)
      : channel_(std::move(channel)), stub_(dbload::v1::AgentLink::NewStub(channel_)) {
    // Corked: creating the call does not wait for the connection; the first Write (the hello,
    // on the writer thread) sends the headers with it.
    context_.set_initial_metadata_corked(true);
    stream_ = stub_->Connect(&context_);
    writer_ = std::thread([this] { WriterMain(); });
  }
  ~CoordinatorConnection() {
    Abort();
    if (writer_.joinable()) writer_.join();
  }
  CoordinatorConnection(const CoordinatorConnection&) = delete;
  CoordinatorConnection& operator=(const CoordinatorConnection&) = delete;

  // Queues a message for the coordinator; false (and nothing queued) once the connection is
  // closing or broken.
  bool Send(dbload::v1::AgentMessage message) {
    {
      std::lock_guard lock(mu_);
      if (closing_ || aborted_ || broken_) return false;
      if (queue_.size() >= kMaxQueuedMessages) {
        broken_ = true;
        overflowed_ = true;
        return false;
      }
      queue_.push_back(std::move(message));
    }
    cv_.notify_all();
    return true;
  }

  // Only the reader thread calls this.
  bool Read(dbload::v1::CoordinatorMessage* message) {
    if (stream_->Read(message)) return true;
    reader_done_ = true;
    return false;
  }

  // Takes no new messages; the writer sends what is queued and then half-closes the stream.
  void CloseAfterQueued() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
  }

  // Drops what is queued and cancels the call, so that a blocked Read or Write returns at once.
  void Abort() {
    StopWriting();
    context_.TryCancel();
  }

  bool reader_done() const { return reader_done_; }
  bool broken() {
    std::lock_guard lock(mu_);
    return broken_;
  }
  bool overflowed() {
    std::lock_guard lock(mu_);
    return overflowed_;
  }

  // After the reader has returned: stops the writer and collects the call's status. A call the
  // coordinator ended is not cancelled first: its status (e.g. a refused token) would be lost.
  grpc::Status Finish() {
    if (reader_done_) {
      StopWriting();
    } else {
      Abort();
    }
    if (writer_.joinable()) writer_.join();
    return stream_->Finish();
  }

 private:
  // Drops what is queued; the writer stops at its next message (a Write to a call that has
  // ended returns at once).
  void StopWriting() {
    {
      std::lock_guard lock(mu_);
      aborted_ = true;
      queue_.clear();
    }
    cv_.notify_all();
  }

  void WriterMain() {
    bool half_close = false;
    for (;;) {
      dbload::v1::AgentMessage message;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || closing_ || aborted_; });
        if (aborted_) break;
        if (queue_.empty()) {
          half_close = true;
          break;
        }
        message = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!stream_->Write(message)) {
        std::lock_guard lock(mu_);
        broken_ = true;
        break;
      }
    }
    if (half_close) stream_->WritesDone();
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<dbload::v1::AgentLink::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<dbload::v1::AgentMessage, dbload::v1::CoordinatorMessage>>
      stream_;
  std::atomic<bool> reader_done_{false};

  std::mutex mu_;
  std::condition_variable cv_;  // waits for messages, not for time
  std::deque<dbload::v1::AgentMessage> queue_;
  bool closing_ = false;
  bool aborted_ = false;
  bool broken_ = false;
  bool overflowed_ = false;
  std::thread writer_;  // last: starts after everything it uses exists
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_COORDINATOR_CONNECTION_H_
