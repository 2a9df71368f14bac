#ifndef DBLOAD_BASE_FIBER_LOOP_H_
#define DBLOAD_BASE_FIBER_LOOP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/stack_context.h"

namespace dbload {

struct Fiber;
class SocketWatch;

// One thread running many fibers: functions on stacks of their own that each run until they
// wait (for a socket, for a time, or to be woken) and then give the thread to the next fiber
// that is ready. This is how one agent thread drives hundreds or thousands of connections, as
// each pgbench thread multiplexes its clients: a connection's code stays the plain blocking
// sequence it is on a thread of its own, and only its waits differ (SocketWatch,
// Clock::SleepUntil and ParkCurrentFiber park the fiber instead of the thread).
//
// An idle loop waits in epoll: for its fibers' sockets, for another thread's post, and for its
// next timer. On a SimulatedClock (tests of pacing with the noop driver: fibers that wait on time
// only) it sleeps on the clock instead, its thread attached to it, and a fiber holds time as its
// thread would have (from Spawn until it first runs, and while parked); sockets need the real
// clock.
class FiberLoop {
 public:
  // Enough for libpq's connect (name resolution included) and a workload's transaction; only
  // the pages a fiber touches take memory.
  static constexpr size_t kDefaultStackBytes = 256 << 10;

  // `timer_slack`: how late the loop may wake for its next timer (0: on time, spinning the
  // last microseconds), so that one wake-up, or a socket's meanwhile, serves the timers then
  // due (v1::Target.timer_slack). Real time only.
  explicit FiberLoop(Clock& clock, size_t stack_bytes = kDefaultStackBytes, Nanos timer_slack = 0);
  // Finish().
  ~FiberLoop();
  FiberLoop(const FiberLoop&) = delete;
  FiberLoop& operator=(const FiberLoop&) = delete;

  // Runs `body` on a new fiber of this loop. Any thread; not after Finish().
  void Spawn(std::function<void()> body);
  // Fibers sleeping on time wake now (their sleep returns early, so its caller must look
  // again): a stop is then noticed at once rather than at the end of each fiber's sleep. Any
  // thread.
  void InterruptSleeps();
  // Lets the thread end once every fiber has returned, and joins it.
  void Finish();

 private:
  friend struct FiberAccess;
  struct Timer {
    Nanos deadline;
    uint64_t order;  // ties wake in the order they slept
    Fiber* fiber;
    uint64_t wait;  // the fiber's wait it ends (Fiber::wait): stale once the fiber woke otherwise
    bool operator>(const Timer& other) const {
      return deadline != other.deadline ? deadline > other.deadline : order > other.order;
    }
  };

  void Run();
  void TakePosted();
  void FireTimers(Nanos now, bool all);
  // Moves fibers whose sockets are ready along (and takes the wake-ups: another thread's post,
  // the timer), waiting for one when `block`, else just looking.
  void PollSockets(bool block);
  // Waits for something to do; returns whether it looked at the sockets.
  bool Idle(Nanos now);
  void Resume(Fiber* fiber);
  // From a fiber of this loop: back to the loop, until something makes the fiber ready again.
  void SwitchToLoop(Fiber* fiber);
  void Post(Fiber* fiber);  // any thread
  void Signal();

  Clock& clock_;
  // The clock when it is a SimulatedClock (time moves only while attached threads sleep).
  SimulatedClock* const simulated_;
  const size_t stack_bytes_;
  const Nanos timer_slack_;
  int epoll_fd_ = -1;
  int event_fd_ = -1;  // in epoll_fd_: another thread posted work
  int timer_fd_ = -1;  // in epoll_fd_: the wake-up for the next timer (real clock)
  Nanos timer_armed_for_ = -1;  // the time timer_fd_ will wake the loop at; -1: none pending
  std::thread thread_;

  std::mutex posted_mu_;
  std::vector<Fiber*> posted_;  // spawned or woken by any thread
  bool finishing_ = false;
  std::atomic<bool> interrupt_sleeps_{false};
  std::atomic<bool> signaled_{false};  // by Signal(), since the loop last took its posts

