#ifndef DBLOAD_TESTS_HARNESS_SCRATCH_DIR_H_
#define DBLOAD_TESTS_HARNESS_SCRATCH_DIR_H_

#include <string>

namespace dbload::testing {

// A test's own temporary directory (/tmp/PREFIX.XXXXXX) for plans, workloads and reports,
// removed with everything in it when this goes. A directory that cannot be made is a test
// failure.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` to PATH/NAME (replacing it; NAME may name subdirectories, which are made)
  // and returns that path.
  std::string Write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_SCRATCH_DIR_H_
