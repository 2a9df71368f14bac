#ifndef DBLOAD_BASE_STACK_CONTEXT_H_
#define DBLOAD_BASE_STACK_CONTEXT_H_

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace dbload {

// Where a suspended flow of execution (a fiber, or the loop that runs fibers) continues: how
// FiberLoop moves its thread between stacks.
//
// On x86-64 a switch saves the callee-saved registers and the floating-point control words on
// the stack being left and loads the other stack's, as a function call would: about twenty
// instructions. swapcontext also saves and restores the signal mask, a system call each way:
// with it, about 10 % of the event-loop engine's CPU samples (perf, PostgreSQL point selects at
// 10,000/s over 128 connections) were swapcontext and its system calls. Nothing here changes
// signal masks. Other architectures keep ucontext.
class StackContext {
 public:
  StackContext() = default;
  StackContext(const StackContext&) = delete;
  StackContext& operator=(const StackContext&) = delete;

  // Makes this context start `entry` at the top of the `bytes` of stack at `base`. `entry`
  // never returns (it must switch away for good instead).
  void Prepare(void* base, size_t bytes, void (*entry)());
  // Saves the running flow into this context and continues `next` (a prepared context or one
  // saved by an earlier SwitchTo). Returns when some flow switches back to this context.
  void SwitchTo(StackContext& next);

 private:
#if defined(__x86_64__)
  void* stack_pointer_ = nullptr;  // where the saved registers are
#else
  ucontext_t context_{};
#endif
};

}  // namespace dbload

#endif  // DBLOAD_BASE_STACK_CONTEXT_H_
