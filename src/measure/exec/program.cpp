#include "program.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "ridge/error.hpp"

namespace ridge::exec {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool is_weight_like(const Value& v) { return v.producer < 0 && v.kind != ValueKind::Input; }

/// Largest valid index for an integer graph input: the smallest table it indexes through Gather.
int64_t index_bound(const Graph& g, int vid) {
  int64_t bound = -1;
  for (const auto& n : g.nodes) {
    if (n.op != OpKind::Gather || n.inputs.size() < 2 || n.inputs[1] != vid || n.inputs[0] < 0) continue;
    const Shape& table = g.value(n.inputs[0]).shape;
    int64_t axis = n.attrs.i("axis", 0);
    if (axis < 0) axis += table.rank();
    if (axis >= 0 && axis < table.rank()) bound = bound < 0 ? table[axis] : std::min(bound, table[axis]);
  }
  return bound > 0 ? bound : 2;
}

std::vector<bool> values_needing_grad(const Graph& g) {
  std::vector<bool> need(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) need[v] = g.values[v].kind == ValueKind::Param;
  for (int ni : topo_order(g)) {
    const Node& n = g.nodes[ni];
    bool any = false;
    for (int in : n.inputs)
      if (in >= 0 && need[in] && is_float(g.value(in).dtype)) any = true;
    for (int out : n.outputs)
      if (any && is_float(g.value(out).dtype)) need[out] = true;
  }
  return need;
}

}  // namespace

memory::desc plain_desc(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

Dims to_dims(const Shape& s) {
  if (s.rank() == 0) return {1};
  return Dims(s.dims.begin(), s.dims.end());
}

bool is_plain(const memory::desc& d) {
  const auto& md = d.data;
  if (md.format_kind != dnnl_blocked || md.format_desc.blocking.inner_nblks != 0 || md.offset0 != 0) return false;
  int64_t expect = 1;
  for (int i = md.ndims - 1; i >= 0; --i) {
    if (md.dims[i] != 1 && md.format_desc.blocking.strides[i] != expect) return false;
    expect *= md.dims[i];
  }
  return true;
}

int64_t element_count(const memory::desc& d) {
  int64_t n = 1;
  for (auto x : d.dims()) n *= x;
  return n;
}

int set_threads(int t) {
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (t > 0 && set) set(t);
  return get ? get() : 1;
}

std::shared_ptr<const AllocPlan> Program::buffer_plan(const Graph& g, const ExecOptions& opts) {
  if (!opts.fuse || opts.train) return nullptr;
  const Program probe(g, opts, nullptr);  // freed before the real build starts
  return std::make_shared<const AllocPlan>(probe.plan_buffers());
}

Program::Program(const Graph& g, const ExecOptions& opts) : Program(g, opts, buffer_plan(g, opts)) {}

Program::Program(const Graph& g, const ExecOptions& opts, std::shared_ptr<const AllocPlan> plan)
    : g_(g), opts_(opts), eng_(dnnl::engine::kind::cpu, 0), strm_(eng_) {
  set_threads(opts.threads);
  vals_.resize(g.values.size());
  plain_cache_.resize(g.values.size());
  graph_order_.resize(g.values.size());
  grads_.resize(g.values.size());
  synthetic_.assign(g.values.size(), false);
  need_grad_ = opts.train ? values_needing_grad(g) : std::vector<bool>(g.values.size(), false);
  absorbed_.assign(g.nodes.size(), -1);
  plan_ = std::move(plan);
  if (plan_ && plan_->arena_bytes > 0)
    arena_ = std::shared_ptr<char>(static_cast<char*>(std::aligned_alloc(64, plan_->arena_bytes)), std::free);
  if (arena_) buffer_bytes_ += static_cast<Count>(plan_->arena_bytes);
  bind_initial_values();
  if (opts.fuse && !opts.train) {
    epilogues_ = plan_epilogues(*this, absorbed_);
    blocked_convs_ = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return winograd_conv(g, n); }) ||
                     std::any_of(epilogues_.begin(), epilogues_.end(), [](const Epilogue& e) { return e.dw >= 0; });
  }
  lower_all();
}

