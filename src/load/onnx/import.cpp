// The ONNX importer's pipeline: parse -> check -> bind inputs -> ONNX inference -> Graph -> ridge's shape
// rules -> names and modules -> artefacts -> notes -> validate.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/shape_inference/implementation.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include "load/onnx/onnx_internal.hpp"
#include "ridge/error.hpp"

namespace ridge::onnx_in {
namespace {

/// Attributes ridge keeps (everything scalar or list-of-scalars, under its ONNX name).
void copy_attributes(const onnx::NodeProto& n, Attrs& attrs) {
  for (const auto& a : n.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.set(a.name(), int64_t{a.i()}); break;
      case onnx::AttributeProto::FLOAT: attrs.set(a.name(), double{a.f()}); break;
      case onnx::AttributeProto::STRING: attrs.set(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS: attrs.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end())); break;
      case onnx::AttributeProto::FLOATS: attrs.set(a.name(), std::vector<double>(a.floats().begin(), a.floats().end())); break;
      case onnx::AttributeProto::TENSOR:  // a one-element tensor (ConstantOfShape's fill) becomes a scalar
        if (auto ints = int_payload(a.t()); ints && ints->size() == 1) attrs.set(a.name(), (*ints)[0]);
        else if (auto reals = float_payload(a.t()); reals && reals->size() == 1) attrs.set(a.name(), (*reals)[0]);
        break;
      case onnx::AttributeProto::STRINGS:  // RNN/GRU/LSTM activations, joined with commas ("Sigmoid,Tanh,Tanh")
        if (a.name() == "activations") {
          std::string joined;
          for (const auto& s : a.strings()) joined += (joined.empty() ? "" : ",") + s;
          attrs.set(a.name(), joined);
        }
        break;
      default: break;  // graphs (If/Loop bodies), other string lists: not attributes ridge uses
    }
  }
}

/// Shape and element type recorded by ONNX (value_info, inputs, outputs) for one value.
void apply_type(Work& w, int v, const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return;
  const auto& tt = type.tensor_type();
  Value& val = w.g.value(v);
  if (tt.elem_type() != 0 && val.dtype == DType::Unknown) val.dtype = to_dtype(tt.elem_type());
  if (!tt.has_shape()) return;
  Shape s;
  for (const auto& d : tt.shape().dim())
    s.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() <= kMaxDim ? d.dim_value() : -1);
  merge_shape(w, v, s);
}

/// Output of a Constant node: shape, type and small payloads from its value attribute.
void apply_constant(Work& w, const onnx::NodeProto& n, int v) {
  Value& val = w.g.value(v);
  val.kind = ValueKind::Constant;
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) {
      val.dtype = to_dtype(a.t().data_type());
      merge_shape(w, v, tensor_shape(a.t(), fmt::format("{}: Constant node '{}'", w.label, n.name())));
      if (auto ints = int_payload(a.t())) {
        val.int_data = *ints;
        val.has_int_data = true;
      }
      w.env.float_data[v] = float_payload(a.t());
    } else if (a.name() == "value_int") {
      val.dtype = DType::I64;
      merge_shape(w, v, Shape{});
      val.int_data = {a.i()};
      val.has_int_data = true;
    } else if (a.name() == "value_ints") {
      val.dtype = DType::I64;
      merge_shape(w, v, Shape{{static_cast<int64_t>(a.ints_size())}});
      val.int_data.assign(a.ints().begin(), a.ints().end());
      val.has_int_data = true;
    } else if (a.name() == "value_float") {
      val.dtype = DType::F32;
      merge_shape(w, v, Shape{});
      w.env.float_data[v] = std::vector<double>{a.f()};
    } else if (a.name() == "value_floats") {
      val.dtype = DType::F32;
      merge_shape(w, v, Shape{{static_cast<int64_t>(a.floats_size())}});
      w.env.float_data[v] = std::vector<double>(a.floats().begin(), a.floats().end());
    }
  }
}

int add_value(Work& w, Value v) { return w.env.add_value(std::move(v)); }

// The outer-scope tensors that a control-flow node's bodies (the GRAPH attributes of If, Loop and Scan, nested
// ones included) read, in first-use order, added to `out`. ridge costs no body, but what a body reads stays alive
// across the node, and a parameter read there is still a parameter (torch exports nn.EmbeddingBag as a Loop whose
// body gathers from the table): as inputs of an op without a rule they count as ridge counts such inputs.
void collect_body_reads(const onnx::NodeProto& n, const std::set<std::string>& defined, std::vector<std::string>& out) {
  for (const auto& a : n.attribute()) {
    std::vector<const onnx::GraphProto*> bodies;
    if (a.has_g()) bodies.push_back(&a.g());
    for (const auto& g : a.graphs()) bodies.push_back(&g);
    for (const onnx::GraphProto* body : bodies) {
      std::set<std::string> inside = defined;
      for (const auto& in : body->input()) inside.insert(in.name());
      for (const auto& t : body->initializer()) inside.insert(t.name());
      for (const auto& bn : body->node()) {
        for (const std::string& in : bn.input())
          if (!in.empty() && !inside.count(in) && std::find(out.begin(), out.end(), in) == out.end()) out.push_back(in);
        collect_body_reads(bn, inside, out);
        for (const auto& o : bn.output()) inside.insert(o);
      }
    }
  }
}

