// What can be checked of deploy/ on this machine, where no Docker, Kubernetes or systemd (as PID 1)
// runs: every YAML and JSON file parses; every dbload, dbload-coordinator and dbload-agent command
// line in the Dockerfile, the compose stack, the systemd units and their environment files, the
// Kubernetes manifests and deploy/README.md uses only flags that the built binary's --help names;
// the real coordinator and agents start and connect with those command lines (addresses and
// files made local); the real promtool, haproxy and systemd-analyze accept the Prometheus, HAProxy
// and systemd files;
// the Dockerfile uses known instructions, builds on Debian 12 in every stage, installs packages
// that exist in Debian's index, copies files that exist (and that .dockerignore lets through),
// configures with CMake from just what it copies, and installs in its runtime stage every
// package that provides a shared library the binaries load. Each check also runs once on a
// broken input and must fail there, so that none of them passes by checking nothing.
// Its length: one binary is one ctest test, so that the binaries, servers and tools it drives
// are set up once for every file of deploy/ it checks (tests/integration/CMakeLists.txt).

#include <arpa/inet.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/http_get.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || \
    !defined(DBLOAD_AGENT_BINARY) || !defined(DBLOAD_SOURCE_DIR) || !defined(DBLOAD_CMAKE_COMMAND)
#error "the binaries' paths, DBLOAD_SOURCE_DIR and DBLOAD_CMAKE_COMMAND must be defined"
#endif

