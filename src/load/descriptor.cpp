// Layer descriptors (benchdnn-style problem strings) back into one-node graphs, so that any row of any report
// can be re-run alone: `ridge summary conv:mb1ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh1dw1g1b0`.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "ridge/error.hpp"
#include "ridge/load.hpp"

namespace ridge {

namespace {

/// Parses "mb1ic3ih224" into {mb:1, ic:3, ih:224}.
std::map<std::string, int64_t> parse_fields(const std::string& body, const std::string& desc) {
  std::map<std::string, int64_t> f;
  size_t i = 0;
  while (i < body.size()) {
    size_t k = i;
    while (k < body.size() && std::isalpha(static_cast<unsigned char>(body[k]))) ++k;
    size_t v = k;
    while (v < body.size() && std::isdigit(static_cast<unsigned char>(body[v]))) ++v;
    if (k == i || v == k || v - k > 12)
      throw Error(fmt::format("descriptor '{}': cannot read '{}' (expected letters followed by a number)", desc,
                              body.substr(i)));
    f[body.substr(i, k - i)] = std::stoll(body.substr(k, v - k));
    i = v;
  }
  return f;
}

int64_t need(const std::map<std::string, int64_t>& f, const char* key, const std::string& desc) {
  auto it = f.find(key);
  if (it == f.end()) throw Error(fmt::format("descriptor '{}': missing field '{}'", desc, key));
  if (it->second < 0) throw Error(fmt::format("descriptor '{}': field '{}' is negative", desc, key));
  return it->second;
}

int64_t opt(const std::map<std::string, int64_t>& f, const char* key, int64_t def) {
  auto it = f.find(key);
  return it == f.end() ? def : it->second;
}

struct OneNode {
  Graph g;
  DType dtype;
  int value(const std::string& name, Shape s, ValueKind k) {
    if (!s.known() || s.dims.empty()) throw Error(fmt::format("descriptor: bad shape for {}", name));
    for (int64_t d : s.dims)
      if (d <= 0 || d > (int64_t{1} << 32)) throw Error(fmt::format("descriptor: dim {} of {} is out of range", d, name));
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(s);
    v.kind = k;
    int id = g.add_value(std::move(v));
    if (k == ValueKind::Input) g.inputs.push_back(id);
    return id;
  }
  Graph finish(OpKind op, std::vector<int> ins, Shape out, Attrs a, const std::string& module_type) {
    int o = value("output", std::move(out), ValueKind::Activation);
    g.values[o].kind = ValueKind::Activation;
    Node n;
    n.name = std::string(op_name(op));
    std::transform(n.name.begin(), n.name.end(), n.name.begin(), [](unsigned char c) { return std::tolower(c); });
    n.op = op;
    n.op_type = std::string(op_name(op));
    n.module = n.name;
    n.module_type = module_type;
    n.module_call = !module_type.empty();
    n.inputs = std::move(ins);
    n.outputs = {o};
    n.attrs = std::move(a);
    if (n.module_call) g.modules.push_back({n.module, module_type, {o}});
    g.add_node(std::move(n));
    g.outputs = {o};
    validate(g);
    return std::move(g);
  }
};

Shape parse_dims(const std::string& text, const std::string& desc) {
  try {
    return parse_shape(text, "descriptor '" + desc + "'");
  } catch (const Error&) {
    throw;
  }
}

}  // namespace

bool is_descriptor(const std::string& model) {
  auto colon = model.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string op = model.substr(0, colon);
  if (op == "conv" || op == "gemm" || op == "matmul") return true;
  for (int i = 0; i < kOpKindCount; ++i) {
    std::string name(op_name(static_cast<OpKind>(i)));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == op && static_cast<OpKind>(i) != OpKind::Unknown) return true;
  }
  return false;
}

