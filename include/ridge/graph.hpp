// The model IR: a DAG of named nodes over typed tensor values. Zoo builders and the ONNX importer produce it;
// every later stage (costs, measure, model, report) consumes it read-only.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ridge/count.hpp"
#include "ridge/dtype.hpp"
#include "ridge/error.hpp"
#include "ridge/ops.hpp"

namespace ridge {

/// Tensor dimensions. A dim of -1 is unknown (only while importing; a validated graph has no unknown dims
/// except where Value::shape_note says why).
struct Shape {
  std::vector<int64_t> dims;

  int rank() const { return static_cast<int>(dims.size()); }
  /// True when every dim is known (>= 0).
  bool known() const;
  /// Number of elements; requires known().
  Count elements() const;
  int64_t operator[](int i) const { return dims.at(i < 0 ? dims.size() + i : i); }
  bool operator==(const Shape&) const = default;
};
/// "1x3x224x224" ("?" for unknown dims, "scalar" for rank 0).
std::string to_string(const Shape& s);
/// Parses "1x3x224x224" or "1,3,224,224". Throws ridge::Error naming `what` on junk, zero or negative dims.
Shape parse_shape(const std::string& text, const std::string& what);

/// What a value is: graph input, trainable parameter, non-trainable buffer (BN running stats, positional
/// tables), constant folded into the graph, or an intermediate activation.
enum class ValueKind : uint8_t { Input, Param, Buffer, Constant, Activation };
std::string_view value_kind_name(ValueKind k);

/// A tensor in the graph. Parameters carry shape and dtype only: weights are never needed for analysis.
struct Value {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  ValueKind kind = ValueKind::Activation;
  int producer = -1;       ///< index of the node that outputs it, -1 for inputs/params/constants
  std::string shape_note;  ///< why the shape is not fully known, when it is not
  std::vector<int64_t> int_data;  ///< small integer payload when known (shape arithmetic, axes); empty otherwise
  bool has_int_data = false;
  bool needs_grad = false;  ///< a graph input into which a gradient flows (one-node graphs cut from a model)
  bool omitted = false;     ///< placeholder of an omitted optional output (ONNX's empty name): never shaped or read
  /// The name in the source file when the importer gave the value a readable one ("onnx::MatMul_1234" became
  /// "fc1.weight"); payloads read from that file (`read_onnx_weights`) are keyed by it. Empty when not renamed.
  std::string source_name;

  Count bytes() const { return shape.elements() * dtype_bytes(dtype); }
  bool is_weight() const { return kind == ValueKind::Param || kind == ValueKind::Buffer; }
};

/// Node attribute value (ONNX-like).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// Named attributes with typed getters that fall back to a default.
struct Attrs {
  std::map<std::string, AttrValue> items;

  bool has(const std::string& k) const { return items.count(k) != 0; }
  int64_t i(const std::string& k, int64_t def) const;
  double f(const std::string& k, double def) const;
  std::string s(const std::string& k, const std::string& def) const;
  std::vector<int64_t> ints(const std::string& k, std::vector<int64_t> def = {}) const;
  Attrs& set(const std::string& k, AttrValue v) {
    items[k] = std::move(v);
    return *this;
  }
};

/// The ONNX attributes of a 2-D Conv: kernel_shape, strides, pads (the same at both ends of an axis),
/// dilations and group; each pair is {height, width}.
struct Conv2dGeometry {
  int64_t kh, kw, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, group = 1;
};
Attrs conv2d_attrs(const Conv2dGeometry& c);

/// One operation. Inputs follow ONNX order (e.g. Conv: X, W, B; Gemm: A, B, C; BatchNormalization: X, scale,
/// bias, mean, var). Parameters are ordinary inputs whose Value::kind is Param.
struct Node {
  std::string name;         ///< unique, dotted module path style: "layer1.0.conv1", "layer1.0.add"
  OpKind op = OpKind::Unknown;
  std::string op_type;      ///< original op type (ONNX op_type / torch function); used for Unknown ops
  std::string module;       ///< path of the module this node belongs to ("layer1.0.conv1" or "layer1.0")
  std::string module_type;  ///< torch class of that module when the node IS a module call ("Conv2d", "ReLU")
  bool module_call = false; ///< true: the node is a leaf nn.Module call; false: a functional op in `module`'s forward
  std::vector<int> inputs;  ///< value ids; -1 for an omitted optional input
  std::vector<int> outputs; ///< value ids
  Attrs attrs;
};

/// A module of the source model (containers and leaves) in first-call order: what torchsummary-style
/// hook-based tools see.
struct ModuleInfo {
  std::string path;               ///< "layer1.0"; "" is the root model
  std::string type;               ///< "BasicBlock", "Sequential", "Conv2d", ...
  std::vector<int> call_outputs;  ///< output value of each call of the module, in call order (may be empty)
};

/// A whole model.
struct Graph {
  std::string name;                 ///< "resnet50" or the file's stem
  std::string source;               ///< "zoo" or the file path
  std::vector<Value> values;
  std::vector<Node> nodes;          ///< in a valid topological order once validated
  std::vector<int> inputs;          ///< graph input value ids
  std::vector<int> outputs;         ///< graph output value ids
  std::vector<ModuleInfo> modules;  ///< may be empty (e.g. ONNX without module names)
  std::vector<std::string> notes;   ///< importer notes shown in every output (BN folded, shared weights, ...)
  /// The batch an ONNX file fixes when no input has a symbolic batch axis to take --batch (its first input's first
  /// dim); empty when the batch was bound from the load options (zoo models, dynamic axes).
  std::optional<int64_t> fixed_batch;

  int add_value(Value v);
  int add_node(Node n);  ///< sets producer of the outputs
  const Value& value(int id) const { return values.at(id); }
  Value& value(int id) { return values.at(id); }
  /// Activation inputs of a node (kind Input/Activation), in order; skips params, buffers, constants, omitted.
  std::vector<int> data_inputs(const Node& n) const;
  /// Parameter/buffer inputs of a node, in order.
  std::vector<int> weight_inputs(const Node& n) const;
  /// Index of a node by name, or -1.
  int find_node(const std::string& name) const;
};

/// Checks the graph: unique node names, every input defined, no cycles, producers consistent, outputs exist,
/// and per-op shape agreement for the ops whose shapes ridge checks (Conv channels, Gemm inner dims, Add
/// broadcasting, Concat). Throws ridge::Error naming the node and the reason. Reorders nothing.
void validate(const Graph& g);

/// Thrown by topo_order(): a cycle through node index `node` (importers rethrow it with their own names).
class CycleError : public Error {
 public:
  CycleError(const std::string& what, int node) : Error(what), node(node) {}
  int node;
};

/// Node indices in a topological order (stable: keeps the given order when it already is one).
/// Throws ridge::CycleError naming a node on the cycle.
std::vector<int> topo_order(const Graph& g);

/// Broadcast two shapes numpy-style; throws ridge::Error with `where` if incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& where);

}  // namespace ridge
