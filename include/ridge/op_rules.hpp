// Ops stage: the rule behind each op record (ops.def) — shape inference, forward and backward cost, and the
// layer descriptor that prints and parses the op's problem. Rules live in one file per family (src/ops/*.cpp);
// the zoo builder, layer descriptors and the ONNX importer all infer shapes through infer_shapes() here.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/cost_value.hpp"
#include "ridge/graph.hpp"

namespace ridge::ops {

/// Largest dim ridge accepts anywhere (2^40): beyond it a file is corrupt, not a model.
inline constexpr int64_t kMaxDim = int64_t(1) << 40;
/// Integer tensors up to this many elements keep their values (shape arithmetic, axes, pads).
inline constexpr int64_t kMaxFoldElements = 4096;

/// An inconsistency a shape rule found (bad axis, incompatible dims); callers report it on the node.
struct RuleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What shape inference knows about a graph's values beyond Graph::values: whether each value's rank is known
/// yet (an importer starts with none known) and small floating-point payloads (Clip bounds, Resize scales).
struct ShapeEnv {
  Graph& g;
  std::vector<char> rank_known;                                 ///< per value
  std::vector<std::optional<std::vector<double>>> float_data;  ///< per value
  /// Every value with a non-empty shape (or a known scalar) counts as rank-known: what builders have.
  explicit ShapeEnv(Graph& graph);
  /// Adds a value with nothing known about its shape yet; returns its id.
  int add_value(Value v);
  /// Merges a computed shape into value `v`: unknown dims are filled, a missing rank is set. Throws RuleError when
  /// `v` already has a shape (declared by the file) of another rank or with another known dim.
  void merge_shape(int v, const Shape& s);
};

/// Read access to one node's inputs and write access to its outputs, for shape rules.
struct RuleContext {
  ShapeEnv& env;
  Node& n;

  int inputs() const { return static_cast<int>(n.inputs.size()); }
  bool present(int i) const { return i < inputs() && n.inputs[i] >= 0; }
  const Value* in(int i) const { return present(i) ? &env.g.value(n.inputs[i]) : nullptr; }
  /// Shape of input i when its rank is known (dims may still be -1).
  const Shape* shape(int i) const;
  /// Shape of output k when its rank is known (declared by the file, inferred by ONNX or by an earlier rule);
  /// nullptr while it is not, which an empty Shape (a scalar) must not be taken for.
  const Shape* out_shape(int k) const;
  /// Integer payload of input i when known.
  const std::vector<int64_t>* ints(int i) const;
  /// Input i's payload as integers: the integer payload, else a float payload whose every value is a whole number
  /// within 2^53 (exporters compute shapes in float: ceil(h / 32.0) * 32); nullopt otherwise.
  std::optional<std::vector<int64_t>> integral(int i) const;
  /// Float payload of input i when known, falling back to the integer payload.
  std::optional<std::vector<double>> reals(int i) const;
  DType dtype(int i) const { return present(i) ? in(i)->dtype : DType::Unknown; }
  int outputs() const { return static_cast<int>(n.outputs.size()); }
  /// Sets output k's shape (merging with what is known) and, when still unknown, its dtype (default: input 0's).
  void out(int k, const Shape& s, DType t = DType::Unknown) const;
  /// Sets output k's integer payload.
  void out_ints(int k, std::vector<int64_t> data) const;
  /// Normalises a possibly negative axis against `rank`; throws RuleError when out of range.
  int axis(int64_t a, int rank) const;
};

/// What a cost rule sees: the graph, the node, and which values need a gradient (see requires_grad()).
struct CostContext {
  const Graph& g;
  const Node& n;
  const std::vector<bool>& grad;

  /// Whether value `v` needs a gradient.
  bool needs_grad(int v) const { return v >= 0 && static_cast<size_t>(v) < grad.size() && grad[v]; }
  /// Adds backward FLOPs for operand `v`: to the weight bucket for a parameter, else to the input bucket;
  /// nothing when `v` needs no gradient.
  void add_grad(int v, Count flops, Cost& c) const;
  /// Element count of the first output / first input (0 when unknown).
  Count out_elems() const;
  Count in_elems() const;
  const Shape& in_shape(int i) const { return g.value(n.inputs.at(i)).shape; }
  const Shape& out_shape(int k) const { return g.value(n.outputs.at(k)).shape; }
  /// Whether optional input `i` is given (as RuleContext::present).
  bool present(size_t i) const { return i < n.inputs.size() && n.inputs[i] >= 0; }
};

/// A layer's problem as one value: op, inputs (shape, kind, element type, integer payload) and attributes. Layer
/// descriptors print from it and parse into it; graph_of() turns it back into a one-node graph.
struct OpProblem {
  struct Input {
    bool present = true;
    Shape shape;
    ValueKind kind = ValueKind::Input;
    DType dtype = DType::F32;
    bool needs_grad = false;           ///< a gradient flows into this input in the model it came from
    std::vector<int64_t> ints;         ///< integer payload (shape data), when has_ints
    bool has_ints = false;
  };
  OpKind op = OpKind::Unknown;
  DType dtype = DType::F32;            ///< the element type of the data
  std::vector<Input> inputs;
  Attrs attrs;
  int outputs = 1;
  std::vector<Shape> output_shapes;    ///< only where inputs alone do not fix them (Resize by float scales)

