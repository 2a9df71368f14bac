#ifndef DBLOAD_NET_TRANSPORT_SECURITY_H_
#define DBLOAD_NET_TRANSPORT_SECURITY_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dbload {

// How dbload's own gRPC connections (agent → coordinator, CLI → coordinator) are secured: TLS
// from PEM files, and a shared token that the coordinator requires of every call. One place
// decides it for the three programs, so that they take the same flags and mean the same thing.
//
// The coordinator (server): --tls-cert and --tls-key turn TLS on; --tls-ca then also requires
// every client to present a certificate signed by that CA (mutual TLS).
// Agents and the CLI (clients): --tls-ca turns TLS on and is the CA the coordinator's
// certificate must chain to (and name the host dialled); --tls-cert and --tls-key are the
// client's own certificate for a coordinator that requires one.
// --token-file: the shared token, read from a file (never a flag's value, which the process
// list would show); the coordinator refuses calls that do not carry it.
//
// Without TLS the link is plain text, so an address that is not on this machine is refused
// unless --allow-insecure-remote says the network is trusted.
struct SecurityFlags {
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_ca_file;
  std::string token_file;
  bool allow_insecure_remote = false;
};

// The flags above in one block of --help text (indented like the programs' own).
std::string SecurityFlagsHelp(bool server);

// Takes `flag` (with `value`) if it is one of the flags above: true if it was, false if it is
// someone else's. --allow-insecure-remote takes no value (`value` is ignored and not consumed;
// `takes_value` says which).
bool IsSecurityFlag(absl::string_view flag, bool* takes_value);
absl::Status SetSecurityFlag(absl::string_view flag, const std::string& value,
                             SecurityFlags& flags);

// What the flags amount to, with the files read: the PEM texts and the token.
struct TransportSecurity {
  std::string cert_pem;  // this process's certificate chain (server, or client for mutual TLS)
  std::string key_pem;
  std::string ca_pem;    // the peer's CA
  std::string token;     // empty: none sent (client) / none required (server)
  bool tls = false;
  bool allow_insecure_remote = false;
};

// Reads and checks the files. `server`: the coordinator's reading (TLS needs cert and key);
// otherwise a client's (TLS needs the CA). Errors name the flag and the file.
absl::StatusOr<TransportSecurity> LoadTransportSecurity(const SecurityFlags& flags, bool server);

// A token file holds one line of at least 16 printable characters; it must not be readable or
// writable by other users (as ssh treats private keys). The error names the file.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Refuses a plain-text address that leaves this machine (listen or dial), unless allowed.
// `what` names the flag in the message ("--listen", "--coordinator").
absl::Status CheckAddressSecurity(const std::string& address, const TransportSecurity& security,
                                  absl::string_view what);

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TransportSecurity& security);

// A channel to the coordinator with TLS (or not) and the token attached to every call on it.
std::shared_ptr<grpc::Channel> DialSecure(const std::string& address,
                                          const TransportSecurity& security,
                                          const grpc::ChannelArguments& args);

// The coordinator's check of a call's token, compared in constant time. OK when `token` is
// empty (none required); UNAUTHENTICATED otherwise, saying whether it was missing or wrong.
grpc::Status CheckCallToken(const grpc::ServerContext& context, const std::string& token);

// A random token for processes that share it in memory (dbload run's own coordinator and agents).
std::string RandomToken();

}  // namespace dbload

#endif  // DBLOAD_NET_TRANSPORT_SECURITY_H_
