// Builds the per-layer summary document (shared by `summary` and the HTML report).
#pragma once
#include <optional>

#include "ridge/cost.hpp"
#include "ridge/report.hpp"

namespace ridge::cli {

struct SummaryOptions {
  int depth = 0;                          ///< group nodes by the first `depth` module-path components; 0 = every node
  std::optional<Convention> convention;   ///< adds a per-layer headline column and totals.headline under it
  Optimizer optimizer = Optimizer::SGD;
  ParamStorage storage;                   ///< bytes per parameter of weights, gradients, master, optimizer state
  std::string precision;                  ///< --precision name shown in the memory title ("" = the graph's dtype)
};

/// The deepest module depth at which the layer table has at most `max_rows` rows (0 = every node, when all of
/// them fit; at least 1).
int fitting_depth(const Graph& g, size_t max_rows);

/// torchinfo-style summary: per-layer table (name, op, output shape, params, MACs, FLOPs, backward, bytes,
/// memory, share) with totals, memory lines and notes (unsupported ops, importer notes).
report::Document summary_document(const Graph& g, const SummaryOptions& opts);

}  // namespace ridge::cli
