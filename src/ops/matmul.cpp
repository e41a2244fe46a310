// Matrix-product family: Gemm (torch's Linear on inputs of any rank), MatMul and Einsum — shape inference,
// cost and the benchdnn-style descriptors "gemm:m196k768n3072b1" and "matmul:bs12m196k64n196".
#include <map>

#include "ops/family.hpp"
#include "ridge/error.hpp"

namespace ridge::ops {

namespace {

bool gemm_infer(RuleContext& c) {
  const Shape* a = c.shape(0);
  const Shape* b = c.shape(1);
  if (!a || !b) return false;
  const bool ta = c.n.attrs.i("transA", 0) != 0, tb = c.n.attrs.i("transB", 0) != 0;
  if (b->rank() != 2 || a->rank() < 2 || (ta && a->rank() != 2)) throw RuleError("Gemm needs 2-D A and B");
  // ONNX's Gemm is 2-D; ridge also uses it for torch's Linear on rank > 2 inputs (rows = all leading dims).
  Shape out{{a->dims.begin(), a->dims.end() - 1}};
  if (ta) out.dims = {a->dims[1]};
  out.dims.push_back(b->dims[tb ? 0 : 1]);
  if (const Shape* bias = c.shape(2)) {  // C broadcasts one way, to the output
    bool fits = bias->rank() <= out.rank();
    for (int i = 1; fits && i <= bias->rank(); ++i) {
      const int64_t cd = bias->dims[bias->rank() - i], od = out.dims[out.rank() - i];
      fits = cd < 0 || od < 0 || cd == 1 || cd == od;
    }
    if (!fits)
      throw RuleError(fmt::format("Gemm C {} does not broadcast to the output {}", to_string(*bias), to_string(out)));
  }
  c.out(0, out);
  return true;
}

/// numpy.matmul's output shape of inputs `ia` and `ib` (vectors promoted and dropped, batch dims broadcast);
/// nullopt while a rank is unknown.
std::optional<Shape> matmul_shape(const RuleContext& c, int ia, int ib) {
  const Shape* pa = c.shape(ia);
  const Shape* pb = c.shape(ib);
  if (!pa || !pb) return std::nullopt;
  if (pa->rank() == 0 || pb->rank() == 0) throw RuleError("MatMul of a scalar");
  Shape a = *pa, b = *pb;
  const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  if (a_vec) a.dims.insert(a.dims.begin(), 1);
  if (b_vec) b.dims.push_back(1);
  if (a.dims.back() >= 0 && b.dims[b.rank() - 2] >= 0 && a.dims.back() != b.dims[b.rank() - 2])
    throw RuleError(fmt::format("MatMul inner dims differ: {} and {}", to_string(*pa), to_string(*pb)));
  Shape ba{{a.dims.begin(), a.dims.end() - 2}}, bb{{b.dims.begin(), b.dims.end() - 2}};
  Shape out = broadcast_shapes(ba, bb, "MatMul batch dims");
  if (!a_vec) out.dims.push_back(a.dims[a.rank() - 2]);
  if (!b_vec) out.dims.push_back(b.dims[b.rank() - 1]);
  return out;
}

bool matmul_infer(RuleContext& c) {
  const auto out = matmul_shape(c, 0, 1);
  if (!out) return false;
  c.out(0, *out);
  return true;
}

/// QLinearMatMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point): numpy.matmul of a
/// and b, quantized to y_zero_point's type.
bool qlinear_matmul_infer(RuleContext& c) {
  if (c.inputs() != 8) throw RuleError(fmt::format("QLinearMatMul needs 8 inputs, not {}", c.inputs()));
  const auto out = matmul_shape(c, 0, 3);
  if (!out) return false;
  c.out(0, *out, c.dtype(7) != DType::Unknown ? c.dtype(7) : DType::U8);
  return true;
}

/// MatMulInteger (A, B, a_zero_point, b_zero_point): numpy.matmul with int32 accumulators.
bool matmul_integer_infer(RuleContext& c) {
  const auto out = matmul_shape(c, 0, 1);
  if (!out) return false;
  c.out(0, *out, DType::I32);
  return true;
}

// Integer MACs count as MatMul's (2 FLOPs each; zero points folded into the accumulation). QLinearMatMul
// requantizes each output as QLinearConv does (5 per element). Inference ops: no gradient.
bool qlinear_matmul_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.macs = matmul_geometry(c.g, c.n).macs;  // E(out) x K of input 0
  cost.flops = 2 * cost.macs + 5 * c.out_elems();
  return true;
}

bool matmul_integer_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.macs = matmul_geometry(c.g, c.n).macs;  // E(out) x K of input 0
  cost.flops = 2 * cost.macs;
  return true;
}

