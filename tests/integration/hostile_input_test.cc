// Input that a coordinator must refuse without falling over, sent to a real dbload-coordinator
// process: bytes that are no protobuf, a message larger than the coordinator takes, an agent of
// another protocol version, a report for a run that does not exist. Each is refused with a
// clear status (or ignored with a log line, for the report), and afterwards the same process
// still answers a well-formed call.

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "plan/plan_limits.h"
#include "proto/agent_protocol.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"

#ifndef DBLOAD_COORDINATOR_BINARY
#error "DBLOAD_COORDINATOR_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::testing::AnyOf;
using ::testing::HasSubstr;

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator_ = std::make_unique<Child>(
        std::vector<std::string>{DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0"});
    const std::string address = testing::ListeningAddress(*coordinator_);
    ASSERT_FALSE(address.empty()) << coordinator_->out() << coordinator_->err();
    channel_ = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  // The coordinator still runs and answers a well-formed call.
  void ExpectStillServing() {
    ASSERT_TRUE(coordinator_->running());
    auto control = v1::Control::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ListAgentsResponse agents;
    const grpc::Status listed = control->ListAgents(&context, v1::ListAgentsRequest(), &agents);
    EXPECT_TRUE(listed.ok()) << listed.error_message();
  }

  grpc::Status RawUnary(const std::string& method, const std::string& bytes) {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(std::move(status)); });
    return done.get_future().get();
  }

  std::unique_ptr<Child> coordinator_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(HostileInputTest, BytesThatAreNoProtobufAreRefused) {
  // 0xff… is not a valid protobuf: a field key of 0 or a truncated varint.
  const grpc::Status status = RawUnary("/dbload.v1.Control/Submit", std::string(64, '\xff'));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.error_code(), AnyOf(grpc::StatusCode::INTERNAL,
                                         grpc::StatusCode::INVALID_ARGUMENT));
  ExpectStillServing();
}

TEST_F(HostileInputTest, AnOversizedMessageIsRefusedWithResourceExhausted) {
  v1::SubmitRequest request;
  // Past the largest message dbload takes (plan/plan_limits.h), which is above gRPC's 4 MiB.
  request.mutable_plan()->set_name(std::string(kMaxRpcMessageBytes + (1 << 20), 'x'));
  const grpc::Status status = RawUnary("/dbload.v1.Control/Submit", request.SerializeAsString());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("larger than max"));
  ExpectStillServing();
}

TEST_F(HostileInputTest, AnAgentOfAnotherProtocolVersionIsRefusedNamingBoth) {
  auto link = v1::AgentLink::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = link->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_protocol_version(999);
  hello.mutable_hello()->set_name("time-traveller");
  ASSERT_TRUE(stream->Write(hello));
  stream->WritesDone();
  v1::CoordinatorMessage ignored;
  while (stream->Read(&ignored)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("999"));
  ExpectStillServing();
}

TEST_F(HostileInputTest, AReportForAnUnknownRunIsIgnoredAndTheAgentStaysConnected) {
  auto link = v1::AgentLink::NewStub(channel_);
  grpc::ClientContext context;
  auto stream = link->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_protocol_version(kAgentProtocolVersion);
  hello.mutable_hello()->set_name("confused");
  ASSERT_TRUE(stream->Write(hello));
  v1::AgentMessage report;
  report.mutable_report()->set_run_id("no-such-run");
  report.mutable_report()->set_sequence(1);
  ASSERT_TRUE(stream->Write(report));
  // The coordinator logs to stderr.
  for (int i = 0; i < 100 && !absl::StrContains(coordinator_->err(),
                                                 "report for unknown run 'no-such-run' ignored");
       ++i) {
    coordinator_->Pump(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(coordinator_->err(), HasSubstr("report for unknown run 'no-such-run' ignored"));
  // Still connected and listed.
  auto control = v1::Control::NewStub(channel_);
  grpc::ClientContext list_context;
  v1::ListAgentsResponse agents;
  ASSERT_TRUE(control->ListAgents(&list_context, v1::ListAgentsRequest(), &agents).ok());
  ASSERT_EQ(agents.agents_size(), 1);
  context.TryCancel();
}

}  // namespace
}  // namespace dbload