namespace dbload {
namespace {

namespace fs = std::filesystem;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;

const fs::path kSource = DBLOAD_SOURCE_DIR;
const fs::path kDeploy = kSource / "deploy";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The path as the repository knows it, for messages.
std::string Rel(const fs::path& path) { return fs::relative(path, kSource).string(); }

std::vector<fs::path> FilesUnder(const fs::path& dir,
                                 const std::function<bool(const fs::path&)>& keep) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && keep(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool HasExtension(const fs::path& path, std::initializer_list<const char*> extensions) {
  for (const char* extension : extensions) {
    if (path.extension() == extension) return true;
  }
  return false;
}

// posix_spawn wants absolute paths: the tools are looked up where Debian installs them.
std::string Tool(const std::string& name) {
  for (const char* dir :
       {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    const fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  ADD_FAILURE() << name << " is not installed (scripts/setup installs it)";
  return "/nonexistent/" + name;
}

ProcessResult RunTool(const std::vector<std::string>& argv) {
  return RunProcess(argv, std::chrono::seconds(60));
}

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

// A private temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "dbload-deploy-test.XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Whitespace-separated words with one level of quotes removed: enough for the command lines of
// these files, which never nest quotes.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  bool in_word = false;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// ---------------------------------------------------------------------------------------------
// The binaries' flags, from their --help.

const std::vector<std::string> kBinaries = {"dbload", "dbload-coordinator", "dbload-agent"};

std::set<std::string> FlagsIn(const std::string& text) {
  static const std::regex kFlag("--[a-z][a-z0-9-]*");
  std::set<std::string> flags;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kFlag);
       it != std::sregex_iterator(); ++it) {
    flags.insert(it->str());
  }
  return flags;
}

std::string HelpOf(const std::string& binary) {
  const std::string path = binary == "dbload"               ? DBLOAD_BINARY
                           : binary == "dbload-coordinator" ? DBLOAD_COORDINATOR_BINARY
                                                            : DBLOAD_AGENT_BINARY;
  const ProcessResult result = RunTool({path, "--help"});
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_FALSE(result.out.empty()) << binary << " --help printed nothing";
  return result.out;
}

// What each command line may say, from the real --help texts.
struct FlagBook {
  std::map<std::string, std::set<std::string>> daemon_flags;   // dbload-coordinator, dbload-agent
  std::map<std::string, std::set<std::string>> command_flags;  // dbload COMMAND
  std::set<std::string> link_flags;  // the TLS and token options of dbload's coordinator commands
  std::set<std::string> link_commands;

  static FlagBook FromHelp() {
    FlagBook book;
    for (const std::string binary : {"dbload-coordinator", "dbload-agent"}) {
      book.daemon_flags[binary] = FlagsIn(HelpOf(binary));
    }
    // `dbload --help`: a command starts a line indented by two spaces, its description is
    // indented further; lines of options indented by two spaces are the link's options, which
    // the commands under "Commands for a running dbload-coordinator" (and, as the text says,
    // prepare --coordinator) take.
    std::string current;
    bool coordinator_commands = false;
    for (const std::string& line : Lines(HelpOf("dbload"))) {
      if (absl::StartsWith(line, "Commands for a running")) coordinator_commands = true;
      if (line.size() > 2 && absl::StartsWith(line, "  ") && std::islower(line[2])) {
        current = std::string(line.substr(2, line.find(' ', 2) - 2));
        book.command_flags[current];
        if (coordinator_commands) book.link_commands.insert(current);
      } else if (absl::StartsWith(line, "  --") || absl::StartsWith(line, "  (")) {
        std::set<std::string> flags = FlagsIn(line);
        book.link_flags.insert(flags.begin(), flags.end());
        current.clear();
        continue;
      } else if (!absl::StartsWith(line, "   ")) {
        current.clear();
      }
      if (!current.empty()) {
        std::set<std::string> flags = FlagsIn(line);
        book.command_flags[current].insert(flags.begin(), flags.end());
      }
    }
    book.link_commands.insert("prepare");
    return book;
  }
};

struct Invocation {
  std::string where;  // file:line
  std::string binary;
  std::vector<std::string> args;
};

std::string Describe(const Invocation& invocation) {
  return absl::StrCat(invocation.where, ": ", invocation.binary, " ",
                      absl::StrJoin(invocation.args, " "));
}

// Problems of one command line: an unknown command or a flag its binary does not have.
std::vector<std::string> CheckInvocation(const FlagBook& book, const Invocation& invocation) {
  std::vector<std::string> problems;
  std::set<std::string> allowed;
  size_t first = 0;
  if (invocation.binary == "dbload") {
    if (invocation.args.empty()) return {absl::StrCat(Describe(invocation), ": no command")};
    const std::string& command = invocation.args[0];
    const auto found = book.command_flags.find(command);
    if (found == book.command_flags.end()) {
      return {
          absl::StrCat(Describe(invocation), ": `dbload --help` has no command '", command, "'")};
    }
    allowed = found->second;
    if (book.link_commands.contains(command)) {
      allowed.insert(book.link_flags.begin(), book.link_flags.end());
    }
    first = 1;
  } else {
    allowed = book.daemon_flags.at(invocation.binary);
  }
  for (size_t i = first; i < invocation.args.size(); ++i) {
    std::string word = invocation.args[i];
    // Usage lines in the READMEs put optional flags in brackets.
    word = std::string(absl::StripPrefix(word, "["));
    if (!absl::StartsWith(word, "--") || word == "--") continue;
    const std::string flag = word.substr(0, word.find_first_of("=]"));
    if (!allowed.contains(flag)) {
      problems.push_back(absl::StrCat(Describe(invocation), ": ", flag, " is not in `",
                                      invocation.binary,
                                      invocation.binary == "dbload" ? " --help` for " : " --help`",
                                      invocation.binary == "dbload" ? invocation.args[0] : ""));
    }
  }
  return problems;
}

// The binary a word runs, if it is one of ours: a bare name or a path in a bin directory (not
// deploy/dbload-agent in `kubectl logs`, nor the directory /etc/dbload).
std::optional<std::string> BinaryOf(const std::string& word) {
  const fs::path path(word);
  const std::string name = path.filename().string();
  if (std::find(kBinaries.begin(), kBinaries.end(), name) == kBinaries.end()) return std::nullopt;
  if (word.find('/') != std::string::npos &&
      (word[0] != '/' || !absl::EndsWith(path.parent_path().filename().string(), "bin"))) {
    return std::nullopt;
  }
  return name;
}

bool IsShellOperator(const std::string& word) {
  return word == "|" || word == "||" || word == "&&" || word == ";" || word == "&" ||
         absl::StartsWith(word, ">") || absl::StartsWith(word, "2>") ||
         absl::StartsWith(word, "<") || absl::StartsWith(word, "#") || word == "\\";
}

// Every invocation of one of our binaries in a list of words (a shell line may hold several).
void InvocationsInWords(const std::vector<std::string>& words, const std::string& where,
                        std::vector<Invocation>& out) {
  for (size_t i = 0; i < words.size(); ++i) {
    std::optional<std::string> binary = BinaryOf(words[i]);
    // After an option it is that option's value (kubectl -n dbload, journalctl -u dbload-agent);
    // after `--` (kubectl exec POD -- dbload ...) it is a command.
    if (!binary || (i > 0 && absl::StartsWith(words[i - 1], "-") && words[i - 1] != "--")) {
      continue;
    }
    Invocation invocation{.where = where, .binary = *binary};
    size_t j = i + 1;
    for (; j < words.size() && !IsShellOperator(words[j]); ++j) {
      invocation.args.push_back(words[j]);
    }
    out.push_back(std::move(invocation));
    i = j;
  }
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile.

struct Instruction {
  int line = 0;
  std::string keyword;  // upper case
  std::string args;
};

std::vector<Instruction> ParseDockerfile(const std::string& text) {
  std::vector<Instruction> instructions;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line(absl::StripAsciiWhitespace(lines[i]));
    if (line.empty() || line[0] == '#') continue;
    Instruction instruction{.line = static_cast<int>(i + 1)};
    std::string joined;
    while (true) {
      if (absl::EndsWith(line, "\\")) {
        joined += line.substr(0, line.size() - 1) + " ";
        // Comment lines inside a continued instruction are dropped, as Docker does.
        do {
          ++i;
          line = i < lines.size() ? std::string(absl::StripAsciiWhitespace(lines[i])) : "";
        } while (i < lines.size() && !line.empty() && line[0] == '#');
        if (i >= lines.size()) break;
      } else {
        joined += line;
        break;
      }
    }
    const size_t space = joined.find_first_of(" \t");
    instruction.keyword = joined.substr(0, space);
    std::transform(instruction.keyword.begin(), instruction.keyword.end(),
                   instruction.keyword.begin(), [](unsigned char c) { return std::toupper(c); });
    instruction.args = space == std::string::npos
                           ? ""
                           : std::string(absl::StripAsciiWhitespace(joined.substr(space)));
    instructions.push_back(std::move(instruction));
  }
  return instructions;
}

// The words of an exec-form (JSON array) or shell-form argument.
std::vector<std::string> CommandWords(const std::string& args) {
  if (absl::StartsWith(args, "[")) {
    std::vector<std::string> words;
    for (const auto& word : nlohmann::json::parse(args)) words.push_back(word.get<std::string>());
    return words;
  }
  return Words(args);
}

struct Stage {
  int line = 0;
  std::string image;
  std::string name;
  std::vector<Instruction> instructions;
};

// The ARGs declared before the first FROM, with their defaults: what FROM ${NAME} means when the
// build is not given --build-arg NAME=...
std::map<std::string, std::string> GlobalArgs(const std::vector<Instruction>& instructions) {
  std::map<std::string, std::string> args;
  for (const Instruction& instruction : instructions) {
    if (instruction.keyword == "FROM") break;
    if (instruction.keyword != "ARG") continue;
    const size_t equals = instruction.args.find('=');
    args[instruction.args.substr(0, equals)] =
        equals == std::string::npos ? "" : instruction.args.substr(equals + 1);
  }
  return args;
}

std::string WithArgs(std::string word, const std::map<std::string, std::string>& args) {
  for (const auto& [name, value] : args) {
    for (const std::string& reference : {"${" + name + "}", "$" + name}) {
      for (size_t at = word.find(reference); at != std::string::npos;
           at = word.find(reference, at + value.size())) {
        word.replace(at, reference.size(), value);
      }
    }
  }
  return word;
}

// A stage's image is as FROM names it, build arguments replaced by their defaults.
std::vector<Stage> StagesOf(const std::vector<Instruction>& instructions) {
  const std::map<std::string, std::string> args = GlobalArgs(instructions);
  std::vector<Stage> stages;
  for (const Instruction& instruction : instructions) {
    if (instruction.keyword == "FROM") {
      std::vector<std::string> words = Words(instruction.args);
      std::erase_if(words, [](const std::string& w) { return absl::StartsWith(w, "--"); });
      Stage stage{.line = instruction.line,
                  .image = words.empty() ? "" : WithArgs(words[0], args)};
      if (words.size() == 3) stage.name = words[2];
      stages.push_back(std::move(stage));
    } else if (!stages.empty()) {
      stages.back().instructions.push_back(instruction);
    }
  }
  return stages;
}

// The packages of every `apt-get install` in a stage's RUN instructions.
std::vector<std::string> AptPackages(const Stage& stage) {
  std::vector<std::string> packages;
  for (const Instruction& instruction : stage.instructions) {
    if (instruction.keyword != "RUN") continue;
    const std::vector<std::string> words = Words(instruction.args);
    for (size_t i = 0; i + 1 < words.size(); ++i) {
      if (words[i] != "apt-get") continue;
      size_t j = i + 1;
      while (j < words.size() && absl::StartsWith(words[j], "-")) ++j;
      if (j >= words.size() || words[j] != "install") continue;
      for (++j; j < words.size() && !IsShellOperator(words[j]); ++j) {
        if (absl::StartsWith(words[j], "-")) continue;
        packages.push_back(words[j].substr(0, words[j].find('=')));
      }
    }
  }
  return packages;
}

struct CopySources {
  std::vector<std::string> sources;
  std::string destination;
};

// COPY/ADD from the build context (not --from another stage); nullopt for --from.
std::optional<CopySources> ContextCopy(const Instruction& instruction) {
  std::vector<std::string> words = CommandWords(instruction.args);
  if (std::any_of(words.begin(), words.end(),
                  [](const std::string& w) { return absl::StartsWith(w, "--from"); })) {
    return std::nullopt;
  }
  std::erase_if(words, [](const std::string& w) { return absl::StartsWith(w, "--"); });
  if (words.size() < 2) return CopySources{};
  CopySources copy{.destination = words.back()};
  copy.sources.assign(words.begin(), words.end() - 1);
  return copy;
}

// Whether .dockerignore keeps `source` (a path relative to the context) out of the context.
std::optional<std::string> IgnoredBy(const std::vector<std::string>& patterns,
                                     const std::string& source) {
  const std::vector<std::string> parts =
      absl::StrSplit(absl::StripSuffix(absl::StripPrefix(source, "./"), "/"), '/');
  for (const std::string& raw : patterns) {
    std::string pattern(absl::StripSuffix(absl::StripPrefix(raw, "/"), "/"));
    const bool any_depth = absl::StartsWith(pattern, "**/");
    if (any_depth) pattern = pattern.substr(3);
    std::string prefix;
    for (size_t i = 0; i < parts.size(); ++i) {
      prefix = i == 0 ? parts[0] : prefix + "/" + parts[i];
      if (fnmatch(pattern.c_str(), prefix.c_str(), FNM_PATHNAME) == 0 ||
          (any_depth && fnmatch(pattern.c_str(), parts[i].c_str(), FNM_PATHNAME) == 0)) {
        return raw;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> DockerignorePatterns() {
  std::vector<std::string> patterns;
  for (const std::string& line : Lines(ReadFile(kSource / ".dockerignore"))) {
    std::string pattern(absl::StripAsciiWhitespace(line));
    if (!pattern.empty() && pattern[0] != '#') patterns.push_back(pattern);
  }
  return patterns;
}

// ---------------------------------------------------------------------------------------------
// systemd units.

struct UnitEntry {
  int line = 0;
  std::string section;
  std::string key;
  std::string value;
};

std::vector<UnitEntry> ParseUnit(const std::string& text) {
  std::vector<UnitEntry> entries;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::string section;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line(absl::StripAsciiWhitespace(lines[i]));
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    UnitEntry entry{.line = static_cast<int>(i + 1), .section = section};
    while (absl::EndsWith(line, "\\") && i + 1 < lines.size()) {
      line = line.substr(0, line.size() - 1) + " " +
             std::string(absl::StripAsciiWhitespace(lines[++i]));
    }
    const size_t equals = line.find('=');
    entry.key = line.substr(0, equals);
    entry.value = equals == std::string::npos ? "" : line.substr(equals + 1);
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<std::string> UnitValues(const std::vector<UnitEntry>& entries, const std::string& key) {
  std::vector<std::string> values;
  for (const UnitEntry& entry : entries) {
    if (entry.key == key) values.push_back(entry.value);
  }
  return values;
}

std::vector<fs::path> Units() {
  return FilesUnder(kDeploy / "systemd",
                    [](const fs::path& p) { return HasExtension(p, {".service"}); });
}

// ---------------------------------------------------------------------------------------------
// YAML: compose and Kubernetes.

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

std::vector<YAML::Node> LoadYamlDocuments(const fs::path& path) {
  return YAML::LoadAllFromFile(path.string());
}

fs::path ComposeFile() { return kDeploy / "compose" / "compose.yaml"; }
// The stack as deploy/image-test builds and runs it on this machine (host network).
fs::path LocalComposeFile() { return kDeploy / "compose" / "local" / "compose.yaml"; }

// A compose value as compose reads it when none of its variables is set: ${NAME:-default} and
// ${NAME-default} become the default, ${NAME} nothing.
std::string ComposeDefaults(const std::string& value) {
  static const std::regex kVariable(R"(\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\})");
  return std::regex_replace(value, kVariable, "$1");
}

std::vector<fs::path> KubernetesFiles() {
  return FilesUnder(kDeploy / "kubernetes", [](const fs::path& p) {
    return HasExtension(p, {".yaml", ".yml"});
  });
}

// The pod spec of a workload manifest (Deployment, StatefulSet, DaemonSet, Job) or a Pod.
std::optional<YAML::Node> PodSpec(const YAML::Node& document) {
  if (!document.IsMap() || !document["kind"]) return std::nullopt;
  if (document["kind"].as<std::string>() == "Pod") return document["spec"];
  if (document["spec"] && document["spec"]["template"] && document["spec"]["template"]["spec"]) {
    return document["spec"]["template"]["spec"];
  }
  return std::nullopt;
}

std::vector<std::string> StringsOf(const YAML::Node& node) {
  std::vector<std::string> words;
  if (!node) return words;
  if (node.IsSequence()) {
    for (const YAML::Node& word : node) words.push_back(word.as<std::string>());
  } else {
    words = Words(node.as<std::string>());
  }
  return words;
}

// The ConfigMaps' files in the Kubernetes manifests, by key: name → (where, content).
std::vector<std::pair<std::string, std::string>> ConfigMapFiles(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const fs::path& path : KubernetesFiles()) {
    for (const YAML::Node& document : LoadYamlDocuments(path)) {
      if (!document.IsMap() || !document["kind"] ||
          document["kind"].as<std::string>() != "ConfigMap" || !document["data"] ||
          !document["data"][key]) {
        continue;
      }
      files.emplace_back(absl::StrCat(Rel(path), ":", LineOf(document["data"][key]), " (",
                                      document["metadata"]["name"].as<std::string>(), ")"),
                         document["data"][key].as<std::string>());
    }
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Collecting every command line of deploy/.

std::vector<Invocation> DockerfileInvocations() {
  std::vector<Invocation> out;
  for (const Instruction& instruction : ParseDockerfile(ReadFile(kDeploy / "Dockerfile"))) {
    if (instruction.keyword == "CMD" || instruction.keyword == "ENTRYPOINT") {
      InvocationsInWords(CommandWords(instruction.args),
                         absl::StrCat("deploy/Dockerfile:", instruction.line), out);
    }
  }
  return out;
}

std::vector<Invocation> ComposeInvocations(const fs::path& file = ComposeFile()) {
  std::vector<Invocation> out;
  const YAML::Node compose = YAML::LoadFile(file.string());
  for (const auto& service : compose["services"]) {
    const YAML::Node& spec = service.second;
    std::vector<std::string> words = StringsOf(spec["entrypoint"]);
    const std::vector<std::string> command = StringsOf(spec["command"]);
    words.insert(words.end(), command.begin(), command.end());
    for (std::string& word : words) word = ComposeDefaults(word);
    const YAML::Node& anchor = spec["command"] ? spec["command"] : spec;
    InvocationsInWords(words, absl::StrCat(Rel(file), ":", LineOf(anchor)), out);
  }
  return out;
}

std::vector<Invocation> SystemdInvocations() {
  std::vector<Invocation> out;
  for (const fs::path& unit : Units()) {
    for (const UnitEntry& entry : ParseUnit(ReadFile(unit))) {
      if (!absl::StartsWith(entry.key, "Exec")) continue;
      std::string command(absl::StripAsciiWhitespace(entry.value));
      while (!command.empty() && std::string("-@:+!").find(command[0]) != std::string::npos) {
        command.erase(0, 1);
      }
      InvocationsInWords(Words(command), absl::StrCat(Rel(unit), ":", entry.line), out);
    }
  }
  // The environment files' *_OPTS are more flags of the unit of the same name (commented-out
  // examples included).
  for (const fs::path& env : FilesUnder(
           kDeploy / "systemd", [](const fs::path& p) { return HasExtension(p, {".env"}); })) {
    int number = 0;
    for (const std::string& raw : Lines(ReadFile(env))) {
      ++number;
      std::string line(absl::StripAsciiWhitespace(absl::StripPrefix(raw, "#")));
      const size_t equals = line.find('=');
      if (equals == std::string::npos || !absl::EndsWith(line.substr(0, equals), "_OPTS")) {
        continue;
      }
      out.push_back(Invocation{.where = absl::StrCat(Rel(env), ":", number),
                               .binary = env.stem().string(),
                               .args = Words(std::string(absl::StripSuffix(
                                   absl::StripPrefix(line.substr(equals + 1), "\""), "\"")))});
    }
  }
  return out;
}

std::vector<Invocation> KubernetesInvocations() {
  std::vector<Invocation> out;
  for (const fs::path& path : KubernetesFiles()) {
    for (const YAML::Node& document : LoadYamlDocuments(path)) {
      std::optional<YAML::Node> pod = PodSpec(document);
      if (!pod) continue;
      for (const char* list : {"initContainers", "containers"}) {
        for (const YAML::Node& container : (*pod)[list]) {
          std::vector<std::string> words = StringsOf(container["command"]);
          const std::vector<std::string> args = StringsOf(container["args"]);
          words.insert(words.end(), args.begin(), args.end());
          const YAML::Node& anchor = container["command"] ? container["command"] : container;
          InvocationsInWords(words, absl::StrCat(Rel(path), ":", LineOf(anchor)), out);
        }
      }
    }
  }
  return out;
}

// Command lines in a Markdown text's code (fenced, or indented by four spaces), with `\`
// continuations joined.
std::vector<Invocation> MarkdownInvocations(const std::string& text, const std::string& name,
                                            int first_line = 1) {
  std::vector<Invocation> out;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  bool fenced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]), "```")) {
      fenced = !fenced;
      continue;
    }
    if (!fenced && !absl::StartsWith(lines[i], "    ")) continue;
    const int number = first_line + static_cast<int>(i);
    std::string line = lines[i];
    while (absl::EndsWith(absl::StripTrailingAsciiWhitespace(line), "\\") && i + 1 < lines.size()) {
      line = std::string(absl::StripSuffix(absl::StripTrailingAsciiWhitespace(line), "\\")) + " " +
             lines[++i];
    }
    InvocationsInWords(Words(line), absl::StrCat(name, ":", number), out);
  }
  return out;
}

// The section on running over several machines, moved from the root README to
// docs/distributed.md (the rest of that page belongs to others).
std::vector<Invocation> ReadmeInvocations() {
  std::vector<Invocation> out =
      MarkdownInvocations(ReadFile(kDeploy / "README.md"), "deploy/README.md");
  const std::string readme = ReadFile(kSource / "docs" / "distributed.md");
  const size_t start = readme.find("\n## Running on several machines");
  EXPECT_NE(start, std::string::npos)
      << "docs/distributed.md has no section 'Running on several machines'";
  if (start != std::string::npos) {
    const size_t end = readme.find("\n## ", start + 1);
    const std::string section = readme.substr(start + 1, end - start - 1);
    const int first_line =
        static_cast<int>(std::count(readme.begin(), readme.begin() + start + 1, '\n')) + 1;
    std::vector<Invocation> more = MarkdownInvocations(section, "docs/distributed.md", first_line);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// (a) Every YAML and JSON file parses.

TEST(DeployFiles, EveryYamlFileParses) {
  const std::vector<fs::path> files = FilesUnder(kDeploy, [](const fs::path& p) {
    return HasExtension(p, {".yaml", ".yml"});
  });
  EXPECT_GE(files.size(), 10u) << "fewer YAML files under deploy/ than the stack has";
  for (const fs::path& path : files) {
    try {
      const std::vector<YAML::Node> documents = LoadYamlDocuments(path);
      EXPECT_FALSE(documents.empty()) << Rel(path) << ": no YAML document";
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << Rel(path) << ":" << e.mark.line + 1 << ":" << e.mark.column + 1 << ": "
                    << e.msg;
    }
  }
  // Multi-document files are read to their last document, and a broken one is refused.
  EXPECT_THROW(YAML::Load("a: [1, 2\nb: 3\n"), YAML::Exception);
  EXPECT_EQ(YAML::LoadAll("a: 1\n---\nb: 2\n").size(), 2u);
}

TEST(DeployFiles, EveryJsonFileParses) {
  // deploy/ has none of its own today; dashboards/ (mounted by the compose stack) has the
  // dashboard when its branch is merged.
  std::vector<fs::path> files =
      FilesUnder(kDeploy, [](const fs::path& p) { return HasExtension(p, {".json"}); });
  for (const fs::path& path : FilesUnder(
           kSource / "dashboards", [](const fs::path& p) { return HasExtension(p, {".json"}); })) {
    files.push_back(path);
  }
  for (const fs::path& path : files) {
    try {
      const nlohmann::json parsed = nlohmann::json::parse(ReadFile(path));
      EXPECT_FALSE(parsed.is_discarded()) << Rel(path);
    } catch (const nlohmann::json::parse_error& e) {
      ADD_FAILURE() << Rel(path) << ": byte " << e.byte << ": " << e.what();
    }
  }
  EXPECT_THROW(nlohmann::json::parse("{\"a\": 1,}").is_discarded(), nlohmann::json::parse_error);
}

// ---------------------------------------------------------------------------------------------
// (b) Every command line uses flags that exist.

class DeployFlags : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { book_ = new FlagBook(FlagBook::FromHelp()); }
  static void TearDownTestSuite() {
    delete book_;
    book_ = nullptr;
  }
  static void ExpectKnownFlags(const std::vector<Invocation>& invocations) {
    for (const Invocation& invocation : invocations) {
      for (const std::string& problem : CheckInvocation(*book_, invocation)) {
        ADD_FAILURE() << problem;
      }
    }
  }
  static size_t Count(const std::vector<Invocation>& invocations, const std::string& binary) {
    return std::count_if(invocations.begin(), invocations.end(),
                         [&](const Invocation& i) { return i.binary == binary; });
  }
  static FlagBook* book_;
};
FlagBook* DeployFlags::book_ = nullptr;

TEST_F(DeployFlags, TheCheckFindsUnknownFlagsAndCommands) {
  // The help texts were read (a check against empty sets would refuse everything, and one
  // against a mis-read text could accept anything).
  EXPECT_TRUE(book_->daemon_flags["dbload-coordinator"].contains("--listen"));
  EXPECT_TRUE(book_->daemon_flags["dbload-agent"].contains("--coordinator"));
  EXPECT_TRUE(book_->command_flags["submit"].contains("--min-agents"));
  EXPECT_FALSE(book_->command_flags["run"].contains("--min-agents"));
  EXPECT_TRUE(book_->link_flags.contains("--tls-ca"));
  EXPECT_TRUE(book_->link_commands.contains("submit"));
  EXPECT_FALSE(book_->link_commands.contains("run"));

  std::vector<Invocation> bad;
  InvocationsInWords(Words("/usr/local/bin/dbload-agent --coordinator x:7000 --no-such-flag 1"),
                     "synthetic:1", bad);
  InvocationsInWords(Words("dbload submit p.yaml --coordinator x:7000 --agents 3"), "synthetic:2",
                     bad);
  InvocationsInWords(Words("dbload run p.yaml --tls-ca ca.pem"), "synthetic:3", bad);
  InvocationsInWords(Words("dbload launch p.yaml"), "synthetic:4", bad);
  InvocationsInWords(Words("dbload-coordinator --listen=0.0.0.0:7000 [--metric ADDR]"),
                     "synthetic:5", bad);
  ASSERT_EQ(bad.size(), 5u);
  for (const Invocation& invocation : bad) {
    EXPECT_EQ(CheckInvocation(*book_, invocation).size(), 1u) << Describe(invocation);
  }
  EXPECT_THAT(CheckInvocation(*book_, bad[0])[0],
              ::testing::AllOf(::testing::HasSubstr("synthetic:1"),
                               ::testing::HasSubstr("--no-such-flag")));

  std::vector<Invocation> good;
  InvocationsInWords(Words("docker compose exec agent-1 dbload submit p.yaml --coordinator c:7000 "
                           "--allow-insecure-remote --min-agents 2 --wait && kubectl logs "
                           "deploy/dbload-agent"),
                     "synthetic:6", good);
  InvocationsInWords(Words("kubectl -n dbload create secret generic x; install -d /etc/dbload; "
                           "kubectl exec deploy/dbload-agent -- /usr/bin/dbload agents "
                           "--coordinator c:7000"),
                     "synthetic:7", good);
  ASSERT_EQ(good.size(), 2u);
  EXPECT_EQ(good[1].args.front(), "agents");
  for (const Invocation& invocation : good) {
    EXPECT_THAT(CheckInvocation(*book_, invocation), ::testing::IsEmpty());
  }
}

TEST_F(DeployFlags, Dockerfile) {
  const std::vector<Invocation> invocations = DockerfileInvocations();
  EXPECT_GE(invocations.size(), 1u) << "deploy/Dockerfile: no CMD running a dbload binary";
  ExpectKnownFlags(invocations);
}

TEST_F(DeployFlags, Compose) {
  const std::vector<Invocation> invocations = ComposeInvocations();
  EXPECT_EQ(Count(invocations, "dbload-coordinator"), 1u);
  EXPECT_EQ(Count(invocations, "dbload-agent"), 2u);
  ExpectKnownFlags(invocations);
}

TEST_F(DeployFlags, LocalCompose) {
  const std::vector<Invocation> invocations = ComposeInvocations(LocalComposeFile());
  EXPECT_EQ(Count(invocations, "dbload-coordinator"), 1u);
  EXPECT_EQ(Count(invocations, "dbload-agent"), 2u);
  ExpectKnownFlags(invocations);
  // Compose's defaults are what the daemons are started with here.
  EXPECT_EQ(ComposeDefaults("127.0.0.1:${DBLOAD_PG_PORT:-15432}"), "127.0.0.1:15432");
  EXPECT_EQ(ComposeDefaults("${DBLOAD_IMAGE}"), "");
}

TEST_F(DeployFlags, Systemd) {
  const std::vector<Invocation> invocations = SystemdInvocations();
  EXPECT_GE(Count(invocations, "dbload-coordinator"), 2u) << "ExecStart and the .env example";
  EXPECT_GE(Count(invocations, "dbload-agent"), 2u) << "ExecStart and the .env example";
  ExpectKnownFlags(invocations);
}

TEST_F(DeployFlags, Kubernetes) {
  const std::vector<Invocation> invocations = KubernetesInvocations();
  EXPECT_EQ(Count(invocations, "dbload-coordinator"), 1u);
  EXPECT_EQ(Count(invocations, "dbload-agent"), 1u);
  ExpectKnownFlags(invocations);
}

TEST_F(DeployFlags, Readmes) {
  const std::vector<Invocation> invocations = ReadmeInvocations();
  for (const std::string& binary : kBinaries) {
    EXPECT_GE(Count(invocations, binary), 1u) << "the walk-through never runs " << binary;
  }
  ExpectKnownFlags(invocations);
}

// The plans of deploy/ are valid for the real `dbload`: a submit gets as far as dialling the
// coordinator (here a loopback port where nothing listens) only with a plan that passed every
// check, workload and scenario included.
TEST(DeployPlans, ThePlansAreValid) {
  const std::vector<fs::path> plans = FilesUnder(kDeploy, [](const fs::path& p) {
    return p.parent_path().filename() == "plans" && HasExtension(p, {".yaml", ".yml"});
  });
  EXPECT_GE(plans.size(), 2u);
  int probe = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(probe, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length), 0);
  close(probe);  // nothing listens there now
  const std::string coordinator = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  auto submit = [&](const fs::path& plan, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {DBLOAD_BINARY, "submit", plan.string(), "--coordinator",
                                     coordinator};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunTool(argv);
  };
  for (const fs::path& plan : plans) {
    const ProcessResult result = submit(plan);
    EXPECT_THAT(result.err, ::testing::HasSubstr("cannot reach the coordinator"))
        << Rel(plan) << " was refused before dialling:\n"
        << result.Describe();
  }
  // A plan problem is told apart from the unreachable coordinator.
  ASSERT_FALSE(plans.empty());
  const ProcessResult broken = submit(plans[0], {"--set", "target.port=70000"});
  EXPECT_THAT(broken.err, ::testing::Not(::testing::HasSubstr("cannot reach the coordinator")));
  EXPECT_THAT(broken.err, ::testing::HasSubstr("target.port"));
}

// The compose stack hangs together: the secrets and network namespaces its services name exist,
// the files it mounts exist, the agents hold every password file a plan names, and Prometheus
// scrapes services of the stack.
TEST(DeployCompose, ReferencesResolve) {
  const YAML::Node compose = YAML::LoadFile(ComposeFile().string());
  const std::string where = Rel(ComposeFile());
  std::set<std::string> services;
  for (const auto& service : compose["services"]) services.insert(service.first.as<std::string>());
  std::set<std::string> secrets;
  for (const auto& secret : compose["secrets"]) {
    secrets.insert(secret.first.as<std::string>());
    const std::string file = secret.second["file"].as<std::string>();
    EXPECT_TRUE(absl::StartsWith(file, "./secrets/"))
        << where << ":" << LineOf(secret.second) << ": secret " << secret.first << " is not a file "
        << "under deploy/compose/secrets (git-ignored)";
  }
  std::set<std::string> agent_secrets_everywhere;
  bool first_agent = true;
  for (const auto& service : compose["services"]) {
    const std::string name = service.first.as<std::string>();
    const YAML::Node& spec = service.second;
    std::set<std::string> mine;
    for (const YAML::Node& secret : spec["secrets"]) {
      mine.insert(secret.as<std::string>());
      EXPECT_TRUE(secrets.contains(secret.as<std::string>()))
          << where << ":" << LineOf(secret) << ": service " << name << " uses undefined secret "
          << secret.as<std::string>();
    }
    // Passwords come from files: a variable that names one holds a path, never the password.
    for (const auto& variable : spec["environment"]) {
      const std::string key = variable.first.as<std::string>();
      if (absl::StrContains(key, "PASS")) {
        EXPECT_TRUE(absl::EndsWith(key, "_FILE") &&
                    absl::StartsWith(variable.second.as<std::string>(), "/run/secrets/"))
            << where << ":" << LineOf(variable.second) << ": service " << name << " sets " << key
            << " to something other than a secret's file";
      }
    }
    for (const std::string& word : StringsOf(spec["command"])) {
      EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(word), "password="))
          << where << ": service " << name << " has a password in its command line";
    }
    if (spec["network_mode"]) {
      const std::string mode = spec["network_mode"].as<std::string>();
      if (absl::StartsWith(mode, "service:")) {
        EXPECT_TRUE(services.contains(mode.substr(8)))
            << where << ":" << LineOf(spec["network_mode"]) << ": no service " << mode.substr(8);
      }
    }
    for (const YAML::Node& volume : spec["volumes"]) {
      const std::string host =
          volume.as<std::string>().substr(0, volume.as<std::string>().find(':'));
      if (!absl::StartsWith(host, ".")) continue;
      const fs::path resolved = fs::weakly_canonical(ComposeFile().parent_path() / host);
      // dashboards/ is written on the dashboard branch; it is checked once it is there.
      if (resolved == fs::weakly_canonical(kSource / "dashboards") && !fs::exists(resolved)) {
        continue;
      }
      EXPECT_TRUE(fs::exists(resolved)) << where << ":" << LineOf(volume) << ": service " << name
                                        << " mounts " << host << ", which does not exist";
    }
    std::vector<Invocation> invocations;
    InvocationsInWords(StringsOf(spec["command"]), name, invocations);
    if (!invocations.empty() && invocations[0].binary == "dbload-agent") {
      if (first_agent) {
        agent_secrets_everywhere = mine;
        first_agent = false;
      } else {
        std::set<std::string> both;
        std::set_intersection(agent_secrets_everywhere.begin(), agent_secrets_everywhere.end(),
                              mine.begin(), mine.end(), std::inserter(both, both.begin()));
        agent_secrets_everywhere = both;
      }
    }
  }
  for (const fs::path& plan : FilesUnder(kDeploy / "compose" / "plans", [](const fs::path& p) {
         return HasExtension(p, {".yaml"});
       })) {
    const YAML::Node file = YAML::LoadFile(plan.string())["target"]["password_file"];
    ASSERT_TRUE(file) << Rel(plan) << ": no target.password_file";
    const std::string path = file.as<std::string>();
    EXPECT_TRUE(absl::StartsWith(path, "/run/secrets/") &&
                agent_secrets_everywhere.contains(path.substr(13)))
        << Rel(plan) << ":" << LineOf(file) << ": " << path
        << " is not a secret that every agent of the compose stack has";
  }
  const fs::path prometheus = kDeploy / "compose" / "prometheus" / "prometheus.yml";
  for (const YAML::Node& job : YAML::LoadFile(prometheus.string())["scrape_configs"]) {
    for (const YAML::Node& statics : job["static_configs"]) {
      for (const YAML::Node& target : statics["targets"]) {
        const std::string host =
            target.as<std::string>().substr(0, target.as<std::string>().find(':'));
        EXPECT_TRUE(host == "localhost" || services.contains(host))
            << Rel(prometheus) << ":" << LineOf(target) << ": " << host
            << " is no service of the compose stack";
      }
    }
  }
}

// Grafana loads the dashboards from where compose mounts dashboards/, and its data source is the
// stack's Prometheus.
TEST(DeployCompose, GrafanaProvisioningMatchesTheStack) {
  const YAML::Node compose = YAML::LoadFile(ComposeFile().string());
  std::string dashboards_mount;
  for (const YAML::Node& volume : compose["services"]["grafana"]["volumes"]) {
    const std::vector<std::string> parts = absl::StrSplit(volume.as<std::string>(), ':');
    if (parts.size() >= 2 && parts[0] == "../../dashboards") dashboards_mount = parts[1];
  }
  EXPECT_FALSE(dashboards_mount.empty()) << "grafana does not mount ../../dashboards";
  const fs::path provisioning = kDeploy / "compose" / "grafana" / "provisioning";
  const YAML::Node providers =
      YAML::LoadFile((provisioning / "dashboards" / "dbload.yaml").string())["providers"];
  ASSERT_TRUE(providers && providers.size() == 1u);
  EXPECT_EQ(providers[0]["options"]["path"].as<std::string>(), dashboards_mount);
  const YAML::Node sources =
      YAML::LoadFile((provisioning / "datasources" / "prometheus.yaml").string())["datasources"];
  ASSERT_TRUE(sources && sources.size() == 1u);
  EXPECT_EQ(sources[0]["type"].as<std::string>(), "prometheus");
  EXPECT_EQ(sources[0]["url"].as<std::string>(), "http://prometheus:9090");
  EXPECT_TRUE(compose["services"]["prometheus"]);
}

// The manifests hang together: every mount has its volume, every ConfigMap and Secret a pod uses
// is defined (the Secrets in secrets.example.yaml), selectors select their pods, the Service's
// ports are the containers' named ports, Prometheus' port annotation is a container's port, and
// the agents spread one per node.
TEST(DeployKubernetes, ReferencesResolve) {
  std::set<std::string> config_maps, secrets;
  std::vector<std::pair<std::string, YAML::Node>> documents;
  for (const fs::path& path : KubernetesFiles()) {
    for (const YAML::Node& document : LoadYamlDocuments(path)) {
      if (!document.IsMap() || !document["kind"]) continue;
      const std::string kind = document["kind"].as<std::string>();
      const std::string where = absl::StrCat(Rel(path), ":", LineOf(document));
      if (kind == "Kustomization") {
        for (const YAML::Node& resource : document["resources"]) {
          EXPECT_TRUE(fs::exists(path.parent_path() / resource.as<std::string>()))
              << where << ": resource " << resource.as<std::string>();
        }
        continue;
      }
      EXPECT_TRUE(document["apiVersion"] && document["metadata"] && document["metadata"]["name"])
          << where << ": apiVersion, metadata.name";
      if (kind != "Namespace") {
        EXPECT_EQ(document["metadata"]["namespace"].as<std::string>(""), "dbload")
            << where << ": " << kind << " " << document["metadata"]["name"];
      }
      if (kind == "ConfigMap") config_maps.insert(document["metadata"]["name"].as<std::string>());
      if (kind == "Secret") secrets.insert(document["metadata"]["name"].as<std::string>());
      documents.emplace_back(where, document);
    }
  }
  int pods = 0;
  std::map<std::string, std::set<std::string>> port_names_by_app;
  for (const auto& [where, document] : documents) {
    std::optional<YAML::Node> pod = PodSpec(document);
    if (!pod) continue;
    ++pods;
    const YAML::Node labels = document["spec"]["template"]["metadata"]["labels"];
    for (const auto& selected : document["spec"]["selector"]["matchLabels"]) {
      EXPECT_EQ(labels[selected.first.as<std::string>()].as<std::string>(""),
                selected.second.as<std::string>())
          << where << ": the selector does not select the pod template";
    }
    std::set<std::string> volumes;
    for (const YAML::Node& volume : (*pod)["volumes"]) {
      volumes.insert(volume["name"].as<std::string>());
      if (volume["configMap"]) {
        EXPECT_TRUE(config_maps.contains(volume["configMap"]["name"].as<std::string>()))
            << where << ": volume " << volume["name"] << ": no ConfigMap "
            << volume["configMap"]["name"];
      }
      if (volume["secret"]) {
        EXPECT_TRUE(secrets.contains(volume["secret"]["secretName"].as<std::string>()))
            << where << ": volume " << volume["name"] << ": no Secret "
            << volume["secret"]["secretName"];
      }
    }
    std::set<std::string> ports;
    const std::string app = labels["app.kubernetes.io/name"].as<std::string>("");
    for (const char* list : {"initContainers", "containers"}) {
      for (const YAML::Node& container : (*pod)[list]) {
        for (const YAML::Node& mount : container["volumeMounts"]) {
          EXPECT_TRUE(volumes.contains(mount["name"].as<std::string>()))
              << where << ": container " << container["name"] << " mounts " << mount["name"]
              << ", which is no volume of the pod";
        }
        for (const YAML::Node& port : container["ports"]) {
          ports.insert(port["containerPort"].as<std::string>());
          if (port["name"]) port_names_by_app[app].insert(port["name"].as<std::string>());
        }
        const YAML::Node security = container["securityContext"];
        EXPECT_TRUE(security && !security["allowPrivilegeEscalation"].as<bool>(true))
            << where << ": container " << container["name"]
            << " may escalate privileges (the namespace enforces the restricted profile)";
      }
    }
    const YAML::Node annotations = document["spec"]["template"]["metadata"]["annotations"];
    if (annotations && annotations["prometheus.io/port"]) {
      EXPECT_TRUE(ports.contains(annotations["prometheus.io/port"].as<std::string>()))
          << where << ": prometheus.io/port is no container port of the pod";
    }
    if (app == "dbload-agent") {
      const YAML::Node rules =
          (*pod)["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
      ASSERT_TRUE(rules && rules.size() == 1u) << where << ": agents without pod anti-affinity";
      EXPECT_EQ(rules[0]["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
      EXPECT_EQ(
          rules[0]["labelSelector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>(""),
          "dbload-agent");
    }
  }
  EXPECT_EQ(pods, 2) << "the coordinator and the agents";
  int services = 0;
  for (const auto& [where, document] : documents) {
    if (document["kind"].as<std::string>() != "Service") continue;
    ++services;
    const std::string app =
        document["spec"]["selector"]["app.kubernetes.io/name"].as<std::string>("");
    for (const YAML::Node& port : document["spec"]["ports"]) {
      EXPECT_TRUE(port_names_by_app[app].contains(port["targetPort"].as<std::string>()))
          << where << ": targetPort " << port["targetPort"] << " is no named port of " << app;
    }
  }
  EXPECT_EQ(services, 1);
}

// ---------------------------------------------------------------------------------------------
// The agents send load to the databases' own addresses, and their --allow-target (and the
// coordinator's, for its probe) lets exactly those through.

// The values of every --allow-target of a command line, as one comma-separated list.
std::string AllowList(const Invocation& invocation) {
  std::vector<std::string> values;
  for (size_t i = 0; i + 1 < invocation.args.size(); ++i) {
    if (invocation.args[i] == "--allow-target") values.push_back(invocation.args[i + 1]);
  }
  return absl::StrJoin(values, ",");
}

std::optional<uint32_t> Ipv4(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1) return std::nullopt;
  return ntohl(address.s_addr);
}

// Whether an --allow-target list (CIDR, IP or HOST, each with an optional :PORT; IPv6 entries
// are not used by these files and match nothing here) lets a target named `host` through on
// `port`, as far as that can be told without resolving names: a name must be named.
bool Allows(const std::string& list, const std::string& host, int port) {
  for (const absl::string_view raw : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    std::string entry(absl::StripAsciiWhitespace(raw));
    std::string entry_port;
    if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry_port = entry.substr(entry.find(':') + 1);
      entry = entry.substr(0, entry.find(':'));
    } else if (entry.find(':') != std::string::npos) {
      continue;
    }
    if (!entry_port.empty() && entry_port != std::to_string(port)) continue;
    const size_t slash = entry.find('/');
    const std::optional<uint32_t> network = Ipv4(entry.substr(0, slash));
    const std::optional<uint32_t> target = Ipv4(host);
    if (network) {
      const int bits = slash == std::string::npos ? 32 : std::stoi(entry.substr(slash + 1));
      const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
      if (target && (*target & mask) == (*network & mask)) return true;
    } else if (absl::AsciiStrToLower(entry) == absl::AsciiStrToLower(host)) {
      return true;
    }
  }
  return false;
}

TEST(DeployTargets, TheAllowListCheckTells) {
  EXPECT_TRUE(Allows("postgres:5432,mysql:3306", "mysql", 3306));
  EXPECT_FALSE(Allows("postgres:5432,mysql:3306", "postgres", 5433));
  EXPECT_FALSE(Allows("postgres:5432", "db.example", 5432));
  EXPECT_TRUE(Allows("Postgres.Example", "postgres.example", 1));
  EXPECT_TRUE(Allows("10.1.0.0/16", "10.1.2.3", 5432));
  EXPECT_FALSE(Allows("10.1.0.0/16", "10.2.0.1", 5432));
  EXPECT_FALSE(Allows("127.0.0.1/32", "127.0.0.2", 5432));
  EXPECT_TRUE(Allows("127.0.0.1:15432", "127.0.0.1", 15432));
  EXPECT_FALSE(Allows("", "127.0.0.1", 5432));
}

struct PlanTarget {
  std::string plan;
  std::string host;
  int port = 0;
  std::string password_file;
};

std::vector<PlanTarget> PlanTargets(const fs::path& dir) {
  std::vector<PlanTarget> targets;
  for (const fs::path& plan : FilesUnder(dir, [](const fs::path& p) {
         return HasExtension(p, {".yaml"});
       })) {
    const YAML::Node target = YAML::LoadFile(plan.string())["target"];
    targets.push_back(PlanTarget{.plan = Rel(plan),
                                 .host = target["host"].as<std::string>(""),
                                 .port = target["port"].as<int>(0),
                                 .password_file = target["password_file"].as<std::string>("")});
  }
  return targets;
}

// Every dbload daemon of a compose file lets every plan's target through, and holds the plan's
// password file as a secret (the agents for the load, the coordinator for its probe).
void ExpectComposeReachesThePlans(const fs::path& file, const fs::path& plans) {
  const YAML::Node compose = YAML::LoadFile(file.string());
  const std::vector<PlanTarget> targets = PlanTargets(plans);
  ASSERT_FALSE(targets.empty()) << Rel(plans);
  int daemons = 0;
  for (const auto& service : compose["services"]) {
    const std::string name = service.first.as<std::string>();
    const YAML::Node& spec = service.second;
    std::vector<std::string> words = StringsOf(spec["command"]);
    for (std::string& word : words) word = ComposeDefaults(word);
    std::vector<Invocation> invocations;
    InvocationsInWords(words, absl::StrCat(Rel(file), ": ", name), invocations);
    if (invocations.empty() || invocations[0].binary == "dbload") continue;
    ++daemons;
    std::set<std::string> secrets;
    for (const YAML::Node& secret : spec["secrets"]) secrets.insert(secret.as<std::string>());
    for (const PlanTarget& target : targets) {
      EXPECT_TRUE(Allows(AllowList(invocations[0]), target.host, target.port))
          << Describe(invocations[0]) << ": its --allow-target does not let " << target.plan
          << "'s target " << target.host << ":" << target.port << " through";
      EXPECT_TRUE(absl::StartsWith(target.password_file, "/run/secrets/") &&
                  secrets.contains(target.password_file.substr(13)))
          << Rel(file) << ": service " << name << " lacks the secret " << target.password_file
          << " that " << target.plan << " names";
    }
    // The database is reached at its own address, not through another container's network.
    if (invocations[0].binary == "dbload-agent" && spec["network_mode"]) {
      EXPECT_FALSE(absl::StartsWith(spec["network_mode"].as<std::string>(), "service:"))
          << Rel(file) << ": agent " << name << " lives in another service's network namespace";
    }
  }
  EXPECT_EQ(daemons, 3) << Rel(file) << ": a coordinator and two agents";
}

TEST(DeployTargets, Compose) {
  ExpectComposeReachesThePlans(ComposeFile(), kDeploy / "compose" / "plans");
  // HAProxy is left only as the metrics relay in the coordinator's network namespace.
  const YAML::Node compose = YAML::LoadFile(ComposeFile().string());
  for (const auto& service : compose["services"]) {
    if (!absl::StartsWith(service.second["image"].as<std::string>(""), "haproxy")) continue;
    EXPECT_EQ(service.second["network_mode"].as<std::string>(""), "service:coordinator")
        << "compose.yaml: " << service.first << " is an HAProxy that is not the metrics relay";
  }
  // The plans name the databases by their service names.
  for (const PlanTarget& target : PlanTargets(kDeploy / "compose" / "plans")) {
    EXPECT_TRUE(compose["services"][target.host]) << target.plan << ": no service " << target.host;
  }
}

TEST(DeployTargets, LocalCompose) {
  ExpectComposeReachesThePlans(LocalComposeFile(), kDeploy / "compose" / "local" / "plans");
  for (const auto& service : YAML::LoadFile(LocalComposeFile().string())["services"]) {
    EXPECT_EQ(service.second["network_mode"].as<std::string>(""), "host")
        << "compose/local: " << service.first << " is not on the host's network";
  }
}

TEST(DeployTargets, Kubernetes) {
  std::map<std::string, std::string> allow;  // binary → its list
  for (const Invocation& invocation : KubernetesInvocations()) {
    if (invocation.binary != "dbload") allow[invocation.binary] = AllowList(invocation);
  }
  ASSERT_EQ(allow.size(), 2u);
  EXPECT_FALSE(allow["dbload-agent"].empty()) << "the agents allow no database";
  EXPECT_EQ(allow["dbload-agent"], allow["dbload-coordinator"])
      << "the probe reads the databases the agents load";
  EXPECT_TRUE(Allows(allow["dbload-agent"], "postgres.databases.svc.cluster.local", 5432));
  EXPECT_TRUE(Allows(allow["dbload-agent"], "mysql.databases.svc.cluster.local", 3306));
  // No proxy sidecar; both pods mount the database passwords at the same path, so that one
  // plan's password_file holds for the agents and for the coordinator's probe.
  std::map<std::string, std::string> passwords_at;
  for (const fs::path& path : KubernetesFiles()) {
    for (const YAML::Node& document : LoadYamlDocuments(path)) {
      const std::optional<YAML::Node> pod = PodSpec(document);
      if (!pod) continue;
      const std::string app =
          document["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>(
              "");
      std::string secret_volume;
      for (const YAML::Node& volume : (*pod)["volumes"]) {
        if (volume["secret"] &&
            volume["secret"]["secretName"].as<std::string>() == "dbload-db-passwords") {
          secret_volume = volume["name"].as<std::string>();
        }
      }
      for (const YAML::Node& container : (*pod)["containers"]) {
        if (app == "dbload-agent") {
          EXPECT_EQ(container["name"].as<std::string>(), "agent")
              << Rel(path) << ": the agent pod has a container " << container["name"];
        }
        for (const YAML::Node& mount : container["volumeMounts"]) {
          if (mount["name"].as<std::string>() == secret_volume) {
            passwords_at[app] = mount["mountPath"].as<std::string>();
          }
        }
      }
    }
  }
  EXPECT_EQ(passwords_at["dbload-agent"], "/run/secrets");
  EXPECT_EQ(passwords_at["dbload-coordinator"], "/run/secrets");
}

TEST(DeployTargets, Systemd) {
  for (const fs::path& unit : Units()) {
    const std::vector<UnitEntry> entries = ParseUnit(ReadFile(unit));
    std::vector<Invocation> invocations;
    for (const std::string& exec : UnitValues(entries, "ExecStart")) {
      InvocationsInWords(Words(exec), Rel(unit), invocations);
    }
    ASSERT_EQ(invocations.size(), 1u) << Rel(unit);
    EXPECT_EQ(AllowList(invocations[0]), "${DBLOAD_ALLOW_TARGET}") << Rel(unit);
    // Unconfigured, a unit allows what the binary allows without the flag: loopback only.
    EXPECT_THAT(UnitValues(entries, "Environment"),
                ::testing::Contains("DBLOAD_ALLOW_TARGET=127.0.0.0/8,::1,localhost"))
        << Rel(unit);
  }
  // The examples name the databases under test, the same for the agents and the probe.
  std::map<std::string, std::string> examples;
  for (const char* env : {"dbload-agent.env", "dbload-coordinator.env"}) {
    for (const std::string& line : Lines(ReadFile(kDeploy / "systemd" / env))) {
      if (absl::StartsWith(line, "DBLOAD_ALLOW_TARGET=")) examples[env] = line.substr(20);
    }
  }
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples["dbload-agent.env"], examples["dbload-coordinator.env"]);
  EXPECT_TRUE(Allows(examples["dbload-agent.env"], "postgres.example.internal", 5432));
}

// ---------------------------------------------------------------------------------------------
// Kubernetes, offline: `kubectl create --dry-run=client` asks the API server for its resource
// types even with --validate=false ("unable to recognize ...: Get http://localhost:8080/api"),
// so without a cluster the manifests are checked by what kubectl does without one: kustomize
// builds the directory, and `set image --local` decodes every object into the client's typed
// API structs (a wrong type is an error; a misspelt field is dropped, which is compared here).

// $KUBECTL if set (e.g. Debian's kubernetes-client unpacked where another kubectl package owns
// /usr/bin/kubectl), else the first kubectl installed.
std::optional<std::string> Kubectl() {
  if (const char* chosen = std::getenv("KUBECTL"); chosen != nullptr && *chosen != '\0') {
    return std::string(chosen);
  }
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    const fs::path candidate = fs::path(dir) / "kubectl";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

// Paths (a.b[].c) of the map keys in `given` that `decoded` lacks: fields the API does not
// have. Empty values are left out (the API's encoder drops them).
void DroppedFields(const YAML::Node& given, const YAML::Node& decoded, const std::string& path,
                   std::vector<std::string>& out) {
  if (given.IsMap()) {
    for (const auto& field : given) {
      const std::string key = field.first.as<std::string>();
      const YAML::Node& value = field.second;
      const bool empty = value.IsNull() || ((value.IsMap() || value.IsSequence()) && value.size() == 0);
      const std::string here = path.empty() ? key : path + "." + key;
      if (!decoded.IsMap() || !decoded[key]) {
        if (!empty) out.push_back(here);
        continue;
      }
      DroppedFields(value, decoded[key], here, out);
    }
  } else if (given.IsSequence() && decoded.IsSequence() && given.size() == decoded.size()) {
    for (size_t i = 0; i < given.size(); ++i) {
      DroppedFields(given[i], decoded[i], path + "[]", out);
    }
  }
}

// What kubectl says of one manifest file: problems (not the "not a pod" notes of objects that
// have no containers, which it says after decoding them), and the decoded workloads.
struct KubectlVerdict {
  std::vector<std::string> problems;
  int workloads = 0;
  int others = 0;
};

KubectlVerdict DecodeWithKubectl(const std::string& kubectl, const fs::path& manifest) {
  KubectlVerdict verdict;
  const ProcessResult result = RunTool(
      {kubectl, "set", "image", "--local", "-f", manifest.string(), "-o", "yaml", "*=dbload:checked"});
  static const std::regex kNotAPod(
      R"(error: [a-z]+/[a-z0-9.-]+ the object is not a pod or does not have a pod template: \*v1\.[A-Za-z]+)");
  for (const std::string& line : Lines(result.err)) {
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    if (std::regex_match(line, kNotAPod)) {
      ++verdict.others;
    } else {
      verdict.problems.push_back(line);
    }
  }
  std::vector<YAML::Node> given;
  for (const YAML::Node& document : LoadYamlDocuments(manifest)) {
    if (PodSpec(document)) given.push_back(document);
  }
  std::vector<YAML::Node> decoded;
  try {
    for (const YAML::Node& document : YAML::LoadAll(result.out)) {
      if (!document.IsMap()) continue;
      if (document["kind"].as<std::string>("") == "List") {
        for (const YAML::Node& item : document["items"]) decoded.push_back(item);
      } else {
        decoded.push_back(document);
      }
    }
  } catch (const YAML::Exception& e) {
    verdict.problems.push_back(absl::StrCat("kubectl's output does not parse: ", e.msg));
  }
  verdict.workloads = static_cast<int>(decoded.size());
  if (decoded.size() != given.size()) {
    verdict.problems.push_back(absl::StrCat(given.size(), " workloads given, ", decoded.size(),
                                            " decoded"));
    return verdict;
  }
  for (size_t i = 0; i < given.size(); ++i) {
    std::vector<std::string> dropped;
    DroppedFields(given[i], decoded[i], "", dropped);
    for (const std::string& field : dropped) {
      verdict.problems.push_back(absl::StrCat(given[i]["kind"].as<std::string>(), " ",
                                              given[i]["metadata"]["name"].as<std::string>(),
                                              ": ", field, " is no field of the API"));
    }
  }
  return verdict;
}

TEST(DeployKubernetes, KubectlDecodesTheManifests) {
  const std::optional<std::string> kubectl = Kubectl();
  if (!kubectl) {
    GTEST_SKIP() << "kubectl is not installed (Debian: apt-get install kubernetes-client)";
  }
  const ProcessResult version = RunTool({*kubectl, "version", "--client"});
  std::cout << "kubectl: " << Lines(version.out)[0] << "\n";
  const ProcessResult built = RunTool({*kubectl, "kustomize", (kDeploy / "kubernetes").string()});
  ASSERT_EQ(built.exit_code, 0) << "kubectl kustomize deploy/kubernetes:\n" << built.Describe();
  int objects = 0;
  for (const YAML::Node& document : YAML::LoadAll(built.out)) {
    if (!document.IsMap()) continue;
    ++objects;
    if (document["kind"].as<std::string>() != "Namespace") {
      EXPECT_EQ(document["metadata"]["namespace"].as<std::string>(""), "dbload");
    }
  }
  EXPECT_EQ(objects, 7) << "namespace, 2 ConfigMaps, PVC, 2 Deployments, Service";
  int workloads = 0;
  for (const fs::path& manifest : KubernetesFiles()) {
    if (manifest.filename() == "kustomization.yaml") continue;
    const KubectlVerdict verdict = DecodeWithKubectl(*kubectl, manifest);
    for (const std::string& problem : verdict.problems) {
      ADD_FAILURE() << Rel(manifest) << ": kubectl: " << problem;
    }
    workloads += verdict.workloads;
  }
  EXPECT_EQ(workloads, 2) << "the coordinator and the agents";
  // It does tell: a port that is no number is refused, a misspelt field is found dropped.
  TempDir temp;
  const std::string agents = ReadFile(kDeploy / "kubernetes" / "agents.yaml");
  ASSERT_TRUE(absl::StrContains(agents, "terminationGracePeriodSeconds: 15"));
  WriteFile(temp.path() / "wrong-type.yaml",
            absl::StrReplaceAll(agents, {{"terminationGracePeriodSeconds: 15",
                                          "terminationGracePeriodSeconds: soon"}}));
  EXPECT_FALSE(DecodeWithKubectl(*kubectl, temp.path() / "wrong-type.yaml").problems.empty());
  WriteFile(temp.path() / "misspelt.yaml",
            absl::StrReplaceAll(agents, {{"terminationGracePeriodSeconds: 15",
                                          "terminationGracePeriodSecond: 15"}}));
  const KubectlVerdict misspelt = DecodeWithKubectl(*kubectl, temp.path() / "misspelt.yaml");
  EXPECT_THAT(misspelt.problems,
              ::testing::Contains(::testing::HasSubstr("terminationGracePeriodSecond is no field")));
}

// ---------------------------------------------------------------------------------------------
// (c) The real tools accept the Prometheus, HAProxy and systemd files.

// A copy that Debian's promtool can check: its Prometheus is built without Kubernetes service
// discovery, so kubernetes_sd_configs become a static target; everything else (relabelling
// rules, regular expressions, intervals) is checked as written.
std::string WithoutKubernetesDiscovery(const std::string& text) {
  YAML::Node config = YAML::Load(text);
  for (YAML::Node job : config["scrape_configs"]) {
    if (!job["kubernetes_sd_configs"]) continue;
    for (const YAML::Node& sd : job["kubernetes_sd_configs"]) {
      EXPECT_EQ(sd["role"].as<std::string>(""), "pod") << "kubernetes_sd_configs: role";
    }
    job.remove("kubernetes_sd_configs");
    YAML::Node target;
    target["targets"].push_back("127.0.0.1:9465");
    job["static_configs"].push_back(target);
  }
  YAML::Emitter out;
  out << config;
  return out.c_str();
}

ProcessResult Promtool(const fs::path& config) {
  return RunTool({Tool("promtool"), "check", "config", config.string()});
}

TEST(DeployTools, PromtoolAcceptsThePrometheusConfigs) {
  TempDir temp;
  std::vector<std::pair<std::string, fs::path>> configs;
  for (const fs::path& path : FilesUnder(kDeploy, [](const fs::path& p) {
         return absl::StartsWith(p.filename().string(), "prometheus") && HasExtension(p, {".yml"});
       })) {
    configs.emplace_back(Rel(path), path);
  }
  int n = 0;
  for (const auto& [where, text] : ConfigMapFiles("prometheus.yml")) {
    const fs::path copy = temp.path() / absl::StrCat("configmap-", n++, ".yml");
    WriteFile(copy, WithoutKubernetesDiscovery(text));
    configs.emplace_back(where, copy);
  }
  EXPECT_EQ(configs.size(), 2u) << "the compose stack's and the Kubernetes ConfigMap's";
  for (const auto& [where, path] : configs) {
    const ProcessResult result = Promtool(path);
    EXPECT_EQ(result.exit_code, 0) << where << ": promtool check config:\n" << result.Describe();
  }
  // promtool does refuse what Prometheus would.
  const fs::path broken = temp.path() / "broken.yml";
  WriteFile(broken, ReadFile(configs[0].second) + "\nno_such_section: 1\n");
  EXPECT_NE(Promtool(broken).exit_code, 0);
}

ProcessResult HaproxyCheck(const fs::path& config) {
  return RunTool({Tool("haproxy"), "-c", "-f", config.string()});
}

TEST(DeployTools, HaproxyAcceptsItsConfigs) {
  TempDir temp;
  std::vector<std::pair<std::string, fs::path>> configs;
  for (const fs::path& path :
       FilesUnder(kDeploy, [](const fs::path& p) { return HasExtension(p, {".cfg"}); })) {
    configs.emplace_back(Rel(path), path);
  }
  int n = 0;
  for (const auto& [where, text] : ConfigMapFiles("haproxy.cfg")) {
    const fs::path copy = temp.path() / absl::StrCat("configmap-", n++, ".cfg");
    WriteFile(copy, text);
    configs.emplace_back(where, copy);
  }
  // HAProxy is left only as the coordinator's metrics relay: the agents reach the databases
  // directly (--allow-target), without the per-agent proxy earlier builds needed.
  EXPECT_EQ(configs.size(), 2u) << "the metrics relays of compose and Kubernetes";
  for (const auto& [where, path] : configs) {
    const ProcessResult result = HaproxyCheck(path);
    // Servers named by compose or cluster host names do not resolve here: the configurations
    // start without them (init-addr none) and warn, which is expected; alerts are not.
    EXPECT_EQ(result.exit_code, 0) << where << ": haproxy -c:\n" << result.Describe();
    EXPECT_THAT(result.out + result.err, ::testing::Not(::testing::HasSubstr("[ALERT]"))) << where;
  }
  ASSERT_FALSE(configs.empty());
  // A server whose name does not resolve is an error without init-addr (the check is meaningful
  // for these configurations only because they say how to start without it), and a misspelt
  // keyword is refused.
  const fs::path unresolved = temp.path() / "unresolved.cfg";
  WriteFile(unresolved,
            "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\n"
            "listen x\n  bind 127.0.0.1:0\n  server s no-such-host.invalid:1\n");
  EXPECT_NE(HaproxyCheck(unresolved).exit_code, 0);
  const fs::path misspelt = temp.path() / "misspelt.cfg";
  WriteFile(misspelt, ReadFile(configs[0].second) + "\n    tiemout client 1s\n");
  EXPECT_NE(HaproxyCheck(misspelt).exit_code, 0);
}

// systemd-analyze verify works in this container (systemd is not PID 1, but verify needs only
// the unit files and the binaries they run). The units name /usr/local/bin/...; the copies
// checked here name the built binaries instead, which must exist and be executable.
ProcessResult VerifyUnit(const fs::path& unit) {
  return RunTool({Tool("systemd-analyze"), "verify", unit.string()});
}

std::string WithBuiltBinaries(std::string text) {
  for (const auto& [installed, built] : std::vector<std::pair<std::string, std::string>>{
           {"/usr/local/bin/dbload-coordinator", DBLOAD_COORDINATOR_BINARY},
           {"/usr/local/bin/dbload-agent", DBLOAD_AGENT_BINARY},
           {"/usr/local/bin/dbload ", std::string(DBLOAD_BINARY) + " "}}) {
    for (size_t at = text.find(installed); at != std::string::npos;
         at = text.find(installed, at + built.size())) {
      text.replace(at, installed.size(), built);
    }
  }
  return text;
}

TEST(DeployTools, SystemdAnalyzeVerifiesTheUnits) {
  TempDir temp;
  const std::vector<fs::path> units = Units();
  EXPECT_EQ(units.size(), 2u);
  for (const fs::path& unit : units) {
    const fs::path copy = temp.path() / unit.filename();
    WriteFile(copy, WithBuiltBinaries(ReadFile(unit)));
    const ProcessResult result = VerifyUnit(copy);
    // verify exits 0 on unknown keys and bad values too, and only says so: any output counts.
    EXPECT_EQ(result.exit_code, 0) << Rel(unit) << ":\n" << result.Describe();
    EXPECT_EQ(result.out + result.err, "") << Rel(unit) << ": systemd-analyze verify:\n"
                                           << result.Describe();

    // What the brief asks of a service that runs load: hardened, restarted, its state kept
    // where --state-dir says.
    const std::vector<UnitEntry> entries = ParseUnit(ReadFile(unit));
    for (const auto& [key, value] :
         std::vector<std::pair<std::string, std::string>>{{"NoNewPrivileges", "yes"},
                                                          {"ProtectSystem", "strict"},
                                                          {"Restart", "on-failure"},
                                                          {"DynamicUser", "yes"}}) {
      EXPECT_THAT(UnitValues(entries, key), ::testing::ElementsAre(value))
          << Rel(unit) << ": " << key;
    }
    std::vector<Invocation> invocations;
    for (const std::string& exec : UnitValues(entries, "ExecStart")) {
      InvocationsInWords(Words(exec), Rel(unit), invocations);
    }
    ASSERT_EQ(invocations.size(), 1u) << Rel(unit);
    const std::vector<std::string>& args = invocations[0].args;
    const auto state_dir = std::find(args.begin(), args.end(), "--state-dir");
    if (state_dir != args.end() && state_dir + 1 != args.end()) {
      EXPECT_THAT(
          UnitValues(entries, "StateDirectory"),
          ::testing::ElementsAre(std::string(absl::StripPrefix(*(state_dir + 1), "/var/lib/"))))
          << Rel(unit) << ": --state-dir is not the unit's StateDirectory";
    }
  }
  EXPECT_TRUE(std::any_of(units.begin(), units.end(), [](const fs::path& unit) {
    return !UnitValues(ParseUnit(ReadFile(unit)), "StateDirectory").empty();
  })) << "the coordinator's unit keeps its state in a StateDirectory";

  // verify does speak up: an unknown key, and a binary that is not there.
  ASSERT_FALSE(units.empty());
  const fs::path broken = temp.path() / "broken.service";
  WriteFile(broken, WithBuiltBinaries(ReadFile(units[0])) + "\n[Service]\nNoSuchKey=1\n");
  EXPECT_NE(VerifyUnit(broken).err + VerifyUnit(broken).out, "");
  const fs::path missing = temp.path() / "missing.service";
  WriteFile(missing, ReadFile(units[0]));  // /usr/local/bin/dbload-* is not installed here
  if (!fs::exists("/usr/local/bin/dbload-coordinator") &&
      !fs::exists("/usr/local/bin/dbload-agent")) {
    EXPECT_NE(VerifyUnit(missing).exit_code, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The daemons start with each deployment's own command lines, values included: the flags' names
// are in --help (above), and here the real dbload-coordinator accepts their values (--metrics on
// loopback, TLS with a token, a state directory) and the real agents connect to it. What cannot
// be the same here is made local: listen addresses become 127.0.0.1:0 (--metrics keeps its host:
// this build refuses a non-loopback one), certificates, the token and the state directory are
// made in a temporary directory, agents dial the coordinator started here, and systemd's
// ${VARIABLES} come from the unit's Environment= and its .env example. No run is submitted.

class DeployRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto openssl = [](const std::vector<std::string>& args) {
      std::vector<std::string> argv = {Tool("openssl")};
      argv.insert(argv.end(), args.begin(), args.end());
      const ProcessResult made = RunTool(argv);
      ASSERT_EQ(made.exit_code, 0) << made.Describe();
    };
    openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-days", "2", "-subj", "/CN=dbload deploy test CA", "-keyout", Path("ca.key"), "-out",
             Path("ca.pem")});
    openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
             "/CN=coordinator", "-keyout", Path("coordinator.key"), "-out",
             Path("coordinator.csr")});
    WriteFile(Path("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    openssl({"x509", "-req", "-in", Path("coordinator.csr"), "-CA", Path("ca.pem"), "-CAkey",
             Path("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", Path("san.ext"), "-out",
             Path("coordinator.pem")});
    WriteFile(Path("token"), "deploy-test-token-0123456789abcdef\n");
    fs::permissions(Path("token"), fs::perms::owner_read | fs::perms::owner_write);
    fs::permissions(Path("coordinator.key"), fs::perms::owner_read | fs::perms::owner_write);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string Path(const std::string& name) { return (dir_->path() / name).string(); }

  // The words a daemon would run with here (see above).
  static std::vector<std::string> Localize(const Invocation& invocation,
                                           const std::map<std::string, std::string>& env,
                                           const std::string& coordinator,
                                           const std::string& default_name) {
    std::vector<std::string> words;
    for (const std::string& arg : invocation.args) {
      if (absl::StartsWith(arg, "${") && absl::EndsWith(arg, "}")) {
        const auto found = env.find(arg.substr(2, arg.size() - 3));
        EXPECT_NE(found, env.end()) << invocation.where << ": " << arg << " is never set";
        words.push_back(found == env.end() ? "" : found->second);
      } else if (absl::StartsWith(arg, "$") && !absl::StartsWith(arg, "$(")) {
        const auto found = env.find(arg.substr(1));  // unset: no words, as systemd does
        if (found != env.end()) {
          for (const std::string& word : Words(found->second)) words.push_back(word);
        }
      } else {
        words.push_back(arg);
      }
    }
    std::vector<std::string> argv = {invocation.binary == "dbload-coordinator"
                                         ? DBLOAD_COORDINATOR_BINARY
                                         : DBLOAD_AGENT_BINARY};
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& flag = words[i];
      argv.push_back(flag);
      if (i + 1 >= words.size()) break;
      const std::string& value = words[i + 1];
      std::optional<std::string> local;
      if (flag == "--listen") local = "127.0.0.1:0";
      if (flag == "--metrics") local = value.substr(0, value.rfind(':')) + ":0";
      if (flag == "--state-dir") local = Path("state-" + default_name);
      if (flag == "--tls-cert") local = Path("coordinator.pem");
      if (flag == "--tls-key") local = Path("coordinator.key");
      if (flag == "--tls-ca") local = Path("ca.pem");
      if (flag == "--token-file") local = Path("token");
      if (flag == "--coordinator") local = coordinator;
      if (flag == "--name" && (absl::StartsWith(value, "$") || absl::StartsWith(value, "%"))) {
        local = default_name;
      }
      if (local) {
        argv.push_back(*local);
        ++i;
      }
    }
    return argv;
  }

  // The addresses are made local below, which would hide the binaries' rule (in their --help):
  // without TLS, a listen address or a coordinator off loopback needs --allow-insecure-remote.
  static void ExpectAddressAllowed(const Invocation& invocation) {
    const std::vector<std::string>& args = invocation.args;
    const auto has = [&args](const std::string& flag) {
      return std::find(args.begin(), args.end(), flag) != args.end();
    };
    const std::string address_flag =
        invocation.binary == "dbload-coordinator" ? "--listen" : "--coordinator";
    const auto address = std::find(args.begin(), args.end(), address_flag);
    ASSERT_TRUE(address != args.end() && address + 1 != args.end()) << Describe(invocation);
    const std::string host = address[1].substr(0, address[1].rfind(':'));
    const bool loopback = host == "localhost" || absl::StartsWith(host, "127.") || host == "[::1]";
    const bool tls = has(invocation.binary == "dbload-coordinator" ? "--tls-cert" : "--tls-ca");
    EXPECT_TRUE(loopback || tls || has("--allow-insecure-remote"))
        << Describe(invocation) << ": " << address[1]
        << " is not on loopback, without TLS and without --allow-insecure-remote";
  }

  // Starts the coordinator of a deployment and its agents, and checks that every agent is
  // listed by `dbload agents` (and the metrics answer, when asked for).
  static void StartTogether(const std::string& source, const std::vector<Invocation>& invocations,
                            const std::map<std::string, std::map<std::string, std::string>>& env) {
    std::vector<Invocation> coordinators, agents;
    for (const Invocation& invocation : invocations) {
      if (invocation.binary == "dbload-coordinator") coordinators.push_back(invocation);
      if (invocation.binary == "dbload-agent") agents.push_back(invocation);
    }
    ASSERT_EQ(coordinators.size(), 1u) << source;
    ASSERT_GE(agents.size(), 1u) << source;
    for (const Invocation& invocation : invocations) ExpectAddressAllowed(invocation);
    const auto env_of = [&env](const std::string& binary) {
      const auto found = env.find(binary);
      return found == env.end() ? std::map<std::string, std::string>() : found->second;
    };
    const std::vector<std::string> argv =
        Localize(coordinators[0], env_of("dbload-coordinator"), "", "coordinator-" + source);
    const bool metrics = std::find(argv.begin(), argv.end(), "--metrics") != argv.end();
    const bool tls = std::find(argv.begin(), argv.end(), "--tls-cert") != argv.end();
    const bool token = std::find(argv.begin(), argv.end(), "--token-file") != argv.end();
    testing::Child coordinator(argv);
    const size_t lines = metrics ? 2 : 1;
    const bool started = coordinator.PumpUntil(
        [lines](const std::string& out) {
          return static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) >= lines;
        },
        std::chrono::seconds(10));
    ASSERT_TRUE(started) << Describe(coordinators[0])
                         << "\nran here as: " << absl::StrJoin(argv, " ") << "\n"
                         << coordinator.out() << coordinator.err();
    const std::vector<std::string> said = absl::StrSplit(coordinator.out(), '\n');
    ASSERT_TRUE(absl::StartsWith(said[0], "listening on ")) << coordinator.out();
    const std::string address = said[0].substr(std::strlen("listening on "));
    if (metrics) {
      static const std::regex kMetricsLine("metrics on http://127\\.0\\.0\\.1:([0-9]+)/metrics");
      std::smatch match;
      ASSERT_TRUE(std::regex_match(said[1], match, kMetricsLine)) << said[1];
      std::string error;
      const std::optional<std::string> body =
          testing::HttpGet(std::stoi(match[1].str()), "/metrics", error);
      ASSERT_TRUE(body) << source << ": /metrics: " << error;
      EXPECT_THAT(*body, ::testing::HasSubstr("dbload_agents_connected"));
    }
    std::vector<std::string> credentials;
    if (tls) credentials.insert(credentials.end(), {"--tls-ca", Path("ca.pem")});
    if (token) credentials.insert(credentials.end(), {"--token-file", Path("token")});

    std::vector<std::unique_ptr<testing::Child>> children;
    std::set<std::string> names;
    for (const Invocation& agent : agents) {
      const std::string fallback = absl::StrCat("agent-", children.size() + 1, "-", source);
      const std::vector<std::string> agent_argv =
          Localize(agent, env_of("dbload-agent"), address, fallback);
      const auto name = std::find(agent_argv.begin(), agent_argv.end(), "--name");
      ASSERT_TRUE(name != agent_argv.end() && name + 1 != agent_argv.end())
          << Describe(agent) << ": no --name";
      names.insert(*(name + 1));
      children.push_back(std::make_unique<testing::Child>(agent_argv));
    }
    std::set<std::string> listed;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (listed != names && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::vector<std::string> list = {DBLOAD_BINARY, "agents", "--coordinator", address};
      list.insert(list.end(), credentials.begin(), credentials.end());
      const ProcessResult result = RunTool(list);
      listed.clear();
      for (const std::string& line : Lines(result.out)) {
        if (line.empty() || absl::StartsWith(line, "NAME") || absl::StartsWith(line, "(")) continue;
        listed.insert(line.substr(0, line.find(' ')));
      }
      for (auto& child : children) child->Pump(std::chrono::milliseconds(1));
      coordinator.Pump(std::chrono::milliseconds(1));
    }
    std::string agents_said;
    for (const auto& child : children) agents_said += child->err();
    EXPECT_EQ(listed, names) << source << ": the agents did not all connect\n"
                             << absl::StrJoin(argv, " ") << "\n"
                             << coordinator.err() << agents_said;
    EXPECT_TRUE(coordinator.running());
  }

