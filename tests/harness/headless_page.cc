#include "tests/harness/headless_page.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/harness/child_process.h"
#include "tests/harness/test_servers.h"

namespace dbload::testing {

RenderedPage RenderInChromium(const std::string& file, const std::string& profile_dir) {
  const std::string net_log = profile_dir + ".netlog.json";
  const ProcessResult chromium = RunProcess(
      {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
       "--disable-background-networking", "--disable-component-update", "--disable-sync",
       "--host-resolver-rules=MAP * ~NOTFOUND", absl::StrCat("--user-data-dir=", profile_dir),
       absl::StrCat("--log-net-log=", net_log), "--dump-dom", absl::StrCat("file://", file)},
      std::chrono::seconds(60));
  EXPECT_EQ(chromium.exit_code, 0) << chromium.Describe();
  RenderedPage page{.dom = chromium.out, .requests = {}};
  absl::StatusOr<std::string> log = ReadFile(net_log);
  EXPECT_TRUE(log.ok()) << log.status();
  // Requests on behalf of the page carry its origin (file://) as their isolation key.
  static const std::regex kUrl(R"re("url":"([^"]*)")re");
  for (absl::string_view line : absl::StrSplit(log.ok() ? *log : "", '\n')) {
    if (line.find("\"network_isolation_key\":\"file://") == absl::string_view::npos) continue;
    std::cmatch url;
    if (std::regex_search(line.begin(), line.end(), url, kUrl) &&
        !absl::StartsWith(url[1].str(), "file:")) {
      page.requests.push_back(url[1]);
    }
  }
  return page;
}

bool ChartsRendered(const std::string& dom) {
  const size_t status = dom.find("<div id=\"js-status\"");
  return status != std::string::npos &&
         dom.substr(status, dom.find("</div>", status) + 6 - status) ==
             "<div id=\"js-status\" data-rendered=\"yes\"></div>";
}

std::string ChartSection(const std::string& dom, const std::string& chart) {
  const size_t start = dom.find(absl::StrCat("data-chart=\"", chart, "\""));
  if (start == std::string::npos) return "";
  size_t end = dom.find("data-chart=\"", start + 1);
  if (end == std::string::npos) end = dom.find("<script", start);
  return dom.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::map<std::string, size_t> Polylines(const std::string& section) {
  std::map<std::string, size_t> lines;
  static const std::regex kPolyline(R"re(<polyline points="([^"]*)"[^>]*?data-series="([^"]*)")re");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), kPolyline);
       it != std::sregex_iterator(); ++it) {
    const std::string points = (*it)[1];
    lines[(*it)[2]] = points.empty() ? 0 : CountOf(points, " ") + 1;
  }
  return lines;
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace dbload::testing
