// The end-to-end program's epilogues: which nodes a Conv/Gemm/MatMul step runs as post-ops, BatchNorm folding,
// and the post-op attributes handed to oneDNN.
#include <algorithm>
#include <cmath>

#include "lowerings.hpp"

namespace ridge::exec {

namespace {

bool is_constant(const Graph& g, int vid) {
  return vid >= 0 && g.value(vid).producer < 0 && g.value(vid).kind != ValueKind::Input;
}

/// The (square) stride of a Conv, 1 when absent.
int64_t conv_stride(const Node& n) {
  const auto st = n.attrs.ints("strides");
  return st.empty() ? 1 : st[0];
}

/// True when every element of the integer attribute `key` (absent: none) equals `v`.
bool all_equal(const Node& n, const char* key, int64_t v) {
  for (int64_t x : n.attrs.ints(key))
    if (x != v) return false;
  return true;
}

/// A 2-D Conv with constant weights (and bias), `k` x `k` kernel, undilated, pads `pad`; `depthwise`: one group
/// per channel and as many outputs as inputs, else ungrouped and stride 1 (oneDNN's 1x1 + depthwise fusion).
bool fusable_conv(const Graph& g, const Node& n, int64_t k, int64_t pad, bool depthwise) {
  if (n.op != OpKind::Conv || n.inputs.size() < 2 || n.inputs[0] < 0 || !is_constant(g, n.inputs[1]) ||
      (n.inputs.size() > 2 && n.inputs[2] >= 0 && !is_constant(g, n.inputs[2])))
    return false;
  const Shape &xs = g.value(n.inputs[0]).shape, &ws = g.value(n.inputs[1]).shape;
  if (xs.rank() != 4 || ws.rank() != 4 || ws[2] != k || ws[3] != k || !all_equal(n, "dilations", 1) ||
      !all_equal(n, "pads", pad) || n.attrs.s("auto_pad", "NOTSET") != "NOTSET")
    return false;
  const int64_t group = n.attrs.i("group", 1);
  if (!depthwise) return group == 1 && all_equal(n, "strides", 1);
  const auto st = n.attrs.ints("strides");
  const bool square = st.empty() || (st.size() == 2 && st[0] == st[1] && (st[0] == 1 || st[0] == 2));
  return square && group == xs[1] && ws[0] == xs[1] && ws[1] == 1;
}

}  // namespace

Epilogue without_dw(const Graph& g, const Epilogue& e) {
  Epilogue head = e;
  head.ops.resize(e.dw_at);
  head.nodes.resize(std::find(e.nodes.begin(), e.nodes.end(), e.dw) - e.nodes.begin());
  head.out = head.nodes.empty() ? -1 : g.nodes[head.nodes.back()].outputs[0];  // eltwise ops only
  head.dw = -1;
  head.dw_tail.reset();
  return head;
}

std::vector<Epilogue> plan_epilogues(Program& p, std::vector<int>& absorbed) {
  const Graph& g = p.graph();
  std::vector<Epilogue> plan(g.nodes.size());
  const std::vector<int> order = topo_order(g);
  std::vector<int> pos(g.nodes.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  std::vector<std::vector<int>> consumers(g.values.size());
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (int in : g.nodes[n].inputs)
      if (in >= 0 && (consumers[in].empty() || consumers[in].back() != static_cast<int>(n)))
        consumers[in].push_back(static_cast<int>(n));
  std::vector<bool> is_output(g.values.size(), false);
  for (int out : g.outputs) is_output[out] = true;
  // The one node reading `vid` when nothing else (no other node, not the caller) needs it.
  auto sole_consumer = [&](int vid) {
    if (is_output[vid] || consumers[vid].size() != 1 || !is_float(g.value(vid).dtype)) return -1;
    const Node& c = g.nodes[consumers[vid][0]];
    for (size_t o = 1; o < c.outputs.size(); ++o)
      if (c.outputs[o] >= 0 && (is_output[c.outputs[o]] || !consumers[c.outputs[o]].empty())) return -1;
    return c.outputs.empty() || c.outputs[0] < 0 ? -1 : consumers[vid][0];
  };
  // True when an activation `vid` (not a view, not viewed) is read by nothing but `by` from position `at` on.
  auto last_read_before = [&](int vid, int by, int at) {
    const int producer = g.value(vid).producer;
    if (producer < 0 || is_output[vid] || is_view_op(g.nodes[producer].op)) return false;
    for (int c : consumers[vid])
      if (c != by && (pos[c] >= at || is_view_op(g.nodes[c].op))) return false;
    return true;
  };
  // Node `ni` as `op` whose input `i` is `vid` and whose other input is a known scalar equal to `value`.
  auto with_scalar = [&](int ni, OpKind op, int vid, float value, float tolerance = 0) {
    if (ni < 0 || absorbed[ni] >= 0 || g.nodes[ni].op != op || g.nodes[ni].inputs.size() != 2) return false;
    const Node& n = g.nodes[ni];
    const size_t other = n.inputs[0] == vid ? 1 : 0;
    if (n.inputs[1 - other] != vid) return false;
    auto s = scalar_input(p, n, other);
    return s && std::abs(*s - value) <= tolerance;
  };
  auto out = [&](int ni) { return g.nodes[ni].outputs[0]; };
  // A 1-D constant of `n` elements: the other input of node `ni` (an elementwise op reading `vid`).
  auto vector_operand = [&](int ni, int vid, int64_t n) {
    const Node& node = g.nodes[ni];
    if (node.inputs.size() != 2) return -1;
    const int other = node.inputs[0] == vid ? node.inputs[1] : node.inputs[0];
    const Shape& s = g.value(other).shape;
    return is_constant(g, other) && s.rank() == 1 && s[0] == n ? other : -1;
  };
  // erf GELU of `x`: x * (erf(x / sqrt 2) + 1) * 0.5 as torch exports it (Div, Erf, Add, Mul, Mul).
  auto match_gelu = [&](int x, Epilogue& e) {
    if (is_output[x] || consumers[x].size() != 2) return false;
    for (int div : consumers[x]) {
      if (!with_scalar(div, OpKind::Div, x, 1.4142135f, 1e-5f)) continue;
      const int erf = sole_consumer(out(div));
      if (erf < 0 || g.nodes[erf].op != OpKind::Erf) return false;
      const int add = sole_consumer(out(erf));
      if (!with_scalar(add, OpKind::Add, out(erf), 1.f)) return false;
      const int mul = sole_consumer(out(add));
      const int other = consumers[x][0] == div ? consumers[x][1] : consumers[x][0];
      if (mul != other || g.nodes[mul].op != OpKind::Mul) return false;
      const int half = sole_consumer(out(mul));
      if (!with_scalar(half, OpKind::Mul, out(mul), 0.5f)) return false;
      e.nodes.insert(e.nodes.end(), {div, erf, add, mul, half});
      e.ops.push_back(PostOp{half, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, -1, false});
      return true;
    }
    return false;
  };
  // LayerNorm over the last axis decomposed from ReduceMean node `rm` on: (x - mean) / sqrt(var + eps) * s + b.
  auto match_layer_norm = [&](int rm, Epilogue& e) {
    const Node& n = g.nodes[rm];
    const int x = input_at(n, 0), rank = g.value(x).shape.rank();
    auto last_axis = [&](const Node& r) {
      auto axes = r.attrs.has("axes") ? std::optional(r.attrs.ints("axes")) : int_input(p, r, 1);
      return r.op == OpKind::ReduceMean && r.attrs.i("keepdims", 1) == 1 && axes && axes->size() == 1 &&
             ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
    };
    if (rank < 1 || !last_axis(n)) return false;
    const int64_t inner = g.value(x).shape[-1];
    const int sub = sole_consumer(out(rm));
    if (sub < 0 || g.nodes[sub].op != OpKind::Sub || g.nodes[sub].inputs != std::vector<int>{x, out(rm)}) return false;
    const int d = out(sub);
    if (is_output[d] || consumers[d].size() != 2) return false;
    const int pow = g.nodes[consumers[d][0]].op == OpKind::Pow ? consumers[d][0] : consumers[d][1];
    const int div = pow == consumers[d][0] ? consumers[d][1] : consumers[d][0];
    if (!with_scalar(pow, OpKind::Pow, d, 2.f) || g.nodes[pow].inputs[0] != d) return false;
    const int var = sole_consumer(out(pow));
    if (var < 0 || !last_axis(g.nodes[var])) return false;
    const int eps = sole_consumer(out(var));
    if (eps < 0 || g.nodes[eps].op != OpKind::Add) return false;
    const Node& en = g.nodes[eps];
    auto epsilon = scalar_input(p, en, en.inputs[0] == out(var) ? 1 : 0);
    if (!epsilon || *epsilon < 0 || *epsilon > 1e-2f) return false;
    const int sqrt = sole_consumer(out(eps));
    if (sqrt < 0 || g.nodes[sqrt].op != OpKind::Sqrt || sole_consumer(out(sqrt)) != div ||
        g.nodes[div].op != OpKind::Div || g.nodes[div].inputs != std::vector<int>{d, out(sqrt)})
      return false;
    const int mul = sole_consumer(out(div));
    if (mul < 0 || g.nodes[mul].op != OpKind::Mul || (e.scale = vector_operand(mul, out(div), inner)) < 0) return false;
    const int add = sole_consumer(out(mul));
    if (add < 0 || g.nodes[add].op != OpKind::Add || (e.shift = vector_operand(add, out(mul), inner)) < 0) return false;
    e.composite = OpKind::LayerNormalization;
    e.x = x;
    e.epsilon = *epsilon;
    e.nodes = {sub, pow, var, eps, sqrt, div, mul, add};
    return true;
  };
  auto commit = [&](int ni, Epilogue e, int v) {
    for (int a : e.nodes) absorbed[a] = ni;
    e.out = v;
    plan[ni] = std::move(e);
  };
  for (int ni : order) {
    const Node& n = g.nodes[ni];
    if (absorbed[ni] >= 0 || n.outputs.empty()) continue;
    if (Epilogue e; n.op == OpKind::ReduceMean && match_layer_norm(ni, e)) {
      const int v = out(e.nodes.back());
      commit(ni, std::move(e), v);
      continue;
    }
    if (Epilogue e; n.op == OpKind::Div && !n.inputs.empty() && match_gelu(n.inputs[0], e) && e.nodes[0] == ni) {
      e.composite = OpKind::Gelu;
      e.x = n.inputs[0];
      const int v = out(e.nodes.back());
      e.nodes.erase(e.nodes.begin());  // the anchor itself
      commit(ni, std::move(e), v);
      continue;
    }
    if (n.op != OpKind::Conv && n.op != OpKind::Gemm && n.op != OpKind::MatMul) continue;
    Epilogue e;
    int v = n.outputs[0];
    // MatMul(x / s, b) = MatMul(x, b) / s: the attention scale as a linear post-op, run before the others.
    if (const int div = n.op == OpKind::MatMul ? g.value(input_at(n, 0)).producer : -1;
        div >= 0 && absorbed[div] < 0 && g.nodes[div].op == OpKind::Div && g.nodes[div].inputs.size() == 2 &&
        sole_consumer(out(div)) == ni && g.value(g.nodes[div].inputs[0]).shape == g.value(out(div)).shape) {
      const auto s = scalar_input(p, g.nodes[div], 1);
      if (s && *s != 0 && std::isfinite(1.f / *s)) {
        e.x = g.nodes[div].inputs[0];
        e.ops.push_back(PostOp{div, dnnl::algorithm::eltwise_linear, 1.f / *s, 0.f, -1, false});
        e.nodes.push_back(div);
      }
    }
    for (int c; (c = sole_consumer(v)) >= 0 || consumers[v].size() == 2;) {
      if (match_gelu(v, e)) {
        v = out(e.nodes.back());
        continue;
      }
      if (c < 0) break;
      const Node& cn = g.nodes[c];
      if (cn.op == OpKind::BatchNormalization) {
        const int w = input_at(n, 1);
        bool foldable = n.op == OpKind::Conv && e.nodes.empty() && cn.inputs.size() >= 5 && cn.inputs[0] == v &&
                        is_constant(g, w) && consumers[w].size() == 1 && is_constant(g, input_at(n, 2)) == (input_at(n, 2) >= 0);
        for (size_t i = 1; i < 5 && foldable; ++i) foldable = is_constant(g, cn.inputs[i]);
        if (!foldable) break;
        e.batchnorm = c;
      } else if (cn.op == OpKind::Add && cn.inputs.size() == 2) {
        const int other = cn.inputs[0] == v ? cn.inputs[1] : cn.inputs[0];
        if (other == v || other < 0) break;
        const Shape &vs = g.value(v).shape, &os = g.value(other).shape;
        const int producer = g.value(other).producer;
        if (n.op == OpKind::MatMul && e.bias < 0 && e.ops.empty() && is_constant(g, other) && os.rank() == 1 &&
            vs.rank() >= 1 && os[0] == vs[-1])
          e.bias = other;
        else if (os == vs && g.value(cn.outputs[0]).shape == vs && (producer < 0 || pos[producer] < pos[ni]))
          e.ops.push_back(PostOp{c, dnnl::algorithm::binary_add, 0.f, 0.f, other,
                                 e.ops.empty() && last_read_before(other, c, pos[ni])});
        else
          break;
      } else if (auto op = eltwise_post_op(p, c)) {
        e.ops.push_back(*op);
      } else {
        break;
      }
      e.nodes.push_back(c);
      v = cn.outputs[0];
    }
    if (!e.nodes.empty()) commit(ni, std::move(e), v);
  }
  // A 1x1 Conv (with eltwise post-ops only) whose result only a 3x3 depthwise Conv reads takes that conv, and
  // the depthwise conv's own eltwise post-ops, as oneDNN's fused depthwise post-op.
  auto eltwise_only = [](const Epilogue& e) {
    return e.batchnorm < 0 && e.bias < 0 && e.composite == OpKind::Unknown &&
           std::all_of(e.ops.begin(), e.ops.end(), [](const PostOp& op) { return op.operand < 0; });
  };
  for (int ni : order) {
    if (absorbed[ni] >= 0 || !fusable_conv(g, g.nodes[ni], 1, 0, false) || plan[ni].dw >= 0) continue;
    Epilogue& e = plan[ni];
    const int v = e.nodes.empty() ? out(ni) : e.out, dw = sole_consumer(v);
    if (dw < 0 || absorbed[dw] >= 0 || !fusable_conv(g, g.nodes[dw], 3, 1, true) || !eltwise_only(e) ||
        !eltwise_only(plan[dw]) || g.nodes[dw].inputs[0] != v)
      continue;
    auto tail = std::make_shared<const Epilogue>(std::move(plan[dw]));
    plan[dw] = Epilogue{};
    e.dw = dw;
    e.dw_at = e.ops.size();
    e.dw_tail = tail;
    e.nodes.push_back(dw);
    e.ops.insert(e.ops.end(), tail->ops.begin(), tail->ops.end());
    e.nodes.insert(e.nodes.end(), tail->nodes.begin(), tail->nodes.end());
    e.out = tail->nodes.empty() ? out(dw) : tail->out;
    for (int a : e.nodes) absorbed[a] = ni;
  }
  return plan;
}

memory in_place_operand(Program& p, const Epilogue& e, const memory::desc& dst) {
  if (e.ops.empty() || e.ops[0].operand < 0) return memory();
  const PostOp& add = e.ops[0];
  if (!add.in_place || !p.step_written(add.operand)) return memory();
  const memory v = p.value(add.operand);
  if (v.get_desc() == dst) return v;
  if (is_plain(v.get_desc()) && is_plain(dst) && element_count(v.get_desc()) == element_count(dst))
    return p.view(v, dst.dims());
  return memory();
}

dnnl::primitive_attr post_op_attr(Program& p, int ni, const Epilogue* e, const memory::desc& dst,
                                  std::unordered_map<int, memory>& args) {
  dnnl::primitive_attr attr;
  if (!e || (e->ops.empty() && e->dw < 0)) return attr;
  dnnl::post_ops ops;
  for (size_t i = 0; i <= e->ops.size(); ++i) {
    if (i == e->dw_at && e->dw >= 0) {  // 3x3 depthwise, pads 1: its weights and bias are bound by the conv
      const auto stride = conv_stride(node_of(p, e->dw));
      ops.append_dw(memory::data_type::f32, memory::data_type::f32, memory::data_type::f32, 3, stride, 1, 0, {1.f});
    }
    if (i == e->ops.size()) break;
    const PostOp& op = e->ops[i];
    if (op.operand < 0) {
      ops.append_eltwise(1.f, op.alg, op.alpha, op.beta);
      continue;
    }
    if (i == 0 && in_place_operand(p, *e, dst)) {  // already in dst (epilogue_dst)
      ops.append_sum(1.f);
      continue;
    }
    const memory m = to_dims(shape_of(p, op.operand)) == dst.dims() ? p.in_layout(op.operand, dst, ni)
                                                                    : p.view(p.plain(op.operand, ni), dst.dims());
    ops.append_binary(op.alg, m.get_desc());
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] = m;
  }
  attr.set_post_ops(ops);
  return attr;
}

memory epilogue_dst(Program& p, int /*ni*/, const Epilogue* e, const memory::desc& dst) {
  if (!e || e->ops.empty() || e->ops[0].operand < 0) return p.alloc(dst);
  const memory in_place = in_place_operand(p, *e, dst);
  return in_place ? in_place : p.alloc(dst);
}

FoldedConv fold_batchnorm(Program& p, int conv, const Epilogue& e, const memory::desc& wei_as,
                          const memory::desc& want) {
  const Node &c = node_of(p, conv), &bn = node_of(p, e.batchnorm);
  const int W = input_at(c, 1), B = input_at(c, 2);
  auto host = [&](int vid) { return data_of(p.plain(vid, conv)); };
  const float *w = host(W), *b = B >= 0 ? host(B) : nullptr, *scale = host(bn.inputs[1]), *shift = host(bn.inputs[2]),
              *mean = host(bn.inputs[3]), *var = host(bn.inputs[4]);
  const float eps = static_cast<float>(bn.attrs.f("epsilon", 1e-5));
  const int64_t oc = shape_of(p, W)[0], per = element_count(wei_as) / oc;
  const bool packs = want != wei_as;  // then the folded plain weights are only a build-time temporary
  FoldedConv f{packs ? memory(wei_as, p.engine()) : p.alloc(wei_as), p.alloc(plain_desc({oc}))};
  float *fw = data_of(f.weights), *fb = data_of(f.bias);
  for (int64_t o = 0; o < oc; ++o) {
    const float k = scale[o] / std::sqrt(var[o] + eps);
    for (int64_t j = 0; j < per; ++j) fw[o * per + j] = w[o * per + j] * k;
    fb[o] = ((b ? b[o] : 0.f) - mean[o]) * k + shift[o];
  }
  if (packs) {
    memory packed = p.alloc(want);
    p.run_now(dnnl::reorder(f.weights, packed), {{DNNL_ARG_FROM, f.weights}, {DNNL_ARG_TO, packed}});
    f.weights = packed;
  }
  return f;
}

}  // namespace ridge::exec