  static TempDir* dir_;
};
TempDir* DeployRuntime::dir_ = nullptr;

TEST_F(DeployRuntime, Compose) { StartTogether("compose", ComposeInvocations(), {}); }

TEST_F(DeployRuntime, LocalCompose) {
  StartTogether("local-compose", ComposeInvocations(LocalComposeFile()), {});
}

TEST_F(DeployRuntime, Kubernetes) { StartTogether("kubernetes", KubernetesInvocations(), {}); }

TEST_F(DeployRuntime, Systemd) {
  // Environment= of each unit, then its EnvironmentFile's example (which overrides it).
  std::map<std::string, std::map<std::string, std::string>> env;
  for (const fs::path& unit : Units()) {
    std::map<std::string, std::string>& mine = env[unit.stem().string()];
    for (const std::string& assignment : UnitValues(ParseUnit(ReadFile(unit)), "Environment")) {
      const size_t equals = assignment.find('=');
      mine[assignment.substr(0, equals)] = assignment.substr(equals + 1);
    }
    const fs::path example = fs::path(unit).replace_extension(".env");
    for (const std::string& line : Lines(ReadFile(example))) {
      const size_t equals = line.find('=');
      if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
      mine[line.substr(0, equals)] =
          std::string(absl::StripSuffix(absl::StripPrefix(line.substr(equals + 1), "\""), "\""));
    }
  }
  std::vector<Invocation> units;
  for (const Invocation& invocation : SystemdInvocations()) {
    if (absl::StrContains(invocation.where, ".service:")) units.push_back(invocation);
  }
  StartTogether("systemd", units, env);
}

// The coordinator does refuse what this build cannot do, so the starts above mean something.
TEST_F(DeployRuntime, TheCoordinatorRefusesMetricsOffLoopback) {
  Invocation remote{.where = "synthetic",
                    .binary = "dbload-coordinator",
                    .args = {"--listen", "127.0.0.1:7000", "--metrics", "0.0.0.0:9464"}};
  const ProcessResult result = RunTool(Localize(remote, {}, "", "refused"));
  EXPECT_EQ(result.exit_code, 2) << result.Describe();
  EXPECT_THAT(result.err, ::testing::HasSubstr("--metrics"));
}

// ---------------------------------------------------------------------------------------------
// (d) The Dockerfile.

const std::set<std::string> kDockerfileInstructions = {
    "FROM",    "RUN", "CMD",     "LABEL",      "MAINTAINER",  "EXPOSE",
    "ENV",     "ADD", "COPY",    "ENTRYPOINT", "VOLUME",      "USER",
    "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"};

class DeployDockerfile : public ::testing::Test {
 protected:
  void SetUp() override {
    instructions_ = ParseDockerfile(ReadFile(kDeploy / "Dockerfile"));
    stages_ = StagesOf(instructions_);
    ASSERT_EQ(stages_.size(), 2u) << "deploy/Dockerfile: a build and a runtime stage";
  }
  std::vector<Instruction> instructions_;
  std::vector<Stage> stages_;
};

TEST_F(DeployDockerfile, KnownInstructionsOnDebian12) {
  for (const Instruction& instruction : instructions_) {
    EXPECT_TRUE(kDockerfileInstructions.contains(instruction.keyword))
        << "deploy/Dockerfile:" << instruction.line << ": unknown instruction "
        << instruction.keyword;
  }
  // Only build arguments come before the first FROM; every stage starts from BASE_IMAGE, which
  // is Debian 12 unless the build says otherwise (deploy/image-test gives its debootstrap base).
  for (const Instruction& instruction : instructions_) {
    if (instruction.keyword == "FROM") break;
    EXPECT_EQ(instruction.keyword, "ARG") << "deploy/Dockerfile:" << instruction.line;
  }
  EXPECT_EQ(GlobalArgs(instructions_).count("BASE_IMAGE"), 1u);
  for (const Instruction& instruction : instructions_) {
    if (instruction.keyword != "FROM") continue;
    EXPECT_TRUE(absl::StartsWith(instruction.args, "${BASE_IMAGE}"))
        << "deploy/Dockerfile:" << instruction.line << ": FROM " << instruction.args;
  }
  static const std::regex kDebian12("debian:12([.-].*)?");
  for (const Stage& stage : stages_) {
    EXPECT_TRUE(std::regex_match(stage.image, kDebian12))
        << "deploy/Dockerfile:" << stage.line << ": stage on " << stage.image << ", not Debian 12";
  }
  EXPECT_EQ(StagesOf(ParseDockerfile("ARG B=debian:12\nFROM ${B} AS x\nFROM $B\n"))[1].image,
            "debian:12");
  // The runtime stage runs as a non-root user.
  std::string user;
  for (const Instruction& instruction : stages_.back().instructions) {
    if (instruction.keyword == "USER") user = instruction.args;
  }
  EXPECT_FALSE(user.empty() || absl::StartsWith(user, "root") || absl::StartsWith(user, "0"))
      << "deploy/Dockerfile: the runtime stage's USER is '" << user << "'";
  // The parser sees through continuations and comments inside them.
  const std::vector<Instruction> parsed =
      ParseDockerfile("# c\nFROM debian:12 AS b\nRUN a \\\n  # note\n  && b\ncopy x y\n");
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[1].args, "a  && b");
  EXPECT_EQ(parsed[2].keyword, "COPY");
  EXPECT_EQ(parsed[2].line, 6);
}