const HostTensor* Program::payload(int vid) const {
  const Value& v = g_.value(vid);
  const auto& map = v.kind == ValueKind::Input ? opts_.inputs : opts_.weights;
  auto it = map.find(v.name);
  if (it == map.end() && !v.source_name.empty()) it = map.find(v.source_name);  // renamed by the importer
  return it == map.end() ? nullptr : &it->second;
}

memory Program::alloc(const memory::desc& d) {
  const size_t k = allocs_.size();
  const bool shared = arena_ && k < plan_->offset.size() && plan_->offset[k] >= 0;
  memory m;
  try {
    m = shared ? memory(d, eng_, arena_.get() + plan_->offset[k]) : memory(d, eng_);
  } catch (const dnnl::error&) {  // oneDNN says only "could not create a memory object"
    throw Error("could not allocate " + std::to_string(d.get_size()) + " bytes" +
                (current_node_ >= 0 && current_node_ < static_cast<int>(g_.nodes.size())
                     ? " for node '" + g_.nodes[current_node_].name + "'"
                     : std::string()) +
                " (out of memory)");
  }
  std::memset(m.get_data_handle(), 0, d.get_size());
  allocs_.push_back({static_cast<const char*>(m.get_data_handle()), d.get_size(), current_node_, false});
  if (!shared) buffer_bytes_ += static_cast<Count>(d.get_size());
  keep_alive_.push_back(m);  // views and closures may alias it; buffers live as long as the program
  return m;
}

void Program::fill_value(int vid) {
  const Value& v = g_.value(vid);
  if (!v.shape.known())
    throw Error("value '" + v.name + "': shape " + to_string(v.shape) + " is not fully known" +
                (v.shape_note.empty() ? "" : " (" + v.shape_note + ")") + "; cannot execute");
  memory m = alloc(plain_desc(to_dims(v.shape)));
  float* p = data_of(m);
  const int64_t n = static_cast<int64_t>(v.shape.elements());
  if (const HostTensor* t = payload(vid)) {
    if (static_cast<int64_t>(t->data.size()) != n)
      throw Error("value '" + v.name + "': given tensor has shape " + to_string(t->shape) + ", the graph expects " +
                  to_string(v.shape));
    std::copy(t->data.begin(), t->data.end(), p);
  } else if (v.has_int_data && static_cast<int64_t>(v.int_data.size()) == n) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v.int_data[i]);
  } else {
    std::mt19937_64 rng(opts_.seed ^ fnv1a(v.name));
    if (v.kind == ValueKind::Input && !is_float(v.dtype)) {
      std::uniform_int_distribution<int64_t> ids(0, index_bound(g_, vid) - 1);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(ids(rng));
    } else {
      float lo = -1, hi = 1;
      if (v.kind == ValueKind::Param && v.shape.rank() >= 2) {
        hi = 1.0f / std::sqrt(static_cast<float>(n / v.shape[0]));
        lo = -hi;
      } else if (v.kind != ValueKind::Input) {
        lo = 0.5f, hi = 1.5f;  // biases, norm scales, running variances, scalars: positive and near 1
      }
      std::uniform_real_distribution<float> dist(lo, hi);
      for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
    }
  }
  vals_[vid] = m;
}

void Program::bind_initial_values() {
  bool random_weights = false, random_inputs = false;
  for (size_t v = 0; v < g_.values.size(); ++v) {
    const Value& val = g_.values[v];
    if (val.producer >= 0) continue;
    bool used = false;
    for (const auto& n : g_.nodes)
      for (int in : n.inputs) used |= in == static_cast<int>(v);
    for (int out : g_.outputs) used |= out == static_cast<int>(v);
    if (!used) continue;
    fill_value(static_cast<int>(v));
    if (!payload(static_cast<int>(v)) && !val.has_int_data) {
      if (val.kind == ValueKind::Input) random_inputs = true;
      else random_weights = true;
    }
  }
  if (random_weights) note("weights without a payload are random (seed " + std::to_string(opts_.seed) + ")");
  if (random_inputs) note("graph inputs without data are random (seed " + std::to_string(opts_.seed) + ")");
}

