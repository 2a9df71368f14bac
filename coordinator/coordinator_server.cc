// CoordinatorServer (coordinator_service.h): the gRPC server that serves a CoordinatorService.
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/coordinator_service.h"
#include "net/loopback.h"
#include "net/transport_security.h"
#include "plan/plan_limits.h"

namespace dbload {

namespace {

// How long CoordinatorServer::Shutdown lets calls in progress finish before cancelling them.
constexpr auto kServerShutdownGrace = std::chrono::seconds(5);

}  // namespace

bool IsLoopbackListenAddress(const std::string& address) { return IsLoopbackAddress(address); }

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    const std::string& address, CoordinatorService& service, const TransportSecurity& security) {
  if (absl::Status allowed = CheckAddressSecurity(address, security, "--listen"); !allowed.ok()) {
    return allowed;
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, ServerCredentials(security), &port);
  // Reports and assignments as large as the plan limits allow (plan/plan_limits.h).
  builder.SetMaxReceiveMessageSize(kMaxRpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxRpcMessageBytes);
  builder.RegisterService(service.agent_link_service());
  builder.RegisterService(service.control_service());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (port == 0 && !absl::StartsWith(address, "unix:"))) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on '", address, "' (in use, or not a host:port?)"));
  }
  return std::unique_ptr<CoordinatorServer>(new CoordinatorServer(std::move(server), port));
}

CoordinatorServer::CoordinatorServer(std::unique_ptr<grpc::Server> server, int port)
    : server_(std::move(server)), port_(port) {}

CoordinatorServer::~CoordinatorServer() { Shutdown(); }

void CoordinatorServer::Shutdown() {
  if (server_ == nullptr) return;
  // gRPC's deadline is wall-clock by its API; it only bounds how long a stuck call may delay exit.
  server_->Shutdown(std::chrono::system_clock::now() + kServerShutdownGrace);
  server_->Wait();
  server_.reset();
}

}  // namespace dbload
