// One- and two-layer graphs built directly (no zoo), for checking rules against published vectors and
// brute-force loops.
#pragma once
#include "ridge/graph.hpp"

namespace ridge::test {

/// Builds graphs node by node with explicit shapes.
struct Tiny {
  Graph g;
  static Value value(std::string name, DType t, Shape s, ValueKind kind) {
    Value v;
    v.name = std::move(name);
    v.dtype = t;
    v.shape = std::move(s);
    v.kind = kind;
    return v;
  }
  int input(Shape s, DType t = DType::F32) {
    int id = g.add_value(value("input" + std::to_string(g.inputs.size()), t, std::move(s), ValueKind::Input));
    g.inputs.push_back(id);
    return id;
  }
  int param(const std::string& name, Shape s) {
    return g.add_value(value(name, DType::F32, std::move(s), ValueKind::Param));
  }
  /// Adds a node with one output of shape `out`; module_type non-empty makes it a module call.
  int node(OpKind op, const std::string& name, std::vector<int> inputs, Shape out, Attrs attrs = {},
           const std::string& module_type = "") {
    int o = g.add_value(value(name + ":0", DType::F32, std::move(out), ValueKind::Activation));
    Node n;
    n.name = name;
    n.op = op;
    n.op_type = std::string(op_name(op));
    n.inputs = std::move(inputs);
    n.outputs = {o};
    n.attrs = std::move(attrs);
    n.module = name;
    n.module_type = module_type;
    n.module_call = !module_type.empty();
    if (n.module_call) g.modules.push_back({name, module_type, {o}});
    g.add_node(std::move(n));
    return o;
  }
  Graph done(std::vector<int> outputs) {
    g.outputs = std::move(outputs);
    validate(g);
    return g;
  }
};

/// Conv2d attributes.
inline Attrs conv_attrs(int64_t k, int64_t s, int64_t p, int64_t d = 1, int64_t groups = 1) {
  return conv2d_attrs({k, k, s, s, p, p, d, d, groups});
}

}  // namespace ridge::test
