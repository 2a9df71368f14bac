#include "coordinator/plan_admission.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

TEST(PlanAdmissionTest, ThePeakOfAPlanWithoutStagesIsItsLoad) {
  v1::Plan open;
  open.mutable_load()->mutable_open()->set_rate(250);
  EXPECT_EQ(PeakOf(open, /*rate=*/true).value, 250);
  EXPECT_EQ(PeakOf(open, /*rate=*/true).field, "load.open.rate");
  EXPECT_EQ(PeakOf(open, /*rate=*/false).value, 0);
  v1::Plan closed;
  closed.mutable_load()->mutable_closed()->set_clients(8);
  EXPECT_EQ(PeakOf(closed, /*rate=*/false).value, 8);
  EXPECT_EQ(PeakOf(closed, /*rate=*/false).field, "load.closed.clients");
  EXPECT_EQ(PeakOf(closed, /*rate=*/true).value, 0);
}

TEST(PlanAdmissionTest, ThePeakOfStagesNamesTheStageThatReachesIt) {
  v1::Plan plan;
  plan.mutable_load()->mutable_closed();
  plan.add_stages()->mutable_clients()->set_from(4);
  v1::Stage& knee = *plan.add_stages();
  knee.mutable_knee()->set_max(32);
  plan.add_stages()->mutable_clients()->set_from(16);
  const PlanPeak peak = PeakOf(plan, /*rate=*/false);
  EXPECT_EQ(peak.value, 32);
  EXPECT_EQ(peak.field, "stages.1.knee.max");
  EXPECT_EQ(PeakOf(plan, /*rate=*/true).value, 0);
}

TEST(PlanAdmissionTest, APlanAboveTheCoordinatorsLimitsIsRefusedNamingTheFlag) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(2000);
  EXPECT_TRUE(WithinCoordinatorLimits(plan, "p.yaml", 0, 0).ok());
  EXPECT_TRUE(WithinCoordinatorLimits(plan, "p.yaml", 2000, 0).ok());
  const absl::Status refused = WithinCoordinatorLimits(plan, "p.yaml", 1000, 0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("p.yaml: load.open.rate: 2000"));
  EXPECT_THAT(refused.message(), HasSubstr("(--max-rate)"));
  v1::Plan clients;
  clients.mutable_load()->mutable_closed()->set_clients(64);
  EXPECT_THAT(WithinCoordinatorLimits(clients, "q.yaml", 0, 10).message(),
              HasSubstr("q.yaml: load.closed.clients: 64 clients is above this coordinator's "
                        "limit of 10 (--max-clients)"));
}

}  // namespace
}  // namespace dbload
