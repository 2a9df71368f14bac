#ifndef DBLOAD_BASE_THREAD_NAME_H_
#define DBLOAD_BASE_THREAD_NAME_H_

namespace dbload {

// Names the calling thread as `top -H`, `ps -L`, perf and gdb show it (the kernel keeps 15
// characters; a longer name is cut). Without names every thread of `dbload run` is "dbload", and
// a profile cannot tell the event loops from the probe or the reporting.
void NameThisThread(const char* name);

}  // namespace dbload

#endif  // DBLOAD_BASE_THREAD_NAME_H_
