#include "net/transport_security.h"

#include <grpcpp/support/client_interceptor.h>
#include <sys/stat.h>

#include <fstream>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "net/loopback.h"

namespace dbload {

namespace {

constexpr char kTokenHeader[] = "authorization";
constexpr char kTokenScheme[] = "Bearer ";
constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 4096;
constexpr size_t kMaxPemBytes = 1 << 20;

absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, " ", path, ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  std::string pem = text.str();
  if (pem.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": larger than 1 MiB"));
  }
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": not a PEM file (no -----BEGIN line)"));
  }
  return pem;
}

// Puts the token on every call of a channel, so that no call site can forget it.
class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::string header_value) : header_value_(std::move(header_value)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kTokenHeader, header_value_);
    }
    methods->Proceed();
  }

 private:
  const std::string header_value_;  // a copy: a call may outlive the channel's factory
};

class TokenInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(const std::string& token)
      : header_value_(absl::StrCat(kTokenScheme, token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(header_value_);
  }

 private:
  const std::string header_value_;
};

bool SameInConstantTime(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

}  // namespace

std::string SecurityFlagsHelp(bool server) {
  if (server) {
    return R"(  --tls-cert FILE   PEM certificate (chain) of this coordinator; with --tls-key, every
                    connection (agents, CLI) is TLS
  --tls-key FILE    its PEM private key
  --tls-ca FILE     mutual TLS: clients must present a certificate signed by this CA
  --token-file FILE refuse every call that does not carry the token in FILE (one line, at
                    least 16 characters, the file readable by its owner only: chmod 600)
  --allow-insecure-remote
                    listen on an address that is not loopback without TLS (a trusted network)
)";
  }
  return R"(  --tls-ca FILE     TLS to the coordinator: its certificate must chain to this PEM CA and
                    name the host dialled
  --tls-cert FILE   this client's PEM certificate, for a coordinator that requires one (mutual
                    TLS; with --tls-key)
  --tls-key FILE    its PEM private key
  --token-file FILE send the coordinator's shared token, read from FILE (chmod 600)
  --allow-insecure-remote
                    dial a coordinator that is not on loopback without TLS (a trusted network)
)";
}

bool IsSecurityFlag(absl::string_view flag, bool* takes_value) {
  *takes_value = flag != "--allow-insecure-remote";
  return flag == "--tls-cert" || flag == "--tls-key" || flag == "--tls-ca" ||
         flag == "--token-file" || flag == "--allow-insecure-remote";
}

absl::Status SetSecurityFlag(absl::string_view flag, const std::string& value,
                             SecurityFlags& flags) {
  if (flag == "--allow-insecure-remote") {
    flags.allow_insecure_remote = true;
    return absl::OkStatus();
  }
  std::string* target = flag == "--tls-cert"     ? &flags.tls_cert_file
                        : flag == "--tls-key"    ? &flags.tls_key_file
                        : flag == "--tls-ca"     ? &flags.tls_ca_file
                        : flag == "--token-file" ? &flags.token_file
                                                 : nullptr;
  if (target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown argument '", flag, "'"));
  }
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": needs a file"));
  *target = value;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat("--token-file ", path, ": cannot be read"));
  }
  if ((info.st_mode & 0077) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "--token-file ", path, ": other users may read or change it (mode ",
        absl::StrFormat("%03o", info.st_mode & 0777), "); make it private: chmod 600 ", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    return absl::NotFoundError(absl::StrCat("--token-file ", path, ": cannot be read"));
  }
  std::string token(absl::StripTrailingAsciiWhitespace(text.str()));
  if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength) {
    return absl::InvalidArgumentError(absl::StrCat("--token-file ", path,
                                                   ": the token must be one line of ",
                                                   kMinTokenLength, " to ", kMaxTokenLength,
                                                   " characters, got ", token.size()));
  }
  for (char c : token) {
    if (c <= ' ' || c > '~') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--token-file ", path,
          ": the token must be one line of printable characters without spaces"));
    }
  }
  return token;
}

absl::StatusOr<TransportSecurity> LoadTransportSecurity(const SecurityFlags& flags, bool server) {
  TransportSecurity security;
  security.allow_insecure_remote = flags.allow_insecure_remote;
  if (flags.tls_cert_file.empty() != flags.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        flags.tls_cert_file.empty() ? "--tls-key needs --tls-cert (the certificate it belongs to)"
                                    : "--tls-cert needs --tls-key (its private key)");
  }
  if (server && flags.tls_cert_file.empty() && !flags.tls_ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-ca (mutual TLS) needs --tls-cert and --tls-key: the coordinator's own "
        "certificate");
  }
  if (!server && !flags.tls_cert_file.empty() && flags.tls_ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert needs --tls-ca: the CA that the coordinator's certificate must chain to");
  }
  security.tls = server ? !flags.tls_cert_file.empty() : !flags.tls_ca_file.empty();
  struct File {
    const std::string& path;
    absl::string_view flag;
    std::string* pem;
  };
  for (const File& file : {File{flags.tls_cert_file, "--tls-cert", &security.cert_pem},
                           File{flags.tls_key_file, "--tls-key", &security.key_pem},
                           File{flags.tls_ca_file, "--tls-ca", &security.ca_pem}}) {
    if (file.path.empty()) continue;
    absl::StatusOr<std::string> pem = ReadPem(file.path, file.flag);
    if (!pem.ok()) return pem.status();
    *file.pem = *std::move(pem);
  }
  if (!flags.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(flags.token_file);
    if (!token.ok()) return token.status();
    security.token = *std::move(token);
  }
  return security;
}

absl::Status CheckAddressSecurity(const std::string& address, const TransportSecurity& security,
                                  absl::string_view what) {
  if (security.tls || security.allow_insecure_remote || IsLoopbackAddress(address)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      what, " '", address,
      "': not on this machine, and the link would be plain text: use TLS (--tls-cert/--tls-key "
      "on the coordinator, --tls-ca on its clients), or say the network is trusted with "
      "--allow-insecure-remote"));
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TransportSecurity& security) {
  if (!security.tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      security.ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.ca_pem;
  options.pem_key_cert_pairs.push_back({security.key_pem, security.cert_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::Channel> DialSecure(const std::string& address,
                                          const TransportSecurity& security,
                                          const grpc::ChannelArguments& args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (security.tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = security.ca_pem;
    options.pem_private_key = security.key_pem;
    options.pem_cert_chain = security.cert_pem;
    credentials = grpc::SslCredentials(options);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> token;
  if (!security.token.empty()) {
    token.push_back(std::make_unique<TokenInterceptorFactory>(security.token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                  std::move(token));
}

grpc::Status CheckCallToken(const grpc::ServerContext& context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(kTokenHeader);
  if (found == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this coordinator requires its token: give the caller --token-file");
  }
  const absl::string_view sent(found->second.data(), found->second.size());
  if (!absl::StartsWith(sent, kTokenScheme) ||
      !SameInConstantTime(sent.substr(sizeof kTokenScheme - 1), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the token sent is not this coordinator's (--token-file)");
  }
  return grpc::Status::OK;
}

std::string RandomToken() {
  std::random_device entropy;  // the kernel's random source on Linux
  std::string token;
  for (int i = 0; i < 8; ++i) absl::StrAppend(&token, absl::Hex(entropy(), absl::kZeroPad8));
  return token;
}

}  // namespace dbload
