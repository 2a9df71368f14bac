// The rules of net/transport_security: token files, which TLS flags go together, and which
// addresses plain text may use. The TLS handshakes and the token on the wire are exercised with
// the real programs in tests/integration/security_test.cc.
#include "net/transport_security.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

class TransportSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/dbload_transport_security_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::trunc) << text;
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }

  std::string dir_;
};

TEST_F(TransportSecurityTest, ATokenFileIsOnePrivateLineOfPrintableCharacters) {
  absl::StatusOr<std::string> token = ReadTokenFile(Write("t", "0123456789abcdef-XYZ\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "0123456789abcdef-XYZ");
  EXPECT_EQ(*ReadTokenFile(Write("r", "0123456789abcdef\r\n\n", 0400)), "0123456789abcdef");

  const std::string readable = Write("readable", "0123456789abcdef\n", 0640);
  EXPECT_THAT(ReadTokenFile(readable).status().message(),
              HasSubstr(readable + ": other users may read or change it (mode 640); make it "
                                   "private: chmod 600 " + readable));
  EXPECT_THAT(ReadTokenFile(Write("short", "0123456789abcde\n")).status().message(),
              HasSubstr("must be one line of 16 to 4096 characters, got 15"));
  EXPECT_THAT(ReadTokenFile(Write("space", "0123456789 abcdef\n")).status().message(),
              HasSubstr("printable characters without spaces"));
  EXPECT_THAT(ReadTokenFile(Write("lines", "0123456789abcdef\nsecond-line-here\n"))
                  .status()
                  .message(),
              HasSubstr("printable characters without spaces"));
  EXPECT_THAT(ReadTokenFile(dir_ + "/absent").status().message(),
              HasSubstr(dir_ + "/absent: cannot be read"));
}

TEST_F(TransportSecurityTest, TlsFlagsComeInTheRightCombinations) {
  const std::string pem = Write("x.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  const std::string not_pem = Write("x.txt", "hello\n");

  SecurityFlags cert_only{.tls_cert_file = pem};
  EXPECT_THAT(LoadTransportSecurity(cert_only, true).status().message(),
              HasSubstr("--tls-cert needs --tls-key"));
  SecurityFlags key_only{.tls_key_file = pem};
  EXPECT_THAT(LoadTransportSecurity(key_only, false).status().message(),
              HasSubstr("--tls-key needs --tls-cert"));
  SecurityFlags server_ca_only{.tls_ca_file = pem};
  EXPECT_THAT(LoadTransportSecurity(server_ca_only, true).status().message(),
              HasSubstr("--tls-ca (mutual TLS) needs --tls-cert and --tls-key"));
  SecurityFlags client_cert_without_ca{.tls_cert_file = pem, .tls_key_file = pem};
  EXPECT_THAT(LoadTransportSecurity(client_cert_without_ca, false).status().message(),
              HasSubstr("--tls-cert needs --tls-ca"));
  SecurityFlags bad_pem{.tls_ca_file = not_pem};
  EXPECT_THAT(LoadTransportSecurity(bad_pem, false).status().message(),
              HasSubstr("--tls-ca " + not_pem + ": not a PEM file"));

  absl::StatusOr<TransportSecurity> server =
      LoadTransportSecurity({.tls_cert_file = pem, .tls_key_file = pem}, true);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(server->tls);
  EXPECT_TRUE(server->ca_pem.empty());
  absl::StatusOr<TransportSecurity> client = LoadTransportSecurity({.tls_ca_file = pem}, false);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE(client->tls);
  absl::StatusOr<TransportSecurity> plain = LoadTransportSecurity({}, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls);
  EXPECT_TRUE(plain->token.empty());
}

TEST_F(TransportSecurityTest, PlainTextStaysOnThisMachineUnlessTheUserSaysOtherwise) {
  TransportSecurity plain;
  for (const char* local : {"127.0.0.1:7000", "localhost:1", "[::1]:7000", "unix:/tmp/x.sock"}) {
    EXPECT_TRUE(CheckAddressSecurity(local, plain, "--listen").ok()) << local;
  }
  const absl::Status refused = CheckAddressSecurity("0.0.0.0:7000", plain, "--listen");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("--listen '0.0.0.0:7000': not on this machine"));
  EXPECT_THAT(refused.message(), HasSubstr("--allow-insecure-remote"));
  TransportSecurity tls;
  tls.tls = true;
  EXPECT_TRUE(CheckAddressSecurity("0.0.0.0:7000", tls, "--listen").ok());
  TransportSecurity trusted;
  trusted.allow_insecure_remote = true;
  EXPECT_TRUE(CheckAddressSecurity("10.1.2.3:7000", trusted, "--coordinator").ok());
}

TEST(SecurityFlagsTest, TheFlagsAndTheirValues) {
  bool takes_value = false;
  EXPECT_TRUE(IsSecurityFlag("--tls-ca", &takes_value));
  EXPECT_TRUE(takes_value);
  EXPECT_TRUE(IsSecurityFlag("--allow-insecure-remote", &takes_value));
  EXPECT_FALSE(takes_value);
  EXPECT_FALSE(IsSecurityFlag("--token", &takes_value));  // a token is never a flag's value
  SecurityFlags flags;
  EXPECT_TRUE(SetSecurityFlag("--token-file", "/x", flags).ok());
  EXPECT_EQ(flags.token_file, "/x");
  EXPECT_THAT(SetSecurityFlag("--tls-cert", "", flags).message(), HasSubstr("needs a file"));
  EXPECT_NE(RandomToken(), RandomToken());
  EXPECT_EQ(RandomToken().size(), 64u);
}

}  // namespace
}  // namespace dbload
