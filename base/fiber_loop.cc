#include "base/fiber_loop.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "base/thread_name.h"

// Fibers switch stacks behind the sanitizers' backs unless told: ASan would take one fiber's
// frames for another's, and TSan would see one thread's accesses as another's.
#if defined(__SANITIZE_ADDRESS__)
#define DBLOAD_ASAN_FIBERS 1
#endif
#if defined(__SANITIZE_THREAD__)
#define DBLOAD_TSAN_FIBERS 1
#endif
#if defined(__has_feature)  // clang
#if __has_feature(address_sanitizer)
#define DBLOAD_ASAN_FIBERS 1
#endif
#if __has_feature(thread_sanitizer)
#define DBLOAD_TSAN_FIBERS 1
#endif
#endif
#ifdef DBLOAD_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef DBLOAD_TSAN_FIBERS
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

namespace dbload {

namespace {
// On simulated time, a loop with no timer sleeps on its clock this long at a time.
constexpr Nanos kIdleSlice = kMillisecond;
// Timer wake-ups from epoll are late by tens of microseconds: the last stretch before a timer
// is spent looking at the sockets without sleeping, as SteadyClock spins.
constexpr Nanos kSpinBelow = 20 * kMicrosecond;
constexpr int kEventsPerPoll = 256;

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::abort();
}
}  // namespace

struct Fiber {
  StackContext context;
  void* mapping = nullptr;  // guard page, then the stack
  size_t mapping_bytes = 0;
  void* stack = nullptr;  // above the guard page
  size_t stack_bytes = 0;
  std::function<void()> body;
  FiberLoop* loop = nullptr;
  // Counts its waits: whatever ends one (its timer, its socket) moves it on, so that the other
  // finds it stale and leaves the fiber alone.
  uint64_t wait = 0;
  SocketWatch* watching = nullptr;  // in a timed socket wait: the watch it waits on
  // Its timers in the loop's heap, stale ones included: a finished fiber's stack goes at once,
  // the rest of it when its last timer leaves the heap.
  int timers = 0;
  // Spawned, parked holding simulated time (WhileParked::kHoldTime) or woken by
  // WakeFiberHoldingTime: the loop gives that time back when it takes the fiber to run it.
  bool holds_time = false;
  bool done = false;
  void* asan_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
};

namespace {
thread_local FiberLoop* t_loop = nullptr;  // the loop this thread runs, if any
thread_local Fiber* t_fiber = nullptr;     // the fiber running now, if any
}  // namespace

