#include "coordinator/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "plan/stage_program.h"

namespace dbload {

namespace {

double LeftToRightSum(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

double CapacityWeight(double capacity) {
  return std::isfinite(capacity) && capacity > 0 ? capacity : 1.0;
}

}  // namespace

std::vector<double> SplitRate(double total, const std::vector<double>& capacities) {
  const size_t n = capacities.size();
  std::vector<double> shares(n, 0.0);
  if (n == 0 || !(total > 0) || !std::isfinite(total)) return shares;
  std::vector<double> weights(n);
  std::transform(capacities.begin(), capacities.end(), weights.begin(), CapacityWeight);
  const double weight_sum = LeftToRightSum(weights);
  // Proportional doubles rarely add up to the total bit for bit, and nudging one share by ulps
  // cannot always fix that (a tie can round away from the total either way). So every share is
  // made a whole multiple of the total's ulp: then every partial sum is a multiple of it no larger
  // than the total, hence exactly representable, and the sum is exact in any order. The cost is
  // under one ulp of the total per share.
  const double ulp = std::nextafter(total, std::numeric_limits<double>::infinity()) - total;
  const double units = total / ulp;  // an integer below 2^53: total is a multiple of its ulp
  double assigned_units = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    double share_units = std::floor(units * (weights[i] / weight_sum));
    share_units = std::min(share_units, units - assigned_units);
    assigned_units += share_units;
    shares[i] = share_units * ulp;
  }
  shares[n - 1] = (units - assigned_units) * ulp;
  return shares;
}

std::vector<uint32_t> SpreadClients(uint32_t clients, size_t agents) {
  std::vector<uint32_t> spread(agents, 0);
  if (agents == 0) return spread;
  const uint32_t base = static_cast<uint32_t>(clients / agents);
  const size_t extra = clients % agents;
  for (size_t i = 0; i < agents; ++i) spread[i] = base + (i < extra ? 1 : 0);
  return spread;
}

std::vector<uint64_t> SplitQueries(uint64_t total, const std::vector<double>& weights) {
  const size_t n = weights.size();
  std::vector<uint64_t> parts(n, 0);
  if (n == 0 || total == 0) return parts;
  std::vector<long double> w(n);
  for (size_t i = 0; i < n; ++i) {
    w[i] = std::isfinite(weights[i]) && weights[i] > 0 ? weights[i] : 0.0L;
  }
  long double weight_sum = std::accumulate(w.begin(), w.end(), 0.0L);
  if (!(weight_sum > 0)) {
    std::fill(w.begin(), w.end(), 1.0L);
    weight_sum = static_cast<long double>(n);
  }
  // Floors of the exact shares, then the remainder one by one to the largest fractions. Long
  // double keeps 64 bits of mantissa, but the arithmetic is still inexact for huge totals, so the
  // sum is forced to the total afterwards rather than trusted.
  std::vector<long double> fraction(n, 0.0L);
  uint64_t assigned = 0;
  for (size_t i = 0; i < n; ++i) {
    const long double exact = static_cast<long double>(total) * (w[i] / weight_sum);
    long double floor = std::floor(exact);
    if (floor > static_cast<long double>(total)) floor = static_cast<long double>(total);
    parts[i] = static_cast<uint64_t>(floor);
    fraction[i] = exact - floor;
  }
  for (size_t i = 0; i < n; ++i) {
    // Precision could make the floors overshoot; take the excess back from the end.
    if (parts[i] > total - assigned) parts[i] = total - assigned;
    assigned += parts[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fraction[a] > fraction[b]; });
  // Only agents with weight take a remainder: a zero weight must stay at zero.
  std::vector<size_t> takers;
  for (size_t i : order) {
    if (w[i] > 0) takers.push_back(i);
  }
  uint64_t remainder = total - assigned;
  const uint64_t rounds = remainder / takers.size();
  for (size_t i : takers) parts[i] += rounds;
  remainder -= rounds * takers.size();
  for (size_t k = 0; k < remainder; ++k) ++parts[takers[k]];
  return parts;
}

std::vector<double> UniformPhases(size_t agents) {
  std::vector<double> phases(agents, 0.0);
  for (size_t i = 0; i < agents; ++i) {
    phases[i] = static_cast<double>(i) / static_cast<double>(agents);
  }
  return phases;
}

SlotPartition PartitionSlots(const std::vector<uint32_t>& connections) {
  SlotPartition partition;
  partition.ranges.reserve(connections.size());
  for (uint32_t count : connections) {
    partition.ranges.push_back({.first_slot = partition.total_slots, .count = count});
    partition.total_slots += count;
  }
  return partition;
}

namespace {

// The part of every agent's share that does not depend on the load's kind: its place among the
// active agents, its query count, its slots (from its connections) and its phase.
std::vector<AgentShare> PlaceAgents(const std::vector<size_t>& active,
                                    const std::vector<uint32_t>& connections,
                                    const std::vector<uint64_t>& queries) {
  const SlotPartition slots = PartitionSlots(connections);
  const std::vector<double> phases = UniformPhases(active.size());
  std::vector<AgentShare> shares(active.size());
  for (size_t i = 0; i < active.size(); ++i) {
    AgentShare& share = shares[i];
    share.agent = active[i];
    share.agent_index = static_cast<uint32_t>(i);
    share.agent_count = static_cast<uint32_t>(active.size());
    share.queries = queries[i];
    share.first_slot = slots.ranges[i].first_slot;
    share.connections = slots.ranges[i].count;
    share.total_slots = slots.total_slots;
    share.phase = phases[i];
  }
  return shares;
}

// Plans with stages: each agent takes a fraction of every rate, or a position in the spread of
// every client level, and a share of each stage's query count.
std::vector<AgentShare> SplitStagedPlan(const v1::Plan& plan,
                                        const std::vector<double>& capacities) {
  const bool open = plan.load().has_open();
  std::vector<size_t> active(capacities.size());
  std::iota(active.begin(), active.end(), 0);
  std::vector<double> fractions;
  std::vector<uint32_t> connections;
  // As in SplitPlan: drop agents that would never run a client, until none would.
  while (!active.empty()) {
    std::vector<double> active_capacities;
    for (size_t a : active) active_capacities.push_back(capacities[a]);
    fractions = open ? SplitRate(1.0, active_capacities) : std::vector<double>(active.size(), 0);
    connections.clear();
    std::vector<size_t> busy;
    for (size_t i = 0; i < active.size(); ++i) {
      const StageProgram program(plan, fractions[i], static_cast<uint32_t>(i),
                                 static_cast<uint32_t>(active.size()));
      connections.push_back(open ? (program.AnyRate() ? plan.target().pool() : 0)
                                 : program.ClientStarts());
      if (connections.back() > 0) busy.push_back(active[i]);
    }
    if (busy.size() == active.size() || busy.empty()) break;
    active = std::move(busy);
  }
  std::vector<AgentShare> shares =
      PlaceAgents(active, connections, std::vector<uint64_t>(active.size(), 0));
  for (size_t i = 0; i < active.size(); ++i) shares[i].rate_fraction = fractions[i];
  // Each counted stage's queries go by the agents' parts of its load (rates, or its peak
  // clients), so that they reach their counts at about the same time.
  for (const v1::Stage& stage : plan.stages()) {
    std::vector<double> weights = fractions;
    if (!open) {
      const auto peak = static_cast<uint32_t>(
          stage.has_knee() ? stage.knee().max() : MaxLevel(stage.clients()));
      for (size_t i = 0; i < active.size(); ++i) {
        weights[i] = ClientsOfAgent(peak, static_cast<uint32_t>(i),
                                    static_cast<uint32_t>(active.size()));
      }
    }
    const std::vector<uint64_t> queries = stage.queries() > 0
                                              ? SplitQueries(stage.queries(), weights)
                                              : std::vector<uint64_t>(active.size(), 0);
    for (size_t i = 0; i < active.size(); ++i) shares[i].stage_queries.push_back(queries[i]);
  }
  return shares;
}

}  // namespace

std::vector<AgentShare> SplitPlan(const v1::Plan& plan, const std::vector<double>& capacities) {
  if (plan.stages_size() > 0) return SplitStagedPlan(plan, capacities);
  const bool open = plan.load().has_open();
  const uint64_t query_limit = plan.stop().queries();
  std::vector<size_t> active(capacities.size());
  std::iota(active.begin(), active.end(), 0);

  std::vector<double> rates;
  std::vector<uint32_t> clients;
  std::vector<uint64_t> queries;
  // Dropping idle agents changes everyone's share, which can idle another; the set only shrinks,
  // so this ends, at the latest with one agent that takes everything.
  while (!active.empty()) {
    std::vector<double> weights;
    if (open) {
      std::vector<double> active_capacities;
      for (size_t a : active) active_capacities.push_back(capacities[a]);
      rates = SplitRate(plan.load().open().rate(), active_capacities);
      weights = rates;
    } else {
      clients = SpreadClients(plan.load().closed().clients(), active.size());
      weights.assign(clients.begin(), clients.end());
    }
    queries = query_limit > 0 ? SplitQueries(query_limit, weights)
                              : std::vector<uint64_t>(active.size(), 0);
    std::vector<size_t> busy;
    for (size_t i = 0; i < active.size(); ++i) {
      const bool idle = (!open && clients[i] == 0) || (query_limit > 0 && queries[i] == 0);
      if (!idle) busy.push_back(active[i]);
    }
    if (busy.size() == active.size() || busy.empty()) break;
    active = std::move(busy);
  }

  std::vector<uint32_t> connections(active.size());
  for (size_t i = 0; i < active.size(); ++i) {
    connections[i] = open ? plan.target().pool() : clients[i];
  }
  std::vector<AgentShare> shares = PlaceAgents(active, connections, queries);
  const uint32_t used_slots = shares.empty() ? 0 : shares.front().total_slots;
  for (size_t i = 0; i < active.size(); ++i) {
    if (open) {
      shares[i].rate = rates[i];
    } else {
      shares[i].clients = clients[i];
    }
    // As many spare slots as the agents use, after their ranges (see AgentShare).
    shares[i].spare_first_slot = used_slots;
    shares[i].total_slots = 2 * used_slots;
  }
  return shares;
}

}  // namespace dbload
