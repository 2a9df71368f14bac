#ifndef DBLOAD_WORKLOAD_TPCC_H_
#define DBLOAD_WORKLOAD_TPCC_H_

// TPC-C (revision 5.11) as a workload built in code: the tables and their population of
// tpcc_data.h, and the five transactions of clause 2 in the mix of clause 5.2.3, each a query
// type. In code rather than in a workload file because the transactions branch and loop on
// what they read (New-Order's 5–15 lines and its rollback on an unused item, Delivery's ten
// districts, each skipped when it has no new order, the customer chosen by last name as the
// middle of the matching rows), which the file format's statements cannot say.
//
// Departures from the specification, as the tools this is compared with make them: no terminal
// emulation, and by default no keying or think times (closed-loop clients run back to back,
// "no-wait" mode; option terminal_waits adds them);
// the mix is dealt from a shuffled deck of 100 per client (45 New-Order, 43 Payment, 4 of each
// other), so that it is the standard one over every 100 transactions of a client; the values a
// transaction carries from one statement to the next that the driver interface does not return
// (text and decimals: S_DIST_xx, I_PRICE, W_NAME, C_CREDIT, the sum of OL_AMOUNT) are read by
// the statement that uses them, from the same rows; the lines of a New-Order are taken in key
// order, so that two New-Orders lock stock rows in one order and cannot deadlock on them.

#include <cstdint>
#include <memory>
#include <string>

#include "workload/tpcc_options.h"
#include "workload/workload.h"

namespace dbload::tpcc {

// The keying time (fixed) and the mean think time (negative exponential, cut at 10 times the
// mean) of each transaction, in seconds (clause 5.2.5.7), in kTransactionNames' order.
inline constexpr double kKeyingS[] = {18, 3, 2, 2, 2};
inline constexpr double kMeanThinkS[] = {12, 12, 10, 5, 5};

std::unique_ptr<Workload> MakeTpccWorkload(TpccOptions options);

// Its scenarios: the five transactions in the standard mix (kTpccStandardMix, "standard"), and
// one per transaction, named as its query type, that runs it alone: what the database does per
// transaction of each kind (the probe's counters per executed transaction), which a mixed run
// cannot tell apart. The standard mix's query types, in this order:
inline constexpr const char* kTransactionNames[] = {"new_order", "payment", "order_status",
                                                    "delivery", "stock_level"};

// A terminal's home (clause 2.3.1: each terminal serves one warehouse and, for Stock-Level, one
// district): slot `index` of `count` gets warehouse ⌊index·W/count⌋ + 1, so that the slots of one
// agent (consecutive) share few warehouses with another's, and the terminals of one warehouse
// take its districts in turn. With fewer slots than warehouses some have no terminal of their
// own (their rows are still reached by remote lines and payments).
struct Terminal {
  int64_t warehouse = 1;
  int64_t district = 1;
};
Terminal TerminalOf(uint32_t index, uint32_t count, int64_t warehouses);

}  // namespace dbload::tpcc

#endif  // DBLOAD_WORKLOAD_TPCC_H_
