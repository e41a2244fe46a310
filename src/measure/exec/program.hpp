// The executor's compiled form of a Graph: one oneDNN memory per value and a list of steps (primitives or
// reference kernels bound to their arguments). Internal to src/measure/exec.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "ridge/measure.hpp"

namespace ridge::exec {

using dnnl::memory;
using Dims = memory::dims;

/// Thrown by a lowering when an op (or one of its attribute combinations) has no kernel.
struct NoKernel {
  std::string reason;
};

/// One executable step and its backward/update parts when training.
struct Step {
  StepInfo info;
  std::function<void()> forward;
  std::function<void()> backward;  ///< empty: no backward (or not training)
};

/// Dense row-major descriptor of `dims` (rank 0 becomes {1}).
memory::desc plain_desc(const Dims& dims);
/// Dims of a ridge shape (rank 0 becomes {1}).
Dims to_dims(const Shape& s);
/// True when `d` is dense row-major.
bool is_plain(const memory::desc& d);
/// Element count of a descriptor.
int64_t element_count(const memory::desc& d);
/// Pointer to the fp32 data of a memory.
inline float* data_of(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

/// An op a kernel applies to its own output (a oneDNN post-op): an eltwise function, or adding another value.
struct PostOp {
  int node = -1;                                      ///< the graph node it stands for
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;  ///< eltwise algorithm, or binary_add
  float alpha = 0, beta = 0;                          ///< eltwise parameters
  int operand = -1;                                   ///< binary_add: the value added
  bool in_place = false;  ///< binary_add first: the kernel may write into the operand's buffer (its last use)
};

/// Nodes run by a Conv/Gemm/MatMul step of the end-to-end program (ExecOptions::fuse): a BatchNormalization
/// folded into a Conv's weights and bias, a bias Add taken as a MatMul's bias, then post-ops.
struct Epilogue {
  int batchnorm = -1;      ///< BatchNormalization node folded into the Conv
  int bias = -1;           ///< MatMul: the value (1-D, the output's last dim) used as its bias
  std::vector<PostOp> ops;
  std::vector<int> nodes;  ///< every absorbed node, in order
  int out = -1;            ///< the value the fused step produces (the last absorbed node's output)
  /// Set when the anchor and the absorbed nodes together are one op of this kind, lowered as such: a decomposed
  /// LayerNormalization (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) or an erf Gelu (Div, Erf,
  /// Add, Mul, Mul; its function is ops[0]).
  OpKind composite = OpKind::Unknown;
  /// The composite's input; for a MatMul, its first operand read before a Div by a constant absorbed as ops[0]
  /// (the attention scale). LayerNorm scale and shift.
  int x = -1, scale = -1, shift = -1;
  float epsilon = 0;                   ///< the composite LayerNorm's epsilon
  /// A 3x3 depthwise Conv (stride 1 or 2, pads 1) run inside a 1x1 Conv as oneDNN's fused depthwise post-op
  /// (`append_dw`: the expanded tensor between them is never written out); -1: none. `ops` before `dw_at` act
  /// on the 1x1's output, the rest (`dw_tail`'s) on the depthwise conv's.
  int dw = -1;
  size_t dw_at = 0;
  std::shared_ptr<const Epilogue> dw_tail;  ///< the depthwise conv's own epilogue, restored if oneDNN refuses
};

/// The 1x1 Conv's epilogue `e` without its fused depthwise conv (which gets `e.dw_tail` back as its own).
Epilogue without_dw(const Graph& g, const Epilogue& e);

/// Where each buffer of the end-to-end program lives: alloc() number k is placed at offset[k] of one arena
/// (buffers whose lifetimes do not overlap share bytes), or gets its own allocation when offset[k] < 0.
struct AllocPlan {
  std::vector<int64_t> offset;
  size_t arena_bytes = 0;
};

/// A Graph compiled for the CPU engine.
class Program {
 public:
  /// Builds the program; with opts.fuse (and not training) the end-to-end program: epilogues planned first,
  /// then built twice: once to learn every buffer's lifetime, once more with buffers shared by liveness.
  Program(const Graph& g, const ExecOptions& opts);

  const Graph& graph() const { return g_; }
  const ExecOptions& options() const { return opts_; }
  bool training() const { return opts_.train; }
  dnnl::engine& engine() { return eng_; }
  dnnl::stream& stream() { return strm_; }

  // ---- used by lowerings -------------------------------------------------------------------------------
  /// Current memory of a value (any layout).
  memory& value(int vid);
  /// The value in dense row-major layout, reordering it (as a step of node `node`) if needed.
  memory plain(int vid, int node);
  /// The value in layout `want`, reordering if needed: weights once at build time, activations as a step.
  memory in_layout(int vid, const memory::desc& want, int node);
  /// Allocates a buffer owned by the program (counted in buffer_bytes).
  memory alloc(const memory::desc& d);
  /// Binds a value to a memory (the node's output; a buffer it allocated becomes shareable by liveness).
  void set_value(int vid, const memory& m);
  /// Gradient buffer of a value (allocated on first use in the value's layout, zero-initialised).
  memory& grad(int vid);
  /// A closure that adds `diff` (same dims, any layout) into the gradient of `vid` (a reorder with a sum).
  std::function<void()> accumulate_into_grad(int vid, const memory& diff);
  /// Weight `vid` seen through `as` (a descriptor of its plain buffer with the dims a primitive wants, e.g.
  /// grouped conv weights, or ConvTranspose's [in, out, ...] weights as [out, in, ...]) in layout `want`.
  /// Reorders once at build time and makes that layout the weight's own, so SGD updates what kernels read;
  /// read_grad() gives its gradient back in the graph's element order.
  memory weight_as(int vid, const memory::desc& as, const memory::desc& want);
  /// A plain memory of `dims` sharing `m`'s buffer (m must be plain). Throws NoKernel when `dims` hold more
  /// elements than `m` (the graph's shapes disagree with what an op computes).
  memory view(const memory& m, const Dims& dims);
  /// True when a value needs a gradient (training).
  bool needs_grad(int vid) const { return opts_.train && need_grad_.at(vid); }
  /// True for parameters (they get an SGD update when training).
  bool is_param(int vid) const { return g_.value(vid).kind == ValueKind::Param; }
  /// Float payload of a weight/constant as plain host data (nullptr when random or unknown).
  const HostTensor* payload(int vid) const;
  /// Adds a step for node `node`.
  Step& add_step(int node, std::string kernel, std::function<void()> forward);
  /// Runs a primitive now (build-time work such as weight reorders).
  void run_now(dnnl::primitive p, const std::unordered_map<int, memory>& args);
  /// Records a training-only note.
  void note(const std::string& s);
  /// The epilogue of a Conv/Gemm/MatMul node in the end-to-end program (nullptr: none).
  const Epilogue* epilogue(int node) const;
  /// True when the value's buffer is written by steps alone (not weights, constants or data filled at build
  /// time), so a kernel may overwrite it once its last reader has run.
  bool step_written(int vid) const;
  /// The value node `node` finally produces: its epilogue's output, else its first output.
  int final_output(int node) const;
  /// End-to-end program of a graph with a Winograd-eligible conv (winograd_conv) or a fused 1x1 + depthwise
  /// pair: convs run in the blocked layout those kernels need (nChw16c, nChw8c without AVX-512), so no reorder
  /// runs between convs.
  bool blocked_convs() const { return blocked_convs_; }

  // ---- used by the executor ----------------------------------------------------------------------------
  std::vector<Step>& steps() { return steps_; }
  /// Copies a value out as a plain host tensor in the graph's element order (shape from the graph).
  HostTensor read(int vid);
  /// Copies the gradient of a value out as a plain host tensor (zeros when it has none).
  HostTensor read_grad(int vid);
  Count buffer_bytes() const { return buffer_bytes_; }
  const std::vector<std::string>& notes() const { return notes_; }
  /// Zeroes every gradient buffer and seeds the graph outputs' gradients with ones (loss = sum of outputs).
  void start_backward();
  /// The SGD update: every param with a gradient moves by -learning_rate x gradient (both in the param's layout,
  /// so the kernels read the updated values).
  void sgd_update();

 private:
  Program(const Graph& g, const ExecOptions& opts, std::shared_ptr<const AllocPlan> plan);
  /// The end-to-end program's buffer plan, from a first build (nullptr when not fusing).
  static std::shared_ptr<const AllocPlan> buffer_plan(const Graph& g, const ExecOptions& opts);
  void bind_initial_values();
  void fill_value(int vid);
  void lower_all();
  std::string try_lower(int ni);  ///< lowers one node; "" or why it has no kernel
  /// Training: notes node `ni` (lowered into steps from `first_step` on) when a float input and a float output
  /// need gradients but none of its steps has a backward, so an op added without one is never silently frozen.
  void note_missing_backward(int ni, size_t first_step);
  /// `src` (value vid's buffer or gradient, any layout) as a host tensor in the graph's element order.
  HostTensor read_in_graph_order(int vid, const memory& src);
  bool materialized(int vid) const;  ///< a graph output, or read by a node that is not absorbed
  AllocPlan plan_buffers() const;

  /// One alloc() call: its buffer, the node being lowered (-1: build-time data), and whether steps alone
  /// write it (an output or an activation reorder: it may share bytes with buffers of other lifetimes).
  struct AllocRecord {
    const char* ptr;
    size_t bytes;
    int node;
    bool shareable;
  };
  void mark_shareable(const memory& m);

  const Graph& g_;
  ExecOptions opts_;
  dnnl::engine eng_;
  dnnl::stream strm_;
  std::vector<memory> vals_;
  std::vector<memory> grads_;
  std::vector<memory> plain_cache_;
  std::vector<memory::desc> graph_order_;  ///< weight_as(): the weight's buffer in graph element order
  std::vector<memory> keep_alive_;
  std::vector<bool> synthetic_;
  std::vector<bool> need_grad_;
  std::vector<Step> steps_;
  std::vector<std::string> notes_;
  Count buffer_bytes_ = 0;
  int current_node_ = -1;
  std::vector<Epilogue> epilogues_;  ///< by node (empty unless fusing)
  std::vector<int> absorbed_;        ///< by node: the node whose step runs it, -1 otherwise
  bool blocked_convs_ = false;
  std::vector<AllocRecord> allocs_;
  std::shared_ptr<const AllocPlan> plan_;
  std::shared_ptr<char> arena_;
};

/// Plans the end-to-end program's epilogues (see Epilogue); `absorbed[n]` becomes the node whose step runs n.
/// Defined in fuse.cpp.
std::vector<Epilogue> plan_epilogues(Program& p, std::vector<int>& absorbed);
/// The eltwise post-op node `ni` stands for (Relu, Clip with known bounds, ...), if it is one.
std::optional<PostOp> eltwise_post_op(Program& p, int ni);
/// Post-op attributes of an epilogue for a kernel whose output has descriptor `dst`; adds the binary operands
/// (in `dst`'s layout where the dims agree) to `args`. A first Add whose operand's buffer the kernel may write
/// (in_place_operand) becomes oneDNN's sum post-op (the jit kernels' fast path, no copy); any other Add is a
/// binary post-op reading its operand.
/// The output buffer of a kernel with epilogue `e` (nullptr: a new buffer): in_place_operand() when there is
/// one, else a new buffer.
memory epilogue_dst(Program& p, int ni, const Epilogue* e, const memory::desc& dst);
/// The buffer of epilogue `e`'s first Add operand, seen as `dst`, when the kernel may write its output there
/// (PostOp::in_place, written by steps alone, same layout); an empty memory otherwise.
memory in_place_operand(Program& p, const Epilogue& e, const memory::desc& dst);
/// A Conv's weights (packed in the layout asked for) and bias with a BatchNormalization folded in.
struct FoldedConv {
  memory weights, bias;
};
/// Folds epilogue `e`'s BatchNormalization into the weights (seen as `wei_as`, packed as `want`) and bias of
/// Conv node `conv`, once, at build time.
FoldedConv fold_batchnorm(Program& p, int conv, const Epilogue& e, const memory::desc& wei_as,
                          const memory::desc& want);
dnnl::primitive_attr post_op_attr(Program& p, int ni, const Epilogue* e, const memory::desc& dst,
                                  std::unordered_map<int, memory>& args);

/// True for a 3x3, stride 1, undilated, ungrouped 2-D Conv with multiples of 16 channels in and out: the end-to-end
/// program runs it with oneDNN's Winograd kernel (F(4x4, 3x3): about half the multiplications of the direct
/// kernel). Defined in lower_dnnl.cpp.
bool winograd_conv(const Graph& g, const Node& n);
/// Lowers one node into steps; throws NoKernel when it cannot. Defined in lower.cpp.
void lower_node(Program& p, int node);

/// Sets the oneDNN/OpenMP thread count (no-op for t <= 0); returns the count in effect.
int set_threads(int t);

}  // namespace ridge::exec
