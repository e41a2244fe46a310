// The IR: validation errors, topological order, shapes, exact counts.
#include <gtest/gtest.h>

#include "ridge/dtype.hpp"
#include "ridge/error.hpp"
#include "ridge/graph.hpp"

namespace ridge {
namespace {

Graph two_relus() {
  Graph g;
  int x = g.add_value(Value{"x", DType::F32, Shape{{1, 4}}, ValueKind::Input});
  g.inputs = {x};
  int a = g.add_value(Value{"a", DType::F32, Shape{{1, 4}}});
  int b = g.add_value(Value{"b", DType::F32, Shape{{1, 4}}});
  g.add_node(Node{"r1", OpKind::Relu, "Relu", "", "", false, {x}, {a}, {}});
  g.add_node(Node{"r2", OpKind::Relu, "Relu", "", "", false, {a}, {b}, {}});
  g.outputs = {b};
  return g;
}

std::string error_of(const Graph& g) {
  try {
    validate(g);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Graph, ValidGraphPasses) { EXPECT_EQ(error_of(two_relus()), ""); }

TEST(Graph, CycleIsNamed) {
  Graph g = two_relus();
  g.nodes[0].inputs = {2};  // r1 reads r2's output
  EXPECT_NE(error_of(g).find("cycle"), std::string::npos);
}

TEST(Graph, DanglingInputIsNamed) {
  Graph g = two_relus();
  g.nodes[1].inputs = {42};
  EXPECT_NE(error_of(g).find("r2"), std::string::npos);
  EXPECT_NE(error_of(g).find("dangling"), std::string::npos);
}

TEST(Graph, UnproducedActivationIsNamed) {
  Graph g = two_relus();
  int orphan = g.add_value(Value{"orphan", DType::F32, Shape{{1, 4}}});
  g.nodes[1].inputs = {orphan};
  EXPECT_NE(error_of(g).find("orphan"), std::string::npos);
}

TEST(Graph, DuplicateNames) {
  Graph g = two_relus();
  g.nodes[1].name = "r1";
  EXPECT_NE(error_of(g).find("two nodes are named 'r1'"), std::string::npos);
}

TEST(Graph, ConvChannelMismatch) {
  Graph g;
  int x = g.add_value(Value{"x", DType::F32, Shape{{1, 3, 8, 8}}, ValueKind::Input});
  g.inputs = {x};
  int w = g.add_value(Value{"w", DType::F32, Shape{{4, 5, 3, 3}}, ValueKind::Param});
  int y = g.add_value(Value{"y", DType::F32, Shape{{1, 4, 6, 6}}});
  g.add_node(Node{"conv", OpKind::Conv, "Conv", "", "", false, {x, w}, {y}, {}});
  g.outputs = {y};
  std::string e = error_of(g);
  EXPECT_NE(e.find("conv"), std::string::npos);
  EXPECT_NE(e.find("3 channels"), std::string::npos);
}

TEST(Graph, AddBroadcastMismatch) {
  Graph g;
  int a = g.add_value(Value{"a", DType::F32, Shape{{2, 3}}, ValueKind::Input});
  int b = g.add_value(Value{"b", DType::F32, Shape{{4, 3}}, ValueKind::Input});
  g.inputs = {a, b};
  int y = g.add_value(Value{"y", DType::F32, Shape{{2, 3}}});
  g.add_node(Node{"add", OpKind::Add, "Add", "", "", false, {a, b}, {y}, {}});
  g.outputs = {y};
  EXPECT_NE(error_of(g).find("do not broadcast"), std::string::npos);
}

TEST(Graph, TopoOrderReordersOnlyWhenNeeded) {
  Graph g = two_relus();
  EXPECT_EQ(topo_order(g), (std::vector<int>{0, 1}));
  std::swap(g.nodes[0], g.nodes[1]);
  g.values[1].producer = 1;
  g.values[2].producer = 0;
  EXPECT_EQ(topo_order(g), (std::vector<int>{1, 0}));
}

TEST(Shape, ParseAndPrint) {
  EXPECT_EQ(parse_shape("1x3x224x224", "--input-size").dims, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape("2,5", "x").dims, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(to_string(Shape{{1, -1, 7}}), "1x?x7");
  EXPECT_THROW(parse_shape("1x0x3", "--input-size"), Error);
  EXPECT_THROW(parse_shape("axb", "--input-size"), Error);
  EXPECT_THROW(parse_shape("", "--input-size"), Error);
  EXPECT_THROW(parse_shape("1x99999999999999999", "--input-size"), Error);
  try {
    parse_shape("3x-1", "--input-size");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--input-size"), std::string::npos);
  }
}

TEST(Count, ExactBeyond64Bits) {
  Count big = Count{1} << 100;
  EXPECT_EQ(to_string(big), "1267650600228229401496703205376");
  EXPECT_EQ(with_commas(big), "1,267,650,600,228,229,401,496,703,205,376");
  EXPECT_EQ(parse_count("1,267,650,600,228,229,401,496,703,205,376"), big);
  EXPECT_EQ(with_commas(-1234567), "-1,234,567");
  EXPECT_EQ(to_string(Count{0}), "0");
  EXPECT_THROW(parse_count("12a"), Error);
  EXPECT_THROW(checked_mul(Count{1} << 100, Count{1} << 100, "test"), Error);
}

TEST(Ops, TableIsConsistent) {
  for (int i = 0; i < kOpKindCount; ++i) {
    OpKind k = static_cast<OpKind>(i);
    if (k == OpKind::Unknown) continue;
    auto back = parse_op(op_name(k));
    ASSERT_TRUE(back.has_value()) << op_name(k);
    EXPECT_EQ(*back, k);
  }
  EXPECT_EQ(op_family(OpKind::Conv), OpFamily::Conv);
  EXPECT_FALSE(parse_op("TfIdfVectorizer").has_value());
  EXPECT_FALSE(parse_op("Unknown").has_value());
}

// ONNX's TensorProto.DataType numbers and ridge's element types map both ways from one table (the LLM builder's
// Casts write `to` with onnx_type_of; Cast's shape rule reads it with dtype_from_onnx).
TEST(DType, OnnxTypeNumbersRoundTrip) {
  for (DType t : {DType::F32, DType::U8, DType::I8, DType::I32, DType::I64, DType::Bool, DType::F16, DType::F64,
                  DType::BF16})
    EXPECT_EQ(dtype_from_onnx(onnx_type_of(t)), t) << dtype_name(t);
  EXPECT_EQ(onnx_type_of(DType::F32), 1);
  EXPECT_EQ(onnx_type_of(DType::BF16), 16);
  EXPECT_EQ(onnx_type_of(DType::Unknown), 0);
  EXPECT_EQ(dtype_from_onnx(8), DType::Unknown);  // STRING
}

}  // namespace
}  // namespace ridge