memory& Program::value(int vid) {
  memory& m = vals_.at(vid);
  RIDGE_ASSERT(m, "value used before it was produced");
  return m;
}

void Program::run_now(dnnl::primitive p, const std::unordered_map<int, memory>& args) {
  p.execute(strm_, args);
  strm_.wait();
}

memory Program::in_layout(int vid, const memory::desc& want, int node) {
  memory src = value(vid);
  if (src.get_desc() == want) return src;
  if (is_plain(want) && plain_cache_[vid] && plain_cache_[vid].get_desc() == want) return plain_cache_[vid];
  memory dst = alloc(want);
  dnnl::reorder r(src, dst);
  if (is_weight_like(g_.value(vid))) {
    run_now(r, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  } else {
    mark_shareable(dst);
    Step& s = add_step(node, "reorder", [this, r, src, dst] {
      r.execute(strm_, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
    });
    s.info.name = g_.nodes[node].name + ".reorder";
    s.info.op = "Reorder";
    s.info.bytes_moved = static_cast<Count>(src.get_desc().get_size() + want.get_size());
  }
  if (is_plain(want)) plain_cache_[vid] = dst;
  return dst;
}

memory Program::plain(int vid, int node) {
  memory src = value(vid);
  if (is_plain(src.get_desc())) return src;
  return in_layout(vid, plain_desc(src.get_desc().dims()), node);
}

memory& Program::grad(int vid) {
  memory& g = grads_.at(vid);
  if (!g) g = alloc(value(vid).get_desc());
  return g;
}

void Program::start_backward() {
  for (auto& g : grads_)
    if (g) std::memset(g.get_data_handle(), 0, g.get_desc().get_size());
  for (int out : g_.outputs) {
    if (!grads_[out]) continue;
    float* p = data_of(grads_[out]);
    std::fill(p, p + grads_[out].get_desc().get_size() / sizeof(float), 1.0f);
  }
}

std::function<void()> Program::accumulate_into_grad(int vid, const memory& diff) {
  memory g = grad(vid);
  dnnl::post_ops ops;
  ops.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  memory src = diff;
  if (src.get_desc().dims() != g.get_desc().dims()) src = view(diff, g.get_desc().dims());
  dnnl::reorder r(dnnl::reorder::primitive_desc(src, g, attr));
  return [this, r, src, g] { r.execute(strm_, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, g}}); };
}

memory Program::view(const memory& m, const Dims& dims) {
  RIDGE_ASSERT(is_plain(m.get_desc()), "view of a non-plain memory");
  const memory::desc d = plain_desc(dims);
  if (d.get_size() > m.get_desc().get_size())  // the graph's shapes disagree with what the op computes
    throw NoKernel{"a view of " + std::to_string(element_count(d)) + " elements over a buffer of " +
                   std::to_string(element_count(m.get_desc()))};
  return memory(d, eng_, m.get_data_handle());
}

