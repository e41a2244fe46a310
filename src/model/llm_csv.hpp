// CSV cells of measured profiles (Vidur's all_reduce.csv and mlp.csv), shared by the all-reduce and the LLM
// operator calibrations. Defined in allreduce_fit.cpp.
#pragma once
#include <string>
#include <vector>

namespace ridge::model_detail {

/// The comma-separated cells of one line (a trailing comma gives a last empty cell; no quoting in these files).
std::vector<std::string> split_csv_line(const std::string& line);
/// The number in `text`; throws ridge::Error "WHERE: 'TEXT' is not a number" for anything else.
double csv_number(const std::string& text, const std::string& where);

}  // namespace ridge::model_detail