/// How an initializer is used decides whether it is a trainable parameter, a buffer or a constant: the role
/// of its input position in the op's record (ops.def).
void classify_initializers(Work& w, const std::vector<int>& initializers, const std::set<int>& declared_buffers,
                           const std::set<int>& declared_parameters) {
  std::vector<int> weight_uses(w.g.values.size()), stat_uses(w.g.values.size());
  for (const Node& n : w.g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      int v = n.inputs[k];
      if (v < 0) continue;
      const InputRole r = input_role(n.op, static_cast<int>(k));
      if (r == InputRole::Weight || r == InputRole::Either) {
        ++weight_uses[v];
        // Reshaped on the way (GroupNorm's affine unsqueezed to [C, 1, 1], a layer scale viewed [1, C, 1, 1]): the
        // same use of the tensor under the view. Slices and other moves are not followed here (a positional
        // table sliced to the sequence stays a buffer).
        for (int u = v, hops = 0; hops < 8; ++hops) {
          const int p = w.g.value(u).producer;
          if (p < 0) break;
          const Node& view = w.g.nodes[static_cast<size_t>(p)];
          if (op_family(view.op) != OpFamily::View || view.inputs.empty() || view.inputs[0] < 0) break;
          u = view.inputs[0];
          ++weight_uses[u];
        }
      }
      // A learned token (ViT's class_token: nn.Parameter, expanded to the batch and concatenated) keeps its
      // torch name; exporter-computed tensors are anonymous ("onnx::...", "/scope/...").
      const std::string& name = w.g.value(v).name;
      if ((n.op == OpKind::Expand || n.op == OpKind::Concat) && k == 0 && name.rfind("onnx::", 0) != 0 &&
          name.find('/') == std::string::npos)
        ++weight_uses[v];
      if (r == InputRole::Statistic) ++stat_uses[v];
    }
  // A weight sliced, transposed or concatenated before its op (an unfolded export: MultiheadAttention's
  // in_proj_weight into a MatMul, LSTM and GRU gates) is still a weight: from the inputs that take weights (a
  // weight position, or a matrix product's operand; not an elementwise op's, where a sliced buffer such as a
  // positional table is added), weight use flows back through views and moves to their data inputs. Fixpoint:
  // the chains are a few nodes long.
  std::vector<char> feeds_weight(w.g.values.size(), 0);
  for (const Node& n : w.g.nodes) {
    const OpFamily f = op_family(n.op);
    const bool product = f == OpFamily::Linear || f == OpFamily::MatMul || f == OpFamily::Einsum ||
                         f == OpFamily::Conv || f == OpFamily::ConvTranspose || f == OpFamily::Recurrent ||
                         f == OpFamily::IntegerProduct;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const InputRole r = input_role(n.op, static_cast<int>(k));
      if (n.inputs[k] >= 0 && (r == InputRole::Weight || (r == InputRole::Either && product)))
        feeds_weight[static_cast<size_t>(n.inputs[k])] = 1;
    }
  }
  // A quantized weight (QDQ: int8 weight -> DequantizeLinear -> Conv/MatMul) is the parameter, at its own dtype;
  // the DequantizeLinear's scale and zero point are not. So is an integer tensor that an op takes as a weight
  // directly (QLinearConv's int8 weight and int32 bias, MatMulInteger's B: the inputs that feed a weight above);
  // its scales and zero points are activation inputs ('x'), never weights.
  std::vector<char> quantized = feeds_weight;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : w.g.nodes) {
      const OpFamily f = op_family(n.op);
      const bool dequantize = n.op == OpKind::DequantizeLinear;  // its input 0 is the weight, quantized
      if (f != OpFamily::View && f != OpFamily::Move && !dequantize) continue;
      if (n.op == OpKind::OneHot) continue;  // builds a new tensor: its values are no weight's slice
      if (std::none_of(n.outputs.begin(), n.outputs.end(),
                       [&](int o) { return o >= 0 && feeds_weight[static_cast<size_t>(o)]; }))
        continue;
      const bool quantized_out = dequantize || std::any_of(n.outputs.begin(), n.outputs.end(), [&](int o) {
        return o >= 0 && quantized[static_cast<size_t>(o)];
      });
      for (size_t k = 0; k < (dequantize ? std::min<size_t>(1, n.inputs.size()) : n.inputs.size()); ++k) {
        const int v = n.inputs[k];
        if (v < 0 || input_role(n.op, static_cast<int>(k)) != InputRole::Activation) continue;
        if (quantized_out && !quantized[static_cast<size_t>(v)]) {
          quantized[static_cast<size_t>(v)] = 1;
          changed = true;
        }
        if (!feeds_weight[v]) {
          feeds_weight[static_cast<size_t>(v)] = 1;
          changed = true;
        }
      }
    }
  }
  for (int v : initializers)
    if (feeds_weight[static_cast<size_t>(v)] && weight_uses[v] == 0) weight_uses[v] = 1;
  // A bias added to a matrix product's output (a Linear unfolded into MatMul + Add; MultiheadAttention's
  // in_proj_bias sliced into three Adds) is a parameter too: a rank-1 initializer reached from the other operand
  // of such an Add through views and moves. Positional tables and masks (rank 2 and up) stay buffers.
  std::vector<char> is_initializer(w.g.values.size(), 0);
  for (int v : initializers) is_initializer[static_cast<size_t>(v)] = 1;
  auto product_output = [&](int v) {
    const int p = w.g.value(v).producer;
    if (p < 0) return false;
    const OpFamily f = op_family(w.g.nodes[static_cast<size_t>(p)].op);
    return f == OpFamily::Linear || f == OpFamily::MatMul || f == OpFamily::Einsum;
  };
  auto through_views = [&](int v) {  // the initializer a value is a view or move of, else -1
    for (int hops = 0; v >= 0 && hops < 16 && !is_initializer[static_cast<size_t>(v)]; ++hops) {
      const int p = w.g.value(v).producer;
      if (p < 0) return -1;
      const Node& n = w.g.nodes[static_cast<size_t>(p)];
      const OpFamily f = op_family(n.op);
      if ((f != OpFamily::View && f != OpFamily::Move) || n.inputs.empty()) return -1;
      v = n.inputs[0];
    }
    return v >= 0 && is_initializer[static_cast<size_t>(v)] ? v : -1;
  };
  for (const Node& n : w.g.nodes) {
    if (n.op != OpKind::Add || n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (!product_output(n.inputs[1 - k])) continue;
      const int v = through_views(n.inputs[k]);
      if (v >= 0 && w.g.value(v).shape.rank() == 1 && weight_uses[v] == 0) weight_uses[v] = 1;
    }
  }
  for (int v : initializers) {
    Value& val = w.g.value(v);
    const bool quantized_weight = quantized[static_cast<size_t>(v)] && weight_uses[v] &&
                                  (val.dtype == DType::I8 || val.dtype == DType::U8 || val.dtype == DType::I32);
    if (declared_buffers.count(v)) val.kind = ValueKind::Buffer;
    else if (declared_parameters.count(v)) val.kind = ValueKind::Param;
    else if (quantized_weight && val.shape.rank() > 0) val.kind = ValueKind::Param;
    else if (!is_float(val.dtype) || val.shape.rank() == 0) val.kind = ValueKind::Constant;
    else if (weight_uses[v]) val.kind = ValueKind::Param;
    else if (stat_uses[v] || val.shape.elements() > 16) val.kind = ValueKind::Buffer;
    else val.kind = ValueKind::Constant;
  }
}

