#include "net/target_allow_list.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dbload {
namespace {

constexpr uint32_t kMaxPort = 65535;

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
};

// An IP literal, with IPv4-mapped IPv6 addresses (::ffff:10.1.2.3) taken as the IPv4 address
// they carry, so that a v4 entry holds them.
std::optional<IpAddress> ParseIp(const std::string& text) {
  if (text.find('\0') != std::string::npos) return std::nullopt;
  IpAddress ip;
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    std::memcpy(ip.bytes.data(), &v4, 4);
    return ip;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      std::memcpy(ip.bytes.data(), &v6.s6_addr[12], 4);
      return ip;
    }
    ip.v6 = true;
    std::memcpy(ip.bytes.data(), &v6, 16);
    return ip;
  }
  return std::nullopt;
}

bool InNetwork(const IpAddress& ip, bool v6, const std::array<uint8_t, 16>& network,
               int prefix_length) {
  if (ip.v6 != v6) return false;
  const int whole = prefix_length / 8;
  if (!std::equal(network.begin(), network.begin() + whole, ip.bytes.begin())) return false;
  if (const int rest = prefix_length % 8; rest != 0) {
    const uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
    if ((network[whole] & mask) != (ip.bytes[whole] & mask)) return false;
  }
  return true;
}

// Host names as the DNS writes them (RFC 1123 labels, and '_' which some internal zones use):
// anything else in an entry is a typo, and a silent never-matching entry would hide it.
bool IsHostName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  bool all_digits_and_dots = true;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return false;
      }
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) all_digits_and_dots = false;
    }
  }
  // "127.0.0.300" is a broken address, not a name.
  return !all_digits_and_dots;
}

