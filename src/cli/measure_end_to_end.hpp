// ridge measure --end-to-end: the end-to-end program's block and fusion-group table.
#pragma once
#include "ridge/measure.hpp"
#include "ridge/report.hpp"

namespace ridge::cli {

/// Appends the end-to-end summary and the fusion groups of `m` (when measured) to `doc`.
void add_end_to_end(report::Document& doc, const ModelMeasurement& m);

}  // namespace ridge::cli