// The free functions below reach the loop's private parts through this.
struct FiberAccess {
  static void Main();
  static bool Sleep(Fiber* fiber, Nanos deadline) {
    FiberLoop& loop = *fiber->loop;
    loop.timers_.push({deadline, loop.timer_order_++, fiber, fiber->wait});
    ++fiber->timers;
    loop.SwitchToLoop(fiber);
    return loop.clock_.Now() >= deadline;
  }
  // Parks the running fiber until `watch` has `event`, or (timeout ≥ 0) its timer ends the wait.
  static void WaitSocket(SocketWatch& watch, SocketEvent event, Nanos timeout) {
    Fiber* fiber = t_fiber;
    FiberLoop& loop = *watch.loop_;
    ++loop.socket_waiters_;
    watch.waiter_ = fiber;
    watch.wanted_ = event;
    if (timeout >= 0) {
      fiber->watching = &watch;
      loop.timers_.push({loop.clock_.Now() + timeout, loop.timer_order_++, fiber, fiber->wait});
      ++fiber->timers;
    }
    loop.SwitchToLoop(fiber);
  }
  // An event of the loop's epoll for `watch`.
  static void SocketReady(SocketWatch& watch, uint32_t events) {
    constexpr uint32_t kEnds = EPOLLERR | EPOLLHUP;
    if ((events & (EPOLLIN | EPOLLRDHUP | kEnds)) != 0) watch.readable_ = true;
    if ((events & (EPOLLOUT | kEnds)) != 0) watch.writable_ = true;
    Fiber* fiber = watch.waiter_;
    if (fiber == nullptr ||
        !(watch.wanted_ == SocketEvent::kReadable ? watch.readable_ : watch.writable_)) {
      return;
    }
    EndSocketWait(watch);
    ++fiber->wait;  // its timer, if any, is stale
    watch.loop_->ready_.push_back(fiber);
  }
  static void EndSocketWait(SocketWatch& watch) {
    --watch.loop_->socket_waiters_;
    watch.waiter_->watching = nullptr;
    watch.waiter_ = nullptr;
  }
  // A timer came due: its fiber is ready, unless the wait it was for ended otherwise.
  static void TimerDue(FiberLoop& loop, const FiberLoop::Timer& timer) {
    Fiber* fiber = timer.fiber;
    if (timer.wait != fiber->wait) return;
    ++fiber->wait;
    if (fiber->watching != nullptr) EndSocketWait(*fiber->watching);
    loop.ready_.push_back(fiber);
  }
  static void Register(SocketWatch& watch) {
    FiberLoop& loop = *t_fiber->loop;
    epoll_event event{};
    // Writable edges are rare on an open connection (only after a full send buffer drains):
    // watching for them costs nothing, and a connection being opened needs them.
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.ptr = &watch;
    // Not pollable (never a socket): its waits poll, which says what it has.
    if (epoll_ctl(loop.epoll_fd_, EPOLL_CTL_ADD, watch.fd_, &event) != 0) return;
    watch.loop_ = &loop;
    loop.watches_[watch.fd_] = &watch;
  }
  static void Unregister(SocketWatch& watch) {
    FiberLoop& loop = *watch.loop_;
    const auto entry = loop.watches_.find(watch.fd_);
    if (entry == loop.watches_.end() || entry->second != &watch) return;  // the number moved on
    // Fails harmlessly when the descriptor was closed already.
    epoll_ctl(loop.epoll_fd_, EPOLL_CTL_DEL, watch.fd_, nullptr);
    loop.watches_.erase(entry);
  }
  static void Park(Fiber* fiber, bool hold_time) {
    // Held while it waits, as a thread blocked on a condition holds simulated time.
    if (hold_time) {
      fiber->holds_time = true;
      fiber->loop->clock_.AttachThread();
    }
    fiber->loop->SwitchToLoop(fiber);
  }
  // `hold_time`: from another thread, simulated time stands still from now until the loop
  // takes the fiber (written before the post, which the loop reads after it: the fiber, on its
  // way to park, never writes it then).
  static void Wake(Fiber* fiber, bool hold_time) {
    FiberLoop& loop = *fiber->loop;
    if (t_loop == &loop) {
      loop.ready_.push_back(fiber);
      GiveBackTime(fiber);
    } else {
      if (hold_time) {
        loop.clock_.AttachThread();
        fiber->holds_time = true;
      }
      loop.Post(fiber);
    }
  }
  // The fiber is ready to run on its loop's thread: the time it held is its loop's to keep.
  static void GiveBackTime(Fiber* fiber) {
    if (!fiber->holds_time) return;
    fiber->holds_time = false;
    fiber->loop->clock_.DetachThread();
  }
};

FiberLoop::FiberLoop(Clock& clock, size_t stack_bytes, Nanos timer_slack)
    : clock_(clock),
      simulated_(dynamic_cast<SimulatedClock*>(&clock)),
      stack_bytes_(stack_bytes),
      timer_slack_(timer_slack) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (epoll_fd_ < 0 || event_fd_ < 0 || timer_fd_ < 0) Die("dbload: event loop");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &event) != 0) Die("dbload: event loop");
  // Edge-triggered: each expiry is reported once without reading the timerfd, and arming it
  // anew resets it (a read per wake-up for nothing; see Idle).
  event.events = EPOLLIN | EPOLLET;
  event.data.ptr = &timer_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &event) != 0) Die("dbload: event loop");
  // Attached before the thread exists, so that a simulated clock cannot move on without it.
  clock_.AttachThread();
  thread_ = std::thread([this] {
    NameThisThread("dbload-loop");
    Run();
  });
}

FiberLoop::~FiberLoop() {
  Finish();
  close(event_fd_);
  close(timer_fd_);
  close(epoll_fd_);
}

