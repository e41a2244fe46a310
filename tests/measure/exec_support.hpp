// Small hand-built graphs for executor tests: inputs/params with known random data, and helpers to run them
// and compare with plain reference implementations.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "ridge/load.hpp"
#include "ridge/measure.hpp"

namespace ridge::test {

/// A one-or-few node graph whose inputs and params carry explicit data.
struct ExecCase {
  Graph g;
  TensorMap data;
  std::mt19937 rng{7};

  /// Adds an input (or param when kind is Param) filled with uniform values in [lo, hi].
  int tensor(const std::string& name, Shape shape, ValueKind kind = ValueKind::Input, float lo = -1, float hi = 1) {
    Value v;
    v.name = name;
    v.shape = shape;
    v.kind = kind;
    int id = g.add_value(v);
    if (kind == ValueKind::Input) g.inputs.push_back(id);
    HostTensor t{shape, {}};
    std::uniform_real_distribution<float> d(lo, hi);
    for (Count i = 0; i < shape.elements(); ++i) t.data.push_back(d(rng));
    data[name] = t;
    return id;
  }
  /// Adds an integer constant the graph knows at import (pads, sizes, starts, steps), as the importer would.
  int ints(const std::string& name, std::vector<int64_t> v) {
    Value val;
    val.name = name;
    val.dtype = DType::I64;
    val.shape = Shape{{static_cast<int64_t>(v.size())}};
    val.kind = ValueKind::Constant;
    val.int_data = std::move(v);
    val.has_int_data = true;
    return g.add_value(val);
  }
  /// Adds a float constant given as a weight payload (e.g. Resize scales).
  int floats(const std::string& name, std::vector<float> v) {
    Value val;
    val.name = name;
    val.shape = Shape{{static_cast<int64_t>(v.size())}};
    val.kind = ValueKind::Constant;
    data[name] = HostTensor{val.shape, std::move(v)};
    return g.add_value(val);
  }
  /// Adds a node with one output of `out` shape; returns the output value id.
  int node(OpKind op, std::vector<int> inputs, Shape out, Attrs attrs = {}) {
    Value v;
    v.name = "v" + std::to_string(g.values.size());
    v.shape = out;
    int id = g.add_value(v);
    Node n;
    n.name = std::string(op_name(op)) + std::to_string(g.nodes.size());
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {id};
    n.attrs = std::move(attrs);
    g.add_node(n);
    return id;
  }
  /// Adds the next output (shape `s`) to the node that produced `first_out`; returns its value id.
  int extra_output(int first_out, Shape s) {
    Value v;
    v.name = "out" + std::to_string(g.values.size());
    v.shape = std::move(s);
    const int id = g.add_value(v);
    const int producer = g.value(first_out).producer;
    g.nodes[producer].outputs.push_back(id);
    g.values[id].producer = producer;
    return id;
  }
  /// Executor options carrying the case's data: graph inputs as inputs, everything else as weights.
  ExecOptions options() const {
    ExecOptions o;
    for (const auto& [name, t] : data) {
      int vid = -1;
      for (size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].name == name) vid = static_cast<int>(i);
      (g.values[vid].kind == ValueKind::Input ? o.inputs : o.weights)[name] = t;
    }
    return o;
  }
  /// Runs the graph with `output` as its only output.
  HostTensor run(int output, ExecResult* result = nullptr, bool train = false) {
    g.outputs = {output};
    ExecOptions o = options();
    o.train = train;
    ExecResult r = execute(g, o);
    HostTensor out = r.outputs.at(g.value(output).name);
    if (result) *result = std::move(r);
    return out;
  }
  const std::vector<float>& operator[](int vid) const { return data.at(g.value(vid).name).data; }
};

/// Checks |a - e| <= atol + rtol |e| element-wise.
inline void expect_close(const HostTensor& actual, const std::vector<float>& expected, double rtol = 1e-4,
                         double atol = 1e-5) {
  ASSERT_EQ(actual.data.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double diff = std::abs(double(actual.data[i]) - expected[i]);
    if (diff > atol + rtol * std::abs(expected[i]) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << actual.data[i] << ", expected " << expected[i];
  }
}

/// Calls f(graph, options) for every weightless export in tests/data/validation (hand-made and torchvision models,
/// each at its own small fixed input), in path order under a SCOPED_TRACE of its path; options carry the file's
/// Constant payloads (the weights are random).
template <typename F>
void for_each_validation_export(F f) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(RIDGE_SOURCE_DIR) + "/tests/data/validation"))
    if (e.path().string().find(".ext_emptybin.onnx") != std::string::npos) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 40u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    ExecOptions o;
    o.weights = read_onnx_weights(file);
    f(load_model(file, LoadOptions{}), o);
  }
}

}  // namespace ridge::test
