// A synthetic report (N layers with made-up but plausible numbers) for the HTML and browser tests.
#pragma once
#include <string>
#include <vector>

#include "ridge/chart.hpp"

namespace ridge::test {

/// Section ids the synthetic report has, in order.
std::vector<std::string> synthetic_section_ids();
/// A report with `layers` layers: summary fields, a sortable layer table, roofline (two devices), sweep,
/// share bars, estimated-vs-measured scatter, a prediction table and notes.
chart::ReportData synthetic_report(int layers);

}  // namespace ridge::test