void FiberLoop::Spawn(std::function<void()> body) {
  auto* fiber = new Fiber;
  fiber->body = std::move(body);
  fiber->loop = this;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  fiber->mapping_bytes = stack_bytes_ + page;
  fiber->mapping = mmap(nullptr, fiber->mapping_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (fiber->mapping == MAP_FAILED) Die("dbload: fiber stack");
  // An overflow faults on the guard page instead of writing over another fiber's stack.
  if (mprotect(fiber->mapping, page, PROT_NONE) != 0) Die("dbload: fiber stack guard");
  fiber->stack = static_cast<char*>(fiber->mapping) + page;
  fiber->stack_bytes = stack_bytes_;
  fiber->context.Prepare(fiber->stack, fiber->stack_bytes, &FiberAccess::Main);
#ifdef DBLOAD_TSAN_FIBERS
  fiber->tsan_fiber = __tsan_create_fiber(0);
#endif
  // Held until the loop takes the fiber, as a thread attaches before it exists.
  clock_.AttachThread();
  fiber->holds_time = true;
  Post(fiber);
}

void FiberLoop::InterruptSleeps() {
  interrupt_sleeps_.store(true);
  Signal();
}

void FiberLoop::Finish() {
  {
    std::lock_guard lock(posted_mu_);
    finishing_ = true;
  }
  Signal();
  if (thread_.joinable()) thread_.join();
}

void FiberLoop::Post(Fiber* fiber) {
  {
    std::lock_guard lock(posted_mu_);
    posted_.push_back(fiber);
  }
  Signal();
}

void FiberLoop::Signal() {
  signaled_.store(true);
  const uint64_t one = 1;
  // Only fails when the counter is full, and then the loop has a wake-up to read anyway.
  (void)!write(event_fd_, &one, sizeof(one));
  if (simulated_ != nullptr) simulated_->Interrupt();
}

void FiberLoop::Run() {
  t_loop = this;
  // The kernel's default timer slack (50 µs) would be added to every wake-up.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#ifdef DBLOAD_TSAN_FIBERS
  loop_tsan_fiber_ = __tsan_get_current_fiber();
#endif
  // Whether the sockets were looked at since the last round ran fibers: then another look
  // would find nothing new (a system call per round for nothing: strace counted 1.74 epoll
  // calls per query with it, on PostgreSQL at 2,000/s; pgbench makes 0.38 poll calls).
  bool sockets_seen = false;
  for (;;) {
    TakePosted();
    FireTimers(clock_.Now(), interrupt_sleeps_.exchange(false));
    // With no fiber ready, Idle looks at the sockets in its wait; a look here too would be a
    // system call per wake-up for nothing. Simulated time's Idle sleeps on the clock instead.
    const bool idle_looks = ready_.empty() && simulated_ == nullptr;
    if (socket_waiters_ > 0 && !sockets_seen && !idle_looks) PollSockets(/*block=*/false);
    sockets_seen = false;
    if (ready_.empty()) {
      bool done = false;
      {
        std::lock_guard lock(posted_mu_);
        done = finishing_ && live_fibers_ == 0 && posted_.empty();
        if (!posted_.empty()) continue;
      }
      if (done) break;
      sockets_seen = Idle(clock_.Now());
      continue;
    }
    // Runs the fibers ready now; those they make ready wait for the next round, after the
    // sockets and timers have had their look.
    running_.swap(ready_);
    for (Fiber* fiber : running_) Resume(fiber);
    running_.clear();
  }
  // Stale timers of finished fibers.
  FireTimers(clock_.Now(), /*all=*/true);
  t_loop = nullptr;
  clock_.DetachThread();
}

void FiberLoop::TakePosted() {
  // Every post signals after it is in, so without a signal there is nothing to take (and no
  // lock to take for it on every round).
  if (!signaled_.load()) return;
  std::lock_guard lock(posted_mu_);
  signaled_.store(false);
  ready_.insert(ready_.end(), posted_.begin(), posted_.end());
  for (Fiber* fiber : posted_) FiberAccess::GiveBackTime(fiber);  // see Spawn, Park, Wake
  posted_.clear();
}

void FiberLoop::FireTimers(Nanos now, bool all) {
  while (!timers_.empty() && (all || timers_.top().deadline <= now)) {
    const Timer timer = timers_.top();
    timers_.pop();
    Fiber* fiber = timer.fiber;
    --fiber->timers;
    if (fiber->done) {  // a stale timer that outlived its fiber
      if (fiber->timers == 0) delete fiber;
      continue;
    }
    FiberAccess::TimerDue(*this, timer);
  }
}

void FiberLoop::PollSockets(bool block) {
  epoll_event events[kEventsPerPoll];
  const int count = epoll_wait(epoll_fd_, events, kEventsPerPoll, block ? -1 : 0);
  for (int i = 0; i < count; ++i) {
    if (events[i].data.ptr == &timer_fd_) {
      timer_armed_for_ = -1;
      continue;
    }
    auto* watch = static_cast<SocketWatch*>(events[i].data.ptr);
    if (watch == nullptr) {
      uint64_t value = 0;
      (void)!read(event_fd_, &value, sizeof(value));
      continue;
    }
    FiberAccess::SocketReady(*watch, events[i].events);
  }
}

bool FiberLoop::Idle(Nanos now) {
  if (simulated_ == nullptr) {
    // Sockets, another thread's post and time, whichever comes first. The last few
    // microseconds before a timer are spent looking, not sleeping: at the sockets when some
    // fiber waits on one, else at the clock alone (a system call per look would cost more than
    // the wait).
    if (timers_.empty()) {
      PollSockets(/*block=*/true);
      return true;
    }
    const Nanos until_timer = timers_.top().deadline - now;
    if (until_timer <= kSpinBelow && socket_waiters_ == 0 && timer_slack_ == 0) {
      while (clock_.Now() < timers_.top().deadline) {
      }
      return false;
    }
    // With a slack, no look at all: the wake-up comes that late, or a socket's before it.
    const Nanos wake_at = timer_slack_ > 0 ? timers_.top().deadline + timer_slack_
                                           : timers_.top().deadline - kSpinBelow;
    if (wake_at <= now) {
      PollSockets(/*block=*/false);
      return true;
    }
    // The wake-up for the next timer is a timerfd that stays armed across the waits sockets
    // end first. A wait with a timeout arms a kernel timer and cancels it when a socket ends
    // the wait, which nearly every wait for an answer does; on a virtual machine each costs
    // the hypervisor's timer: the timerfd cut the loop's CPU per query from 41.5–42.5 to
    // 35.4–35.7 µs (PostgreSQL, 128 connections, 10,000/s: bench/RESULTS.md 31f).
    if (timer_armed_for_ != wake_at) {
      const Nanos in = wake_at - now;
      const itimerspec when{.it_interval = {},
                            .it_value = {.tv_sec = in / kSecond, .tv_nsec = in % kSecond}};
      if (timerfd_settime(timer_fd_, 0, &when, nullptr) != 0) Die("dbload: event loop timer");
      timer_armed_for_ = wake_at;
    }
    PollSockets(/*block=*/true);
    return true;
  }
  // Simulated time moves only while every attached thread sleeps on the clock: this one
  // sleeps until its next timer, and a post (which holds time itself) cuts the sleep short.
  // With no fiber at all it has nothing to wait for and holds nothing, as threads that ended.
  if (timers_.empty() && live_fibers_ == 0) {
    clock_.DetachThread();
    PollSockets(/*block=*/true);
    clock_.AttachThread();
    return true;
  }
  simulated_->SleepUntilOrInterrupted(timers_.empty() ? now + kIdleSlice : timers_.top().deadline,
                                      signaled_);
  return false;
}

void FiberLoop::Resume(Fiber* fiber) {
  t_fiber = fiber;
#ifdef DBLOAD_ASAN_FIBERS
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, fiber->stack, fiber->stack_bytes);
#endif
#ifdef DBLOAD_TSAN_FIBERS
  __tsan_switch_to_fiber(fiber->tsan_fiber, 0);
#endif
  loop_context_.SwitchTo(fiber->context);
#ifdef DBLOAD_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  t_fiber = nullptr;
  if (!fiber->done) return;
  --live_fibers_;
#ifdef DBLOAD_TSAN_FIBERS
  __tsan_destroy_fiber(fiber->tsan_fiber);
#endif
  munmap(fiber->mapping, fiber->mapping_bytes);
  if (fiber->timers == 0) delete fiber;  // else when its last (stale) timer leaves the heap
}