/// Node order with every producer before its users. Throws Error naming the ONNX node on a cycle.
std::vector<int> topological(const Work& w) {
  try {
    return topo_order(w.g);
  } catch (const CycleError& e) {
    throw Error(fmt::format("{}: the graph has a cycle through node '{}' ({})", w.label, w.onnx_names[e.node],
                            w.g.nodes[e.node].op_type));
  }
}

void reorder_nodes(Work& w, const std::vector<int>& order) {
  std::vector<Node> nodes;
  std::vector<std::string> names, domains;
  for (int i : order) {
    nodes.push_back(std::move(w.g.nodes[i]));
    names.push_back(std::move(w.onnx_names[i]));
    domains.push_back(std::move(w.node_domain[i]));
  }
  w.g.nodes = std::move(nodes);
  w.onnx_names = std::move(names);
  w.node_domain = std::move(domains);
  for (size_t i = 0; i < w.g.nodes.size(); ++i)
    for (int o : w.g.nodes[i].outputs) w.g.value(o).producer = static_cast<int>(i);
}

/// Ops whose versions after opset 17 changed what shape inference must read (axes, num_outputs and sizes as
/// inputs, dilations, GridSample's N-D grids): on a newer model the ONNX library would apply its older schema
/// and get them wrong.
bool changed_after_opset17(const std::string& op) {
  static const std::set<std::string> kChanged = {
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
      "ReduceProd", "ReduceSumSquare", "Split", "Pad", "Resize", "AveragePool", "LpPool", "ScatterElements",
      "ScatterND", "DFT", "GroupNormalization", "Col2Im", "Gelu", "Attention", "RMSNormalization",
      "RotaryEmbedding", "GridSample"};
  return kChanged.count(op) != 0;
}

