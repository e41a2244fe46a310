// Layer descriptors: one OpProblem value that prints and parses. Families with a benchdnn-style short form
// (conv, gemm, matmul) print and parse it in their own file; every op has the generic form
//   name:INPUT,INPUT,...[:dtype][/attr=value]...
// where INPUT is [n][p|b|c|i]SHAPE[@dtype][=v_v_v]: the optional prefixes say "no gradient flows in" (n) and the
// value's kind (parameter, buffer, constant, graph input) where it differs from the op's role for that
// position; '-' is an omitted input; '=' gives an integer payload (target shapes, axes). Attribute values are
// integers, reals (always with '.' or 'e'), '_'-joined lists of them, or %-escaped strings.
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "ops/family.hpp"
#include "ridge/error.hpp"

namespace ridge::ops {

namespace {

ValueKind default_kind(OpKind op, int index) {
  switch (input_role(op, index)) {
    case InputRole::Weight: return ValueKind::Param;
    case InputRole::Statistic: return ValueKind::Buffer;
    case InputRole::Integer: return ValueKind::Constant;
    default: return ValueKind::Input;
  }
}

char kind_letter(ValueKind k) {
  switch (k) {
    case ValueKind::Param: return 'p';
    case ValueKind::Buffer: return 'b';
    case ValueKind::Constant: return 'c';
    default: return 'i';
  }
}

bool safe_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

std::string escape(const std::string& s) {
  if (s.empty()) return "%";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool digit_first = i == 0 && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    if (safe_char(c) && !digit_first) out += c;
    else out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

std::string real(double d) {
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string print_attr(const AttrValue& v) {
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  if (auto p = std::get_if<double>(&v)) return real(*p);
  if (auto p = std::get_if<std::string>(&v)) return escape(*p);
  std::string out;
  if (auto p = std::get_if<std::vector<int64_t>>(&v))
    for (size_t i = 0; i < p->size(); ++i) out += (i ? "_" : "") + std::to_string((*p)[i]);
  if (auto p = std::get_if<std::vector<double>>(&v))
    for (size_t i = 0; i < p->size(); ++i) out += (i ? "_" : "") + real((*p)[i]);
  return out;
}

/// The longest integer payload a descriptor spells out (a Reshape's target shape, a Slice's starts, a Pad's pads).
constexpr size_t kMaxPrintedInts = 64;

std::string generic_body(const OpProblem& p) {
  std::string out;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const auto& in = p.inputs[i];
    if (i) out += ',';
    if (!in.present) {
      out += '-';
      continue;
    }
    const bool activation = in.kind == ValueKind::Input || in.kind == ValueKind::Activation;
    if (activation && !in.needs_grad && is_float(in.dtype)) out += 'n';
    if (in.kind != default_kind(p.op, static_cast<int>(i))) out += kind_letter(in.kind);
    out += to_string(in.shape);
    const bool shape_data = input_role(p.op, static_cast<int>(i)) == InputRole::Integer;
    const DType natural = shape_data ? DType::I64 : p.dtype;
    if (in.dtype != natural) out += "@" + std::string(dtype_name(in.dtype));
    // Values matter only where the rule reads them (target shapes, axes, pads); a quantized weight's int8 payload
    // or a Gather's index table would only make the descriptor long.
    if (in.has_ints && shape_data && in.ints.size() <= kMaxPrintedInts) {
      out += '=';
      for (size_t k = 0; k < in.ints.size(); ++k) out += (k ? "_" : "") + std::to_string(in.ints[k]);
    }
  }
  if (p.dtype != DType::F32) out += ":" + std::string(dtype_name(p.dtype));
  for (const auto& [k, v] : p.attrs.items) {
    if (auto vec = std::get_if<std::vector<int64_t>>(&v); vec && vec->empty()) continue;
    if (auto vec = std::get_if<std::vector<double>>(&v); vec && vec->empty()) continue;
    out += "/" + k + "=" + print_attr(v);
  }
  for (size_t k = 0; k < p.output_shapes.size(); ++k) out += fmt::format("/out{}={}", k, to_string(p.output_shapes[k]));
  return out;
}

[[noreturn]] void bad(const std::string& desc, const std::string& why) {
  throw Error(fmt::format("descriptor '{}': {}", desc, why));
}

int64_t parse_int(const std::string& s, const std::string& desc) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())  // INT64_MIN (a Slice's "from the end") reads
    bad(desc, fmt::format("'{}' is not an integer", s));
  return v;
}

double parse_real(const std::string& s, const std::string& desc) {
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) bad(desc, fmt::format("'{}' is not a number", s));
  return d;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

AttrValue parse_attr(const std::string& v, const std::string& desc) {
  const bool numeric = !v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-');
  if (!numeric) {
    std::string out;
    if (v == "%") return out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '%') {
        out += v[i];
        continue;
      }
      if (i + 2 >= v.size() || !std::isxdigit(static_cast<unsigned char>(v[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(v[i + 2])))
        bad(desc, fmt::format("bad %-escape in '{}'", v));
      out += static_cast<char>(std::strtol(v.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    }
    return out;
  }
  const bool is_real = v.find_first_of(".e") != std::string::npos;
  const auto parts = split(v, '_');
  if (parts.size() == 1) {
    if (is_real) return parse_real(v, desc);
    return parse_int(v, desc);
  }
  if (is_real) {
    std::vector<double> out;
    for (const auto& p : parts) out.push_back(parse_real(p, desc));
    return out;
  }
  std::vector<int64_t> out;
  for (const auto& p : parts) out.push_back(parse_int(p, desc));
  return out;
}

Shape parse_dims(const std::string& text, const std::string& desc) {
  if (text == "scalar") return Shape{};
  Shape s = parse_shape(text, "descriptor '" + desc + "'");
  for (int64_t d : s.dims)
    if (d > (int64_t{1} << 32)) bad(desc, fmt::format("dim {} is out of range", d));
  return s;
}

OpProblem parse_generic(OpKind op, const std::string& body, const std::string& desc, DType dtype) {
  OpProblem p;
  p.op = op;
  p.dtype = dtype;
  auto fields = split(body, '/');
  std::string inputs = fields[0];
  if (auto colon = inputs.find(':'); colon != std::string::npos) {
    auto dt = parse_dtype(inputs.substr(colon + 1));
    if (!dt) bad(desc, fmt::format("unknown element type '{}'", inputs.substr(colon + 1)));
    p.dtype = *dt;
    inputs = inputs.substr(0, colon);
  }
  if (inputs.empty() && !op_record(op).roles.empty()) bad(desc, "no input shapes (expected e.g. relu:1x64x56x56)");
  const auto tokens = inputs.empty() ? std::vector<std::string>{} : split(inputs, ',');
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string t = tokens[i];
    OpProblem::Input in;
    if (t == "-") {
      in.present = false;
      p.inputs.push_back(in);
      continue;
    }
    in.kind = default_kind(op, static_cast<int>(i));
    in.needs_grad = true;
    if (!t.empty() && t[0] == 'n') {
      in.needs_grad = false;
      t = t.substr(1);
    }
    if (!t.empty() && std::string("pbci").find(t[0]) != std::string::npos && t.rfind("scalar", 0) != 0) {
      in.kind = t[0] == 'p' ? ValueKind::Param : t[0] == 'b' ? ValueKind::Buffer : t[0] == 'c' ? ValueKind::Constant
                                                                                  : ValueKind::Input;
      t = t.substr(1);
    }
    if (auto eq = t.find('='); eq != std::string::npos) {
      for (const auto& v : split(t.substr(eq + 1), '_'))
        if (!v.empty()) in.ints.push_back(parse_int(v, desc));
      in.has_ints = true;
      t = t.substr(0, eq);
    }
    in.dtype = input_role(op, static_cast<int>(i)) == InputRole::Integer ? DType::I64 : p.dtype;
    if (auto at = t.find('@'); at != std::string::npos) {
      auto dt = parse_dtype(t.substr(at + 1));
      if (!dt) bad(desc, fmt::format("unknown element type '{}'", t.substr(at + 1)));
      in.dtype = *dt;
      t = t.substr(0, at);
    }
    in.shape = parse_dims(t, desc);
    if (in.has_ints && Count(in.ints.size()) != in.shape.elements())
      bad(desc, fmt::format("input {} has {} values for shape {}", i, in.ints.size(), to_string(in.shape)));
    if (!is_float(in.dtype) || in.kind == ValueKind::Constant) in.needs_grad = false;
    p.inputs.push_back(std::move(in));
  }
  for (size_t f = 1; f < fields.size(); ++f) {
    const auto eq = fields[f].find('=');
    if (eq == std::string::npos || eq == 0) bad(desc, fmt::format("'{}' is not attr=value", fields[f]));
    const std::string key = fields[f].substr(0, eq), value = fields[f].substr(eq + 1);
    if (key.rfind("out", 0) == 0 && key.size() > 3 && std::isdigit(static_cast<unsigned char>(key[3]))) {
      const size_t k = static_cast<size_t>(parse_int(key.substr(3), desc));
      if (k > 16) bad(desc, "too many outputs");
      p.output_shapes.resize(std::max(p.output_shapes.size(), k + 1));
      p.output_shapes[k] = parse_dims(value, desc);
      p.outputs = std::max<int>(p.outputs, static_cast<int>(k) + 1);
      continue;
    }
    p.attrs.set(key, parse_attr(value, desc));
  }
  if (op == OpKind::Split) p.outputs = std::max<int>(p.outputs, static_cast<int>(p.attrs.ints("split").size()));
  if (op == OpKind::SelectiveScan || op == OpKind::GatedDeltaRule || op == OpKind::MambaScan) p.outputs = std::max(p.outputs, 2);  // the output and the final state, always
  if (op == OpKind::TopK) p.outputs = std::max(p.outputs, 2);  // values and indices, always
  return p;
}

}  // namespace

std::map<std::string, int64_t> short_form_fields(const std::string& body, const std::string& desc) {
  std::map<std::string, int64_t> f;
  size_t i = 0;
  while (i < body.size()) {
    size_t k = i;
    while (k < body.size() && std::isalpha(static_cast<unsigned char>(body[k]))) ++k;
    size_t v = k;
    while (v < body.size() && std::isdigit(static_cast<unsigned char>(body[v]))) ++v;
    if (k == i || v == k || v - k > 12)
      bad(desc, fmt::format("cannot read '{}' (expected letters followed by a number)", body.substr(i)));
    f[body.substr(i, k - i)] = std::stoll(body.substr(k, v - k));
    i = v;
  }
  return f;
}

OpProblem problem_of(const Graph& g, const Node& n, const std::vector<bool>& grad) {
  OpProblem p;
  p.op = n.op;
  const std::vector<int> data = g.data_inputs(n);
  p.dtype = data.empty() ? DType::F32 : g.value(data[0]).dtype;
  if (p.dtype == DType::Unknown) p.dtype = DType::F32;
  for (int v : n.inputs) {
    OpProblem::Input in;
    if (v < 0) {
      in.present = false;
      p.inputs.push_back(in);
      continue;
    }
    const Value& val = g.value(v);
    in.shape = val.shape;
    in.kind = val.kind == ValueKind::Activation ? ValueKind::Input : val.kind;
    in.dtype = val.dtype == DType::Unknown ? p.dtype : val.dtype;
    in.needs_grad = static_cast<size_t>(v) < grad.size() && grad[v];
    in.has_ints = val.has_int_data && Count(val.int_data.size()) == (val.shape.known() ? val.shape.elements() : -1);
    if (in.has_ints) in.ints = val.int_data;
    p.inputs.push_back(std::move(in));
  }
  p.attrs = n.attrs;
  p.outputs = static_cast<int>(n.outputs.size());
  if (op_family(n.op) == OpFamily::Resize || n.op == OpKind::Constant || n.op == OpKind::Range ||
      n.op == OpKind::ConstantOfShape)
    for (int o : n.outputs) p.output_shapes.push_back(g.value(o).shape);
  return p;
}

std::string print_descriptor(const OpProblem& p) {
  const std::string name = descriptor_name(p.op);
  if (const auto print = op_rule(p.op).print) {
    const std::string body = print(p);
    if (!body.empty()) return name + ":" + body;
  }
  return name + ":" + generic_body(p);
}

std::string descriptor(const Graph& g, const Node& n, const std::vector<bool>& grad) {
  for (int v : n.inputs)
    if (v >= 0 && !g.value(v).shape.known()) return fmt::format("{}:?", op_name(n.op));
  for (int v : n.outputs)
    if (!g.value(v).shape.known()) return fmt::format("{}:?", op_name(n.op));
  return print_descriptor(problem_of(g, n, grad));
}

bool is_descriptor(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string name = text.substr(0, colon);
  for (int i = 0; i + 1 < kOpKindCount; ++i)
    if (descriptor_name(static_cast<OpKind>(i)) == name) return true;
  return false;
}

OpProblem parse_descriptor(const std::string& text, DType dtype) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) bad(text, "expected OP:FIELDS");
  const std::string name = text.substr(0, colon), body = text.substr(colon + 1);
  std::optional<OpKind> kind;
  for (int i = 0; i + 1 < kOpKindCount; ++i)
    if (descriptor_name(static_cast<OpKind>(i)) == name) kind = static_cast<OpKind>(i);
  if (!kind) bad(text, fmt::format("unknown op '{}'", name));
  if (body.empty()) bad(text, "nothing after the op name (expected input shapes, e.g. relu:1x64x56x56)");
  if (const auto parse = op_rule(*kind).parse) {
    if (auto p = parse(body, text)) {
      p->dtype = dtype;
      for (auto& in : p->inputs) in.dtype = dtype;
      return *p;
    }
  }
  return parse_generic(*kind, body, text, dtype);
}