  /// A present input of shape `s` and kind `k` (element type: the problem's).
  static Input input(Shape s, ValueKind k, bool needs_grad = false) {
    Input in;
    in.shape = std::move(s);
    in.kind = k;
    in.needs_grad = needs_grad;
    return in;
  }
};

/// The rule behind an op record. Every member may be null except `infer` and `cost`.
struct OpRule {
  /// Infers output shapes (and folds small integer payloads); false when it cannot say anything yet. Throws
  /// RuleError on inconsistent inputs.
  bool (*infer)(RuleContext&) = nullptr;
  /// Forward FLOPs/MACs and backward FLOPs of a node whose shapes are known; false and `reason` when the
  /// op (in this configuration) cannot be costed.
  bool (*cost)(const CostContext&, Cost&, std::string& reason) = nullptr;
  /// A family-specific descriptor body (benchdnn style, "mb1ic3ih224..."); "" to use the generic one.
  std::string (*print)(const OpProblem&) = nullptr;
  /// Parses a family-specific descriptor body; nullopt when `body` is not in the family's format.
  std::optional<OpProblem> (*parse)(const std::string& body, const std::string& desc) = nullptr;
};

/// The rule of an op kind (from its record in ops.def).
const OpRule& op_rule(OpKind k);

/// Runs node `node`'s shape rule in `env`. Returns false when the rule could not run. Throws RuleError.
bool infer_shapes(ShapeEnv& env, int node);

/// Costs one node under ridge's convention (params and bytes are added by estimate()). Returns false and sets
/// `reason` when the op has no rule for this case.
bool cost_node(const Graph& g, const Node& n, const std::vector<bool>& grad, Cost& cost, std::string& reason);

/// True for a Dropout that drops in this graph: attribute training_mode = 1 (zoo graphs built for training) or
/// ONNX's training_mode input holding true, unless its `ratio` attribute is 0 (torch's nn.Dropout(p=0) returns
/// its input). It masks and scales every element; at inference it is a view.
bool dropout_active(const Graph& g, const Node& n);
/// True for a Dropout whose `ratio` attribute is 0 (torch's nn.Dropout(p=0), or an ONNX export's constant ratio 0):
/// it returns its input in training too, and saves no mask.
bool dropout_drops_nothing(const Node& n);
/// True for a BatchNormalization that normalises with the batch's own statistics (ONNX's training mode): attribute
/// training_mode = 1 (opset 14-15), or, before opset 14 (no such attribute), running or saved statistics asked for
/// as extra outputs (torch exports a model left in train() so). Its running-stat outputs are updated by momentum.
bool batchnorm_uses_batch_statistics(const Graph& g, const Node& n);
/// True when the op only reinterprets metadata (no bytes move): views, Dropout at inference, sources.
bool is_view(const Graph& g, const Node& n);
/// True for a Conv into which an eval-mode export folded a BatchNorm (attribute folded_batchnorm = 1).
bool folded_batchnorm(const Node& n);
/// FLOPs per element of an elementwise unary op, forward and grad-input (attribute-dependent: Gelu tanh).
int unary_flops_per_element(const Node& n);
int unary_bwd_flops_per_element(const Node& n);

// ---- descriptors -----------------------------------------------------------------------------------------

/// The problem of node `n` of `g`: its inputs' shapes, kinds, payloads, whether a gradient flows into each
/// (`grad`, from requires_grad(); may be empty) and its attributes.
OpProblem problem_of(const Graph& g, const Node& n, const std::vector<bool>& grad);
/// The descriptor string of a problem: "conv:mb1ic3ih224iw224oc64...", "relu:1x64x112x112",
/// "layernormalization:2x16x768,768,768/axis=-1/epsilon=1e-05". See docs/counting.md.
std::string print_descriptor(const OpProblem& p);
/// The descriptor of a node, which `ridge summary DESC` re-runs alone ("op:?" when its shapes are not all
/// known); `grad` says which values need a gradient (requires_grad()).
std::string descriptor(const Graph& g, const Node& n, const std::vector<bool>& grad);
/// True when `text` names an op ridge knows followed by ':' (a descriptor rather than a model name).
bool is_descriptor(const std::string& text);
/// Parses a descriptor. Throws ridge::Error naming the descriptor and the field on malformed input.
OpProblem parse_descriptor(const std::string& text, DType dtype = DType::F32);
/// A validated one-node graph for a problem, its output shapes inferred by the op's rule. Throws ridge::Error.
Graph graph_of(const OpProblem& p, const std::string& name);

}  // namespace ridge::ops