/// A model of an opset newer than the ONNX library's schemas: the library applies each op's newest schema it
/// has, right for ops unchanged since (most later versions only add element types); the ops whose shapes changed
/// meaning are hidden from it (an unknown op type, which its inference skips) and left to ridge's rules.
void hide_newer_ops(onnx::ModelProto& m) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = known.find("");
  const int64_t library_max = it == known.end() ? 0 : it->second.second;
  for (auto& op : *m.mutable_opset_import()) {
    if (!op.domain().empty() && op.domain() != "ai.onnx") continue;
    if (op.version() <= library_max) return;
    op.set_version(library_max);
  }
  for (auto& n : *m.mutable_graph()->mutable_node())
    if ((n.domain().empty() || n.domain() == "ai.onnx") && changed_after_opset17(n.op_type()))
      n.set_op_type("ridge.hidden." + n.op_type());
}

/// ONNX's inference, run in a child process: libonnx 1.12 crashes on some malformed models (e.g. pooling
/// attributes that disagree with the input rank), and a crash there must not take ridge down. The child
/// sends back value_info, inferred outputs and propagated shape data (as the "inputs" of a GraphProto).
void run_onnx_inference(onnx::ModelProto& m, Work& w,
                        std::unordered_map<std::string, onnx::TensorShapeProto>& shape_data) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The child dies by the signal itself, which the parent turns into a note: handlers inherited from the parent
    // (a sanitizer's, a fuzzer's) would report the crash, or the 60 s alarm, as the parent's own.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) std::signal(sig, SIG_DFL);
    ::alarm(60);
    onnx::GraphProto result;
    int code = 0;
    try {
      std::unordered_map<std::string, onnx::TensorShapeProto> data;
      hide_newer_ops(m);
      onnx::ShapeInferenceOptions options{false, 0, true};
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options, &data);
      *result.mutable_value_info() = m.graph().value_info();
      *result.mutable_output() = m.graph().output();
      for (const auto& [name, dims] : data) {
        auto* vi = result.add_input();
        vi->set_name(name);
        *vi->mutable_type()->mutable_tensor_type()->mutable_shape() = dims;
      }
    } catch (const std::exception& e) {
      result.set_doc_string(e.what());
      code = 3;
    }
    const std::string bytes = result.SerializeAsString();
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  onnx::GraphProto result;
  const bool parsed = result.ParseFromString(bytes);
  if (WIFSIGNALED(status) || !parsed) {
    w.g.notes.push_back(fmt::format("ONNX shape inference crashed on this model (signal {}); ridge's own rules carried on",
                                    WIFSIGNALED(status) ? WTERMSIG(status) : 0));
    return;
  }
  if (WEXITSTATUS(status) != 0) {
    std::string what = result.doc_string();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    w.g.notes.push_back("ONNX shape inference stopped early (" + what + "); ridge's own rules carried on");
    return;
  }
  *m.mutable_graph()->mutable_value_info() = result.value_info();
  for (int i = 0; i < result.output_size() && i < m.graph().output_size(); ++i)
    if (result.output(i).name() == m.graph().output(i).name()) *m.mutable_graph()->mutable_output(i) = result.output(i);
  for (const auto& vi : result.input()) shape_data[vi.name()] = vi.type().tensor_type().shape();
}

/// Why a value's shape is unknown, for Value::shape_note.
std::string unknown_reason(const Work& w, int v) {
  const Value& val = w.g.value(v);
  if (val.producer < 0 && val.shape.rank() > 0)
    return fmt::format("'{}' has a symbolic dim that was not bound: pass --seq-len N or --input {}=SHAPE", val.name,
                       val.name);
  if (val.producer < 0) return fmt::format("'{}' has no shape in the file: pass --input {}=SHAPE", val.name, val.name);
  const Node& n = w.g.nodes[val.producer];
  for (int in : n.inputs)
    if (in >= 0 && !w.g.value(in).shape.known())
      return fmt::format("output of {} node '{}': its input '{}' has an unknown shape", n.op_type, n.name,
                         w.g.value(in).name);
  if (n.op == OpKind::Unknown)
    return fmt::format("output of {} node '{}': ridge has no shape rule for {} and ONNX inference gave none",
                       n.op_type, n.name, n.op_type);
  return fmt::format("output of {} node '{}': depends on tensor values ridge could not fold", n.op_type, n.name);
}

