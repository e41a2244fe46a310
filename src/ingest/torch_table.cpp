// torch.profiler `key_averages().table()` text: a fixed-width table between dashed rules with times that
// carry their own unit ("11.392ms", "45.000us"). One record per operator that ran on the GPU (Self CUDA > 0);
// operators with no GPU time are CPU-side work and are counted in a note.
#include <fmt/format.h>

#include "internal.hpp"

namespace ridge::ingest::detail {

void parse_torch_table(const Source& s, Profile& out) {
  const size_t first = out.kernels.size();
  for (size_t i = 0; i + 1 < s.lines.size(); ++i) {
    if (!is_dash_rule(s.lines[i]) || !contains(s.lines[i + 1], "Self CPU")) continue;
    auto spans = dash_spans(s.lines[i]);
    TableRows t;
    for (const auto& title : fixed_cells(s.lines[i + 1], spans)) {
      t.titles.push_back(title);
      t.units.push_back(contains(title, "%") ? "%" : "");
    }
    size_t j = i + 2;
    if (j < s.lines.size() && is_dash_rule(s.lines[j])) ++j;
    int cpu_only = 0;
    int self_gpu = -1;
    for (size_t c = 0; c < t.titles.size(); ++c)
      if ((t.titles[c] == "Self CUDA" || t.titles[c] == "Self Device") && t.units[c].empty()) self_gpu = static_cast<int>(c);
    for (; j < s.lines.size() && !is_dash_rule(s.lines[j]) && !trim(s.lines[j]).empty(); ++j) {
      auto row = fixed_cells(s.lines[j], spans);
      if (self_gpu >= 0) {
        auto v = parse_with_unit(row[self_gpu], s.locale);
        if (v && v->real == 0) {
          ++cpu_only;
          continue;
        }
      }
      t.rows.push_back(std::move(row));
      t.row_lines.push_back(static_cast<int>(j + 1));
    }
    if (self_gpu < 0) warn(out, s, static_cast<int>(i + 2), "torch.profiler table without a Self CUDA column (CPU-only profile)");
    else records_from_table(t, s, out, true);
    if (cpu_only > 0) out.notes.push_back(fmt::format("{}: {} operators with no GPU time (CPU-side) not listed", s.file, cpu_only));
    i = j;
  }
  if (out.kernels.size() == first) warn(out, s, 0, "torch.profiler: no operator with GPU time found");
}

}  // namespace ridge::ingest::detail
