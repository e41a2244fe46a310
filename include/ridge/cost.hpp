// Costs stage: exact per-node counts under ridge's own convention, other tools' conventions, and memory.
// Every per-op rule lives once, in src/costs/rules.cpp, and is documented in docs/counting.md.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/cost_value.hpp"
#include "ridge/graph.hpp"

namespace ridge {

/// Per-item status: costed, or why not. Never silently zero.
enum class CostStatus : uint8_t { Ok, Unsupported, UnknownShape };
std::string_view cost_status_name(CostStatus s);

/// The cost of one node plus a descriptor that reproduces it (benchdnn-style problem string).
struct NodeCost {
  int node = -1;
  Cost cost;
  CostStatus status = CostStatus::Ok;
  std::string reason;      ///< for non-Ok status: e.g. "op NonMaxSuppression has no cost rule"
  std::string descriptor;  ///< e.g. "conv:mb1_ic3ih224iw224_oc64oh112ow112_kh7kw7_sh2sw2_ph3pw3_g1"
};

/// Costs of a whole graph.
struct ModelCost {
  std::vector<NodeCost> nodes;                   ///< one per graph node, same order as Graph::nodes
  Cost total;                                    ///< sum over nodes with status Ok
  std::map<std::string, int> excluded_ops;       ///< op type -> number of nodes excluded from the totals
  bool complete() const { return excluded_ops.empty(); }
};

/// Costs every node under ridge's convention. Nodes whose op ridge cannot cost, or whose shapes are unknown,
/// get a non-Ok status and are listed in excluded_ops.
ModelCost estimate(const Graph& g);

/// What estimate() could not cost, for the loud first line of every report, JSON's `complete`/`not_costed` and
/// --strict. Totals of an incomplete model are lower bounds.
struct Incompleteness {
  /// One node excluded from the totals.
  struct Item {
    int node = -1;
    std::string name;    ///< node name
    std::string op;      ///< op type as in the model ("NonMaxSuppression")
    std::string reason;  ///< NodeCost::reason
    CostStatus status = CostStatus::Unsupported;  ///< NodeCost::status (never Ok)
  };
  std::vector<Item> nodes;                       ///< every excluded node, in graph order
  std::vector<std::pair<std::string, int>> ops;  ///< op type -> excluded nodes, most nodes first (then by name)
  /// True when every node was costed.
  bool complete() const { return nodes.empty(); }
  /// The excluded op types, most nodes first (the names in `ops`).
  std::vector<std::string> op_types() const {
    std::vector<std::string> out;
    for (const auto& [op, count] : ops) out.push_back(op);
    return out;
  }
};
/// The nodes of `mc` (from estimate(g)) that were not costed.
Incompleteness incompleteness(const Graph& g, const ModelCost& mc);
/// The one-line warning that heads every human report of an incomplete model: "INCOMPLETE: 3 nodes not costed
/// (NonMaxSuppression x2, Loop) — totals are lower bounds (--strict makes this an error)"; "" when complete. When
/// nodes were left out for unknown shapes it adds how many and the first one's reason, which names the fix (an
/// unbound symbolic input dim: "pass --seq-len N ..."), so a reader does not take "Mul x84" for a missing rule.
std::string incomplete_line(const Incompleteness& inc);
/// --strict: throws ridge::Error naming the first node that was not costed and why; returns when complete.
void require_complete(const Incompleteness& inc, const std::string& model);

/// Which values need a gradient: params, and activations downstream of a param. Graph inputs do not (so the
/// first layer has no grad-input cost).
std::vector<bool> requires_grad(const Graph& g);


/// The performance class of a node: the class whose calibrated efficiency factors time it. The op family
/// ("Conv", "BatchNorm", "Unary", ...; the op type for ops ridge does not know), except that convolutions split
/// by how their kernels run: "DepthwiseConv" (one input channel per group), "GroupedConv" (several groups) and
/// "Conv". The single definition used by `ridge measure` rows, predictions and calibration.
std::string op_class(const Graph& g, const Node& n);

// ---- conventions -------------------------------------------------------------------------------------------

/// Counting conventions of popular tools (see docs/counting.md and counting-conventions.md).
enum class Convention : uint8_t { Ridge, Torchvision, Fvcore, Ptflops, Thop, Torchinfo, Pthflops, Deepspeed, Calflops, Torch };

struct ConventionInfo {
  Convention id;
  std::string_view name;       ///< "fvcore"
  std::string_view tool;       ///< "fvcore FlopCountAnalysis.total()"
  std::string_view headline;   ///< what the headline number is ("MACs of conv/linear/matmul + norms")
  std::string_view unit;       ///< "MAC" or "FLOP"
  std::string_view differs;    ///< one line: what differs from ridge's convention
};
/// All conventions, ridge first.
const std::vector<ConventionInfo>& conventions();
const ConventionInfo& convention_info(Convention c);
/// Parses a convention name; nullopt if unknown.
std::optional<Convention> parse_convention(std::string_view name);

/// A model counted under one convention.
struct ConventionCount {
  Convention convention = Convention::Ridge;
  std::vector<Count> per_node;  ///< headline units per graph node
  Count total = 0;              ///< the headline number the tool prints (exact integer)
  Count params = 0;             ///< parameter count the tool reports
  std::string headline_text;    ///< the headline as the tool would print it ("4.09 GMac", "15.52 GFLOPs")
};
/// Counts `g` under convention `c`. Ops the convention cannot see contribute 0 by that tool's own rules;
/// ops ridge cannot cost at all are still listed by estimate().
ConventionCount count_under(const Graph& g, Convention c);

// ---- memory ------------------------------------------------------------------------------------------------

enum class Optimizer : uint8_t { SGD, Momentum, Adam };
std::optional<Optimizer> parse_optimizer(std::string_view name);
std::string_view optimizer_name(Optimizer o);
/// One optimizer step per parameter, as one fused elementwise kernel: tensors of parameter size read and written,
/// and FLOPs. SGD: p -= lr g (reads p, g; writes p; 2). Momentum: v = mu v + g, p -= lr v (reads p, g, v; writes
/// p, v; 4). Adam: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, p -= lr m / (sqrt(v) + eps) (reads p, g, m, v;
/// writes p, m, v; 12).
struct OptimizerStep {
  int tensors_read = 2, tensors_written = 1, flops_per_param = 2;
};
OptimizerStep optimizer_step(Optimizer o);

/// Memory of a model at the graph's batch size, in bytes at the graph's dtypes.
struct MemoryEstimate {
  Count param_bytes = 0;         ///< trainable parameters (unique)
  Count buffer_bytes = 0;        ///< non-trainable buffers
  Count grad_bytes = 0;          ///< one gradient per trainable parameter
  Count optimizer_bytes = 0;     ///< optimizer state (momentum: 1x params, adam: 2x params)
  Count master_bytes = 0;        ///< separate fp32 master weights (mixed precision with low-precision weights)
  Count input_bytes = 0;         ///< graph inputs
  Count activation_bytes = 0;    ///< every node output, summed (no reuse)
  Count saved_bytes = 0;         ///< activations saved for backward (deduplicated across nodes)
  Count inference_peak_bytes = 0;///< peak of live activations (inputs included, weights excluded) over topo order
  Count training_peak_bytes = 0; ///< params + buffers + grads + master + optimizer state + saved activations
  std::vector<Count> saved_per_node;  ///< bytes each node newly saves for backward
  std::vector<Count> output_bytes;    ///< bytes each node outputs (views: 0)
};
MemoryEstimate estimate_memory(const Graph& g, Optimizer opt = Optimizer::SGD);
/// Bytes per parameter element that training keeps (a precision mode's storage); 0 = the graph's own element type.
struct ParamStorage {
  int weight_bytes = 0;           ///< weights and buffers
  int gradient_bytes = 0;         ///< gradients
  int master_bytes = 0;           ///< separate master copy (0: none)
  int optimizer_state_bytes = 0;  ///< each optimizer state (momentum 1, Adam 2)
};
/// estimate_memory with weights, gradients, master copy and optimizer state at `storage`'s sizes (activations stay
/// at the graph's element types).
MemoryEstimate estimate_memory(const Graph& g, Optimizer opt, const ParamStorage& storage);

/// The memory lines torchinfo (1.8.0) and torchsummary print, exactly as they compute them.
struct ToolMemoryLines {
  double input_mb = 0, forward_backward_mb = 0, params_mb = 0, total_mb = 0;
  Count input_bytes = 0, forward_backward_bytes = 0, params_bytes = 0;
  std::string text;  ///< the four lines as the tool prints them
};
ToolMemoryLines torchinfo_memory(const Graph& g);
ToolMemoryLines torchsummary_memory(const Graph& g);

}  // namespace ridge