std::string NormalizedHostName(const std::string& host) {
  std::string name = absl::AsciiStrToLower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

std::string EntryError(const std::string& entry, const std::string& why) {
  return absl::StrCat("--allow-target: entry '", entry, "': ", why,
                      "; expected CIDR (10.1.0.0/16), IP (127.0.0.2, ::1) or HOST "
                      "(db.example.com), each optionally with :PORT ([::1]:5432, db:5432)");
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SystemResolver::Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve target host '", host, "': ", gai_strerror(error)));
  }
  std::vector<std::string> addresses;
  for (const addrinfo* at = found; at != nullptr; at = at->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (at->ai_family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(at->ai_addr)->sin_addr;
    } else if (at->ai_family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(at->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(at->ai_family, raw, text, sizeof(text)) == nullptr) continue;
    if (std::find(addresses.begin(), addresses.end(), text) == addresses.end()) {
      addresses.push_back(text);
    }
  }
  freeaddrinfo(found);
  if (addresses.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve target host '", host, "': no IPv4 or IPv6 address"));
  }
  return addresses;
}

TargetAllowList TargetAllowList::LoopbackDefault() {
  absl::StatusOr<TargetAllowList> list = Parse({"127.0.0.0/8,::1,localhost"});
  return *std::move(list);
}

absl::StatusOr<TargetAllowList> TargetAllowList::Parse(
    const std::vector<std::string>& flag_values) {
  if (flag_values.empty()) return LoopbackDefault();
  TargetAllowList list;
  for (const std::string& value : flag_values) {
    for (absl::string_view piece : absl::StrSplit(value, ',')) {
      const std::string text(absl::StripAsciiWhitespace(piece));
      if (text.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--allow-target: empty entry in '", value, "'; entries are separated by one comma"));
      }
      Entry entry;
      // Split off :PORT. IPv6 takes one only in brackets: "[::1]:5432", "[fd00::/8]:5432".
      std::string address = text;
      std::string port_text;
      if (absl::StartsWith(text, "[")) {
        const size_t close = text.find(']');
        if (close == std::string::npos) return absl::InvalidArgumentError(EntryError(text, "no ']'"));
        address = text.substr(1, close - 1);
        const std::string after = text.substr(close + 1);
        if (!after.empty()) {
          if (after[0] != ':') {
            return absl::InvalidArgumentError(
                EntryError(text, "after ']' only :PORT may follow"));
          }
          port_text = after.substr(1);
          if (port_text.empty()) return absl::InvalidArgumentError(EntryError(text, "empty port"));
        }
      } else if (std::count(text.begin(), text.end(), ':') == 1) {
        const size_t colon = text.find(':');
        address = text.substr(0, colon);
        port_text = text.substr(colon + 1);
        if (port_text.empty()) return absl::InvalidArgumentError(EntryError(text, "empty port"));
      }
      if (!port_text.empty()) {
        uint32_t port = 0;
        if (!absl::SimpleAtoi(port_text, &port) || port == 0 || port > kMaxPort ||
            !absl::ascii_isdigit(static_cast<unsigned char>(port_text[0]))) {
          return absl::InvalidArgumentError(EntryError(
              text, absl::StrCat("port must be a number from 1 to ", kMaxPort, ", got '",
                                 port_text, "'")));
        }
        entry.port = port;
      }
      if (address.empty()) return absl::InvalidArgumentError(EntryError(text, "no address"));
      std::string network_text = address;
      std::optional<int> prefix_length;
      if (const size_t slash = address.find('/'); slash != std::string::npos) {
        network_text = address.substr(0, slash);
        const std::string length_text = address.substr(slash + 1);
        int length = -1;
        if (length_text.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(length_text[0])) ||
            !absl::SimpleAtoi(length_text, &length)) {
          return absl::InvalidArgumentError(
              EntryError(text, absl::StrCat("prefix length '", length_text, "' is no number")));
        }
        prefix_length = length;
      }
      if (std::optional<IpAddress> ip = ParseIp(network_text)) {
        const int bits = ip->v6 ? 128 : 32;
        const int length = prefix_length.value_or(bits);
        if (length < 0 || length > bits) {
          return absl::InvalidArgumentError(EntryError(
              text, absl::StrCat("prefix length must be 0 to ", bits, ", got ", length)));
        }
        // 10.1.2.3/16 is most likely a typo for a single host or for 10.1.0.0/16: say so rather
        // than guess.
        std::array<uint8_t, 16> network{};
        for (int bit = 0; bit < length; ++bit) {
          network[bit / 8] |= ip->bytes[bit / 8] & static_cast<uint8_t>(0x80 >> (bit % 8));
        }
        if (network != ip->bytes) {
          char canonical[INET6_ADDRSTRLEN] = {};
          inet_ntop(ip->v6 ? AF_INET6 : AF_INET, network.data(), canonical, sizeof(canonical));
          return absl::InvalidArgumentError(EntryError(
              text, absl::StrCat("bits are set after the prefix; did you mean ", canonical, "/",
                                 length, " (a network) or ", network_text, " (one address)?")));
        }
        entry.v6 = ip->v6;
        entry.bytes = ip->bytes;
        entry.prefix_length = length;
      } else {
        if (prefix_length) {
          return absl::InvalidArgumentError(EntryError(
              text, absl::StrCat("'", network_text, "' before the '/' is no IP address")));
        }
        if (!IsHostName(address)) {
          return absl::InvalidArgumentError(
              EntryError(text, absl::StrCat("'", address, "' is neither an IP address nor a host name")));
        }
        entry.is_host = true;
        entry.host = NormalizedHostName(address);
      }
      list.entries_.push_back(std::move(entry));
      list.entries_text_.push_back(text);
    }
  }
  return list;
}

std::string TargetAllowList::Describe() const { return absl::StrJoin(entries_text_, ", "); }

bool TargetAllowList::AllowsAddress(const std::string& address, uint32_t port) const {
  const std::optional<IpAddress> ip = ParseIp(address);
  if (!ip) return false;
  for (const Entry& entry : entries_) {
    if (entry.is_host || (entry.port != 0 && entry.port != port)) continue;
    if (InNetwork(*ip, entry.v6, entry.bytes, entry.prefix_length)) return true;
  }
  return false;
}

bool TargetAllowList::AllowsHostName(const std::string& host, uint32_t port) const {
  const std::string name = NormalizedHostName(host);
  for (const Entry& entry : entries_) {
    if (entry.is_host && entry.host == name && (entry.port == 0 || entry.port == port)) return true;
  }
  return false;
}