void note_unknown_shapes(Work& w) {
  int unknown = 0;
  std::string first;
  for (size_t v = 0; v < w.g.values.size(); ++v) {
    Value& val = w.g.value(static_cast<int>(v));
    if (!w.env.rank_known[v]) val.shape.dims.clear();
    if (val.shape.known() && w.env.rank_known[v]) continue;
    if (!w.env.rank_known[v] && val.shape.dims.empty()) val.shape.dims = {-1};  // unknown rank shows as "?"
    if (val.shape_note.empty()) val.shape_note = unknown_reason(w, static_cast<int>(v));
    if (unknown++ == 0) first = val.shape_note;
  }
  if (unknown)
    w.g.notes.push_back(fmt::format("{} tensor(s) have unknown shapes; costs that need them are excluded "
                                    "(first: {})", unknown, first));
}

void check_sizes(const Work& w) {
  for (const Value& v : w.g.values) {
    if (!v.shape.known()) continue;
    Count n = 1;
    for (int64_t d : v.shape.dims) {
      if (d > kMaxDim) throw Error(fmt::format("{}: tensor '{}' has an absurd dim {}", w.label, v.name, d));
      n *= d;
      if (n > (Count(1) << 62)) throw Error(fmt::format("{}: tensor '{}' ({}) has an absurd number of elements",
                                                        w.label, v.name, to_string(v.shape)));
    }
  }
}

void retype_floats(Work& w, DType dtype) {
  if (dtype == DType::F32) return;
  int changed = 0;
  for (Value& v : w.g.values)
    if (v.dtype == DType::F32) {
      v.dtype = dtype;
      ++changed;
    }
  if (changed)
    w.g.notes.push_back(fmt::format("{} fp32 tensors of the file are analysed as {} (--dtype)", changed,
                                    dtype_name(dtype)));
}

/// An input-bound model, ready to become a Graph (once or twice: see import_model).
struct BoundModel {
  onnx::ModelProto m;
  int opset = 13;
  std::vector<std::pair<std::string, std::optional<Shape>>> bound;  ///< graph inputs and their bound shapes
  std::vector<std::string> notes;                                   ///< what binding noted
  std::optional<int64_t> fixed_batch;                               ///< the file's own batch (bind_inputs)
  std::unordered_map<std::string, std::string> source_of;           ///< inlined copies' file names (InlineLog)
};

/// Every tensor typed and shaped and every op known: what ONNX's inference could add is nothing ridge uses.
/// Placeholders of omitted optional outputs never get a shape, so they do not count.
bool typed_completely(const Work& w) {
  for (const Node& n : w.g.nodes)
    if (n.op == OpKind::Unknown) return false;
  for (size_t v = 0; v < w.g.values.size(); ++v) {
    const Value& val = w.g.values[v];
    if (val.omitted) continue;
    if (!w.env.rank_known[v] || !val.shape.known() || val.dtype == DType::Unknown) return false;
  }
  return true;
}

/// How far build_graph goes.
enum class Finish {
  Full,               ///< the Graph, with modules, names, artefacts and notes
  CompleteOrNothing,  ///< the same, or nothing when ridge's rules leave a tensor untyped or an op unknown
  ShapesOnly,         ///< stops after the shape rules: names, shapes and payloads, for inline_round
};

/// The note for kParametersNotInGraphKey: how many parameters of the source module the graph does not use, and
/// the modules they belong to (names up to the last dot; the first few).
void note_parameters_not_in_graph(Work& w, const onnx::ModelProto& m) {
  for (const auto& prop : m.metadata_props()) {
    if (prop.key() != kParametersNotInGraphKey) continue;
    Count elements = 0;
    int tensors = 0;
    std::vector<std::string> modules;
    for (size_t at = 0; at < prop.value().size();) {
      const size_t end = std::min(prop.value().find(',', at), prop.value().size());
      const std::string item = prop.value().substr(at, end - at);
      at = end + 1;
      const size_t colon = item.rfind(':');
      if (colon == std::string::npos) continue;
      char* stop = nullptr;
      const long long n = std::strtoll(item.c_str() + colon + 1, &stop, 10);
      if (n <= 0 || *stop != '\0') continue;  // a hand-made value: what parses
      elements += n;
      ++tensors;
      const std::string name = item.substr(0, colon);
      const std::string module = name.substr(0, name.rfind('.') == std::string::npos ? 0 : name.rfind('.'));
      const std::string top = module.empty() ? "the root module" : module.substr(0, module.find('.'));  // aux1
      if (std::find(modules.begin(), modules.end(), top) == modules.end()) modules.push_back(top);
    }
    if (tensors == 0) return;
    constexpr size_t kShown = 4;
    const auto shown = modules.begin() + static_cast<std::ptrdiff_t>(std::min(kShown, modules.size()));
    std::string named = fmt::format("{}", fmt::join(modules.begin(), shown, ", "));
    if (modules.size() > kShown) named += fmt::format(" and {} more", modules.size() - kShown);
    w.g.notes.push_back(fmt::format(
        "the module has {} parameters ({} tensors, in {}) that its traced forward pass does not use (e.g. auxiliary "
        "heads that run only in training): torch's parameter count includes them, ridge's totals do not",
        with_commas(elements), tensors, named));
  }
}