memory Program::weight_as(int vid, const memory::desc& as, const memory::desc& want) {
  memory src = value(vid);
  const Value& v = g_.value(vid);
  if (graph_order_[vid].is_zero()) {  // first use: the value's own plain buffer, seen through `as`
    if (!is_plain(src.get_desc()) || src.get_desc().get_size() != as.get_size())
      throw NoKernel{"weights '" + v.name + "' are not a plain tensor of " + std::to_string(element_count(as)) +
                     " elements"};
    graph_order_[vid] = as;
    if (src.get_desc() != as) {
      keep_alive_.push_back(src);
      src = memory(as, eng_, src.get_data_handle());
    }
  } else if (graph_order_[vid] != as) {
    throw NoKernel{"weights '" + v.name + "' are read with different shapes by two kernels"};
  }
  if (src.get_desc() != want) {
    if (v.producer >= 0 && !v.has_int_data)  // the build-time reorder would read data not computed yet
      throw NoKernel{"weights '" + v.name + "' are computed at run time and need a layout change"};
    keep_alive_.push_back(src);
    memory dst = alloc(want);
    run_now(dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
    src = dst;
  }
  vals_[vid] = src;
  plain_cache_[vid] = memory();
  return src;
}

void Program::sgd_update() {
  const float lr = opts_.learning_rate;
  for (size_t v = 0; v < grads_.size(); ++v) {
    if (!grads_[v] || !is_param(static_cast<int>(v))) continue;
    float* w = data_of(vals_[v]);
    const float* g = data_of(grads_[v]);
    const size_t n = grads_[v].get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) w[i] -= lr * g[i];
  }
}

Step& Program::add_step(int node, std::string kernel, std::function<void()> forward) {
  Step s;
  const Node& n = g_.nodes.at(node);
  s.info.name = n.name;
  s.info.op = n.op == OpKind::Unknown ? n.op_type : std::string(op_name(n.op));
  s.info.node = node;
  s.info.kernel = std::move(kernel);
  s.forward = std::move(forward);
  steps_.push_back(std::move(s));
  return steps_.back();
}

void Program::note(const std::string& s) {
  for (const auto& n : notes_)
    if (n == s) return;
  notes_.push_back(s);
}

HostTensor Program::read(int vid) { return read_in_graph_order(vid, value(vid)); }

HostTensor Program::read_grad(int vid) {
  if (grads_[vid]) return read_in_graph_order(vid, grads_[vid]);
  HostTensor t;
  t.shape = g_.value(vid).shape;
  t.data.assign(static_cast<size_t>(t.shape.elements()), 0.f);
  return t;
}

