// Builds small ONNX models in test code with the protobuf API (no files, no fixtures).
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace ridge::test {

/// A ModelProto under construction: inputs, initializers, nodes and outputs added in a chain.
class TinyModel {
 public:
  explicit TinyModel(int opset = 13, const std::string& domain = "") {
    m_.set_ir_version(8);
    m_.set_producer_name("ridge-tests");
    auto* op = m_.add_opset_import();
    op->set_domain(domain);
    op->set_version(opset);
  }
  /// A graph input; a dim of -1 becomes the symbolic "batch".
  TinyModel& input(const std::string& name, std::vector<int64_t> dims, int elem = onnx::TensorProto::FLOAT) {
    auto* in = m_.mutable_graph()->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0) s->add_dim()->set_dim_param("batch");
      else s->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  /// A weight initializer with dims only (no payload, like the weightless fixtures).
  TinyModel& weight(const std::string& name, std::vector<int64_t> dims, int elem = onnx::TensorProto::FLOAT) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (int64_t d : dims) t->add_dims(d);
    return *this;
  }
  /// An int64 initializer with values (shapes, axes, pads).
  TinyModel& ints(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  /// A float initializer with values (scales, clip bounds).
  TinyModel& floats(const std::string& name, std::vector<float> values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "/" + op : name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }
  TinyModel& output(const std::string& name) {
    m_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  onnx::ModelProto& proto() { return m_; }
  std::string bytes() const { return m_.SerializeAsString(); }

 private:
  onnx::ModelProto m_;
};

inline void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

/// A body graph for a control-flow node's GRAPH attribute (If's branches, Loop's body).
inline onnx::GraphProto* add_body(onnx::NodeProto& n, const std::string& attr) {
  auto* a = n.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attr);
  return a->mutable_g();
}
/// A node of a body graph, named after the body and the op.
inline onnx::NodeProto* body_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                                  std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(g->name() + "/" + op);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}
/// A body graph input of an element type with no shape given.
inline void body_input(onnx::GraphProto* g, const std::string& name, int elem) {
  auto* in = g->add_input();
  in->set_name(name);
  in->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

}  // namespace ridge::test