Graph graph_of(const OpProblem& p, const std::string& name) {
  Graph g;
  g.name = name;
  g.source = "descriptor";
  Node n;
  n.name = descriptor_name(p.op);
  n.op = p.op;
  n.op_type = std::string(op_name(p.op));
  n.attrs = p.attrs;
  bool has_param = false;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const auto& in = p.inputs[i];
    if (!in.present) {
      n.inputs.push_back(-1);
      continue;
    }
    Value v;
    v.name = i == 0 ? "input" : fmt::format("input{}", i);
    if (in.kind == ValueKind::Param) v.name = i == 1 ? "weight" : i == 2 ? "bias" : fmt::format("param{}", i);
    v.dtype = in.dtype;
    v.shape = in.shape;
    v.kind = in.kind;
    v.needs_grad = in.needs_grad && in.kind == ValueKind::Input;
    v.int_data = in.ints;
    v.has_int_data = in.has_ints;
    has_param = has_param || in.kind == ValueKind::Param;
    const int id = g.add_value(std::move(v));
    if (in.kind == ValueKind::Input) g.inputs.push_back(id);
    n.inputs.push_back(id);
  }
  ShapeEnv env(g);
  for (int k = 0; k < p.outputs; ++k) {
    Value v;
    v.name = p.outputs == 1 ? "output" : fmt::format("output{}", k);
    v.dtype = DType::Unknown;
    n.outputs.push_back(env.add_value(std::move(v)));
  }
  const int spatial = p.inputs.empty() ? 0 : std::max(1, p.inputs[0].shape.rank() - 2);
  n.module_type = torch_module(p.op, spatial, has_param);
  n.module = n.name;
  n.module_call = !n.module_type.empty();
  g.add_node(n);
  for (size_t k = 0; k < p.output_shapes.size() && k < n.outputs.size(); ++k)
    if (p.output_shapes[k].known()) env.merge_shape(n.outputs[k], p.output_shapes[k]);
  const std::string label = print_descriptor(p);
  try {
    infer_shapes(env, 0);
  } catch (const RuleError& e) {
    bad(label, e.what());
  } catch (const Error& e) {
    bad(label, e.what());
  }
  for (int o : g.nodes[0].outputs) {
    Value& v = g.value(o);
    if (!env.rank_known[o] || !v.shape.known())
      bad(label, fmt::format("the output shape cannot be inferred from the inputs ({} needs its inputs' values)",
                             op_name(p.op)));
    if (v.dtype == DType::Unknown) v.dtype = p.dtype;
  }
  if (g.nodes[0].module_call) g.modules.push_back({g.nodes[0].module, g.nodes[0].module_type, {g.nodes[0].outputs[0]}});
  g.outputs = g.nodes[0].outputs;
  validate(g);
  return g;
}

}  // namespace ridge::ops
