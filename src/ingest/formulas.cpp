// The metric formulas (which counters make FLOPs per precision, bytes per memory level and time), the exact
// tensor-path counters per source precision and the per-architecture tensor-core factor (both from
// data/gpu/architectures.json), as data; derive() applies them per record, totals() sums.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "internal.hpp"
#include "ridge/error.hpp"
#include "ridge/text.hpp"

namespace ridge::ingest {
namespace {

enum class Qty : uint8_t { Fp64, Fp32, Fp16, Tensor, Dram, L2, L1, Time };

struct Term {
  std::string_view metric;
  int64_t factor;  ///< 0 = the architecture's FLOPs per tensor-pipe instruction
};

/// One way to obtain a quantity. Sum formulas add factor x counter; ratio formulas divide the first term by
/// the second (cycles / cycles-per-second). Time counters are in nanoseconds.
struct Formula {
  Qty qty;
  std::vector<Term> terms;
  bool ratio = false;
};

#define SASS(prefix, op) prefix "__sass_thread_inst_executed_op_" op "_pred_on.sum"
const std::vector<Formula> kFormulas = {
    {Qty::Fp32, {{SASS("smsp", "ffma"), 2}, {SASS("smsp", "fadd"), 1}, {SASS("smsp", "fmul"), 1}}},
    {Qty::Fp32, {{SASS("sm", "ffma"), 2}, {SASS("sm", "fadd"), 1}, {SASS("sm", "fmul"), 1}}},
    {Qty::Fp32, {{"flop_count_sp", 1}}},
    {Qty::Fp64, {{SASS("smsp", "dfma"), 2}, {SASS("smsp", "dadd"), 1}, {SASS("smsp", "dmul"), 1}}},
    {Qty::Fp64, {{SASS("sm", "dfma"), 2}, {SASS("sm", "dadd"), 1}, {SASS("sm", "dmul"), 1}}},
    {Qty::Fp64, {{"flop_count_dp", 1}}},
    {Qty::Fp16, {{SASS("smsp", "hfma"), 2}, {SASS("smsp", "hadd"), 1}, {SASS("smsp", "hmul"), 1}}},
    {Qty::Fp16, {{SASS("sm", "hfma"), 2}, {SASS("sm", "hadd"), 1}, {SASS("sm", "hmul"), 1}}},
    {Qty::Fp16, {{"flop_count_hp", 1}}},
    // torch.profiler with_flops: an operator's FLOPs by the dtype of its first tensor input (bf16 counts as fp16)
    {Qty::Fp32, {{"torch.flops.fp32", 1}}},
    {Qty::Fp64, {{"torch.flops.fp64", 1}}},
    {Qty::Fp16, {{"torch.flops.fp16", 1}}},
    {Qty::Fp16, {{"torch.flops.bf16", 1}}},
    {Qty::Tensor, {{"sm__inst_executed_pipe_tensor.sum", 0}}},
    {Qty::Tensor, {{"smsp__inst_executed_pipe_tensor.sum", 0}}},
    {Qty::Dram, {{"dram__bytes.sum", 1}}},
    {Qty::Dram, {{"dram__bytes_read.sum", 1}, {"dram__bytes_write.sum", 1}}},
    {Qty::Dram, {{"dram__sectors_read.sum", 32}, {"dram__sectors_write.sum", 32}}},
    {Qty::Dram, {{"dram__sectors.sum", 32}}},
    {Qty::Dram, {{"dram_read_bytes", 1}, {"dram_write_bytes", 1}}},
    {Qty::Dram, {{"dram_read_transactions", 32}, {"dram_write_transactions", 32}}},
    {Qty::L2, {{"lts__t_bytes.sum", 1}}},
    {Qty::L2, {{"lts__t_sectors.sum", 32}}},
    {Qty::L2,
     {{"lts__t_sectors_op_read.sum", 32}, {"lts__t_sectors_op_write.sum", 32},
      {"lts__t_sectors_op_atom.sum", 32}, {"lts__t_sectors_op_red.sum", 32}}},
    {Qty::L2, {{"l2_read_transactions", 32}, {"l2_write_transactions", 32}}},
    {Qty::L1, {{"l1tex__t_bytes.sum", 1}}},
    {Qty::L1, {{"l1tex__t_sectors.sum", 32}}},
    {Qty::Time, {{"gpu__time_duration.sum", 1}}},
    {Qty::Time, {{"Duration", 1}}},
    {Qty::Time, {{"Total Time", 1}}},
    {Qty::Time, {{"Time", 1}}},
    {Qty::Time, {{"Self CUDA", 1}}},
    {Qty::Time, {{"Self Device", 1}}},
    {Qty::Time, {{"sm__cycles_elapsed.avg", 1}, {"sm__cycles_elapsed.avg.per_second", 1}}, true},
    {Qty::Time, {{"gpc__cycles_elapsed.max", 1}, {"gpc__cycles_elapsed.avg.per_second", 1}}, true},
    {Qty::Time, {{"Elapsed Cycles", 1}, {"SM Frequency", 1}}, true},
};
#undef SASS

std::string_view qty_name(Qty q) {
  switch (q) {
    case Qty::Fp64: return "fp64 FLOPs";
    case Qty::Fp32: return "fp32 FLOPs";
    case Qty::Fp16: return "fp16 FLOPs";
    case Qty::Tensor: return "tensor FLOPs";
    case Qty::Dram: return "DRAM bytes";
    case Qty::L2: return "L2 bytes";
    case Qty::L1: return "L1 bytes";
    case Qty::Time: return "time";
  }
  return "";
}

std::string formula_text(const Formula& f, int64_t tensor_factor) {
  std::string out;
  for (const Term& t : f.terms) {
    if (!out.empty()) out += f.ratio ? " / " : " + ";
    int64_t factor = t.factor == 0 ? tensor_factor : t.factor;
    out += factor == 1 ? std::string(t.metric) : fmt::format("{} x {}", factor, t.metric);
  }
  return out;
}

using detail::contains;

Count whole(const Value& v) { return v.exact ? *v.exact : static_cast<Count>(std::llround(v.real)); }

struct Detected {
  std::string arch, source;
};

Detected detect_arch(const Profile& p, const ArchitectureTable& table) {
  for (const auto& hint : table.device_names)
    for (const auto& k : p.kernels)
      if (contains(k.device, hint.pattern)) return {hint.architecture, "device '" + k.device + "'"};
  for (const auto& k : p.kernels)
    for (const auto& hint : table.kernel_prefixes)
      if (contains(k.name, hint.pattern)) return {hint.architecture, "kernel names (" + hint.pattern + "*)"};
  return {};
}

// " (fp16 on ampere; tf32 1024, int8 8192; PTX ISA ...; from data/gpu/architectures.json)": what the factor means.
std::string tensor_factor_why(const Architecture& a, const ArchitectureTable& table) {
  std::string others;
  for (const auto& [prec, f] : a.tensor_flops_per_inst)
    if (prec != table.counted_precision) others += fmt::format("{}{} {}", others.empty() ? "" : ", ", prec, f);
  return fmt::format(" ({} instructions{}; {}; from {})", table.counted_precision,
                     others.empty() ? "" : "; other precisions: " + others + ", pass --tensor-factor for them",
                     a.source, table.file);
}

// Applies the first formula with every term present, else the first with some; returns the terms missing.
std::vector<std::string_view> apply(Qty q, KernelRecord& k, int64_t tensor_factor, const Formula** used) {
  const Formula* partial = nullptr;
  *used = nullptr;
  for (const Formula& f : kFormulas) {
    if (f.qty != q) continue;
    size_t present = 0;
    for (const Term& t : f.terms) present += k.counters.count(t.metric);
    if (present == f.terms.size()) {
      *used = &f;
      break;
    }
    if (present > 0 && !f.ratio && partial == nullptr) partial = &f;
  }
  if (*used == nullptr) *used = partial;
  if (*used == nullptr) return {};
  const Formula& f = **used;
  std::vector<std::string_view> missing;
  Derived& d = k.derived;
  if (q == Qty::Time) {
    const Value& a = k.counters.find(f.terms[0].metric)->second;
    if (f.ratio) {
      const Value& b = k.counters.find(f.terms[1].metric)->second;
      if (b.real > 0) d.time_s = a.real / b.real;
    } else {
      d.time_s = a.real * 1e-9;
    }
    return missing;
  }
  Count sum = 0;
  for (const Term& t : f.terms) {
    auto it = k.counters.find(t.metric);
    if (it == k.counters.end()) {
      missing.push_back(t.metric);
      continue;
    }
    sum += whole(it->second) * (t.factor == 0 ? tensor_factor : t.factor);
  }
  switch (q) {
    case Qty::Fp64: d.flops_fp64 = sum; break;
    case Qty::Fp32: d.flops_fp32 = sum; break;
    case Qty::Fp16: d.flops_fp16 = sum; break;
    case Qty::Tensor: d.flops_tensor = sum; break;
    case Qty::Dram: d.dram_bytes = sum; break;
    case Qty::L2: d.l2_bytes = sum; break;
    case Qty::L1: d.l1_bytes = sum; break;
    case Qty::Time: break;
  }
  return missing;
}

void add(std::optional<Count>& total, const std::optional<Count>& v) {
  if (v) total = total.value_or(0) + *v;
}

bool has_tensor_ops(const KernelRecord& k, const TensorOps& ops) {
  for (const TensorOpsPrecision& p : ops.precisions)
    for (const auto& set : p.alternatives)
      for (const std::string& m : set)
        if (k.counters.count(m)) return true;
  return false;
}

// What the exact tensor-path counters did over all records, for the notes.
struct TensorOpsUse {
  int records = 0;
  std::map<std::string, std::map<std::string, int>> used;  ///< precision -> formula text -> records
  std::map<std::string, int> missing;                      ///< metric -> records lacking it (a set partly present)
  int silent = 0;                                          ///< records with tensor-pipe instructions but no ops
  Count silent_inst = 0;
  int silent_not_math = 0;                                 ///< of them, all instructions were not_math ones
  std::string silent_example;
};

// Tensor FLOPs of one record from the exact counters: per precision, the first set of metrics all present (else the
// first partly present) is summed, so a parent counter and its children are never added together.
void apply_tensor_ops(KernelRecord& k, const TensorOps& ops, TensorOpsUse& use) {
  Derived& d = k.derived;
  Count total = 0;
  for (const TensorOpsPrecision& p : ops.precisions) {
    const std::vector<std::string>* chosen = nullptr;
    const std::vector<std::string>* partial = nullptr;
    for (const auto& set : p.alternatives) {
      size_t present = 0;
      for (const std::string& m : set) present += k.counters.count(m);
      if (present == set.size()) {
        chosen = &set;
        break;
      }
      if (present > 0 && partial == nullptr) partial = &set;
    }
    if (chosen == nullptr) chosen = partial;
    if (chosen == nullptr) continue;
    Count sum = 0;
    std::string text;
    for (const std::string& m : *chosen) {
      text += (text.empty() ? "" : " + ") + m;
      auto it = k.counters.find(m);
      if (it == k.counters.end()) {
        ++use.missing[m];
        continue;
      }
      sum += whole(it->second) * ops.flops_per_op;
    }
    d.tensor_by_precision[p.precision] = sum;
    ++use.used[p.precision][text];
    total += sum;
  }
  d.flops_tensor = total;
  ++use.records;
  if (total != 0) return;
  Count inst = 0;  // the tensor-pipe instructions the factor formulas read
  for (const Formula& f : kFormulas)
    if (f.qty == Qty::Tensor && inst == 0)
      if (auto it = k.counters.find(f.terms[0].metric); it != k.counters.end()) inst = whole(it->second);
  if (inst <= 0) return;
  ++use.silent;
  use.silent_inst += inst;
  if (use.silent_example.empty()) use.silent_example = k.name.substr(0, 60);
  if (!ops.not_math_metric.empty())
    if (auto it = k.counters.find(ops.not_math_metric); it != k.counters.end() && whole(it->second) == inst)
      ++use.silent_not_math;
}

void tensor_ops_notes(Profile& p, const TensorOps& ops, const TensorOpsUse& use, const std::string& file) {
  if (use.records == 0) return;
  std::string terms, absent;
  for (const TensorOpsPrecision& prec : ops.precisions) {
    auto it = use.used.find(prec.precision);
    if (it == use.used.end()) {
      absent += (absent.empty() ? "" : ", ") + prec.precision;
      continue;
    }
    for (const auto& [text, n] : it->second)
      terms += fmt::format("{}{} ({}{})", terms.empty() ? "" : " + ", text, prec.precision,
                           n == use.records ? "" : fmt::format(", {} records", n));
  }
  std::string line = fmt::format("tensor FLOPs = {}{} ({} records): exact tensor-core FLOPs per source precision "
                                 "(counters from {}); these records do not use a factor x tensor-pipe instructions",
                                 ops.flops_per_op == 1 ? "" : fmt::format("{} x ", ops.flops_per_op),
                                 terms.empty() ? "0" : terms, use.records, file);
  for (const auto& [m, n] : use.missing) line += fmt::format("; {} not collected for {} of them", m, n);
  if (!absent.empty()) line += fmt::format("; not collected: {} (tensor math of those precisions is not counted)", absent);
  p.notes.push_back(line);
  if (use.silent > 0)
    p.notes.push_back(fmt::format(
        "{} kernel records (e.g. {}) executed {} tensor-pipe instructions but no tensor-path math, so they get no "
        "tensor FLOPs{}{}", use.silent, use.silent_example, use.silent_inst,
        use.silent_not_math > 0 ? fmt::format("; {} of them: all {} ({})", use.silent_not_math, ops.not_math_metric,
                                              ops.not_math_note)
                                : (ops.not_math_note.empty() ? "" : "; " + ops.not_math_note),
        absent.empty() ? "" : fmt::format(" (or their source precision was not collected: {})", absent)));
}

}  // namespace

bool names_a_gpu(std::string_view device) { return !device.empty() && !all_digits(device); }

std::optional<Count> Derived::flops() const {
  std::optional<Count> total;
  add(total, flops_fp64);
  add(total, flops_fp32);
  add(total, flops_fp16);
  add(total, flops_tensor);
  return total;
}

void derive(Profile& p, const DeriveOptions& opts) {
  const ArchitectureTable& table = opts.architectures ? *opts.architectures : builtin_architectures();
  if (!opts.architecture.empty() && !table.find(opts.architecture)) {
    std::string names;
    for (const Architecture& a : table.architectures) names += (names.empty() ? "" : ", ") + a.name;
    throw UsageError(fmt::format("--arch: unknown architecture '{}' ({} lists: {})", opts.architecture, table.file, names));
  }
  Detected arch = opts.architecture.empty() ? detect_arch(p, table) : Detected{opts.architecture, "--arch"};
  const Architecture* row = table.find(arch.arch);
  p.architecture = arch.arch;
  p.tensor_flops_per_inst = opts.tensor_factor ? *opts.tensor_factor : table.tensor_factor(arch.arch);

  struct Use {
    int records = 0;
    std::map<std::string_view, int> missing;
  };
  std::map<const Formula*, Use> uses;
  bool tensor_without_factor = false, factor_applied = false;
  TensorOpsUse ops_use;
  for (auto& k : p.kernels) {
    k.derived = {};
    for (Qty q : {Qty::Fp64, Qty::Fp32, Qty::Fp16, Qty::Tensor, Qty::Dram, Qty::L2, Qty::L1, Qty::Time}) {
      const Formula* used = nullptr;
      // The exact tensor-path counters take precedence over factor x tensor-pipe instructions.
      if (q == Qty::Tensor && has_tensor_ops(k, table.tensor_ops)) {
        apply_tensor_ops(k, table.tensor_ops, ops_use);
        continue;
      }
      if (q == Qty::Tensor && p.tensor_flops_per_inst == 0) {
        for (const Formula& f : kFormulas)
          if (f.qty == q && k.counters.count(f.terms[0].metric)) tensor_without_factor = true;
        continue;
      }
      auto missing = apply(q, k, p.tensor_flops_per_inst, &used);
      if (!used) continue;
      factor_applied |= q == Qty::Tensor;
      Use& u = uses[used];
      ++u.records;
      for (auto m : missing) ++u.missing[m];
    }
  }
  for (const Formula& f : kFormulas) {
    auto it = uses.find(&f);
    if (it == uses.end()) continue;
    std::string line = fmt::format("{} = {} ({} records)", qty_name(f.qty), formula_text(f, p.tensor_flops_per_inst),
                                   it->second.records);
    for (const auto& [m, n] : it->second.missing) line += fmt::format("; {} not collected for {} of them", m, n);
    p.notes.push_back(line);
    if (f.qty == Qty::Tensor)
      p.notes.push_back(fmt::format("tensor factor {} FLOPs per tensor-pipe instruction: architecture {} from {}{}",
                                    p.tensor_flops_per_inst, arch.arch.empty() ? "unknown" : arch.arch,
                                    opts.tensor_factor ? "--tensor-factor" : arch.source,
                                    row && !opts.tensor_factor ? tensor_factor_why(*row, table) : ""));
    if (f.qty == Qty::Fp16 && f.terms.size() > 1)
      p.notes.push_back("fp16 FLOPs count a packed HFMA2/HADD2 thread instruction once (as NERSC does); if your ncu "
                        "counts packed lanes separately the true value is up to 2x higher");
  }
  tensor_ops_notes(p, table.tensor_ops, ops_use, table.file);
  if (!factor_applied) p.tensor_flops_per_inst = 0;  // no record took its tensor FLOPs from instructions
  if (tensor_without_factor)
    p.warnings.push_back(Warning{p.files.empty() ? "" : p.files.front(), 0,
                                 "tensor-pipe instructions collected but the GPU architecture is unknown: tensor FLOPs "
                                 "not counted (pass --arch or --tensor-factor)"});
}

Totals totals(const Profile& p, const std::vector<size_t>& only) {
  Totals t;
  std::vector<size_t> all;
  const std::vector<size_t>* idx = &only;
  if (only.empty()) {
    all.resize(p.kernels.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    idx = &all;
  }
  std::map<std::string, bool, std::less<>> additive_metric;
  int have_time = 0, have_flops = 0, have_dram = 0, kernels = 0;
  for (size_t i : *idx) {
    const KernelRecord& k = p.kernels[i];
    const Derived& d = k.derived;
    (k.memop ? t.memops : t.kernels) += k.invocations;
    add(t.sum.flops_fp64, d.flops_fp64);
    add(t.sum.flops_fp32, d.flops_fp32);
    add(t.sum.flops_fp16, d.flops_fp16);
    add(t.sum.flops_tensor, d.flops_tensor);
    for (const auto& [prec, v] : d.tensor_by_precision) t.sum.tensor_by_precision[prec] += v;
    add(t.sum.dram_bytes, d.dram_bytes);
    add(t.sum.l2_bytes, d.l2_bytes);
    add(t.sum.l1_bytes, d.l1_bytes);
    if (d.time_s) {
      t.sum.time_s = t.sum.time_s.value_or(0) + *d.time_s;
      if (!k.memop) t.kernel_time_s = t.kernel_time_s.value_or(0) + *d.time_s;
      ++have_time;
    }
    if (!k.memop) {
      ++kernels;
      have_flops += d.flops().has_value();
      have_dram += d.dram_bytes.has_value();
      const std::optional<Count> f = d.flops();
      if (f && d.time_s) add(t.flops_timed, f), t.time_with_flops_s = t.time_with_flops_s.value_or(0) + *d.time_s;
      if (d.dram_bytes && d.time_s)
        add(t.dram_timed, d.dram_bytes), t.time_with_dram_s = t.time_with_dram_s.value_or(0) + *d.time_s;
      if (f && d.dram_bytes) add(t.flops_with_dram, f), add(t.dram_with_flops, d.dram_bytes);
    }
    for (const auto& [name, v] : k.counters) {
      auto [it, fresh] = additive_metric.try_emplace(name, false);
      if (fresh) it->second = detail::additive(name, v.unit);
      if (!it->second) continue;
      auto [c, inserted] = t.counters.try_emplace(name, v);
      if (inserted) continue;
      c->second.real += v.real;
      if (c->second.exact && v.exact) *c->second.exact += *v.exact;
      else c->second.exact.reset();
    }
  }
  for (const auto& [name, add_ok] : additive_metric)
    if (!add_ok) t.not_summed.push_back(name);
  t.missing_time = have_time > 0 ? static_cast<int>(idx->size()) - have_time : 0;
  t.missing_flops = have_flops > 0 ? kernels - have_flops : 0;
  t.missing_dram = have_dram > 0 ? kernels - have_dram : 0;
  return t;
}

}  // namespace ridge::ingest