/// Einsum: every letter's extent from the operands, output from the explicit or implicit right-hand side.
bool einsum_infer(RuleContext& c) {
  const EinsumEquation eq = parse_einsum(c.n.attrs.s("equation", ""));
  const std::vector<std::string>& terms = eq.terms;
  if (static_cast<int>(terms.size()) != c.inputs()) throw RuleError("Einsum equation does not match the inputs");
  std::map<char, int64_t> extent;
  Shape ellipsis;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Shape* s = c.shape(static_cast<int>(t));
    if (!s) return false;
    std::string term = terms[t];
    const size_t dots = term.find("...");
    const int letters = static_cast<int>(term.size()) - (dots == std::string::npos ? 0 : 3);
    const int ell_rank = s->rank() - letters;
    if (ell_rank < 0 || (dots == std::string::npos && ell_rank != 0))
      throw RuleError("Einsum term '" + term + "' does not match its operand's rank");
    int dim = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.compare(i, 3, "...") == 0) {
        ellipsis = broadcast_shapes(ellipsis, Shape{{s->dims.begin() + dim, s->dims.begin() + dim + ell_rank}}, "Einsum");
        dim += ell_rank;
        i += 2;
        continue;
      }
      const char ch = term[i];
      const int64_t d = s->dims[dim++];
      auto [it, fresh] = extent.emplace(ch, d);
      if (!fresh && it->second > 1 && d > 1 && it->second != d)
        throw RuleError(fmt::format("Einsum letter '{}' is {} in one place and {} in another", ch, it->second, d));
      if (!fresh && (it->second < 0 || it->second == 1)) it->second = d;
    }
  }
  const std::string& rhs = eq.output;
  Shape out;
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.compare(i, 3, "...") == 0) {
      out.dims.insert(out.dims.end(), ellipsis.dims.begin(), ellipsis.dims.end());
      i += 2;
    } else if (auto it = extent.find(rhs[i]); it != extent.end()) {
      out.dims.push_back(it->second);
    } else {
      throw RuleError(std::string("Einsum output letter '") + rhs[i] + "' is not in any input");
    }
  }
  c.out(0, out);
  return true;
}

// Backward of a product: each operand's gradient is another product of the same MAC count.
bool gemm_cost(const CostContext& c, Cost& cost, std::string&) {
  const LinearGeom lg = linear_geometry(c.g, c.n);
  cost.macs = lg.macs;
  cost.flops = 2 * lg.macs + (lg.bias ? lg.rows * lg.out : 0);
  c.add_grad(c.n.inputs[0], 2 * lg.macs, cost);
  c.add_grad(c.n.inputs[1], 2 * lg.macs, cost);
  if (lg.bias) c.add_grad(c.n.inputs[2], lg.rows * lg.out, cost);  // grad-bias: a sum over rows
  return true;
}

bool matmul_cost(const CostContext& c, Cost& cost, std::string&) {
  const MatMulGeom mg = matmul_geometry(c.g, c.n);
  cost.macs = mg.macs;
  cost.flops = 2 * mg.macs;
  c.add_grad(c.n.inputs[0], 2 * mg.macs, cost);
  c.add_grad(c.n.inputs[1], 2 * mg.macs, cost);
  return true;
}

bool einsum_cost(const CostContext& c, Cost& cost, std::string& reason) {
  auto macs = einsum_macs(c.g, c.n);
  if (!macs) {
    reason = fmt::format("einsum equation '{}' is not supported (ellipsis or malformed)", c.n.attrs.s("equation", ""));
    return false;
  }
  if (c.n.inputs.size() == 1) {
    // One operand multiplies nothing: a permutation or diagonal is a move (Transpose's 0), and summing out
    // letters adds, as ReduceSum: every visited element but one per output.
    cost.flops = *macs - c.out_elems();
    return true;
  }
  cost.macs = *macs;
  cost.flops = 2 * *macs;
  for (int v : c.n.inputs) c.add_grad(v, 2 * *macs, cost);
  return true;
}

// ---- descriptors -----------------------------------------------------------------------------------------

/// Only attributes the short forms describe; anything else (alpha, torch_fn, ...) takes the generic form.
bool only_attrs(const Attrs& a, std::initializer_list<const char*> allowed) {
  for (const auto& [k, v] : a.items) {
    bool ok = false;
    for (const char* name : allowed) ok = ok || k == name;
    if (!ok) return false;
  }
  return true;
}

