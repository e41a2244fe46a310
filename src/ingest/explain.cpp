// Measured totals next to ridge's estimate, and why they differ — each reason names the kernels behind it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "internal.hpp"

namespace ridge::ingest {
namespace {

constexpr double kAgree = 1.3;           // within 1/1.3 .. 1.3 the numbers agree
constexpr double kMemoryBound = 4.0;     // FLOP per DRAM byte below which a kernel is memory-bound
constexpr size_t kNamesShown = 3;

struct NameStat {
  std::string name, family;
  Count launches = 0, flops = 0, dram = 0, l2 = 0;
  bool has_flops = false;
  double time_s = 0;
};

std::vector<NameStat> by_name(const Profile& p) {
  std::map<std::string, size_t> index;
  std::vector<NameStat> out;
  for (const auto& k : p.kernels) {
    if (k.memop) continue;
    auto [it, fresh] = index.try_emplace(k.name, out.size());
    if (fresh) out.push_back(NameStat{k.name, std::string(kernel_family(k.name, false))});
    NameStat& s = out[it->second];
    s.launches += k.invocations;
    if (auto f = k.derived.flops()) s.flops += *f, s.has_flops = true;
    s.dram += k.derived.dram_bytes.value_or(0);
    s.l2 += k.derived.l2_bytes.value_or(0);
    s.time_s += k.derived.time_s.value_or(0);
  }
  return out;
}

std::string short_name(const std::string& n) {
  std::string s = n.substr(0, n.find('('));
  if (s.size() > 70) s = s.substr(0, 67) + "...";
  return s;
}

// "a (12 launches), b (3 launches)" for the first few entries.
std::string names(const std::vector<const NameStat*>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < kNamesShown; ++i)
    out += fmt::format("{}{} ({} launch{})", i ? ", " : "", short_name(v[i]->name), with_commas(v[i]->launches),
                       v[i]->launches == 1 ? "" : "es");
  if (v.size() > kNamesShown) out += fmt::format(" and {} more", v.size() - kNamesShown);
  return out;
}

template <class Pred, class Key>
std::vector<const NameStat*> pick(const std::vector<NameStat>& all, Pred pred, Key key) {
  std::vector<const NameStat*> v;
  for (const auto& s : all)
    if (pred(s)) v.push_back(&s);
  std::stable_sort(v.begin(), v.end(), [&](auto* a, auto* b) { return key(*a) > key(*b); });
  return v;
}

bool is_conv_or_gemm(const std::string& family) {
  return family == "gemm" || detail::starts_with(family, "conv-");
}

std::string pct(Count part, Count whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * to_double(part) / to_double(whole)) : "-";
}