/// The Graph of a bound model with the given engines, as far as `finish` says.
std::optional<Graph> build_graph(BoundModel& bm, const std::string& label, const LoadOptions& opts,
                                 const OnnxImportOptions& engines, Finish finish) {
  Work w;
  w.label = label;
  w.opset = bm.opset;
  w.g.name = std::filesystem::path(label).stem().string();
  if (auto dot = w.g.name.find(".ext_emptybin"); dot != std::string::npos) w.g.name.resize(dot);
  w.g.source = label;
  w.g.notes = bm.notes;
  w.g.fixed_batch = bm.fixed_batch;
  onnx::ModelProto& m = bm.m;
  const onnx::GraphProto& graph = m.graph();
  const auto& bound = bm.bound;

  std::unordered_map<std::string, onnx::TensorShapeProto> shape_data;
  if (engines.onnx_inference) run_onnx_inference(m, w, shape_data);

  std::unordered_map<std::string, int> ids;
  auto define = [&](const std::string& name, Value v) {
    if (name.empty()) throw Error(fmt::format("{}: a tensor has an empty name", label));
    if (ids.count(name)) throw Error(fmt::format("{}: tensor '{}' is defined twice", label, name));
    v.name = name;
    int id = add_value(w, std::move(v));
    ids[name] = id;
    return id;
  };

  for (const auto& [name, shape] : bound) {
    Value v;
    v.kind = ValueKind::Input;
    v.dtype = DType::Unknown;
    int id = define(name, v);
    w.g.inputs.push_back(id);
    for (const auto& in : graph.input())
      if (in.name() == name) apply_type(w, id, in.type());
    if (shape) merge_shape(w, id, *shape);
  }
  std::vector<int> initializers;
  std::set<int> declared_buffers, declared_parameters;
  for (const auto& t : graph.initializer()) {
    Value v;
    v.kind = ValueKind::Param;
    v.dtype = to_dtype(t.data_type());
    if (ids.count(t.name()) && w.g.value(ids[t.name()]).kind == ValueKind::Input)
      throw Error(fmt::format("{}: '{}' is both a graph input and an initializer", label, t.name()));
    int id = define(t.name(), v);
    merge_shape(w, id, tensor_shape(t, fmt::format("{}: initializer '{}'", label, t.name())));
    if (auto ints = int_payload(t)) {
      w.g.value(id).int_data = *ints;
      w.g.value(id).has_int_data = true;
    }
    w.env.float_data[id] = float_payload(t);
    initializers.push_back(id);
    if (t.doc_string() == kDeclaredBufferDoc) declared_buffers.insert(id);
    if (t.doc_string() == kDeclaredParameterDoc) declared_parameters.insert(id);
  }

  // An Identity over an initializer is torch's eval-mode export of two parameters with equal values (fresh
  // LayerNorm weights, zero biases): it stores one and gives the other its value under its own name. Each is a
  // parameter of the module (`module.parameters()` counts both), so the copy becomes an initializer of its own.
  // Tied weights (one Parameter used twice) are one initializer read by two nodes, and stay counted once.
  std::vector<std::string> copies;
  std::unordered_map<std::string, int> graph_outputs;
  for (const auto& o : graph.output()) graph_outputs[o.name()] = 1;
  std::vector<const onnx::NodeProto*> kept;
  for (const auto& n : graph.node()) {
    bool equal_valued = n.op_type() == "Identity" && n.domain().empty() && n.input_size() == 1 &&
                        n.output_size() == 1 && ids.count(n.input(0)) && !graph_outputs.count(n.output(0)) &&
                        std::find(initializers.begin(), initializers.end(), ids[n.input(0)]) != initializers.end();
    if (equal_valued) {
      const int source = ids[n.input(0)];
      Value copy;
      copy.kind = ValueKind::Param;
      copy.dtype = w.g.value(source).dtype;
      copy.int_data = w.g.value(source).int_data;
      copy.has_int_data = w.g.value(source).has_int_data;
      copy.source_name = n.input(0);  // its payload is the source's (ridge run)
      const int id = define(n.output(0), copy);
      merge_shape(w, id, w.g.value(source).shape);
      w.env.float_data[id] = w.env.float_data[source];
      initializers.push_back(id);
      copies.push_back(fmt::format("'{}' = '{}'", n.output(0), n.input(0)));
      continue;
    }
    kept.push_back(&n);
  }
  note_parameters_not_in_graph(w, m);
  if (!copies.empty())
    w.g.notes.push_back(fmt::format("{} Identity node(s) give an initializer's value to another tensor ({}), as "
                                    "torch's export does for parameters of equal value: each is counted as its own",
                                    copies.size(), fmt::join(copies, ", ")));

  for (const onnx::NodeProto* np : kept) {
    const auto& n = *np;
    Node node;
    const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    node.op_type = standard ? n.op_type() : n.domain() + "." + n.op_type();
    node.op = parse_op(node.op_type).value_or(OpKind::Unknown);  // other domains: records named "domain.Op"
    if (node.op == OpKind::AdaptiveAvgPool) node.op = OpKind::Unknown;  // ridge-internal kind, not an ONNX op
    copy_attributes(n, node.attrs);
    if (standard && w.opset < 13 &&
        (node.op == OpKind::Softmax || node.op == OpKind::LogSoftmax || node.op == OpKind::Hardmax)) {
      node.attrs.set("axis", node.attrs.i("axis", 1));  // the default was 1 before opset 13
      node.attrs.set("coerce_2d", int64_t{1});           // normalised over the dims from axis on (ops/reduce.cpp)
    }
    for (const auto& o : n.output()) {
      if (o.empty()) {
        Value placeholder;  // omitted optional output: keeps the positions of the others
        placeholder.omitted = true;
        node.outputs.push_back(add_value(w, placeholder));
        w.g.value(node.outputs.back()).name = fmt::format("{}:unused{}", n.name(), node.outputs.size() - 1);
        continue;
      }
      Value v;
      v.dtype = DType::Unknown;
      node.outputs.push_back(define(o, v));
    }
    int index = static_cast<int>(w.g.nodes.size());
    w.g.add_node(std::move(node));
    w.onnx_names.push_back(n.name());
    w.node_domain.push_back(standard ? "" : n.domain());
    if (n.op_type() == "Constant" && standard && n.output_size() == 1 && !n.output(0).empty())
      apply_constant(w, n, w.g.nodes[index].outputs[0]);
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    for (const auto& in : kept[i]->input()) {
      if (in.empty()) {
        w.g.nodes[i].inputs.push_back(-1);
        continue;
      }
      auto it = ids.find(in);
      if (it == ids.end())
        throw Error(fmt::format("{}: node '{}' ({}): input '{}' is not produced by any node, input or initializer",
                                label, kept[i]->name(), kept[i]->op_type(), in));
      w.g.nodes[i].inputs.push_back(it->second);
    }
    // A control-flow node's bodies: what they read from this graph follows the explicit inputs (names defined
    // by nodes after this one in the file are left to the topological order, as for explicit inputs).
    std::vector<std::string> reads;
    collect_body_reads(*kept[i], {}, reads);
    for (const std::string& name : reads) {
      auto it = ids.find(name);
      if (it == ids.end())
        throw Error(fmt::format("{}: node '{}' ({}): its body reads '{}', which is not produced by any node, input "
                                "or initializer",
                                label, kept[i]->name(), kept[i]->op_type(), name));
      auto& inputs = w.g.nodes[i].inputs;
      if (std::find(inputs.begin(), inputs.end(), it->second) == inputs.end()) inputs.push_back(it->second);
    }
  }
  for (const auto& o : graph.output()) {
    auto it = ids.find(o.name());
    if (it == ids.end()) throw Error(fmt::format("{}: graph output '{}' is not produced by any node", label, o.name()));
    w.g.outputs.push_back(it->second);
  }

  // What ONNX's inference learnt.
  for (const auto* list : {&graph.value_info(), &graph.output()})
    for (const auto& vi : *list)
      if (auto it = ids.find(vi.name()); it != ids.end() && w.g.value(it->second).kind != ValueKind::Input)
        apply_type(w, it->second, vi.type());
  for (const auto& [name, data] : shape_data) {
    auto it = ids.find(name);
    if (it == ids.end() || w.g.value(it->second).has_int_data) continue;
    std::vector<int64_t> values;
    for (const auto& d : data.dim())
      if (d.has_dim_value()) values.push_back(d.dim_value());
    if (static_cast<int>(values.size()) != data.dim_size()) continue;
    w.g.value(it->second).int_data = values;
    w.g.value(it->second).has_int_data = true;
  }

  for (Value& v : w.g.values) {  // copies made by inlining keep their payloads' names in the file
    const std::string& own = v.source_name.empty() ? v.name : v.source_name;
    if (auto it = bm.source_of.find(own); it != bm.source_of.end()) v.source_name = it->second;
  }
  reorder_nodes(w, topological(w));
  classify_initializers(w, initializers, declared_buffers, declared_parameters);
  if (engines.ridge_rules)
    for (size_t i = 0; i < w.g.nodes.size(); ++i) apply_shape_rule(w, static_cast<int>(i));
  if (finish == Finish::ShapesOnly) return std::move(w.g);
  if (finish == Finish::CompleteOrNothing && !typed_completely(w)) return std::nullopt;
  for (Value& v : w.g.values)
    if (v.dtype == DType::Unknown && v.kind == ValueKind::Activation) v.dtype = DType::F32;
  retype_floats(w, opts.dtype);
  check_sizes(w);
  recover_torch_modules(w);
  assign_names_and_modules(w);
  name_linear_weights(w);
  type_torch_containers(w);
  recognise_artefacts(w);
  note_unknown_shapes(w);
  return std::move(w.g);
}

