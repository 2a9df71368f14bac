#ifndef DBLOAD_YAML_YAML_EXPANSION_H_
#define DBLOAD_YAML_YAML_EXPANSION_H_

// How big a YAML document is once its aliases are expanded, measured on the parser's events
// before any node is built. yaml-cpp 0.7 keeps an alias as a shared node, so loading is cheap;
// the blow-up comes when the tree is walked and copied into a proto, once per use of each
// alias ("billion laughs": one 1 MB statement used 10,000 times took 6 GB). Anchors precede
// their aliases, so one pass knows each anchor's expanded size when an alias names it. For the
// .cc files of targets that link yaml-cpp privately; no public header includes this.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace dbload {

class YamlExpansionCounter : public YAML::EventHandler {
 public:
  // Thrown where the count passes the limit (caught by CheckYamlExpansion).
  struct TooLarge {
    YAML::Mark mark;
    bool alias = false;
  };

  explicit YamlExpansionCounter(size_t max_bytes) : max_bytes_(max_bytes) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(mark, 1, false);
    Anchor(anchor, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchor_bytes_.find(anchor);
    Add(mark, it == anchor_bytes_.end() ? 1 : it->second, true);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    // A node costs its text and at least a byte, so that empty values count too.
    Add(mark, value.size() + 1, false);
    Anchor(anchor, value.size() + 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

  uint64_t bytes() const { return bytes_; }

 private:
  void Add(const YAML::Mark& mark, uint64_t bytes, bool alias) {
    bytes_ += bytes;
    if (bytes_ > max_bytes_) throw TooLarge{mark, alias};
  }
  void Anchor(YAML::anchor_t anchor, uint64_t bytes) {
    if (anchor != YAML::NullAnchor) anchor_bytes_[anchor] = bytes;
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Add(mark, 1, false);
    open_.push_back({anchor, bytes_ - 1});
  }
  void Close() {
    if (open_.empty()) return;
    const auto [anchor, start] = open_.back();
    open_.pop_back();
    Anchor(anchor, bytes_ - start);
  }

  const uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  std::vector<std::pair<YAML::anchor_t, uint64_t>> open_;  // anchor, bytes_ at its start
  std::unordered_map<YAML::anchor_t, uint64_t> anchor_bytes_;
};

// An error at the place where `yaml_text`, its aliases expanded, passes `max_bytes`:
// "w.yaml:9:14: the file expands to more than 16777216 bytes at this alias (each use of an
// alias counts its anchor's text again), the most dbload reads from one file; …". yaml-cpp's own
// syntax errors are left to the caller (thrown as YAML::ParserException), which reports them.
inline absl::Status CheckYamlExpansion(const std::string& yaml_text, absl::string_view source,
                                       size_t max_bytes) {
  std::istringstream input(yaml_text);
  YAML::Parser parser(input);
  YamlExpansionCounter counter(max_bytes);
  try {
    // The first document only, the one YAML::Load reads. Looping to the end is not safe either:
    // on a stray "," yaml-cpp 0.7 reports a next document forever (the fuzzer found it).
    parser.HandleNextDocument(counter);
  } catch (const YamlExpansionCounter::TooLarge& too_large) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":", too_large.mark.line + 1, ":", too_large.mark.column + 1,
        ": the file expands to more than ", max_bytes, " bytes",
        too_large.alias ? " at this alias (each use of an alias counts its anchor's text again)"
                        : "",
        ", the most dbload reads from one file; use fewer or smaller copies"));
  }
  return absl::OkStatus();
}

}  // namespace dbload

#endif  // DBLOAD_YAML_YAML_EXPANSION_H_