// The packages of `apt-cache show` (one call: each call reads the whole index, about a second).
std::set<std::string> KnownPackages(const std::vector<std::string>& packages) {
  std::vector<std::string> argv = {Tool("apt-cache"), "show", "--no-all-versions"};
  argv.insert(argv.end(), packages.begin(), packages.end());
  std::set<std::string> known;
  for (const std::string& line : Lines(RunTool(argv).out)) {
    if (absl::StartsWith(line, "Package: ")) known.insert(line.substr(9));
  }
  return known;
}

TEST_F(DeployDockerfile, EveryPackageExistsInDebiansIndex) {
  std::vector<std::string> all;
  for (const Stage& stage : stages_) {
    const std::vector<std::string> packages = AptPackages(stage);
    EXPECT_FALSE(packages.empty()) << "deploy/Dockerfile:" << stage.line << ": no apt-get install";
    all.insert(all.end(), packages.begin(), packages.end());
  }
  EXPECT_GE(all.size(), 15u);
  std::vector<std::string> with_a_typo = all;
  with_a_typo.push_back("libgrpc++-devv");
  with_a_typo.push_back("cmake");
  const std::set<std::string> known = KnownPackages(with_a_typo);
  ASSERT_TRUE(known.contains("cmake"))
      << "apt-cache knows no package at all: this machine's package index is empty (images often "
         "delete /var/lib/apt/lists); run apt-get update";
  for (const Stage& stage : stages_) {
    for (const std::string& package : AptPackages(stage)) {
      EXPECT_TRUE(known.contains(package))
          << "deploy/Dockerfile: stage " << stage.name << " (line " << stage.line << ") installs "
          << package << ", which is not in this machine's Debian index";
    }
  }
  EXPECT_FALSE(known.contains("libgrpc++-devv"));
}

