// torch.profiler `key_averages().table()` text: a fixed-width table between dashed rules with times that
// carry their own unit ("11.392ms", "45.000us").
//
// Since kineto (torch 1.8+) the table lists GPU kernels, memcpys and memsets as rows of their own beside the
// operators, and an operator's Self CUDA is the time of the kernels it launched — the same time again. A kernel
// row has no CPU time (Self CPU and CPU total 0) and Self CUDA == CUDA total; operator rows (aten::mm,
// autograd::engine::evaluate_function: ..., runtime rows such as "Activity Buffer Request") have CPU time. A
// record_function range appears twice: its CPU-side row (CPU time) and its GPU-side copy (no CPU time, the
// range's span on the GPU as Self CUDA, e.g. "resnet50_train_bs64 ... 172.04%"), told apart from kernels by the
// name they share. So when the table has kernel rows only they are records (one per kernel signature, `# of Calls`
// launches), and the sum of their Self CUDA is the table's "Self CUDA time total". Tables without kernel rows (only
// operators with Self CUDA) keep one record per operator with GPU time. Rows with no GPU time are CPU-side work.
#include <fmt/format.h>

#include <set>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

int column(const TableRows& t, std::string_view a, std::string_view b = {}) {
  for (size_t c = 0; c < t.titles.size(); ++c)
    if (t.units[c].empty() && (t.titles[c] == a || (!b.empty() && t.titles[c] == b))) return static_cast<int>(c);
  return -1;
}

// kineto names its copies and sets "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoD (Device -> Device)",
// "Memset (Device)".
bool kineto_memop(std::string_view name) { return starts_with(name, "Memcpy ") || starts_with(name, "Memset "); }

}  // namespace

void parse_torch_table(const Source& s, Profile& out) {
  const size_t first = out.kernels.size();
  for (size_t i = 0; i + 1 < s.lines.size(); ++i) {
    if (!is_dash_rule(s.lines[i]) || !contains(s.lines[i + 1], "Self CPU")) continue;
    auto spans = dash_spans(s.lines[i]);
    TableRows all;
    for (const auto& title : fixed_cells(s.lines[i + 1], spans)) {
      all.titles.push_back(title);
      all.units.push_back(contains(title, "%") ? "%" : "");
    }
    size_t j = i + 2;
    if (j < s.lines.size() && is_dash_rule(s.lines[j])) ++j;
    const int name = column(all, "Name");
    const int self_gpu = column(all, "Self CUDA", "Self Device");
    const int self_cpu = column(all, "Self CPU");
    const int cpu_total = column(all, "CPU total");
    for (; j < s.lines.size() && !is_dash_rule(s.lines[j]) && !trim(s.lines[j]).empty(); ++j) {
      all.rows.push_back(fixed_cells(s.lines[j], spans));
      all.row_lines.push_back(static_cast<int>(j + 1));
    }
    auto time_of = [&](const std::vector<std::string>& row, int c) -> std::optional<double> {
      if (c < 0 || c >= static_cast<int>(row.size())) return std::nullopt;
      auto v = parse_with_unit(row[c], s.locale);
      return v ? std::optional<double>(v->real) : std::nullopt;
    };
    auto cell = [&](const std::vector<std::string>& row, int c) {
      return c >= 0 && c < static_cast<int>(row.size()) ? row[c] : std::string();
    };
    // Names of rows that spent CPU time: operators, runtime calls and the CPU side of record_function ranges.
    std::set<std::string> cpu_names;
    auto has_cpu = [&](const std::vector<std::string>& row) {
      return time_of(row, self_cpu).value_or(0) > 0 || time_of(row, cpu_total).value_or(0) > 0;
    };
    for (const auto& row : all.rows)
      if (has_cpu(row)) cpu_names.insert(cell(row, name));
    enum class Kind { CpuOnly, Operator, Range, Kernel };
    std::vector<Kind> kinds;
    int kernels = 0;
    for (const auto& row : all.rows) {
      const auto gpu = time_of(row, self_gpu);
      Kind k = gpu && *gpu == 0 ? Kind::CpuOnly
               : has_cpu(row)   ? Kind::Operator
               : cpu_names.count(cell(row, name)) ? Kind::Range
                                                   : Kind::Kernel;
      kernels += k == Kind::Kernel;
      kinds.push_back(k);
    }
    // With kernel rows, operators repeat their kernels' time: only kernels count. Without (operator-only tables),
    // each operator with GPU time is a record.
    TableRows t{all.titles, all.units, {}, {}};
    int cpu_only = 0, operators = 0;
    std::vector<std::string> ranges;
    for (size_t r = 0; r < all.rows.size(); ++r) {
      switch (kinds[r]) {
        case Kind::CpuOnly: ++cpu_only; continue;
        case Kind::Range: ranges.push_back(cell(all.rows[r], name)); continue;
        case Kind::Operator:
          if (kernels > 0) {
            ++operators;
            continue;
          }
          break;
        case Kind::Kernel: break;
      }
      t.rows.push_back(all.rows[r]);
      t.row_lines.push_back(all.row_lines[r]);
    }
    const size_t before = out.kernels.size();
    if (self_gpu < 0) warn(out, s, static_cast<int>(i + 2), "torch.profiler table without a Self CUDA column (CPU-only profile)");
    else records_from_table(t, s, out, true);
    for (size_t k = before; k < out.kernels.size(); ++k) out.kernels[k].memop |= kineto_memop(out.kernels[k].name);
    if (cpu_only > 0) out.notes.push_back(fmt::format("{}: {} operators with no GPU time (CPU-side) not listed", s.file, cpu_only));
    if (operators > 0)
      out.notes.push_back(fmt::format(
          "{}: {} kernel, memcpy and memset rows (no CPU time) are the records; {} operator rows with CPU time whose "
          "Self CUDA repeats the time of the kernels they launched are not counted", s.file, kernels, operators));
    if (!ranges.empty()) {
      std::string list;
      for (size_t r = 0; r < ranges.size() && r < 4; ++r) list += (r ? ", " : "") + ranges[r];
      out.notes.push_back(fmt::format("{}: {} GPU-side rows of record_function ranges not counted (their span on the "
                                      "GPU, not work: {}{})", s.file, ranges.size(), list, ranges.size() > 4 ? ", ..." : ""));
    }
    i = j;
  }
  if (out.kernels.size() == first) warn(out, s, 0, "torch.profiler: no operator with GPU time found");
}

}  // namespace ridge::ingest::detail
