// The cost of one node or of a sum of nodes: a small value type that adds (ops stage; costs sums it).
#pragma once
#include "ridge/count.hpp"

namespace ridge {

/// What one node (or a sum of nodes) costs. A small value that adds: totals are sums of per-node values.
struct Cost {
  Count params = 0;            ///< trainable parameter elements first used by this node (shared params count once)
  Count buffers = 0;           ///< non-trainable elements (BN running stats, positional tables)
  Count macs = 0;              ///< multiply-accumulates (conv, linear, matmul, einsum)
  Count flops = 0;             ///< forward FLOPs, ridge convention (1 MAC = 2 FLOPs, plus real elementwise work)
  Count bwd_input_flops = 0;   ///< backward: gradient w.r.t. activation inputs (0 when no input needs a gradient)
  Count bwd_weight_flops = 0;  ///< backward: gradient w.r.t. parameters
  Count bytes_read = 0;        ///< forward: activation inputs + weights read, at their dtype
  Count bytes_written = 0;     ///< forward: outputs written

  Count bwd_flops() const { return bwd_input_flops + bwd_weight_flops; }
  Count bytes() const { return bytes_read + bytes_written; }
  /// Forward FLOPs per byte moved (0 when no bytes move).
  double intensity() const { return bytes() > 0 ? to_double(flops) / to_double(bytes()) : 0.0; }

  Cost& operator+=(const Cost& o) {
    params += o.params;
    buffers += o.buffers;
    macs += o.macs;
    flops += o.flops;
    bwd_input_flops += o.bwd_input_flops;
    bwd_weight_flops += o.bwd_weight_flops;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    return *this;
  }
  friend Cost operator+(Cost a, const Cost& b) { return a += b; }
  bool operator==(const Cost&) const = default;
};

}  // namespace ridge
