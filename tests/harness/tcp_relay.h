#ifndef DBLOAD_TESTS_HARNESS_TCP_RELAY_H_
#define DBLOAD_TESTS_HARNESS_TCP_RELAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dbload::testing {

// A TCP relay on 127.0.0.1 for network-fault tests: every connection accepted on port() is
// forwarded byte for byte to the target, so that a test can put it between two processes (an
// agent and its coordinator) and cut the network between them without touching either process.
// Cut() closes every relayed connection at once, towards both ends, and closes each new one as
// soon as it is accepted, until Restore(). Failures to set it up are test failures (port() is
// then 0). The destructor closes everything and joins its threads.
class TcpRelay {
 public:
  // `target`: IPV4:PORT, e.g. the address a dbload-coordinator says it listens on.
  explicit TcpRelay(const std::string& target);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  uint16_t port() const { return port_; }
  // "127.0.0.1:PORT", for a client's command line.
  std::string address() const;

  // Both ends of every relayed connection see it close; connections made while cut are accepted
  // and closed at once (a refused connect would need the port given up, and someone else could
  // take it before Restore()).
  void Cut();
  // New connections are forwarded again; the ones cut stay closed.
  void Restore();
  // A silent partition: bytes stop moving in both directions, but every connection stays open,
  // so neither end learns of it from TCP (only from its own timers). Thaw() lets what queued up
  // through again.
  void Freeze();
  void Thaw();

 private:
  // One accepted connection and its dialled counterpart, copied by one thread.
  struct Pair {
    int client = -1;    // guarded by mu_ once the thread runs: closed only under it
    int upstream = -1;  // likewise
    bool done = false;  // the thread has closed both and is about to return
    std::thread thread;
  };

  void AcceptMain();
  void PumpMain(Pair& pair);
  // Wakes the pair's thread out of poll or send: shutdown() on a socket does that on Linux,
  // whereas close() from another thread would leave it blocked (and the number reusable).
  void ShutDownLocked(Pair& pair);
  void ReapDoneLocked();

  uint32_t target_ip_ = 0;  // network byte order
  uint16_t target_port_ = 0;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // the destructor writes to wake_[1] to end the accept loop
  uint16_t port_ = 0;

  std::mutex mu_;
  bool cut_ = false;                          // guarded by mu_
  std::atomic<bool> frozen_{false};
  std::vector<std::unique_ptr<Pair>> pairs_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_TCP_RELAY_H_