void FiberLoop::SwitchToLoop(Fiber* fiber) {
#ifdef DBLOAD_ASAN_FIBERS
  // A finished fiber's frames are gone for good: no fake stack to keep.
  __sanitizer_start_switch_fiber(fiber->done ? nullptr : &fiber->asan_fake_stack,
                                 loop_stack_bottom_, loop_stack_size_);
#endif
#ifdef DBLOAD_TSAN_FIBERS
  __tsan_switch_to_fiber(loop_tsan_fiber_, 0);
#endif
  fiber->context.SwitchTo(loop_context_);
#ifdef DBLOAD_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fiber->asan_fake_stack, &loop_stack_bottom_, &loop_stack_size_);
#endif
}

void FiberAccess::Main() {
  Fiber* fiber = t_fiber;
  FiberLoop& loop = *fiber->loop;
#ifdef DBLOAD_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(nullptr, &loop.loop_stack_bottom_, &loop.loop_stack_size_);
#endif
  ++loop.live_fibers_;  // from its first run: the loop looks at the count between rounds only
  fiber->body();
  fiber->body = nullptr;  // what it captured goes now, on its own stack
  fiber->done = true;
  loop.SwitchToLoop(fiber);
  std::abort();  // a finished fiber is never resumed
}

bool OnFiber() { return t_fiber != nullptr; }

