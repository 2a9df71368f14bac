#include "agent/load_change.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LoadChangeTest : public ::testing::Test {
 protected:
  // A closed-loop run of `clients` in slots [first, first + clients) of `total` slots.
  void ClosedLoop(uint32_t clients, uint32_t first, uint32_t total) {
    run_.run_id = "r1";
    run_.plan.mutable_load()->mutable_closed()->set_clients(clients);
    run_.share.clients = clients;
    run_.share.first_slot = first;
    run_.share.total_slots = total;
    run_.slot_capacity = clients;
    run_.own_slots_end = first + clients;
  }
  void OpenLoop(double plan_rate, double share) {
    run_.run_id = "r1";
    run_.plan.mutable_load()->mutable_open()->set_rate(plan_rate);
    run_.share.rate = share;
  }
  void Apply(const v1::LoadChange& change) {
    ApplyLoadChange(change, run_, [this](const std::string& line) { events_.push_back(line); });
  }
  static v1::LoadChange Clients(uint32_t clients, uint32_t extra_first = 0,
                                uint32_t extra_count = 0) {
    v1::LoadChange change;
    change.set_run_id("r1");
    change.mutable_load()->set_clients(clients);
    change.set_extra_first_slot(extra_first);
    change.set_extra_slot_count(extra_count);
    return change;
  }
  static v1::LoadChange Rate(double rate) {
    v1::LoadChange change;
    change.set_run_id("r1");
    change.mutable_load()->set_rate(rate);
    return change;
  }

  ActiveRun run_;
  std::vector<std::string> events_;
};

TEST_F(LoadChangeTest, FewerClientsFitTheRunsSlots) {
  ClosedLoop(4, 0, 8);
  Apply(Clients(2));
  EXPECT_THAT(events_, ElementsAre("run r1: 2 clients"));
  EXPECT_EQ(run_.slot_capacity, 4u);
}

TEST_F(LoadChangeTest, MoreClientsTakeSpareSlotsBeyondTheRunsOwnRange) {
  ClosedLoop(4, 0, 8);
  Apply(Clients(6, 4, 2));
  EXPECT_THAT(events_, ElementsAre("run r1: 6 clients (slots 4 to 5 added)"));
  EXPECT_EQ(run_.slot_capacity, 6u);
}

TEST_F(LoadChangeTest, SlotsInsideTheRunsOwnRangeOrBeyondItsSlotsAreIgnored) {
  ClosedLoop(4, 0, 8);
  Apply(Clients(6, 2, 2));  // overlaps the run's own slots 0 to 3
  Apply(Clients(6, 7, 2));  // past total_slots 8
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_THAT(events_[0], HasSubstr("outside the run's spare slots (4 to 8)"));
  EXPECT_THAT(events_[1], HasSubstr("outside the run's spare slots (4 to 8)"));
  EXPECT_EQ(run_.slot_capacity, 4u);
}

TEST_F(LoadChangeTest, MoreClientsThanSlotsAreIgnored) {
  ClosedLoop(4, 0, 8);
  Apply(Clients(5));
  EXPECT_THAT(events_,
              ElementsAre("ignoring a load change for run r1: 5 clients, but slots for 4"));
}

TEST_F(LoadChangeTest, ARateOnlyChangesAnOpenLoopRunThatHasSessions) {
  OpenLoop(1000, 500);
  Apply(Rate(700));
  Apply(Rate(-1));
  Apply(Clients(3));
  ASSERT_EQ(events_.size(), 3u);
  EXPECT_EQ(events_[0], "run r1: rate 700/s");
  EXPECT_THAT(events_[1], HasSubstr("out of range"));
  EXPECT_THAT(events_[2], HasSubstr("3 clients for an open-loop run"));

  events_.clear();
  OpenLoop(1000, 0);
  Apply(Rate(100));
  EXPECT_THAT(events_, ElementsAre(HasSubstr("it started with rate 0")));
}

TEST_F(LoadChangeTest, StagesTakeOnlyKneeStepsWithinThePlansLimits) {
  OpenLoop(1000, 500);
  run_.plan.add_stages();
  v1::LoadChange step;
  step.set_run_id("r1");
  step.set_knee_step(2);
  step.set_knee_level(400);
  Apply(step);
  step.set_knee_level(-1);
  Apply(step);
  v1::LoadChange done;
  done.set_run_id("r1");
  done.set_knee_done(true);
  Apply(done);
  Apply(Rate(100));
  EXPECT_THAT(events_, ElementsAre("run r1: knee step 2 at 400",
                                   "ignoring a load change for run r1: its stages set the load",
                                   "run r1: knee search done",
                                   "ignoring a load change for run r1: its stages set the load"));
}

}  // namespace
}  // namespace dbload