HostTensor Program::read_in_graph_order(int vid, const memory& src) {
  HostTensor t;
  t.shape = g_.value(vid).shape;
  const bool reshaped = !graph_order_[vid].is_zero() && graph_order_[vid].dims() == src.get_desc().dims();
  memory dst = src;
  if (reshaped || !is_plain(src.get_desc())) {
    dst = memory(reshaped ? graph_order_[vid] : plain_desc(src.get_desc().dims()), eng_);
    run_now(dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  }
  const float* p = data_of(dst);
  t.data.assign(p, p + element_count(dst.get_desc()));
  return t;
}

void Program::mark_shareable(const memory& m) {
  const char* ptr = static_cast<const char*>(m.get_data_handle());
  for (auto r = allocs_.rbegin(); r != allocs_.rend() && r->node == current_node_ && current_node_ >= 0; ++r)
    if (ptr >= r->ptr && ptr < r->ptr + r->bytes) r->shareable = true;
}

void Program::set_value(int vid, const memory& m) {
  vals_.at(vid) = m;
  mark_shareable(m);
}

bool Program::step_written(int vid) const {
  const char* ptr = static_cast<const char*>(vals_.at(vid).get_data_handle());
  for (const auto& r : allocs_)
    if (ptr >= r.ptr && ptr < r.ptr + r.bytes) return r.shareable;
  return false;
}

const Epilogue* Program::epilogue(int node) const {
  return epilogues_.empty() || epilogues_.at(node).nodes.empty() ? nullptr : &epilogues_[node];
}

int Program::final_output(int node) const {
  const Epilogue* e = epilogue(node);
  return e ? e->out : g_.nodes.at(node).outputs.at(0);
}

AllocPlan Program::plan_buffers() const {
  const std::vector<int> order = topo_order(g_);
  std::vector<int> pos(g_.nodes.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  const int end_of_program = static_cast<int>(order.size());
  std::vector<int> last_use(g_.values.size(), -1);
  for (size_t n = 0; n < g_.nodes.size(); ++n) {
    const int at = absorbed_[n] >= 0 ? std::max(pos[n], pos[absorbed_[n]]) : pos[n];  // its anchor reads them
    for (int in : g_.nodes[n].inputs)
      if (in >= 0) last_use[in] = std::max(last_use[in], at);
  }
  for (int out : g_.outputs) last_use[out] = end_of_program;
  // Lifetime of every shareable buffer: from the node that allocated it to the last use of any value it holds.
  struct Life {
    int first, last;
  };
  std::vector<Life> life(allocs_.size(), Life{0, -1});
  for (size_t k = 0; k < allocs_.size(); ++k)
    if (allocs_[k].shareable) life[k] = {pos[allocs_[k].node], pos[allocs_[k].node]};
  auto extend = [&](const memory& m, int until) {
    if (!m) return;
    const char* ptr = static_cast<const char*>(m.get_data_handle());
    for (size_t k = 0; k < allocs_.size(); ++k)
      if (allocs_[k].shareable && ptr >= allocs_[k].ptr && ptr < allocs_[k].ptr + allocs_[k].bytes)
        life[k].last = std::max(life[k].last, until);
  };
  for (size_t v = 0; v < g_.values.size(); ++v) {
    extend(vals_[v], last_use[v]);
    extend(plain_cache_[v], last_use[v]);
  }
  // First fit, largest first, at 64-byte aligned offsets.
  std::vector<size_t> by_size;
  for (size_t k = 0; k < allocs_.size(); ++k)
    if (allocs_[k].shareable) by_size.push_back(k);
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) { return allocs_[a].bytes > allocs_[b].bytes; });
  AllocPlan plan;
  plan.offset.assign(allocs_.size(), -1);
  std::vector<size_t> placed;
  for (size_t k : by_size) {
    const int64_t bytes = static_cast<int64_t>((allocs_[k].bytes + 63) / 64 * 64);
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of placed buffers alive at the same time
    for (size_t j : placed)
      if (life[j].first <= life[k].last && life[k].first <= life[j].last)
        busy.emplace_back(plan.offset[j], plan.offset[j] + static_cast<int64_t>((allocs_[j].bytes + 63) / 64 * 64));
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [b, e] : busy) {
      if (at + bytes <= b) break;
      at = std::max(at, e);
    }
    plan.offset[k] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, static_cast<size_t>(at + bytes));
    placed.push_back(k);
  }
  return plan;
}

bool Program::materialized(int vid) const {
  for (int out : g_.outputs)
    if (out == vid) return true;
  for (size_t n = 0; n < g_.nodes.size(); ++n)
    if (absorbed_[n] < 0)
      for (int in : g_.nodes[n].inputs)
        if (in == vid) return true;
  return false;
}

std::string Program::try_lower(int ni) {
  const size_t first_step = steps_.size();
  const std::vector<memory> cache = plain_cache_;
  using Refuse = ExecOptions::Refuse;
  if (const Epilogue* e = epilogue(ni); e && (opts_.refuse_fused == Refuse::Any ||
                                             (opts_.refuse_fused == Refuse::Depthwise && e->dw >= 0)))
    return "oneDNN refused it (ExecOptions::refuse_fused)";
  try {
    lower_node(*this, ni);
    for (int out : g_.nodes[ni].outputs)
      if (out >= 0 && !vals_[out] && materialized(out))
        throw NoKernel{"output '" + g_.value(out).name + "' is not computed by the executor"};
    return "";
  } catch (const NoKernel& e) {
    steps_.resize(first_step);
    plain_cache_ = cache;
    return e.reason;
  } catch (const dnnl::error& e) {
    steps_.resize(first_step);
    plain_cache_ = cache;
    return std::string("oneDNN refused it (") + e.what() + ")";
  }
}