void explain_flops(const Profile& p, const Totals& t, const Expected& e, const std::vector<NameStat>& stats,
                   Explanation& x) {
  auto measured = t.sum.flops();
  if (!measured) {
    x.reasons.push_back("no FLOP counters were collected (ridge profile-cmd --metrics flops prints the ncu flags)");
    return;
  }
  if (e.flops <= 0) return;
  x.ratio = to_double(*measured) / to_double(e.flops);
  const double r = *x.ratio;
  auto by_time = [](const NameStat& s) { return s.time_s > 0 ? s.time_s : to_double(s.launches); };
  auto by_flops = [](const NameStat& s) { return to_double(s.flops); };
  if (r < 1 / kAgree) {
    auto tc = pick(stats, [](const NameStat& s) { return is_tensor_core_kernel(s.name); }, by_time);
    auto silent = pick(stats, [](const NameStat& s) { return is_conv_or_gemm(s.family) && s.has_flops && s.flops == 0; },
                       by_time);
    if (!t.sum.flops_tensor && !tc.empty())
      x.reasons.push_back(fmt::format(
          "tensor-core kernels ran but no tensor-pipe metric was collected, so their FLOPs are invisible to the "
          "FFMA/FADD/FMUL counters: {}; collect the tensor-path counters (ridge profile-cmd --metrics "
          "flops,tensor-ops on Ampere and later) or sm__inst_executed_pipe_tensor.sum (--metrics flops,tensor)", names(tc)));
    if (!t.sum.flops_tensor && !silent.empty())
      x.reasons.push_back(fmt::format(
          "GEMM/convolution kernels with no FP32/FP16/FP64 instruction counted — their math ran on tensor cores "
          "(TF32 is the default for cuDNN convolutions on Ampere and later, FP16 under AMP): {}", names(silent)));
    if (tc.empty() && silent.empty())
      x.reasons.push_back(fmt::format("measured FLOPs are {:.2f}x the estimate: the capture may hold only part of the "
                                      "work (ncu --launch-count / --kernel-name filters, profiling started late)", r));
  } else if (r > kAgree) {
    auto top = pick(stats, [](const NameStat& s) { return is_conv_or_gemm(s.family) && s.flops > 0; }, by_flops);
    if (!top.empty())
      x.reasons.push_back(fmt::format(
          "measured FLOPs are {:.1f}x the estimate: the capture may hold several iterations (pass --steps N) — the "
          "heaviest kernels launched repeatedly: {}", r, names(top)));
    std::set<std::string> algos;
    std::vector<const NameStat*> conv;
    for (const auto& s : stats)
      if (detail::starts_with(s.family, "conv-")) {
        if (algos.insert(s.family).second) conv.push_back(&s);
      }
    if (algos.size() >= 2) {
      std::string list;
      for (const auto* s : conv) list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", s->family, short_name(s->name));
      x.reasons.push_back(fmt::format(
          "convolutions ran with {} different algorithms, the signature of cuDNN autotuning trials "
          "(torch.backends.cudnn.benchmark): {}; every trial's FLOPs are counted", algos.size(), list));
    }
    auto odd = pick(stats, [](const NameStat& s) { return s.family == "conv-fft" || s.family == "conv-winograd"; },
                    by_flops);
    if (!odd.empty()) {
      Count f = 0;
      for (auto* s : odd) f += s->flops;
      x.reasons.push_back(fmt::format(
          "Winograd/FFT convolution kernels do different arithmetic than direct convolution (transforms, complex "
          "GEMMs): {} of measured FLOPs in {}", pct(f, *measured), names(odd)));
    }
  } else {
    x.reasons.push_back(fmt::format("measured FLOPs are within {:.0f}% of the estimate", (kAgree - 1) * 100));
  }
  (void)p;
}

void explain_bytes(const Totals& t, const Expected& e, const std::vector<NameStat>& stats, Explanation& x) {
  if (!t.sum.dram_bytes) {
    x.reasons.push_back("no DRAM counters were collected (ridge profile-cmd --metrics dram prints the ncu flags)");
    return;
  }
  if (e.bytes <= 0) return;
  x.ratio = to_double(*t.sum.dram_bytes) / to_double(e.bytes);
  const double r = *x.ratio;
  auto by_dram = [](const NameStat& s) { return to_double(s.dram); };
  if (r > kAgree) {
    auto bound = pick(stats, [](const NameStat& s) {
      return s.dram > 0 && (!s.has_flops || to_double(s.flops) < kMemoryBound * to_double(s.dram));
    }, by_dram);
    if (!bound.empty()) {
      Count b = 0;
      for (auto* s : bound) b += s->dram;
      x.reasons.push_back(fmt::format(
          "memory-bound kernels (under {:.0f} FLOP per DRAM byte) moved {} of the DRAM bytes — each re-reads and "
          "re-writes whole activations: {}", kMemoryBound, pct(b, *t.sum.dram_bytes), names(bound)));
    }
    auto thrash = pick(stats, [](const NameStat& s) { return s.l2 > 0 && 2 * s.dram > s.l2; }, by_dram);
    if (!thrash.empty())
      x.reasons.push_back(fmt::format("most L2 traffic goes on to DRAM (the cache thrashes) in: {}", names(thrash)));
  } else if (r < 1 / kAgree) {
    auto top = pick(stats, [](const NameStat& s) { return s.dram > 0; }, by_dram);
    x.reasons.push_back(fmt::format(
        "DRAM traffic is below the compulsory estimate: activations stay in L2 between kernels (or the capture "
        "holds part of the work); largest movers: {}", names(top)));
  } else {
    x.reasons.push_back(fmt::format("measured DRAM bytes are within {:.0f}% of the estimate", (kAgree - 1) * 100));
  }
}

}  // namespace

std::vector<Explanation> explain(const Profile& p, const Totals& t, const Expected& e) {
  auto stats = by_name(p);
  Explanation flops{"flops", std::nullopt, {}}, bytes{"bytes", std::nullopt, {}};
  explain_flops(p, t, e, stats, flops);
  explain_bytes(t, e, stats, bytes);
  return {flops, bytes};
}

}  // namespace ridge::ingest