/// Rewrites the control flow and sequences of `bm` whose shape is known into plain ops (inline.cpp), round after
/// round: a round sees the shapes ridge's rules give the model as the last round left it. ONNX's inference (the
/// slower engine) joins a round only when ridge's rules alone made no progress. Notes what it did.
void inline_known_control_flow(BoundModel& bm, const std::string& label, const LoadOptions& opts,
                               const OnnxImportOptions& engines) {
  constexpr int kMaxRounds = 256;  // each round resolves at least one node; MViT-v2-S needs 4
  InlineLog log;
  bool with_inference = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::optional<Graph> g;
    try {
      g = build_graph(bm, label, opts, {with_inference, true, false}, Finish::ShapesOnly);
    } catch (const Error&) {
      break;  // the full import below reports it
    }
    const bool progress = inline_round(bm.m, bm.opset, *g, log);
    if (!has_inlinable_ops(bm.m.graph()) || (!progress && (with_inference || !engines.onnx_inference))) break;
    with_inference = !progress;
  }
  for (auto& note : log.notes()) bm.notes.push_back(std::move(note));
  bm.source_of = std::move(log.source_of);
}

/// Checks and binds `m`, then builds its Graph. With both engines and `onnx_inference_for_gaps_only`, ridge's
/// rules go alone first and their Graph is kept when complete; ONNX's inference (a child process: most of an
/// import's cost, many times over in a process as large as Python with torch) runs only when they fall short.
Graph import_model(onnx::ModelProto m, const std::string& label, const LoadOptions& opts,
                   const OnnxImportOptions& engines) {
  BoundModel bm;
  bm.m = std::move(m);
  bm.opset = check_model(bm.m, label);
  bm.bound = bind_inputs(*bm.m.mutable_graph(), opts, label, bm.notes, bm.fixed_batch);
  if (engines.ridge_rules && has_inlinable_ops(bm.m.graph())) inline_known_control_flow(bm, label, opts, engines);
  if (engines.onnx_inference && engines.ridge_rules && engines.onnx_inference_for_gaps_only) {
    try {
      if (auto g = build_graph(bm, label, opts, {false, true, false}, Finish::CompleteOrNothing)) return std::move(*g);
    } catch (const Error&) {  // a rule that needed what ONNX's inference knows: the full import decides
    }
  }
  return std::move(*build_graph(bm, label, opts, engines, Finish::Full));
}

