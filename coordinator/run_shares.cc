#include "coordinator/run_shares.h"

#include <algorithm>
#include <utility>

#include "coordinator/planner.h"

namespace dbload {

void RunShares::AssignClients(const std::string& participant, uint32_t clients) {
  clients_[participant] = clients;
}

void RunShares::AssignRate(const std::string& participant, double rate) {
  highest_rate_[participant] = std::max(highest_rate_[participant], rate);
}

uint32_t RunShares::clients(const std::string& participant) const {
  auto it = clients_.find(participant);
  return it == clients_.end() ? 0 : it->second;
}

std::optional<double> RunShares::highest_rate(const std::string& participant) const {
  auto it = highest_rate_.find(participant);
  if (it == highest_rate_.end()) return std::nullopt;
  return it->second;
}

std::vector<ShareChange> RunShares::SplitRate(double rate,
                                              const std::vector<std::string>& participants,
                                              const std::vector<double>& capacities) {
  const std::vector<double> rates = dbload::SplitRate(rate, capacities);
  std::vector<ShareChange> changes;
  for (size_t i = 0; i < participants.size(); ++i) {
    ShareChange& change = changes.emplace_back();
    change.participant = participants[i];
    change.change.mutable_load()->set_rate(rates[i]);
    AssignRate(participants[i], rates[i]);
  }
  return changes;
}

RunShares::ClientsMoved RunShares::MoveClientsOf(const std::vector<std::string>& lost,
                                                 const std::vector<std::string>& survivors) {
  ClientsMoved moved;
  for (const std::string& name : lost) moved.orphaned += std::exchange(clients_[name], 0);
  if (moved.orphaned == 0 || next_spare_slot_ + moved.orphaned > total_slots_) return moved;
  moved.moved = true;
  const std::vector<uint32_t> added = SpreadClients(moved.orphaned, survivors.size());
  for (size_t i = 0; i < survivors.size(); ++i) {
    if (added[i] == 0) continue;
    uint32_t& clients = clients_[survivors[i]];
    clients += added[i];
    ShareChange& change = moved.changes.emplace_back();
    change.participant = survivors[i];
    change.change.mutable_load()->set_clients(clients);
    change.change.set_extra_first_slot(next_spare_slot_);
    change.change.set_extra_slot_count(added[i]);
    next_spare_slot_ += added[i];
  }
  return moved;
}

RunShares::Join RunShares::Take(const std::string& participant, const dbload::v1::Plan& plan,
                                const std::vector<std::string>& survivors,
                                const std::vector<double>& capacities) {
  Join join;
  const bool open = plan.load().has_open();
  std::vector<double> rates;
  std::vector<uint32_t> spread;
  uint32_t joiner_slots = 0;
  if (open) {
    rates = dbload::SplitRate(plan.load().open().rate(), capacities);
    join.load.set_rate(rates.back());
    joiner_slots = join.spare_needed = plan.target().pool();
  } else {
    spread = SpreadClients(plan.load().closed().clients(), survivors.size() + 1);
    if (spread.back() == 0) return join;  // more agents than clients
    joiner_slots = join.spare_needed = spread.back();
    for (size_t i = 0; i < survivors.size(); ++i) {
      const uint32_t now_clients = clients(survivors[i]);
      if (spread[i] > now_clients) join.spare_needed += spread[i] - now_clients;
    }
    join.load.set_clients(joiner_slots);
  }
  if (next_spare_slot_ + join.spare_needed > total_slots_) return join;
  join.taken = true;
  join.first_slot = next_spare_slot_;
  next_spare_slot_ += joiner_slots;
  for (size_t i = 0; i < survivors.size(); ++i) {
    ShareChange change{.participant = survivors[i]};
    if (open) {
      change.change.mutable_load()->set_rate(rates[i]);
      AssignRate(survivors[i], rates[i]);
    } else {
      const uint32_t wanted = spread[i];
      uint32_t& clients = clients_[survivors[i]];
      if (wanted == clients) continue;
      if (wanted > clients) {
        change.change.set_extra_first_slot(next_spare_slot_);
        change.change.set_extra_slot_count(wanted - clients);
        next_spare_slot_ += wanted - clients;
      }
      clients = wanted;
      change.change.mutable_load()->set_clients(wanted);
    }
    join.changes.push_back(std::move(change));
  }
  if (open) {
    AssignRate(participant, join.load.rate());
  } else {
    clients_[participant] = joiner_slots;
  }
  return join;
}

}  // namespace dbload
