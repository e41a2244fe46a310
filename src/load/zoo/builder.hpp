// A small graph builder for zoo models: tracks the module scope (so node names are module paths such as
// "layer1.0.conv1"), infers output shapes as layers are added, and records torch module calls.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ridge/graph.hpp"

namespace ridge::ops {
struct ShapeEnv;
}

namespace ridge::zoo {

/// Builds a Graph in forward order. Methods take and return value ids; every node's output shapes come from its
/// op's shape rule (the one shape engine of src/ops).
class Builder {
 public:
  Builder(std::string model_name, DType dtype);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  /// RAII module scope: nodes added inside belong to `name` (a path component) of torch class `type`.
  class Scope {
   public:
    Scope(Builder& b, const std::string& name, const std::string& type);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Builder& b_;
    int first_value_;
  };
  Scope module(const std::string& name, const std::string& type) { return Scope(*this, name, type); }

  int input(const std::string& name, Shape shape, DType dtype);
  /// A trainable parameter (or a buffer when trainable=false), named after the current scope.
  int param(const std::string& name, Shape shape, bool trainable = true);
  /// A constant tensor (masks, scalars) with no cost.
  int constant(const std::string& name, Shape shape, DType dtype);
  /// A 1-D int64 constant with known values (target shapes, axes).
  int int_constant(const std::string& name, std::vector<int64_t> values);

  // Leaf modules (one node each; `name` is the module attribute name, e.g. "conv1").
  int conv2d(int x, const std::string& name, int64_t out_ch, int64_t k, int64_t stride = 1, int64_t pad = 0,
             int64_t groups = 1, bool bias = true, int64_t dilation = 1);
  /// nn.Conv1d(C, C, k, groups=C) over [N, C, L], padded with `pad` zeros before the sequence only: a Mamba mixer's
  /// causal conv as the causal_conv1d kernel computes it (L outputs; HF's eager module pads both sides, computes
  /// k - 1 outputs more and keeps the first L).
  int causal_conv1d(int x, const std::string& name, int64_t k, int64_t pad, bool bias);
  /// A functional op of `outputs` outputs (their shapes and types from the op's rule), named `fname`.
  std::vector<int> call(OpKind op, std::vector<int> inputs, int outputs, const std::string& fname, Attrs attrs = {});
  /// A Linear layer; `expect_in` (when >= 0) is the fixed in_features of the reference, checked against the input.
  int linear(int x, const std::string& name, int64_t out, bool bias = true, const std::string& type = "Linear",
             int64_t expect_in = -1);
  /// Linear whose weight is an existing param (tied embeddings); with `bias_value` >= 0, that existing value as its
  /// bias (BERT's decoder shares cls.predictions.bias).
  int linear_tied(int x, const std::string& name, int weight_value, int bias_value = -1);
  int batchnorm(int x, const std::string& name, const std::string& type = "BatchNorm2d");
  /// LayerNorm over the last dim with a weight (`scale`) and a bias (`bias`) as the module has them.
  int layernorm(int x, const std::string& name, bool scale = true, bool bias = true);
  int embedding(int ids, const std::string& name, int64_t vocab, int64_t dim);
  /// nn.Dropout(p); p = 0 is recorded (attribute `ratio`) and stays a no-op while training, as in torch.
  int dropout(int x, const std::string& name, const std::string& type = "Dropout", double p = 0.5);
  /// An activation module (ReLU, ReLU6, Tanh, GELU ...), or a functional call when module_name is empty.
  /// `captured` marks a functional activation stored in an attribute at construction time (e.g.
  /// `self.activation = F.relu`), which function-patching profilers do not see.
  int act(OpKind op, int x, const std::string& module_name, const std::string& type, Attrs attrs = {},
          bool captured = false);
  int maxpool(int x, const std::string& name, int64_t k, int64_t stride, int64_t pad = 0, bool ceil = false,
              bool as_module = true);
  int avgpool(int x, const std::string& name, int64_t k, int64_t stride, bool as_module = true);
  int adaptive_avgpool(int x, const std::string& name, int64_t out_h, int64_t out_w, bool as_module = true);

  // Functional ops inside the current module's forward (`fname` names them: "add", "flatten", ...).
  /// `torch_fn` names the torch function when it matters to other tools' conventions ("iadd" for `out += x`,
  /// "baddbmm" for a mask added inside baddbmm); empty means the plain operator.
  int binary(OpKind op, int a, int b, const std::string& fname, const std::string& torch_fn = "");
  int unary(OpKind op, int x, const std::string& fname, Attrs attrs = {});
  int flatten(int x, int64_t axis = 1);
  int reshape(int x, Shape to, const std::string& fname = "view");
  int transpose(int x, std::vector<int64_t> perm, const std::string& fname = "transpose");
  /// torch's expand: a broadcast view of `x` at shape `to` (copies nothing until a consumer materializes it).
  int expand(int x, Shape to, const std::string& fname = "expand");
  int concat(const std::vector<int>& xs, int64_t axis, const std::string& fname = "cat");
  /// Splits along `axis` into pieces of the given sizes.
  std::vector<int> split(int x, int64_t axis, const std::vector<int64_t>& sizes, const std::string& fname = "split");
  int slice(int x, int64_t axis, int64_t start, int64_t end, const std::string& fname = "slice");
  int matmul(int a, int b, const std::string& fname = "matmul");
  int softmax(int x, int64_t axis, bool log = false, const std::string& fname = "");
  int where(int cond, int a, int b, const std::string& fname = "where");
  int reduce_mean(int x, std::vector<int64_t> axes, bool keepdims, const std::string& fname = "mean");
  int reduce_max(int x, std::vector<int64_t> axes, bool keepdims, const std::string& fname = "max");

  const Shape& shape(int v) const { return g_.values.at(v).shape; }
  /// Id of the value named `name` (e.g. "transformer.wte.weight"); asserts it exists.
  int value_id(const std::string& name) const;
  /// Finishes: marks outputs, validates, and returns the graph.
  Graph finish(const std::vector<int>& outputs);

 private:
  std::string scope_path() const;
  std::string child_path(const std::string& name) const;
  std::string unique_name(const std::string& base);
  int new_value(const std::string& name, Shape shape, DType dtype, ValueKind kind = ValueKind::Activation);
  /// Adds a node; a module call when `module_type` is non-empty (the node is named after the module path).
  /// Its output shape comes from the op's rule.
  int add(OpKind op, const std::string& name, const std::string& module_type, std::vector<int> inputs,
          Attrs attrs = {}, DType out_dtype = DType::Unknown);
  /// Adds `n` with `outputs` fresh outputs of element type `out_dtype` (Unknown: the rule's) and infers their
  /// shapes; throws ridge::Error naming the node when the inputs do not fit the op.
  std::vector<int> infer(Node n, int outputs, DType out_dtype);
  void note_module(const std::string& path, const std::string& type);
  void record_call(const std::string& path, int output);

  Graph g_;
  std::unique_ptr<ops::ShapeEnv> env_;  ///< what shape inference knows of g_'s values
  DType dtype_;
  std::vector<std::string> scope_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, int> last_suffix_;  ///< base name -> the last `_i` unique_name gave it
  std::unordered_map<std::string, size_t> module_index_;  ///< module path -> its index in g_.modules
};

}  // namespace ridge::zoo
