// Kernel families from name patterns (one table), grouping of records, and the least-squares line used for
// "batch size vs FLOPs" across labelled runs.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "internal.hpp"
#include "ridge/text.hpp"

namespace ridge::ingest {
namespace {

struct FamilyPattern {
  std::string_view fragment;  ///< lower-case substring of the kernel name
  std::string_view family;
};

// First match wins, so specific patterns come before generic ones (gcgemm is the complex GEMM inside cuDNN's
// FFT convolution; splitKreduce is a GEMM epilogue). Fused attention comes first: its kernels' signatures name
// convolution or GEMM words (fmha_fwd_loop_kernel<...>(Fused_multihead_attention_fprop_params), cutlass-based
// xformers kernels, cuDNN's generated SDPA kernels), but they are neither. cuDNN's helpers of a convolution
// (nhwcAddPaddingKernel, init_device_workspace_kernel, ReduceSplitK) stay with the convolution, as splitKreduce
// stays with the GEMM: they are part of the operator's time.
const std::vector<FamilyPattern> kFamilies = {
    {"sdpa", "attention"},            // cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_... (cuDNN SDPA)
    {"lean_reduction", "attention"},  // cudnn::lean_reduction_kernel: combines the split-KV partials of cuDNN's SDPA decode
    {"fmha", "attention"},
    {"flash_fwd", "attention"},
    {"flash_bwd", "attention"},
    {"flash_attn", "attention"},
    {"flashattn", "attention"},
    {"attention", "attention"},
    {"winograd", "conv-winograd"},
    {"fft", "conv-fft"},
    {"gcgemm", "conv-fft"},
    {"cgemm", "conv-fft"},
    {"explicit_convolve", "conv-im2col"},
    {"im2col", "conv-im2col"},
    {"col2im", "conv-im2col"},
    {"implicit_convolve", "conv-implicit-gemm"},
    {"precomputed_convolve", "conv-implicit-gemm"},
    {"implicit_gemm", "conv-implicit-gemm"},
    {"fprop", "conv-implicit-gemm"},
    {"dgrad", "conv-implicit-gemm"},
    {"wgrad", "conv-implicit-gemm"},
    {"bn_fw", "normalization"},  // cudnn::bn_fw_tr_1C11_kernel_NCHW: before "cudnn"
    {"bn_bw", "normalization"},
    {"scudnn", "conv-implicit-gemm"},
    {"cudnn", "conv-implicit-gemm"},
    {"convolve", "conv-implicit-gemm"},
    {"conv2d", "conv-implicit-gemm"},
    {"aten::conv", "conv-implicit-gemm"},
    {"splitkreduce", "gemm"},
    {"nvjet", "gemm"},  // nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT: cuBLAS 12.8+/13 Hopper GEMMs (before "bias")
    {"gemm", "gemm"},
    {"gemv", "gemm"},
    {"cutlass", "gemm"},
    {"matmul", "gemm"},
    {"aten::mm", "gemm"},
    {"aten::bmm", "gemm"},
    {"aten::addmm", "gemm"},
    {"aten::linear", "gemm"},
    {"flash", "attention"},
    {"batch_norm", "normalization"},
    {"batchnorm", "normalization"},
    {"layer_norm", "normalization"},
    {"layernorm", "normalization"},
    {"group_norm", "normalization"},
    {"instance_norm", "normalization"},
    {"rms_norm", "normalization"},
    {"rmsnorm", "normalization"},
    {"normalize", "normalization"},
    {"softmax", "softmax"},
    {"pool", "pooling"},
    {"reduce", "reduction"},
    {"reduction", "reduction"},
    {"nllcriterion", "reduction"},
    {"nll_loss", "reduction"},
    {"argmax", "reduction"},
    {"elementwise", "elementwise"},
    {"gather_kernel", "elementwise"},  // at::native::vectorized_gather_kernel (torch.gather / indexing)
    {"eltwise", "elementwise"},
    {"eigenmetakernel", "elementwise"},
    {"dropout", "elementwise"},
    {"activat", "elementwise"},
    {"relu", "elementwise"},
    {"bias", "elementwise"},
    {"multi_tensor_apply", "elementwise"},
    {"copy", "elementwise"},
    {"transpose", "elementwise"},
    {"fill", "elementwise"},
    {"index", "elementwise"},
    {"aten::", "elementwise"},
};

// Lower-case name fragments of kernels that run on tensor cores.
const std::vector<std::string_view> kTensorCoreFragments = {
    "s884", "h884", "s1688", "h1688", "s16816", "h16816", "i8816", "i16832", "hmma", "xmma", "tensorop",
    "wmma",  "wgmma", "tf32", "884gemm", "1688gemm", "16816gemm", "884cudnn", "1688cudnn", "16816cudnn", "flash_fwd",
    "flash_bwd", "fmha"};

}  // namespace

std::string_view kernel_family(std::string_view name, bool memop) {
  std::string n = ascii_lower(name);
  if (memop || (!n.empty() && n[0] == '[')) {
    if (detail::contains(n, "memset")) return "memset";
    return detail::contains(n, "page fault") ? "unified-memory" : "memcpy";
  }
  // A profile repeats a few dozen names over thousands of launches: each distinct name is matched once.
  thread_local std::unordered_map<std::string, std::string_view> seen;
  if (auto it = seen.find(n); it != seen.end()) return it->second;
  std::string_view family = "other";
  for (const auto& p : kFamilies)
    if (n.find(p.fragment) != std::string::npos) {
      family = p.family;
      break;
    }
  if (seen.size() >= 65536) seen.clear();
  seen.emplace(std::move(n), family);
  return family;
}

bool is_tensor_core_kernel(std::string_view name) {
  std::string n = ascii_lower(name);
  return std::any_of(kTensorCoreFragments.begin(), kTensorCoreFragments.end(),
                     [&](std::string_view f) { return n.find(f) != std::string::npos; });
}

std::optional<GroupBy> parse_group_by(std::string_view s) {
  if (s == "family") return GroupBy::Family;
  if (s == "nvtx") return GroupBy::Nvtx;
  if (s == "process") return GroupBy::Process;
  if (s == "name" || s == "kernel") return GroupBy::Name;
  if (s == "label") return GroupBy::Label;
  if (s == "file") return GroupBy::File;
  if (s == "run") return GroupBy::Run;
  if (s == "op") return GroupBy::Op;
  return std::nullopt;
}

std::vector<Group> group(const Profile& p, GroupBy by) {
  std::vector<Group> out;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelRecord& k = p.kernels[i];
    std::string key;
    switch (by) {
      case GroupBy::Family: key = kernel_family(k.name, k.memop); break;
      case GroupBy::Nvtx: key = k.nvtx.empty() ? "(no range)" : k.nvtx; break;
      case GroupBy::Process:
        key = k.pid >= 0 ? std::to_string(k.pid) + (k.process.empty() ? "" : " " + k.process)
                         : (k.process.empty() ? "(unknown)" : k.process);
        break;
      case GroupBy::Name: key = k.name; break;
      case GroupBy::Label: key = k.label.empty() ? "(no label)" : k.label; break;
      case GroupBy::File: key = k.file; break;
      case GroupBy::Run: key = "run " + std::to_string(k.run + 1); break;
      case GroupBy::Op: key = k.op.empty() ? "(no operator)" : k.op; break;
    }
    auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) out.push_back(Group{key, {}});
    out[it->second].members.push_back(i);
  }
  return out;
}

std::optional<LineFit> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < n; ++i) sx += x[i], sy += y[i];
  const double mx = sx / static_cast<double>(n), my = sy / static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) return std::nullopt;
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  f.points = static_cast<int>(n);
  return f;
}

std::optional<double> label_number(std::string_view label) {
  size_t eq = label.find('=');
  std::string_view v = trim(eq == std::string_view::npos ? label : label.substr(eq + 1));
  if (v.empty()) return std::nullopt;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size() || !std::isfinite(out)) return std::nullopt;
  return out;
}

}  // namespace ridge::ingest