TEST_F(DeployDockerfile, EveryCopiedFileExistsInTheContext) {
  const std::vector<std::string> ignored = DockerignorePatterns();
  EXPECT_TRUE(IgnoredBy(ignored, "build/cli/dbload")) << ".dockerignore lets build/ in";
  EXPECT_TRUE(IgnoredBy(ignored, "build-asan")) << ".dockerignore lets build-asan/ in";
  EXPECT_FALSE(IgnoredBy(ignored, "base/histogram.cc"));
  int count = 0;
  for (const Instruction& instruction : instructions_) {
    if (instruction.keyword != "COPY" && instruction.keyword != "ADD") continue;
    std::optional<CopySources> copy = ContextCopy(instruction);
    if (!copy) continue;
    EXPECT_FALSE(copy->sources.empty()) << "deploy/Dockerfile:" << instruction.line;
    for (const std::string& source : copy->sources) {
      ++count;
      EXPECT_TRUE(fs::exists(kSource / source))
          << "deploy/Dockerfile:" << instruction.line << ": COPY " << source
          << ": no such file in the repository";
      if (std::optional<std::string> pattern = IgnoredBy(ignored, source)) {
        ADD_FAILURE() << "deploy/Dockerfile:" << instruction.line << ": COPY " << source
                      << ": .dockerignore's '" << *pattern << "' keeps it out of the context";
      }
    }
  }
  EXPECT_GE(count, 8);
}

