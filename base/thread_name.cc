#include "base/thread_name.h"

#include <pthread.h>

#include <string>

namespace dbload {

void NameThisThread(const char* name) {
  // pthread_setname_np refuses (ERANGE) rather than cuts a name over 15 characters.
  const std::string kept = std::string(name).substr(0, 15);
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace dbload
