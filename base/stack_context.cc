#include "base/stack_context.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__)
// dbload_switch_stack(void** save_to, void* load_from): pushes what the System V ABI says a
// callee keeps (rbx, rbp, r12-r15, MXCSR's control bits, the x87 control word), stores the stack
// pointer in *save_to, takes load_from as the stack pointer and pops the same from there. Its
// `ret` returns into whoever switched away from load_from, or into a prepared stack's entry.
asm(R"(
  .text
  .globl dbload_switch_stack
  .type dbload_switch_stack, @function
  .align 16
dbload_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw 12(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr 8(%rsp)
  fldcw 12(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size dbload_switch_stack, .-dbload_switch_stack
  .section .note.GNU-stack, "", @progbits
  .text
)");
extern "C" void dbload_switch_stack(void** save_to, void* load_from);
#endif

namespace dbload {

#if defined(__x86_64__)

void StackContext::Prepare(void* base, size_t bytes, void (*entry)()) {
  // From the top, 16-byte aligned: a null return address for `entry` (it never returns), the
  // address dbload_switch_stack's `ret` takes, six zeroed registers, and the control words.
  // `entry` then starts with the stack aligned as after a call.
  auto top = (reinterpret_cast<uintptr_t>(base) + bytes) & ~uintptr_t{15};
  auto* slots = reinterpret_cast<uint64_t*>(top);
  slots[-1] = 0;
  slots[-2] = reinterpret_cast<uint64_t>(entry);
  for (int i = 3; i <= 8; ++i) slots[-i] = 0;  // rbp, rbx, r12-r15
  uint32_t mxcsr = 0;
  uint16_t x87_control = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(x87_control));
  auto* words = reinterpret_cast<unsigned char*>(slots - 10);
  slots[-10] = 0;
  slots[-9] = 0;
  __builtin_memcpy(words + 8, &mxcsr, sizeof(mxcsr));
  __builtin_memcpy(words + 12, &x87_control, sizeof(x87_control));
  stack_pointer_ = slots - 10;
}

void StackContext::SwitchTo(StackContext& next) {
  dbload_switch_stack(&stack_pointer_, next.stack_pointer_);
}

#else

void StackContext::Prepare(void* base, size_t bytes, void (*entry)()) {
  if (getcontext(&context_) != 0) {
    std::perror("dbload: fiber context");
    std::abort();
  }
  context_.uc_stack.ss_sp = base;
  context_.uc_stack.ss_size = bytes;
  context_.uc_link = nullptr;
  makecontext(&context_, entry, 0);
}

void StackContext::SwitchTo(StackContext& next) {
  if (swapcontext(&context_, &next.context_) != 0) {
    std::perror("dbload: fiber switch");
    std::abort();
  }
}

#endif

}  // namespace dbload
