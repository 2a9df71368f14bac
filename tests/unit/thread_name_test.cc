#include "base/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <string>
#include <thread>

namespace dbload {
namespace {

std::string NameOfThisThread() {
  char name[32] = {};
  EXPECT_EQ(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
  return name;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnlyAndCutsWhatTheKernelCannotKeep) {
  const std::string before = NameOfThisThread();
  std::string named, cut;
  std::thread([&] {
    NameThisThread("dbload-probe");
    named = NameOfThisThread();
    NameThisThread("dbload-a-name-of-26-chars");
    cut = NameOfThisThread();
  }).join();
  EXPECT_EQ(named, "dbload-probe");
  EXPECT_EQ(cut, "dbload-a-name-o");
  EXPECT_EQ(NameOfThisThread(), before);
}

}  // namespace
}  // namespace dbload
