#ifndef DBLOAD_SUITE_SUITE_DOCUMENT_H_
#define DBLOAD_SUITE_SUITE_DOCUMENT_H_

// The suite report's content, once, as plain text cells and lines: the headlines, the machine
// and servers, how the suite ran, the sweep, cases, summary, counters and runs tables. The
// three renderers of suite_report.cc lay the same document out as text, Markdown or HTML.

#include <string>
#include <utility>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"
#include "suite/suite_comparison.h"
#include "suite/suite_table.h"

namespace dbload::suite_report {

// The tables, as rows of cells (plain text), shared by the three renderers.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  // Per column: the cells are dbload's own figures and words (no user-written name), which
  // Markdown shows as they are: "1,050 [1,000–1,100]", "8.00 ms*". Every other cell is escaped.
  std::vector<bool> generated;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_css;  // per row, HTML only ("" or a class)
};

// Everything a renderer draws, in order.
struct SuiteDocument {
  std::string name;
  std::vector<Headline> headlines;
  std::vector<std::string> ramp_headlines;
  std::vector<std::pair<std::string, std::string>> machine;
  std::vector<std::string> how, case_lines;
  struct Sweep {
    const CaseView* c;
    Table table;
    std::vector<std::string> ratios, notes;
    bool few_samples = false;
  };
  std::vector<Sweep> sweeps;
  std::vector<const CaseView*> plain;
  Table cases;
  std::vector<std::string> case_notes;
  bool cases_few_samples = false;
  Table summary;
  bool compare = false;  // two targets or more
  Table counters;
  bool counters_few = false;
  Table runs;
};

SuiteDocument Document(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                       const SuiteTable& t, const std::vector<CaseView>& cases);

}  // namespace dbload::suite_report

#endif  // DBLOAD_SUITE_SUITE_DOCUMENT_H_
