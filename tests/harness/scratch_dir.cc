#include "tests/harness/scratch_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace dbload::testing {

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + ".XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
    return;
  }
  path_ = buffer.data();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::Write(const std::string& name, const std::string& content) const {
  const std::string path = path_ + "/" + name;
  std::error_code made;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), made);
  EXPECT_FALSE(made) << "cannot make the directories of " << path << ": " << made.message();
  std::ofstream out(path, std::ios::trunc);
  out << content;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

}  // namespace dbload::testing
