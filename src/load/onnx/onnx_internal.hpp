// Internals of the ONNX importer, shared by the files in src/load/onnx. Not a public API.
#pragma once
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ridge/graph.hpp"
#include "ridge/load.hpp"
#include "ridge/onnx_import.hpp"
#include "ridge/op_rules.hpp"

namespace ridge::onnx_in {

using ops::kMaxDim;
using ops::kMaxFoldElements;

// ---- reading (reader.cpp) -------------------------------------------------------------------------------

/// Parses a model file by streaming it through protobuf (no second copy of the file in memory) and drops
/// every weight payload right away. Throws Error naming `path`.
onnx::ModelProto parse_file(const std::string& path);
/// Same for bytes in memory.
onnx::ModelProto parse_bytes(std::string_view bytes, const std::string& label);
/// Newest ai.onnx opset and IR version ridge imports (ONNX 1.18); the ONNX library's schemas may stop earlier.
inline constexpr int64_t kMaxOpset = 23;
inline constexpr int64_t kMaxIrVersion = 11;

/// Checks what must hold before anything else looks at the model: a graph, known opsets, imported
/// domains. Returns the ai.onnx opset version. Throws Error naming `label`.
int check_model(const onnx::ModelProto& m, const std::string& label);

/// ridge's element type for an ONNX TensorProto data type (Unknown for strings, complex, ...).
DType to_dtype(int onnx_type);
/// Dims of a TensorProto, checked (negative or absurd dims throw Error naming `what`).
Shape tensor_shape(const onnx::TensorProto& t, const std::string& what);
/// Values of a small integer (or bool) tensor when its payload is present in the file.
std::optional<std::vector<int64_t>> int_payload(const onnx::TensorProto& t);
/// Values of a small floating-point tensor when present (Clip bounds, Resize scales); empty otherwise.
std::optional<std::vector<double>> float_payload(const onnx::TensorProto& t);

// ---- binding inputs (bind.cpp) --------------------------------------------------------------------------

/// Shape of every real graph input (initializers excluded) with symbolic dims bound from `opts` (nullopt
/// when the file gives no shape and --input none). Dims that stay unknown are -1 and reported in `notes`. Writes the bound dims back into `graph` so that ONNX's
/// inference sees them. Throws Error for --input names that match nothing or shapes of the wrong rank, and (with
/// `opts.refuse_unused`) for a batch other than 1 that no input can take. `fixed_batch` gets the batch the file
/// fixes when no symbolic axis took `opts.batch`.
std::vector<std::pair<std::string, std::optional<Shape>>> bind_inputs(onnx::GraphProto& graph, const LoadOptions& opts,
                                                       const std::string& label, std::vector<std::string>& notes,
                                                       std::optional<int64_t>& fixed_batch);

// ---- control flow and sequences of known shape (inline.cpp) ----------------------------------------------

/// What inlining did over all rounds, for the graph's notes.
struct InlineLog {
  int loops_unrolled = 0;
  int64_t iterations = 0;             ///< Loop iterations unrolled, all loops together
  int64_t unrolled_nodes = 0;         ///< body nodes copied, all loops together (bounded: nested loops multiply)
  int64_t nested_copies = 0;          ///< control-flow nodes among them
  int ifs_taken = 0;
  int sequence_ops = 0;               ///< sequence nodes rewritten or dropped
  std::vector<std::string> kept;      ///< control-flow nodes the last round left, each with why
  /// Copies of payload-holding tensors (a body's initializers and Constant outputs) and the name the file gives
  /// them, where `read_onnx_weights` finds their payloads (Value::source_name).
  std::unordered_map<std::string, std::string> source_of;
  std::vector<std::string> notes() const;
};
/// Whether the top-level graph has a Loop, an If or a sequence op that inline_round may rewrite.
bool has_inlinable_ops(const onnx::GraphProto& graph);
/// One round over the top-level graph of `m`, against the shapes and payloads that ridge's rules gave `g` (built
/// from `m` as it is): unrolls each Loop whose trip count is known and whose condition cannot end it early (up to
/// 4,096 iterations), replaces each If whose condition is known by its branch, and turns sequence values whose
/// elements and positions are known into their tensors. New names never collide with existing ones. Returns
/// whether it rewrote anything: what a rewrite exposes (a later Loop's trip count) needs another round.
bool inline_round(onnx::ModelProto& m, int opset, const Graph& g, InlineLog& log);

// ---- shapes (the ops stage's rules, through import.cpp) --------------------------------------------------

/// Importer state shared by the passes.
struct Work {
  Graph g;
  ops::ShapeEnv env{g};                    ///< per value: rank known yet, small float payloads
  std::string label;
  int opset = 13;
  std::vector<std::string> onnx_names;     ///< per node: the ONNX node name
  std::vector<std::string> node_domain;    ///< per node: ONNX domain ("" = ai.onnx)

  Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
};

/// Applies the op's shape rule (src/ops) to node `node`, filling unknown dims of its outputs and folding integer
/// payloads of shape arithmetic. Returns false when the rule could not run; throws Error naming the ONNX node.
bool apply_shape_rule(Work& w, int node);
/// Merges a computed shape into value `v`: unknown dims get filled, a missing rank gets set.
inline void merge_shape(Work& w, int v, const Shape& s) { w.env.merge_shape(v, s); }

// ---- torch modules, names, artefacts (recover.cpp, names.cpp, artefacts.cpp) --------------------------

/// Fuses what exporters decompose back into torch's modules: LayerNorm (ReduceMean ... Add) into
/// LayerNormalization, Linear on rank > 2 inputs (MatMul + bias Add) into Gemm; notes what it fused.
/// Runs before names and modules, so the fused nodes become module calls.
void recover_torch_modules(Work& w);
/// Gives a Linear module call's anonymous weight ("onnx::MatMul_N", the exporter's transposed copy) the
/// name torch gives it ("decoder.weight"), as tools that look at parameter names see it.
void name_linear_weights(Work& w);

/// Node names, module paths, module_call/module_type and Graph::modules from exporter scope names.
void assign_names_and_modules(Work& w);
/// torch.nn container classes recognised by their children's names (TransformerEncoder, its layers and
/// MultiheadAttention) and what they do that tools see: captured activations, the baddbmm mask add.
void type_torch_containers(Work& w);
/// Exporter artefacts (BatchNorm folded, Mul by 1, tied embeddings) and torchvision avgpool, recorded in
/// notes; folded convs get the `folded_batchnorm` attribute, multiplications by 1 become Identity.
void recognise_artefacts(Work& w);

}  // namespace ridge::onnx_in
