#ifndef DBLOAD_BASE_BACKGROUND_THREAD_H_
#define DBLOAD_BASE_BACKGROUND_THREAD_H_

namespace dbload {

// Gives the calling thread the lowest CPU priority (nice 19), for bookkeeping that shares cores
// with the load: the coordinator's probe, its metrics page and run files, whose threads `dbload
// run` puts in the same process as the agent's event loops. At the default priority a probe
// reading held the loop's core when arrivals were due, which the load saw as dispatch lag
// (bench/RESULTS.md 31d, one core at 10,000/s: p99 median 1.26 ms, 0.57 ms at nice 19, 0.49 ms
// without a probe). At nice 19 the scheduler preempts it as soon as a load thread wakes, and
// under a saturated core it still gets about 1.5 % of it. Only this thread changes; nothing else in the
// process does. Returns false (and changes nothing) when the system refuses.
bool MakeThisThreadBackground();

}  // namespace dbload

#endif  // DBLOAD_BASE_BACKGROUND_THREAD_H_
