#ifndef DBLOAD_TESTS_HARNESS_HEADLESS_PAGE_H_
#define DBLOAD_TESTS_HARNESS_HEADLESS_PAGE_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace dbload::testing {

// Debian's chromium package (scripts/setup installs it).
inline constexpr char kChromium[] = "/usr/bin/chromium";

// A page as headless Chromium rendered it: the DOM after its scripts ran, and every URL other
// than file: the page asked for (from Chromium's net log; the tests' pages must ask for none).
struct RenderedPage {
  std::string dom;
  std::vector<std::string> requests;
};

// Opens `file` in headless Chromium with a fresh profile at `profile_dir`, host resolution
// disabled and background networking off, so that whatever it requests is the page's own doing.
// A failure to run Chromium or to read its net log is a test failure.
RenderedPage RenderInChromium(const std::string& file, const std::string& profile_dir);

// The report pages' chart script leaves <div id="js-status" data-rendered="yes"></div> when it
// drew every chart without an error; an error leaves its message there instead.
bool ChartsRendered(const std::string& dom);

// The part of a DOM that belongs to one chart container (data-chart="NAME", up to the next one).
std::string ChartSection(const std::string& dom, const std::string& chart);

// Each plotted line of a section: its series name (data-series) and its number of points.
std::map<std::string, size_t> Polylines(const std::string& section);

size_t CountOf(const std::string& text, const std::string& needle);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_HEADLESS_PAGE_H_
