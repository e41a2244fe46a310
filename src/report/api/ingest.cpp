// Profiler outputs read, summed and grouped, and compared with ridge's estimate (`ridge ingest`).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ridge/api.hpp"
#include "ridge/error.hpp"

namespace ridge::report {
namespace {

constexpr size_t kWarningsShown = 20;
constexpr size_t kDefaultTopKernels = 25;

Cell count_or_empty(const std::optional<Count>& v, Unit u) { return v ? Cell::count(*v, u) : Cell::empty(u); }
Cell real_or_empty(const std::optional<double>& v, Unit u) { return v ? Cell::real(*v, u) : Cell::empty(u); }

std::optional<double> ratio(const std::optional<Count>& a, const std::optional<Count>& b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return to_double(*a) / to_double(*b);
}
std::optional<double> per_second(const std::optional<Count>& a, const std::optional<double>& t) {
  if (!a || !t || *t <= 0) return std::nullopt;
  return to_double(*a) / *t;
}

Fields totals_fields(const ingest::Profile& p, const ingest::Totals& t) {
  const auto flops = t.sum.flops();
  Fields f{"totals", "Totals", {}};
  f.add("kernels", "kernel launches", Cell::count(t.kernels), true);
  f.add("memops", "memcpy/memset operations", Cell::count(t.memops), true);
  f.add("flops", "FLOPs (all precisions)", count_or_empty(flops, Unit::Flop), true);
  f.add("flops_fp64", "FLOPs fp64", count_or_empty(t.sum.flops_fp64, Unit::Flop), true);
  f.add("flops_fp32", "FLOPs fp32", count_or_empty(t.sum.flops_fp32, Unit::Flop), true);
  f.add("flops_fp16", "FLOPs fp16", count_or_empty(t.sum.flops_fp16, Unit::Flop), true);
  f.add("flops_tensor", "FLOPs tensor cores", count_or_empty(t.sum.flops_tensor, Unit::Flop), true);
  f.add("dram_bytes", "DRAM bytes", count_or_empty(t.sum.dram_bytes, Unit::Byte), true);
  f.add("l2_bytes", "L2 bytes", count_or_empty(t.sum.l2_bytes, Unit::Byte), true);
  f.add("l1_bytes", "L1 bytes", count_or_empty(t.sum.l1_bytes, Unit::Byte), true);
  f.add("time_s", "GPU time (kernels + memops)", real_or_empty(t.sum.time_s, Unit::Second));
  f.add("kernel_time_s", "kernel time", real_or_empty(t.kernel_time_s, Unit::Second));
  f.add("flop_per_byte", "arithmetic intensity (DRAM)", real_or_empty(ratio(flops, t.sum.dram_bytes), Unit::FlopPerByte));
  f.add("flop_per_s", "achieved FLOP/s", real_or_empty(per_second(flops, t.kernel_time_s), Unit::FlopPerSecond));
  f.add("dram_bytes_per_s", "achieved DRAM bytes/s",
        real_or_empty(per_second(t.sum.dram_bytes, t.kernel_time_s), Unit::BytePerSecond));
  f.add("architecture", "architecture", Cell::text(p.architecture.empty() ? "unknown" : p.architecture));
  f.add("tensor_flops_per_inst", "FLOPs per tensor-pipe instruction",
        t.sum.flops_tensor ? Cell::count(p.tensor_flops_per_inst) : Cell::empty(Unit::Count));
  return f;
}

// Raw counters by exact metric name: a table for people, an object under totals.counters in JSON (metric names
// contain dots, so they cannot be dotted Fields keys).
void add_counters(Document& doc, const ingest::Totals& t) {
  Table c{"counters", "Raw counters (summed, base units)", {}, {}, {}};
  c.columns = {{"metric", "metric", Unit::None}, {"unit", "unit", Unit::None}, {"total", "total", Unit::None, true}};
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& [name, v] : t.counters) {
    Cell cell = v.exact ? Cell::count(*v.exact) : Cell::real(v.real);
    c.add_row({Cell::text(name), Cell::text(v.unit), cell});
    counters[name] = to_json(cell);
  }
  doc.extra["totals"]["counters"] = counters;
  if (!c.rows.empty()) doc.blocks.push_back(std::move(c));
  if (!t.not_summed.empty()) {
    std::string list;
    for (size_t i = 0; i < t.not_summed.size() && i < 6; ++i) list += (i ? ", " : "") + t.not_summed[i];
    doc.notes.push_back(fmt::format("{} rate/ratio/percentage metrics are per kernel only, never summed ({}{})",
                                    t.not_summed.size(), list, t.not_summed.size() > 6 ? ", ..." : ""));
  }
}

Table kernels_table(const ingest::Profile& p, size_t top, bool full) {
  Table t{"kernels", "Kernels", {}, {}, {}};
  t.columns = {{"launch_id", "ID", Unit::None},
               {"name", "kernel", Unit::None},
               {"family", "family", Unit::None},
               {"invocations", "launches", Unit::Count},
               {"time_s", "time", Unit::Second},
               {"flops", "FLOPs", Unit::Flop},
               {"dram_bytes", "DRAM", Unit::Byte},
               {"flop_per_byte", "FLOP/B", Unit::FlopPerByte}};
  if (full) {
    for (Column c : std::vector<Column>{
             {"flops_fp64", "fp64", Unit::Flop}, {"flops_fp32", "fp32", Unit::Flop},
             {"flops_fp16", "fp16", Unit::Flop}, {"flops_tensor", "tensor", Unit::Flop},
             {"l2_bytes", "L2", Unit::Byte}, {"l1_bytes", "L1", Unit::Byte}, {"nvtx", "NVTX", Unit::None},
             {"pid", "pid", Unit::None}, {"process", "process", Unit::None}, {"device", "device", Unit::None},
             {"label", "label", Unit::None}, {"file", "file", Unit::None}, {"line", "line", Unit::None},
             {"run", "run", Unit::None}, {"torch_op", "operator", Unit::None}})
      t.columns.push_back(c);
  }
  std::vector<size_t> order(p.kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (top > 0 && top < order.size()) {
    auto weight = [&](size_t i) {
      const auto& d = p.kernels[i].derived;
      return d.time_s ? *d.time_s : to_double(d.flops().value_or(0));
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
    order.resize(top);
  }
  for (size_t i : order) {
    const auto& k = p.kernels[i];
    const auto& d = k.derived;
    std::string name = full || k.name.size() <= 70 ? k.name : k.name.substr(0, 67) + "...";
    std::vector<Cell> row = {k.launch_id >= 0 ? Cell::count(k.launch_id, Unit::None) : Cell::empty(),
                             Cell::text(name),
                             Cell::text(std::string(ingest::kernel_family(k.name, k.memop))),
                             Cell::count(k.invocations),
                             real_or_empty(d.time_s, Unit::Second),
                             count_or_empty(d.flops(), Unit::Flop),
                             count_or_empty(d.dram_bytes, Unit::Byte),
                             real_or_empty(ratio(d.flops(), d.dram_bytes), Unit::FlopPerByte)};
    if (full) {
      for (const auto* q : {&d.flops_fp64, &d.flops_fp32, &d.flops_fp16, &d.flops_tensor})
        row.push_back(count_or_empty(*q, Unit::Flop));
      row.push_back(count_or_empty(d.l2_bytes, Unit::Byte));
      row.push_back(count_or_empty(d.l1_bytes, Unit::Byte));
      row.push_back(Cell::text(k.nvtx));
      row.push_back(k.pid >= 0 ? Cell::count(k.pid, Unit::None) : Cell::empty());
      for (const std::string* s : {&k.process, &k.device, &k.label, &k.file}) row.push_back(Cell::text(*s));
      row.push_back(Cell::count(k.line, Unit::None));
      row.push_back(Cell::count(static_cast<Count>(k.run + 1), Unit::None));
      row.push_back(Cell::text(k.op));
    }
    t.add_row(std::move(row));
  }
  return t;
}

Table groups_table(const ingest::Profile& p, ingest::GroupBy by, const std::string& by_name,
                           const ingest::Totals& all) {
  Table t{"groups", "By " + by_name, {}, {}, {}};
  t.columns = {{"group", by_name, Unit::None},     {"launches", "launches", Unit::Count},
               {"time_s", "time", Unit::Second},    {"time_percent", "time %", Unit::Percent},
               {"flops", "FLOPs", Unit::Flop},      {"dram_bytes", "DRAM", Unit::Byte},
               {"flop_per_byte", "FLOP/B", Unit::FlopPerByte}};
  auto groups = ingest::group(p, by);
  std::vector<ingest::Totals> sums;
  for (const auto& g : groups) sums.push_back(ingest::totals(p, g.members));
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto weight = [&](size_t i) {
    return sums[i].sum.time_s ? *sums[i].sum.time_s : to_double(sums[i].sum.flops().value_or(0));
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return weight(x) > weight(y); });
  for (size_t i : order) {
    const auto& g = groups[i];
    const ingest::Totals& s = sums[i];
    std::optional<double> share;
    if (s.sum.time_s && all.sum.time_s && *all.sum.time_s > 0) share = 100 * *s.sum.time_s / *all.sum.time_s;
    t.add_row({Cell::text(g.key), Cell::count(s.kernels + s.memops), real_or_empty(s.sum.time_s, Unit::Second),
               real_or_empty(share, Unit::Percent), count_or_empty(s.sum.flops(), Unit::Flop),
               count_or_empty(s.sum.dram_bytes, Unit::Byte),
               real_or_empty(ratio(s.sum.flops(), s.sum.dram_bytes), Unit::FlopPerByte)});
  }
  return t;
}

// One row per run (a file, or one of several runs in a file) with its label, and least-squares lines of FLOPs,
// DRAM bytes and time against the number in each run's label.
void add_runs(Document& doc, const ingest::Profile& p) {
  const bool labelled = std::any_of(p.runs.begin(), p.runs.end(), [](const auto& r) { return !r.label.empty(); });
  if (p.runs.size() < 2 && !labelled) return;
  Table t{"runs", "Runs", {}, {}, {}};
  t.columns = {{"run", "run", Unit::None},          {"label", "label", Unit::None},
               {"x", "x", Unit::None},              {"file", "file", Unit::None},
               {"line", "line", Unit::None},        {"kernels", "launches", Unit::Count},
               {"flops", "FLOPs", Unit::Flop},      {"dram_bytes", "DRAM", Unit::Byte},
               {"time_s", "time", Unit::Second},    {"boundary", "starts at", Unit::None}};
  std::vector<double> xf, yf, xd, yd, xt, yt;
  for (size_t r = 0; r < p.runs.size(); ++r) {
    const ingest::Run& run = p.runs[r];
    ingest::Totals s = ingest::totals(p, ingest::run_records(p, r));
    auto x = ingest::label_number(run.label);
    t.add_row({Cell::count(static_cast<Count>(r + 1), Unit::None), Cell::text(run.label), real_or_empty(x, Unit::None),
               Cell::text(run.file), Cell::count(run.line, Unit::None), Cell::count(s.kernels),
               count_or_empty(s.sum.flops(), Unit::Flop), count_or_empty(s.sum.dram_bytes, Unit::Byte),
               real_or_empty(s.sum.time_s, Unit::Second), Cell::text(run.boundary.empty() ? "start of file" : run.boundary)});
    if (!x) continue;
    if (auto f = s.sum.flops()) xf.push_back(*x), yf.push_back(to_double(*f));
    if (s.sum.dram_bytes) xd.push_back(*x), yd.push_back(to_double(*s.sum.dram_bytes));
    if (s.sum.time_s) xt.push_back(*x), yt.push_back(*s.sum.time_s);
  }
  doc.blocks.push_back(std::move(t));
  if (!labelled) return;
  Fields fit{"fit", "Least-squares lines against the label's number (y = slope * x + intercept)", {}};
  auto add_fit = [&](const char* key, const char* what, const std::vector<double>& x, const std::vector<double>& y,
                     Unit u) {
    auto l = ingest::fit_line(x, y);
    if (!l) return;
    fit.add(std::string(key) + "_slope", std::string(what) + " per unit of x", Cell::real(l->slope, u));
    double scale = 0;
    for (double v : y) scale = std::max(scale, std::fabs(v));
    fit.add(std::string(key) + "_intercept", std::string(what) + " at x = 0",
            Cell::real(zero_if_noise(l->intercept, scale), u));
    fit.add(std::string(key) + "_r2", std::string(what) + " fit r^2", Cell::real(l->r2, Unit::None));
  };
  add_fit("flops", "FLOPs", xf, yf, Unit::Flop);
  add_fit("dram_bytes", "DRAM bytes", xd, yd, Unit::Byte);
  add_fit("time_s", "time", xt, yt, Unit::Second);
  if (!fit.items.empty()) doc.blocks.push_back(std::move(fit));
  else doc.notes.push_back("no line fitted: labels need numbers (bs=10) on at least two distinct values");
}

void add_comparison(Document& doc, const ingest::Profile& p, const ingest::Totals& t, const IngestRequest& a) {
  LoadOptions lo;
  lo.batch = a.batch;
  lo.training = a.train;
  Graph g = load_model(a.model, lo);
  ModelCost mc = estimate(g);
  ingest::Expected e;
  e.description = fmt::format("{}, batch {}, {}, {} step{}", a.model, a.batch, a.train ? "training" : "inference",
                              a.steps, a.steps == 1 ? "" : "s");
  e.flops = (mc.total.flops + (a.train ? mc.total.bwd_flops() : 0)) * a.steps;
  e.bytes = mc.total.bytes() * a.steps;
  e.bytes_forward_only = a.train;
  Table c{"compare", "Measured vs ridge estimate (" + e.description + ")", {}, {}, {}};
  c.columns = {{"quantity", "quantity", Unit::None}, {"measured", "measured", Unit::None},
               {"estimated", "estimated", Unit::None}, {"ratio", "measured/estimated", Unit::Ratio}};
  auto ex = ingest::explain(p, t, e);
  c.add_row({Cell::text("flops"), count_or_empty(t.sum.flops(), Unit::Flop), Cell::count(e.flops, Unit::Flop),
             real_or_empty(ex[0].ratio, Unit::Ratio)});
  c.add_row({Cell::text("bytes"), count_or_empty(t.sum.dram_bytes, Unit::Byte), Cell::count(e.bytes, Unit::Byte),
             real_or_empty(ex[1].ratio, Unit::Ratio)});
  doc.blocks.push_back(std::move(c));
  nlohmann::json why = nlohmann::json::object();
  for (const auto& x : ex) {
    why[x.quantity] = x.reasons;
    for (const auto& r : x.reasons) doc.notes.push_back(x.quantity + ": " + r);
  }
  doc.extra["explanations"] = why;
  if (!mc.complete())
    doc.notes.push_back(fmt::format("the estimate leaves out {} op type(s) ridge cannot cost", mc.excluded_ops.size()));
  if (a.train) doc.notes.push_back("estimated bytes: forward pass compulsory traffic only");
}

}  // namespace

ingest::Profile ingest_profile(const IngestRequest& a) {
  ingest::ReadOptions base;
  if (!a.input_format.empty()) {
    base.format = ingest::parse_format(a.input_format);
    if (!base.format) {
      std::string names;
      for (auto f : ingest::all_formats()) names += (names.empty() ? "" : ", ") + std::string(ingest::format_name(f));
      throw UsageError(fmt::format("--input-format: unknown format '{}' (choose one of: {})", a.input_format, names));
    }
  }
  std::vector<ingest::Profile> parts;
  for (const auto& [file, label] : a.files) {
    ingest::ReadOptions o = base;
    o.label = label;
    parts.push_back(ingest::read_file(file, o));
  }
  const ingest::JoinMode mode = a.join == "none" ? ingest::JoinMode::Concat
                                : a.join == "id" ? ingest::JoinMode::Id
                                                 : ingest::JoinMode::Auto;
  ingest::Profile p = ingest::combine(std::move(parts), mode);
  if (p.kernels.empty()) {
    std::string why;
    for (size_t i = 0; i < p.warnings.size() && i < 3; ++i) why += (why.empty() ? "" : "; ") + p.warnings[i].text();
    throw Error(fmt::format("nothing could be read: {}", why.empty() ? "no kernel records" : why));
  }
  if (a.run) p = ingest::select_run(std::move(p), *a.run);
  if (!a.model.empty() && p.runs.size() > 1)
    throw UsageError(fmt::format("--model compares one capture with one estimate, but the input holds {} runs: "
                                 "choose one with --run N (1..{})", p.runs.size(), p.runs.size()));
  ingest::DeriveOptions d;
  d.architecture = a.arch;
  d.tensor_factor = a.tensor_factor;
  ingest::derive(p, d);
  return p;
}

Document ingest_report(const ingest::Profile& p, const IngestRequest& a, bool full) {
  Document doc;
  std::string formats;
  for (auto f : p.formats) formats += (formats.empty() ? "" : ", ") + std::string(ingest::format_name(f));
  doc.title = fmt::format("ingest: {} file{} ({})", p.files.size(), p.files.size() == 1 ? "" : "s", formats);
  ingest::Totals t = ingest::totals(p);
  doc.blocks.push_back(totals_fields(p, t));
  auto by = ingest::parse_group_by(a.group);
  doc.blocks.push_back(groups_table(p, *by, a.group, t));
  add_runs(doc, p);
  if (!a.model.empty()) add_comparison(doc, p, t, a);
  add_counters(doc, t);
  const size_t top = a.top ? *a.top : (full ? 0 : kDefaultTopKernels);
  doc.blocks.push_back(kernels_table(p, top, full));
  if (top > 0 && top < p.kernels.size())
    doc.notes.push_back(fmt::format("kernels: the {} longest of {} records shown (--top 0 for all)", top, p.kernels.size()));
  if (!t.sum.flops()) doc.notes.push_back("FLOPs: not collected in these files (no FP instruction or flop_count metric)");
  if (!t.sum.dram_bytes) doc.notes.push_back("DRAM bytes: not collected in these files");
  if (!t.sum.time_s) doc.notes.push_back("time: not collected in these files");
  if (t.missing_flops > 0) doc.notes.push_back(fmt::format("FLOPs missing for {} kernel records (totals exclude them)", t.missing_flops));
  if (t.missing_dram > 0) doc.notes.push_back(fmt::format("DRAM bytes missing for {} kernel records", t.missing_dram));
  if (t.missing_time > 0) doc.notes.push_back(fmt::format("time missing for {} records", t.missing_time));
  for (const auto& n : p.notes) doc.notes.push_back(n);
  for (size_t i = 0; i < p.warnings.size() && i < kWarningsShown; ++i) doc.notes.push_back("warning: " + p.warnings[i].text());
  if (p.warnings.size() > kWarningsShown)
    doc.notes.push_back(fmt::format("warning: {} more warnings not shown", p.warnings.size() - kWarningsShown));
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : p.warnings) warnings.push_back({{"file", w.file}, {"line", w.line}, {"message", w.message}});
  doc.extra["warnings"] = warnings;
  return doc;
}


}  // namespace ridge::report