std::string JoinHostPort(const std::string& host, uint32_t port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::Status TargetAllowList::Refusal(const v1::Target& target, const std::string& resolved,
                                      const TargetRefuser& who) const {
  const bool named = resolved.empty() ? !ParseIp(target.host()).has_value() : true;
  std::string message = absl::StrCat(who.subject, " refuses target ",
                                     JoinHostPort(target.host(), target.port()));
  if (!resolved.empty()) absl::StrAppend(&message, " (resolved to ", resolved, ")");
  absl::StrAppend(&message, ": not in its --allow-target (", Describe(), "); start ", who.remedy,
                  " with --allow-target ", target.host(), " (or a CIDR that holds ",
                  named && !resolved.empty() ? resolved : std::string("it"), ") ",
                  who.purpose);
  return absl::PermissionDeniedError(message);
}

absl::StatusOr<AllowedTarget> TargetAllowList::Check(const v1::Target& target,
                                                     Resolver& resolver,
                                                     const TargetRefuser& who) const {
  if (target.driver() == "noop") return AllowedTarget{};
  if (!target.socket().empty()) return AllowedTarget{.endpoint = target.socket()};
  const std::string& host = target.host();
  const uint32_t port = target.port();
  if (ParseIp(host)) {
    if (!AllowsAddress(host, port)) return Refusal(target, "", who);
    return AllowedTarget{.endpoint = JoinHostPort(host, port)};
  }
  absl::StatusOr<std::vector<std::string>> addresses = resolver.Resolve(host);
  if (!addresses.ok()) {
    return absl::Status(addresses.status().code(),
                        absl::StrCat(who.subject, " cannot check target ", JoinHostPort(host, port),
                                     " against its --allow-target: ",
                                     addresses.status().message()));
  }
  // One address is dialed for the whole run where the drivers used to try each in turn: IPv4
  // first, so that "localhost" still reaches a server that listens on 127.0.0.1 only.
  std::vector<std::string> ordered = *addresses;
  std::stable_partition(ordered.begin(), ordered.end(), [](const std::string& address) {
    const std::optional<IpAddress> ip = ParseIp(address);
    return ip && !ip->v6;
  });
  const bool by_name = AllowsHostName(host, port);
  for (const std::string& address : ordered) {
    if (by_name || AllowsAddress(address, port)) {
      return AllowedTarget{.dial_address = address, .endpoint = JoinHostPort(address, port)};
    }
  }
  return Refusal(target, absl::StrJoin(ordered, ", "), who);
}

absl::Status TargetAllowList::PreCheck(const v1::Target& target, const TargetRefuser& who) const {
  if (target.driver() == "noop" || !target.socket().empty()) return absl::OkStatus();
  const std::string& host = target.host();
  const uint32_t port = target.port();
  if (ParseIp(host)) {
    return AllowsAddress(host, port) ? absl::OkStatus() : Refusal(target, "", who);
  }
  if (AllowsHostName(host, port)) return absl::OkStatus();
  for (const Entry& entry : entries_) {
    // An address entry for this port could hold what the name resolves to on the agent.
    if (!entry.is_host && (entry.port == 0 || entry.port == port)) return absl::OkStatus();
  }
  return Refusal(target, "", who);
}

absl::StatusOr<std::string> ApplyAllowTarget(const TargetAllowList& allow, Resolver& resolver,
                                             const TargetRefuser& who, v1::Target& target) {
  target.clear_dial_address();
  absl::StatusOr<AllowedTarget> allowed = allow.Check(target, resolver, who);
  if (!allowed.ok()) return allowed.status();
  target.set_dial_address(allowed->dial_address);
  return allowed->endpoint;
}

std::string AllowTargetFlagHelp(const std::string& who) {
  return absl::StrCat(
      "  --allow-target LIST      the database targets ", who,
      " may connect to: comma-separated\n"
      "                           CIDR (10.1.0.0/16), IP (127.0.0.2, ::1) or HOST (db.example.com),\n"
      "                           each optionally with :PORT (10.0.0.0/8:5432, [::1]:3306, db:5432);\n"
      "                           repeatable, values accumulate. Default: 127.0.0.0/8,::1,localhost.\n"
      "                           A host name is resolved once per run and that address dialed for\n"
      "                           the whole run; unix sockets are always allowed. A target outside\n"
      "                           is refused before any connection.\n");
}

}  // namespace dbload