// The build stage's sources, exactly as it copies them, configure with its own cmake flags: a
// folder the build needs but the Dockerfile forgets to copy fails here.
TEST_F(DeployDockerfile, TheCopiedSourcesConfigure) {
  TempDir temp;
  const fs::path context = temp.path() / "src";
  std::vector<std::string> cmake_flags;
  for (const Instruction& instruction : stages_.front().instructions) {
    if (instruction.keyword == "COPY") {
      std::optional<CopySources> copy = ContextCopy(instruction);
      ASSERT_TRUE(copy) << "deploy/Dockerfile:" << instruction.line;
      for (const std::string& source : copy->sources) {
        if (!fs::exists(kSource / source)) {
          ADD_FAILURE() << "deploy/Dockerfile:" << instruction.line << ": COPY " << source
                        << ": no such file in the repository";
          continue;
        }
        const std::string target = copy->destination == "./" ? source : copy->destination;
        ASSERT_TRUE(copy->destination == "./" || copy->destination == source)
            << "deploy/Dockerfile:" << instruction.line
            << ": this check expects the build stage to copy to the same path";
        fs::create_directories((context / target).parent_path());
        fs::copy(kSource / source, context / target, fs::copy_options::recursive);
      }
    }
    if (instruction.keyword == "RUN" && absl::StrContains(instruction.args, "cmake -S")) {
      for (const std::string& word : Words(instruction.args)) {
        if (absl::StartsWith(word, "-D")) cmake_flags.push_back(word);
      }
    }
  }
  EXPECT_THAT(cmake_flags, ::testing::IsSupersetOf({"-DCMAKE_BUILD_TYPE=Release",
                                                    "-DBUILD_TESTING=OFF", "-DDBLOAD_BENCH=OFF"}));
  std::vector<std::string> argv = {DBLOAD_CMAKE_COMMAND, "-S", context.string(), "-B",
                                   (temp.path() / "build").string()};
  argv.insert(argv.end(), cmake_flags.begin(), cmake_flags.end());
  const ProcessResult configured = RunTool(argv);
  EXPECT_EQ(configured.exit_code, 0) << "cmake on the build stage's COPY set:\n"
                                     << configured.Describe();
  // Without one of the folders it does fail.
  fs::remove_all(context / "cli");
  argv[4] = (temp.path() / "build-without-cli").string();
  EXPECT_NE(RunTool(argv).exit_code, 0);
}