bool FiberSleepUntil(Nanos deadline) { return FiberAccess::Sleep(t_fiber, deadline); }

bool SleptOnFiber(Nanos deadline) {
  if (t_fiber == nullptr) return false;
  while (!FiberAccess::Sleep(t_fiber, deadline)) {
  }
  return true;
}

SocketWatch::SocketWatch(int fd) : fd_(fd) {
  if (t_fiber != nullptr) FiberAccess::Register(*this);
}

SocketWatch::~SocketWatch() {
  if (loop_ != nullptr) FiberAccess::Unregister(*this);
}

bool SocketWatch::OnItsLoop() const {
  return loop_ != nullptr && t_fiber != nullptr && t_fiber->loop == loop_;
}

void SocketWatch::WaitReadable() { (void)Wait(SocketEvent::kReadable, -1); }

bool SocketWatch::Wait(SocketEvent event, Nanos timeout) {
  bool& flag = event == SocketEvent::kReadable ? readable_ : writable_;
  if (OnItsLoop()) {
    if (!flag) FiberAccess::WaitSocket(*this, event, timeout);
    return std::exchange(flag, false);
  }
  pollfd one{.fd = fd_,
             .events = static_cast<short>(event == SocketEvent::kReadable ? POLLIN : POLLOUT)};
  const int ms = timeout < 0
                     ? -1
                     : static_cast<int>(std::min<Nanos>((timeout + kMillisecond - 1) / kMillisecond,
                                                        std::numeric_limits<int>::max()));
  int ready = 0;
  while ((ready = poll(&one, 1, ms)) < 0 && errno == EINTR) {
  }
  return ready > 0;
}

Fiber* CurrentFiber() { return t_fiber; }

void ParkCurrentFiber(WhileParked time) {
  FiberAccess::Park(t_fiber, time == WhileParked::kHoldTime);
}

void WakeFiber(Fiber* fiber) { FiberAccess::Wake(fiber, /*hold_time=*/false); }

void WakeFiberHoldingTime(Fiber* fiber) { FiberAccess::Wake(fiber, /*hold_time=*/true); }

void FiberSemaphore::Acquire() {
  if (available_ > 0) {
    --available_;
    return;
  }
  waiting_.push_back(t_fiber);
  // Woken with the unit its releaser handed over.
  FiberAccess::Park(t_fiber, /*hold_time=*/false);
}

void FiberSemaphore::Release() {
  if (waiting_.empty()) {
    ++available_;
    return;
  }
  Fiber* next = waiting_.front();
  waiting_.pop_front();
  FiberAccess::Wake(next, /*hold_time=*/false);
}

}  // namespace dbload