void Program::note_missing_backward(int ni, size_t first_step) {
  const Node& n = g_.nodes[ni];
  auto differentiable = [&](int vid) { return vid >= 0 && is_float(g_.value(vid).dtype) && needs_grad(vid); };
  if (std::none_of(n.outputs.begin(), n.outputs.end(), differentiable) ||
      std::none_of(n.inputs.begin(), n.inputs.end(), differentiable))
    return;
  for (size_t s = first_step; s < steps_.size(); ++s)
    if (steps_[s].backward) return;
  note(std::string(op_name(n.op)) + " '" + n.name + "' has no backward in the executor: its inputs get no gradient");
}

void Program::lower_all() {
  for (int ni : topo_order(g_)) {
    current_node_ = ni;
    if (absorbed_[ni] >= 0) continue;  // its anchor's step runs it
    const Node& n = g_.nodes[ni];
    bool synthetic_in = false;
    for (int in : n.inputs) synthetic_in |= in >= 0 && synthetic_[in];
    bool all_known = !n.outputs.empty();
    for (int out : n.outputs)  // shape arithmetic, or a Constant node whose payload was given
      all_known &= g_.value(out).has_int_data || (n.op == OpKind::Constant && payload(out));
    const size_t first_step = steps_.size();
    if (all_known) {
      for (int out : n.outputs) fill_value(out);
      Step& s = add_step(ni, "folded", nullptr);
      s.info.status = StepStatus::Folded;
      s.info.reason = n.op == OpKind::Constant ? "a constant" : "outputs known at import (shape arithmetic)";
      continue;
    }
    std::string reason = try_lower(ni);
    if (!reason.empty() && epilogue(ni) && epilogues_[ni].dw >= 0) {  // refused: the depthwise conv on its own
      const Epilogue fused = epilogues_[ni];
      epilogues_[ni] = without_dw(g_, fused);
      epilogues_[fused.dw] = *fused.dw_tail;
      absorbed_[fused.dw] = -1;
      for (int a : fused.dw_tail->nodes) absorbed_[a] = fused.dw;
      reason = try_lower(ni);
    }
    if (!reason.empty() && epilogue(ni)) {  // the fused kernel was refused: run the absorbed nodes on their own
      const std::vector<int> nodes = epilogues_[ni].nodes;
      for (int a : nodes) absorbed_[a] = -1;
      epilogues_[ni] = Epilogue{};
      for (int a : nodes)  // an absorbed producer of the anchor's input (the attention scale's Div) runs first
        if (std::find(n.inputs.begin(), n.inputs.end(), g_.nodes[a].outputs.at(0)) != n.inputs.end()) {
          current_node_ = a;
          const std::string why = try_lower(a);
          current_node_ = ni;
          if (!why.empty()) throw Error("node '" + g_.nodes[a].name + "': " + why);
        }
      reason = try_lower(ni);
    }
    if (!reason.empty()) {
      for (int out : n.outputs) {
        fill_value(out);
        synthetic_[out] = true;
      }
      Step& s = add_step(ni, "none", nullptr);
      s.info.status = StepStatus::NotExecuted;
      s.info.reason = reason;
      note("steps not executed leave random data of the right shape for their consumers");
    } else if (const Epilogue* e = epilogue(ni)) {
      for (size_t s = first_step; s < steps_.size(); ++s)
        if (steps_[s].info.op != "Reorder") steps_[s].info.fused_nodes = e->nodes;
    } else if (opts_.train) {
      note_missing_backward(ni, first_step);
    }
    for (int out : n.outputs)
      if (!vals_[out] && materialized(out)) fill_value(out);  // optional outputs nobody computes (masks, saved statistics)
    if (synthetic_in)
      for (size_t s = first_step; s < steps_.size(); ++s) steps_[s].info.synthetic_inputs = true;
  }
  current_node_ = -1;
}

}  // namespace ridge::exec