// Packages that every debian:12 image has (apt itself needs them).
const std::set<std::string> kBaseImagePackages = {"libc6", "libgcc-s1", "libstdc++6"};

// What an image that starts from debian:12 and apt-get installs `packages` has: them, their
// dependencies, recursively, and the base image's own.
std::set<std::string> InstalledWith(const std::vector<std::string>& packages) {
  std::vector<std::string> argv = {Tool("apt-cache"), "depends",       "--recurse",
                                   "--no-recommends", "--no-suggests", "--no-conflicts",
                                   "--no-breaks",     "--no-replaces", "--no-enhances"};
  argv.insert(argv.end(), packages.begin(), packages.end());
  const ProcessResult closure = RunTool(argv);
  EXPECT_EQ(closure.exit_code, 0) << closure.Describe();
  std::set<std::string> installed = kBaseImagePackages;
  for (const std::string& line : Lines(closure.out)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '<') installed.insert(line);
  }
  return installed;
}

// Every shared library the built binaries load comes from a package that the runtime stage
// installs, directly or as a dependency.
TEST_F(DeployDockerfile, TheRuntimeStageHasEveryLibraryTheBinariesLoad) {
  std::set<std::string> libraries;
  for (const char* binary : {DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY, DBLOAD_AGENT_BINARY}) {
    const ProcessResult ldd = RunTool({Tool("ldd"), binary});
    ASSERT_EQ(ldd.exit_code, 0) << ldd.Describe();
    for (const std::string& line : Lines(ldd.out)) {
      const std::vector<std::string> words = Words(line);
      if (words.size() >= 3 && words[1] == "=>" && absl::StartsWith(words[2], "/")) {
        libraries.insert(words[2]);
      }
    }
  }
  ASSERT_GE(libraries.size(), 20u);
  // dpkg knows each file under the path it installed (/lib/... or /usr/lib/..., merged /usr).
  std::vector<std::string> argv = {Tool("dpkg-query"), "-S"};
  for (const std::string& library : libraries) {
    argv.push_back(library);
    argv.push_back(absl::StartsWith(library, "/usr/") ? library.substr(4) : "/usr" + library);
  }
  const ProcessResult owners = RunTool(argv);
  std::map<std::string, std::string> package_of;
  for (const std::string& line : Lines(owners.out)) {
    const size_t separator = line.find(": ");
    if (separator == std::string::npos) continue;
    const std::string package = line.substr(0, line.find_first_of(":,"));
    std::string path = line.substr(separator + 2);
    package_of[path] = package;
    package_of[absl::StartsWith(path, "/usr/") ? path.substr(4) : "/usr" + path] = package;
  }
  std::set<std::string> needed;
  for (const std::string& library : libraries) {
    const auto found = package_of.find(library);
    if (found == package_of.end()) {
      ADD_FAILURE() << library << " (loaded by the binaries) belongs to no Debian package";
      continue;
    }
    needed.insert(found->second);
  }
  const std::vector<std::string> runtime = AptPackages(stages_.back());
  const std::set<std::string> installed = InstalledWith(runtime);
  for (const std::string& package : needed) {
    EXPECT_TRUE(installed.contains(package))
        << "deploy/Dockerfile:" << stages_.back().line << ": the runtime stage does not install "
        << package << " (the binaries load a library of it), nor anything that depends on it";
  }
  // The check does tell: without libpqxx-6.4 in the list, the stage would miss it.
  ASSERT_TRUE(needed.contains("libpqxx-6.4"));
  std::vector<std::string> fewer = runtime;
  std::erase(fewer, "libpqxx-6.4");
  EXPECT_FALSE(InstalledWith(fewer).contains("libpqxx-6.4"));
}