Graph graph_from_descriptor(const std::string& desc, DType dtype) {
  const auto colon = desc.find(':');
  if (colon == std::string::npos) throw Error(fmt::format("descriptor '{}': expected OP:FIELDS", desc));
  const std::string op = desc.substr(0, colon), body = desc.substr(colon + 1);
  OneNode b{Graph{}, dtype};
  b.g.name = desc;
  b.g.source = "descriptor";
  if (op == "conv") {
    auto f = parse_fields(body, desc);
    const int64_t mb = need(f, "mb", desc), ic = need(f, "ic", desc), ih = need(f, "ih", desc),
                  iw = need(f, "iw", desc), oc = need(f, "oc", desc), kh = need(f, "kh", desc),
                  kw = need(f, "kw", desc), sh = opt(f, "sh", 1), sw = opt(f, "sw", 1), ph = opt(f, "ph", 0),
                  pw = opt(f, "pw", 0), dh = opt(f, "dh", 1), dw = opt(f, "dw", 1), g = opt(f, "g", 1);
    if (g < 1 || ic % g || oc % g) throw Error(fmt::format("descriptor '{}': groups {} must divide ic and oc", desc, g));
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1) throw Error(fmt::format("descriptor '{}': strides and dilations must be >= 1", desc));
    const int64_t oh = (ih + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (iw + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    if (oh < 1 || ow < 1) throw Error(fmt::format("descriptor '{}': the kernel does not fit the input", desc));
    if (f.count("oh") && f["oh"] != oh) throw Error(fmt::format("descriptor '{}': oh{} disagrees with the computed {}", desc, f["oh"], oh));
    if (f.count("ow") && f["ow"] != ow) throw Error(fmt::format("descriptor '{}': ow{} disagrees with the computed {}", desc, f["ow"], ow));
    std::vector<int> ins = {b.value("input", Shape{{mb, ic, ih, iw}}, ValueKind::Input),
                            b.value("weight", Shape{{oc, ic / g, kh, kw}}, ValueKind::Param)};
    if (opt(f, "b", 0)) ins.push_back(b.value("bias", Shape{{oc}}, ValueKind::Param));
    return b.finish(OpKind::Conv, ins, Shape{{mb, oc, oh, ow}}, conv2d_attrs({kh, kw, sh, sw, ph, pw, dh, dw, g}),
                    "Conv2d");
  }
  if (op == "gemm") {
    auto f = parse_fields(body, desc);
    const int64_t m = need(f, "m", desc), k = need(f, "k", desc), n = need(f, "n", desc);
    std::vector<int> ins = {b.value("input", Shape{{m, k}}, ValueKind::Input),
                            b.value("weight", Shape{{n, k}}, ValueKind::Param)};
    if (opt(f, "b", 0)) ins.push_back(b.value("bias", Shape{{n}}, ValueKind::Param));
    return b.finish(OpKind::Gemm, ins, Shape{{m, n}}, Attrs{}.set("transB", int64_t{1}), "Linear");
  }
  if (op == "matmul") {
    auto f = parse_fields(body, desc);
    const int64_t bs = opt(f, "bs", 1), m = need(f, "m", desc), k = need(f, "k", desc), n = need(f, "n", desc);
    std::vector<int> ins = {b.value("a", Shape{{bs, m, k}}, ValueKind::Input),
                            b.value("b", Shape{{bs, k, n}}, ValueKind::Input)};
    return b.finish(OpKind::MatMul, ins, Shape{{bs, m, n}}, {}, "");
  }
  // Generic: OP:SHAPE[,SHAPE] for shape-preserving unary and broadcasting binary ops.
  std::optional<OpKind> kind;
  for (int i = 0; i < kOpKindCount; ++i) {
    std::string name(op_name(static_cast<OpKind>(i)));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == op) kind = static_cast<OpKind>(i);
  }
  if (!kind || (op_family(*kind) != OpFamily::Unary && op_family(*kind) != OpFamily::Binary &&
                op_family(*kind) != OpFamily::Softmax))
    throw Error(fmt::format("descriptor '{}': op '{}' cannot be re-created from a descriptor (supported: conv, gemm, "
                            "matmul, elementwise unary/binary ops, softmax)",
                            desc, op));
  // OP:SHAPES[:DTYPE]
  std::string shapes = body;
  if (auto c2 = body.find(':'); c2 != std::string::npos) {
    auto dt = parse_dtype(body.substr(c2 + 1));
    if (!dt) throw Error(fmt::format("descriptor '{}': unknown element type '{}'", desc, body.substr(c2 + 1)));
    b.dtype = *dt;
    shapes = body.substr(0, c2);
  }
  std::vector<int> ins;
  Shape out;
  size_t start = 0;
  while (true) {
    size_t comma = shapes.find(',', start);
    Shape s = parse_dims(shapes.substr(start, comma == std::string::npos ? std::string::npos : comma - start), desc);
    out = ins.empty() ? s : broadcast_shapes(out, s, "descriptor '" + desc + "'");
    ins.push_back(b.value("input" + std::to_string(ins.size()), s, ValueKind::Input));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const size_t want = op_family(*kind) == OpFamily::Binary ? 2 : 1;
  if (ins.size() != want)
    throw Error(fmt::format("descriptor '{}': {} takes {} input shape(s)", desc, op, want));
  Attrs a;
  if (op_family(*kind) == OpFamily::Softmax) a.set("axis", int64_t{-1});
  return b.finish(*kind, ins, out, a, "");
}

}  // namespace ridge