  // The loop's thread only.
  StackContext loop_context_;  // Run()'s, while a fiber runs
  std::vector<Fiber*> ready_;
  std::vector<Fiber*> running_;  // the round in progress (ready_ swapped in)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t timer_order_ = 0;
  int live_fibers_ = 0;
  int socket_waiters_ = 0;
  // Which watch a descriptor's registration is for. A descriptor closed without its watch's
  // destruction (libpq drops a broken connection's socket) leaves its entry behind until the
  // number is registered again or that watch goes.
  std::unordered_map<int, SocketWatch*> watches_;
  // Sanitizers' bookkeeping of the loop's own stack and fiber (see fiber_loop.cc).
  [[maybe_unused]] const void* loop_stack_bottom_ = nullptr;
  [[maybe_unused]] size_t loop_stack_size_ = 0;
  [[maybe_unused]] void* loop_tsan_fiber_ = nullptr;
};

// Whether the calling code runs on a fiber of some FiberLoop.
bool OnFiber();

// From a fiber: parks it until its loop's clock reaches `deadline`, or InterruptSleeps: false
// then (its caller looks at why, and sleeps again if it must).
bool FiberSleepUntil(Nanos deadline);
// How a Clock sleeps on a fiber: parks it until `deadline` whatever interrupts it, and returns
// true; false, at once, when not called on a fiber (the clock sleeps the thread instead).
bool SleptOnFiber(Nanos deadline);

// What a socket wait waits for. An error or a hang-up ends either.
enum class SocketEvent : uint8_t { kReadable, kWritable };

// A socket that the code holding it waits on again and again (a database connection): on a
// fiber, registered with the fiber's loop once (edge-triggered), so that a wait whose answer
// has not come yet costs no system call of its own; a one-shot registration would cost an
// epoll_ctl per wait. Made and destroyed where it is used; elsewhere than on a fiber its waits
// poll.
class SocketWatch {
 public:
  explicit SocketWatch(int fd);
  // Before `fd` is closed: a closed descriptor's number may come back as another socket's.
  ~SocketWatch();
  SocketWatch(const SocketWatch&) = delete;
  SocketWatch& operator=(const SocketWatch&) = delete;

  int fd() const { return fd_; }
  // Waits until the socket is readable, or has an error or hang-up to report. It may return
  // early (data since read, or none after all): its caller reads, and waits again for more.
  // On a fiber the watch is edge-triggered: a caller whose read may have left something behind
  // (less than the socket held, or the peer's close after its data) must look before it waits
  // again (recv with MSG_PEEK | MSG_DONTWAIT), or wait for an edge that never comes.
  void WaitReadable();
  // Waits for `event` at most `timeout` (< 0: no limit; on a fiber, by its loop's clock); false
  // when the time ran out first. It may return true early, as WaitReadable. For a connection
  // being opened, which waits for either and must give up in time.
  bool Wait(SocketEvent event, Nanos timeout);

 private:
  friend struct FiberAccess;
  bool OnItsLoop() const;
  const int fd_;
  FiberLoop* loop_ = nullptr;  // null: not registered, waits poll
  Fiber* waiter_ = nullptr;
  SocketEvent wanted_ = SocketEvent::kReadable;  // what waiter_ waits for
  // Something came since the last wait for it returned (an edge not yet waited for).
  bool readable_ = false;
  bool writable_ = false;
};

// From a fiber: the fiber, for WakeFiber.
Fiber* CurrentFiber();
// What a parked fiber does to a SimulatedClock. kHoldTime: time stands still while it waits, as
// it does for a thread blocked on a condition (what it waits for comes from an unattached
// thread, or takes no time). kLetTimeMove: what it waits for takes simulated time (other fibers'
// sleeps), so it must not hold it.
enum class WhileParked : uint8_t { kHoldTime, kLetTimeMove };
// From a fiber: parks it until some thread calls WakeFiber for it. The usual shape: take a
// lock, look at a condition, record CurrentFiber() where the waker will find it, release the
// lock, park, and look again. A wake that comes before the fiber has parked waits for it: the
// loop runs nothing else of its own until the fiber is off its stack.
void ParkCurrentFiber(WhileParked time = WhileParked::kHoldTime);
// Makes a fiber parked by ParkCurrentFiber ready. Any thread; once per park.
void WakeFiber(Fiber* fiber);
// WakeFiber for a fiber parked with kLetTimeMove whose wait is over with time standing still,
// as it does for a thread woken from a condition: from another thread, simulated time stands
// still from this call until the fiber's loop takes it to run it.
void WakeFiberHoldingTime(Fiber* fiber);

// At most `units` holders at a time among the fibers of one loop (and only from that loop's
// fibers: no lock). The others wait in Acquire, in the order they came, without holding
// simulated time: they wait for a fiber of their own loop, which may be waiting on time.
class FiberSemaphore {
 public:
  explicit FiberSemaphore(int units) : available_(units) {}
  FiberSemaphore(const FiberSemaphore&) = delete;
  FiberSemaphore& operator=(const FiberSemaphore&) = delete;

  void Acquire();
  void Release();

 private:
  int available_;
  std::deque<Fiber*> waiting_;
};

}  // namespace dbload

#endif  // DBLOAD_BASE_FIBER_LOOP_H_