// What differs between deploy/Dockerfile's runtime stage and Dockerfile.prebuilt's only stage
// other than where the binaries come from (the build stage there, the context's bin/ here).
std::vector<std::string> PrebuiltDifferences(const Stage& runtime, const Stage& prebuilt) {
  std::vector<std::string> problems;
  const auto binaries = [](const Instruction& instruction) {
    return instruction.keyword == "COPY" &&
           absl::EndsWith(absl::StripTrailingAsciiWhitespace(instruction.args), "/usr/local/bin/");
  };
  if (runtime.image != prebuilt.image) {
    problems.push_back(absl::StrCat("FROM ", prebuilt.image, " instead of ", runtime.image));
  }
  const size_t n = std::max(runtime.instructions.size(), prebuilt.instructions.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= runtime.instructions.size() || i >= prebuilt.instructions.size()) {
      problems.push_back(absl::StrCat("a different number of instructions (",
                                      runtime.instructions.size(), " and ",
                                      prebuilt.instructions.size(), ")"));
      break;
    }
    const Instruction& a = runtime.instructions[i];
    const Instruction& b = prebuilt.instructions[i];
    if (binaries(a) && binaries(b)) {
      if (!absl::StartsWith(b.args, "bin/ ")) {
        problems.push_back(absl::StrCat("line ", b.line, ": the binaries from ", b.args,
                                        ", not from the context's bin/"));
      }
      continue;
    }
    if (a.keyword != b.keyword || a.args != b.args) {
      problems.push_back(absl::StrCat("line ", b.line, ": ", b.keyword, " ", b.args,
                                      " where the runtime stage (line ", a.line, ") has ",
                                      a.keyword, " ", a.args));
    }
  }
  return problems;
}

// Dockerfile.prebuilt is the runtime stage of deploy/Dockerfile with the host's binaries: the
// image that deploy/image-test builds and runs is the image users build, but for the compile.
TEST_F(DeployDockerfile, ThePrebuiltImageIsTheRuntimeStage) {
  const std::vector<Instruction> instructions =
      ParseDockerfile(ReadFile(kDeploy / "Dockerfile.prebuilt"));
  const std::vector<Stage> prebuilt = StagesOf(instructions);
  ASSERT_EQ(prebuilt.size(), 1u) << "deploy/Dockerfile.prebuilt: one stage";
  EXPECT_EQ(GlobalArgs(instructions), GlobalArgs(instructions_));
  for (const std::string& problem : PrebuiltDifferences(stages_.back(), prebuilt[0])) {
    ADD_FAILURE() << "deploy/Dockerfile.prebuilt: " << problem;
  }
  // The comparison does tell: one more package, or binaries from elsewhere, are differences.
  Stage more = prebuilt[0];
  for (Instruction& instruction : more.instructions) {
    if (instruction.keyword == "RUN" && absl::StrContains(instruction.args, "apt-get install")) {
      instruction.args += " curl";
    }
  }
  EXPECT_EQ(PrebuiltDifferences(stages_.back(), more).size(), 1u);
  Stage elsewhere = prebuilt[0];
  for (Instruction& instruction : elsewhere.instructions) {
    if (absl::StartsWith(instruction.args, "bin/ ")) instruction.args = "out/ /usr/local/bin/";
  }
  EXPECT_EQ(PrebuiltDifferences(stages_.back(), elsewhere).size(), 1u);
}

// The images of the local stack (deploy/compose/local): Debian 12 by default, packages that
// Debian has, files that are in their context (the directory itself).
TEST_F(DeployDockerfile, TheLocalStackImagesAreDebian12) {
  const fs::path local = kDeploy / "compose" / "local";
  const std::vector<fs::path> dockerfiles = FilesUnder(local, [](const fs::path& p) {
    return HasExtension(p, {".Dockerfile"});
  });
  EXPECT_EQ(dockerfiles.size(), 2u) << "postgres and prometheus";
  std::vector<std::string> packages;
  for (const fs::path& dockerfile : dockerfiles) {
    const std::vector<Instruction> instructions = ParseDockerfile(ReadFile(dockerfile));
    const std::vector<Stage> stages = StagesOf(instructions);
    ASSERT_EQ(stages.size(), 1u) << Rel(dockerfile);
    EXPECT_EQ(stages[0].image, "debian:12") << Rel(dockerfile);
    for (const Instruction& instruction : instructions) {
      EXPECT_TRUE(kDockerfileInstructions.contains(instruction.keyword))
          << Rel(dockerfile) << ":" << instruction.line << ": " << instruction.keyword;
      if (instruction.keyword != "COPY") continue;
      const std::optional<CopySources> copy = ContextCopy(instruction);
      ASSERT_TRUE(copy) << Rel(dockerfile) << ":" << instruction.line;
      for (const std::string& source : copy->sources) {
        EXPECT_TRUE(fs::exists(local / source))
            << Rel(dockerfile) << ":" << instruction.line << ": COPY " << source;
      }
    }
    const std::vector<std::string> mine = AptPackages(stages[0]);
    EXPECT_FALSE(mine.empty()) << Rel(dockerfile);
    packages.insert(packages.end(), mine.begin(), mine.end());
  }
  const std::set<std::string> known = KnownPackages(packages);
  for (const std::string& package : packages) {
    EXPECT_TRUE(known.contains(package)) << package << " is not in this machine's Debian index";
  }
  // compose.yaml here runs the images these files make, under the names deploy/image-test gives.
  const std::string compose = ReadFile(LocalComposeFile());
  for (const char* image : {"dbload-postgres:local", "dbload-prometheus:local", "dbload:local"}) {
    EXPECT_TRUE(absl::StrContains(compose, image)) << image;
    EXPECT_TRUE(absl::StrContains(ReadFile(kDeploy / "image-test"), image)) << image;
  }
}

}  // namespace
}  // namespace dbload