/// One printable line: names from a hostile file may hold control characters or be huge.
std::string one_line(std::string what) {
  for (char& c : what)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  if (what.size() > 400) what = what.substr(0, 397) + "...";
  return what;
}

/// Runs `body`, turning every failure into a one-line ridge::Error that names `label`.
template <typename F>
Graph guarded(const std::string& label, F body) {
  try {
    Graph g = body();
    validate(g);
    return g;
  } catch (const Error& e) {
    std::string what = e.what();
    throw Error(one_line(what.rfind(label, 0) == 0 ? what : label + ": " + what));
  } catch (const std::bad_alloc&) {
    throw Error(one_line(label + ": out of memory while importing (is a dim absurdly large?)"));
  } catch (const std::exception& e) {
    throw Error(one_line(label + ": malformed model (" + e.what() + ")"));
  }
}

}  // namespace

bool apply_shape_rule(Work& w, int node) {
  if (w.g.nodes[node].op == OpKind::Unknown) return false;
  try {
    return ops::infer_shapes(w.env, node);
  } catch (const std::exception& e) {  // ops::RuleError or ridge::Error from a broadcast
    throw Error(fmt::format("{}: node '{}' ({}): {}", w.label, w.onnx_names[node], w.g.nodes[node].op_type, e.what()));
  }
}

}  // namespace ridge::onnx_in

namespace ridge {

Graph import_onnx(const std::string& path, const LoadOptions& opts, const OnnxImportOptions& engines) {
  return onnx_in::guarded(path, [&] { return onnx_in::import_model(onnx_in::parse_file(path), path, opts, engines); });
}

Graph import_onnx(const std::string& path, const LoadOptions& opts) { return import_onnx(path, opts, {}); }

Graph import_onnx_bytes(std::string_view bytes, const std::string& label, const LoadOptions& opts,
                        const OnnxImportOptions& engines) {
  return onnx_in::guarded(label,
                          [&] { return onnx_in::import_model(onnx_in::parse_bytes(bytes, label), label, opts, engines); });
}

}  // namespace ridge
