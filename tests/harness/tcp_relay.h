#ifndef DBLOAD_TESTS_HARNESS_TCP_RELAY_H_
#define DBLOAD_TESTS_HARNESS_TCP_RELAY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dbload::testing {

// Where a TcpRelay listens, and what it does to the bytes it moves.
struct TcpRelayOptions {
  // IPV4:PORT to listen on (port 0 picks one).
  std::string listen = "127.0.0.1:0";
  // A network namespace (a path such as /run/netns/NAME) to listen and dial in, instead of the
  // caller's: a relay on a host of tests/harness/topology.h, run by a thread of the test.
  std::string netns;
  // Added to every byte's way, in each direction (so the round trip gains twice this): the
  // latency between two hosts, which this kernel cannot add with netem.
  std::chrono::microseconds delay{0};
};

// A TCP relay for network-fault tests: every connection accepted on address() is forwarded byte
// for byte to the target, so that a test can put it between two processes (an agent and its
// coordinator, an agent and its database) and cut or slow the network between them without
// touching either process. Cut() closes every relayed connection at once, towards both ends, and
// closes each new one as soon as it is accepted, until Restore(); CutPeer() does the same for the
// connections of one client address only (one host of a topology). Failures to set it up are
// test failures (port() is then 0). The destructor closes everything and joins its threads.
class TcpRelay {
 public:
  // `target`: IPV4:PORT, e.g. the address a dbload-coordinator says it listens on.
  explicit TcpRelay(const std::string& target, TcpRelayOptions options = {});
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  uint16_t port() const { return port_; }
  // "IP:PORT" it listens on, for a client's command line.
  std::string address() const;

  // Both ends of every relayed connection see it close; connections made while cut are accepted
  // and closed at once (a refused connect would need the port given up, and someone else could
  // take it before Restore()).
  void Cut();
  // New connections are forwarded again; the ones cut stay closed.
  void Restore();
  // Cut() and Restore() for the connections from one client IPv4 address only.
  void CutPeer(const std::string& ip);
  void RestorePeer(const std::string& ip);
  // A silent partition: bytes stop moving in both directions, but every connection stays open,
  // so neither end learns of it from TCP (only from its own timers). Thaw() lets what queued up
  // through again.
  void Freeze();
  void Thaw();
  // The one-way delay from now on (bytes already queued keep theirs).
  void SetDelay(std::chrono::microseconds delay) { delay_us_ = delay.count(); }
  // Connections relayed so far, by client address: which hosts used the relay.
  std::set<std::string> PeersSeen() const;

 private:
  // One accepted connection and its dialled counterpart, copied by one thread.
  struct Pair {
    int client = -1;    // guarded by mu_ once the thread runs: closed only under it
    int upstream = -1;  // likewise
    uint32_t peer = 0;  // the client's IPv4 address, network byte order
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
  uint32_t listen_ip_ = 0;  // network byte order
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // the destructor writes to wake_[1] to end the accept loop
  uint16_t port_ = 0;

  mutable std::mutex mu_;
  bool cut_ = false;                          // guarded by mu_
  std::set<uint32_t> cut_peers_;              // guarded by mu_
  std::set<uint32_t> peers_seen_;             // guarded by mu_
  std::atomic<bool> frozen_{false};
  std::atomic<int64_t> delay_us_{0};
  std::vector<std::unique_ptr<Pair>> pairs_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_TCP_RELAY_H_
