#include "base/background_thread.h"

#include <sys/resource.h>
#include <unistd.h>

namespace dbload {

bool MakeThisThreadBackground() {
  // On Linux a nice value belongs to a thread, not to its process: PRIO_PROCESS with a thread's
  // id sets that thread's alone.
  return setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) == 0;
}

}  // namespace dbload