std::string gemm_print(const OpProblem& p) {
  if (p.inputs.size() < 2 || p.inputs[1].kind != ValueKind::Param || p.inputs[0].kind != ValueKind::Input ||
      p.inputs[0].shape.rank() < 2 || p.inputs[1].shape.rank() != 2 || p.attrs.i("transB", 0) != 1 ||
      !only_attrs(p.attrs, {"transB"}))
    return "";
  const Shape& a = p.inputs[0].shape;
  const Count rows = a.elements() / a[-1];
  const bool bias = p.inputs.size() > 2 && p.inputs[2].present;
  return fmt::format("m{}k{}n{}b{}{}", to_string(rows), a[-1], p.inputs[1].shape[0], bias ? 1 : 0,
                     p.inputs[0].needs_grad ? "" : "gx0");
}

std::string matmul_print(const OpProblem& p) {
  if (p.inputs.size() != 2 || !p.attrs.items.empty()) return "";
  const Shape& a = p.inputs[0].shape;
  const Shape& b = p.inputs[1].shape;
  for (const auto& in : p.inputs)
    if (in.kind != ValueKind::Input) return "";
  if (a.rank() != b.rank() || (a.rank() != 2 && a.rank() != 3) || (a.rank() == 3 && a[0] != b[0])) return "";
  return fmt::format("bs{}m{}k{}n{}{}{}", a.rank() == 3 ? a[0] : 1, a[-2], a[-1], b[-1],
                     p.inputs[0].needs_grad ? "" : "ga0", p.inputs[1].needs_grad ? "" : "gb0");
}

int64_t field(const std::map<std::string, int64_t>& f, const char* key, const std::string& desc, int64_t def = -1) {
  auto it = f.find(key);
  if (it == f.end()) {
    if (def >= 0) return def;
    throw Error(fmt::format("descriptor '{}': missing field '{}'", desc, key));
  }
  if (it->second <= 0 && std::string(key).front() != 'b' && std::string(key).front() != 'g')
    throw Error(fmt::format("descriptor '{}': field '{}' must be positive", desc, key));
  return it->second;
}

std::optional<OpProblem> gemm_parse(const std::string& body, const std::string& desc) {
  if (body.empty() || body[0] != 'm') return std::nullopt;
  const auto f = short_form_fields(body, desc);
  const int64_t m = field(f, "m", desc), k = field(f, "k", desc), n = field(f, "n", desc);
  OpProblem p;
  p.op = OpKind::Gemm;
  p.inputs.push_back(OpProblem::input(Shape{{m, k}}, ValueKind::Input, field(f, "gx", desc, 1) != 0));
  p.inputs.push_back(OpProblem::input(Shape{{n, k}}, ValueKind::Param));
  if (field(f, "b", desc, 0)) p.inputs.push_back(OpProblem::input(Shape{{n}}, ValueKind::Param));
  p.attrs.set("transB", int64_t{1});
  return p;
}

std::optional<OpProblem> matmul_parse(const std::string& body, const std::string& desc) {
  // The short form starts bs<N> or m<N>; the generic form's operands may start with a letter too ("n2x7,p7x2").
  if (body.rfind("bs", 0) != 0 && body.rfind("m", 0) != 0) return std::nullopt;
  const auto f = short_form_fields(body, desc);
  const int64_t bs = field(f, "bs", desc, 1), m = field(f, "m", desc), k = field(f, "k", desc), n = field(f, "n", desc);
  OpProblem p;
  p.op = OpKind::MatMul;
  p.inputs.push_back(OpProblem::input(Shape{{bs, m, k}}, ValueKind::Input, field(f, "ga", desc, 1) != 0));
  p.inputs.push_back(OpProblem::input(Shape{{bs, k, n}}, ValueKind::Input, field(f, "gb", desc, 1) != 0));
  return p;
}

}  // namespace

const OpRule rule_gemm{gemm_infer, gemm_cost, gemm_print, gemm_parse};
const OpRule rule_matmul{matmul_infer, matmul_cost, matmul_print, matmul_parse};
const OpRule rule_einsum{einsum_infer, einsum_cost};
const OpRule rule_qlinear_matmul{qlinear_matmul_infer, qlinear_matmul_cost};
const OpRule rule_matmul_integer{matmul_integer_infer, matmul_integer_cost};

}  // namespace ridge::ops
