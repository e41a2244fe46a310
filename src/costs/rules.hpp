// ridge's own counting convention: the per-op rules (rules.cpp is the only place they are written).
#pragma once
#include <string>
#include <vector>

#include "ridge/cost.hpp"

namespace ridge::costs {

/// FLOPs, MACs and backward FLOPs of one node under ridge's convention (params and bytes are filled in by
/// estimate()). `grad` says which values need a gradient (see requires_grad()). Returns false and sets
/// `reason` when the op has no rule.
bool apply_rule(const Graph& g, const Node& n, const std::vector<bool>& grad, Cost& cost, std::string& reason);

/// Forward FLOPs per element of an elementwise unary op (documented in docs/counting.md).
int unary_flops_per_element(const Node& n);
/// Grad-input FLOPs per element of an elementwise unary op.
int unary_bwd_flops_per_element(const Node& n);

/// True for a Conv into which an eval-mode ONNX export folded a BatchNorm (attribute folded_batchnorm = 1,
/// set by the importer): costed as conv + BatchNorm in every convention.
bool folded_batchnorm(const Node& n);

/// True when the op only reinterprets metadata (no bytes move): Reshape, Flatten, Squeeze, Unsqueeze,
/// Identity, and Dropout at inference.
bool is_view(const Node& n);

}  // namespace ridge::costs
