// Control flow (Loop, If) and sequence values in ONNX models: inlined into plain ops where their shape is known
// (src/load/onnx/inline.cpp), kept and named as not costed where it is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "load/onnx_tiny_model.hpp"
#include "ridge/cost.hpp"
#include "ridge/onnx_import.hpp"

namespace ridge {
namespace control_flow_test {  // named: the stage's test files share one unity build
namespace {

using test::add_body;
using test::body_input;
using test::body_node;
using test::set_attr;
using test::TinyModel;
using TP = onnx::TensorProto;

int value_named(const Graph& g, const std::string& name) {
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].name == name) return static_cast<int>(v);
  return -1;
}
Shape shape_of(const Graph& g, const std::string& name) {
  const int v = value_named(g, name);
  return v < 0 ? Shape{} : g.value(v).shape;
}
int count_ops(const Graph& g, const std::string& op_type) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op_type; }));
}
bool has_note(const Graph& g, const std::string& text) {
  return std::any_of(g.notes.begin(), g.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}
std::string notes_of(const Graph& g) {
  std::string all;
  for (const auto& n : g.notes) all += n + "\n";
  return all;
}

/// The body of a Loop that runs its whole trip count, in scope `scope`: inputs `{p}i` (iteration), `{p}c`
/// (condition) and `{p}in` (the carried value, float), and the condition passed on as `{p}c_out`, its first output.
onnx::GraphProto* counting_body(onnx::NodeProto& loop, const std::string& scope, const std::string& p) {
  auto* body = add_body(loop, "body");
  body->set_name(scope);  // torch names body nodes in the Loop's scope: "/accumulate/Add"
  body_input(body, p + "i", TP::INT64);
  body_input(body, p + "c", TP::BOOL);
  body_input(body, p + "in", TP::FLOAT);
  body_node(body, "Identity", {p + "c"}, {p + "c_out"});
  return body;
}

/// A Loop over `trip` whose body runs until the trip count: it adds x to the carried `acc` and scans out row
/// `i` of the table. `body_cond` makes the body's condition output (default: its condition input, passed on).
onnx::GraphProto* accumulate_loop(TinyModel& m, const std::string& trip, const std::string& cond = "") {
  auto* body = counting_body(m.node("Loop", {trip, cond, "x"}, {"acc", "rows"}, "/accumulate/Loop"), "/accumulate", "");
  body_node(body, "Add", {"in", "x"}, {"t"});
  body_node(body, "Gather", {"table", "i"}, {"row"});
  for (const char* o : {"c_out", "t", "row"}) body->add_output()->set_name(o);
  return body;
}

class UnrolledLoop : public ::testing::TestWithParam<int> {};

TEST_P(UnrolledLoop, CostsWhatTheSameOpsWrittenOutCost) {
  // Three iterations of the loop above against the same three Adds and Gathers written out by hand: the same
  // params, FLOPs and bytes, and the shapes ONNX gives Loop's outputs (scan outputs stacked on a new axis 0).
  // A tensor of the outer graph already named like an unrolled copy ("t@iter0") keeps its name.
  const int opset = GetParam();
  TinyModel looped(opset);
  looped.input("x", {2, 3}).weight("table", {5, 3}).ints("trip", {3}, true);
  looped.node("Relu", {"x"}, {"t@iter0"});
  accumulate_loop(looped, "trip");
  looped.output("acc").output("rows").output("t@iter0");
  const Graph g = import_onnx_bytes(looped.bytes(), "loop.onnx", LoadOptions{});

  TinyModel written(opset);
  written.input("x", {2, 3}).weight("table", {5, 3});
  written.node("Relu", {"x"}, {"r"});
  std::string acc = "x";
  std::vector<std::string> rows;
  for (int k = 0; k < 3; ++k) {
    const std::string next = "acc" + std::to_string(k), i = "i" + std::to_string(k);
    written.ints(i, {k}, true);
    written.node("Add", {acc, "x"}, {next});
    written.node("Gather", {"table", i}, {"row" + std::to_string(k)});
    rows.push_back("row" + std::to_string(k));
    acc = next;
  }
  const Graph plain = import_onnx_bytes(written.output(acc).output("r").bytes(), "written.onnx", LoadOptions{});

  EXPECT_EQ(count_ops(g, "Loop"), 0);
  EXPECT_EQ(count_ops(g, "Add"), 3);
  EXPECT_EQ(count_ops(g, "Gather"), 3);
  EXPECT_EQ(shape_of(g, "acc"), (Shape{{2, 3}}));
  EXPECT_EQ(shape_of(g, "rows"), (Shape{{3, 3}}));  // 3 iterations of a [3] row
  EXPECT_EQ(shape_of(g, "t@iter0"), (Shape{{2, 3}}));
  for (const ModuleInfo& module : g.modules)  // the copies sit in the Loop's scope, not in a module of its own
    EXPECT_EQ(module.path.find("Loop"), std::string::npos) << module.path;
  EXPECT_NE(g.find_node("accumulate.add"), -1);
  const ModelCost mc = estimate(g), expected = estimate(plain);
  EXPECT_TRUE(mc.excluded_ops.empty());
  EXPECT_EQ(mc.total.params, 15);  // the table, once
  EXPECT_EQ(mc.total.flops, expected.total.flops);
  EXPECT_GT(mc.total.flops, 0);
  EXPECT_TRUE(has_note(g, "control flow of known shape inlined: 1 Loop(s) unrolled (3 iterations in all)"))
      << notes_of(g);
}

// Opset 11 writes Unsqueeze's axes as an attribute, 13 as an input.
INSTANTIATE_TEST_SUITE_P(Opsets, UnrolledLoop, ::testing::Values(11, 13));

TEST(OnnxControlFlow, LoopsThatMayEndEarlyOrRunTooLongStayAndSayWhy) {
  struct Case {
    const char* why;
    std::function<void(TinyModel&, onnx::GraphProto*)> change;
  };
  const Case cases[] = {
      {"its body's condition may end it early",
       [](TinyModel& m, onnx::GraphProto* body) {
         m.ints("limit", {2}, true);
         body->mutable_node(0)->set_op_type("Less");  // while i < 2: the condition depends on the iteration
         body->mutable_node(0)->set_input(0, "i");
         body->mutable_node(0)->add_input("limit");
       }},
      {"Loop '/accumulate/Loop': it runs 5000 iterations, more than ridge unrolls",
       [](TinyModel& m, onnx::GraphProto*) {
         m.proto().mutable_graph()->mutable_initializer(1)->set_int64_data(0, 5000);
       }},
      // Nested control flow copied hundreds of times would cost ONNX's inference minutes, whenever the copies
      // stay (a body of unknown trip count each).
      {"Loop '/accumulate/Loop': unrolling it would copy its nested control flow 300 times",
       [](TinyModel& m, onnx::GraphProto* body) {
         m.proto().mutable_graph()->mutable_initializer(1)->set_int64_data(0, 300);
         auto* nested = body_node(body, "If", {"c"}, {"picked"});
         body_node(add_body(*nested, "then_branch"), "Neg", {"x"}, {"neg"});
         nested->mutable_attribute(0)->mutable_g()->add_output()->set_name("neg");
         body_node(add_body(*nested, "else_branch"), "Relu", {"x"}, {"relu"});
         nested->mutable_attribute(1)->mutable_g()->add_output()->set_name("relu");
       }},
  };
  for (const Case& c : cases) {
    TinyModel m;
    m.input("x", {2, 3}).weight("table", {5, 3}).ints("trip", {3}, true);
    c.change(m, accumulate_loop(m, "trip"));
    const Graph g = import_onnx_bytes(m.output("acc").bytes(), "loop.onnx", LoadOptions{});
    EXPECT_EQ(count_ops(g, "Loop"), 1) << c.why;
    EXPECT_TRUE(has_note(g, c.why)) << notes_of(g);
    EXPECT_EQ(estimate(g).excluded_ops.count("Loop"), 1u);
  }
}

TEST(OnnxControlFlow, NestedLoopsUnrollRoundAfterRound) {
  // The inner loop's trip count is the outer iteration's number plus one: known only once the outer loop is
  // unrolled. Iterations 0 and 1 run 1 and 2 inner Adds.
  TinyModel m;
  m.input("x", {2, 3}).weight("table", {5, 3}).ints("trip", {2}, true).ints("one", {1}, true);
  auto* body = counting_body(m.node("Loop", {"trip", "", "x"}, {"acc"}, "/outer/Loop"), "/outer", "o_");
  body_node(body, "Add", {"o_i", "one"}, {"inner_trip"});
  auto* inner = counting_body(*body_node(body, "Loop", {"inner_trip", "", "o_in"}, {"o_out"}), "/outer/inner", "a_");
  body_node(inner, "Add", {"a_in", "x"}, {"a_out"});
  for (const char* o : {"a_c_out", "a_out"}) inner->add_output()->set_name(o);
  for (const char* o : {"o_c_out", "o_out"}) body->add_output()->set_name(o);
  const Graph g = import_onnx_bytes(m.output("acc").bytes(), "nested.onnx", LoadOptions{});
  EXPECT_EQ(count_ops(g, "Loop"), 0) << notes_of(g);
  EXPECT_EQ(count_ops(g, "Add"), 2 + 3);  // the trip-count Adds, then 1 + 2 inner Adds of x
  EXPECT_EQ(shape_of(g, "acc"), (Shape{{2, 3}}));
  EXPECT_TRUE(has_note(g, "3 Loop(s) unrolled (5 iterations in all)")) << notes_of(g);
  EXPECT_TRUE(estimate(g).excluded_ops.empty());
}

TEST(OnnxControlFlow, NamelessControlFlowWithoutOutputsInsideABodyInlines) {
  // A Loop that carries and scans nothing and an If without outputs, both unnamed, inside another Loop's body
  // (the top level refuses nodes without outputs, bodies are not checked): once the outer Loop is unrolled, their
  // copies are named after the op. Reading the first output's name had failed the import of this valid model
  // ("malformed model (CHECK failed: (index) < (current_size_))").
  TinyModel m;
  m.input("x", {2, 3}).ints("trip", {2}, true).ints("yes", {1}, true);
  auto* outer = counting_body(m.node("Loop", {"trip", "", "x"}, {"acc"}, "/outer/Loop"), "/outer", "o_");
  auto* loop = body_node(outer, "Loop", {"trip", ""}, {});
  loop->clear_name();
  auto* body = add_body(*loop, "body");
  body_input(body, "i", TP::INT64);
  body_input(body, "c", TP::BOOL);
  body_node(body, "Identity", {"c"}, {"c_out"});
  body_node(body, "Relu", {"x"}, {"unused"});
  body->add_output()->set_name("c_out");
  auto* branch = body_node(outer, "If", {"yes"}, {});
  branch->clear_name();
  body_node(add_body(*branch, "then_branch"), "Neg", {"x"}, {"neg"});
  add_body(*branch, "else_branch");
  body_node(outer, "Sigmoid", {"o_in"}, {"o_out"});
  for (const char* o : {"o_c_out", "o_out"}) outer->add_output()->set_name(o);
  const Graph g = import_onnx_bytes(m.output("acc").bytes(), "nameless.onnx", LoadOptions{});
  EXPECT_EQ(count_ops(g, "Loop") + count_ops(g, "If"), 0) << notes_of(g);
  EXPECT_EQ(count_ops(g, "Relu"), 2 * 2);
  EXPECT_EQ(count_ops(g, "Neg"), 2);
  EXPECT_EQ(shape_of(g, "acc"), (Shape{{2, 3}}));
}

TEST(OnnxControlFlow, IfWithAKnownConditionBecomesItsBranch) {
  // torchvision's MViT tests a shape (Equal of a dim and a constant) and squeezes in one branch.
  for (int64_t dim : {2, 7}) {
    TinyModel m;
    m.input("x", {2, 3}).ints("zero", {0}, true).ints("dim", {dim}, true);
    m.node("Shape", {"x"}, {"s"});
    m.node("Gather", {"s", "zero"}, {"n"});
    m.node("Equal", {"n", "dim"}, {"same"});
    auto& branch = m.node("If", {"same"}, {"picked"}, "/pick/If");
    body_node(add_body(branch, "then_branch"), "Neg", {"x"}, {"neg"});
    branch.mutable_attribute(0)->mutable_g()->add_output()->set_name("neg");
    auto* otherwise = add_body(branch, "else_branch");
    body_node(otherwise, "Relu", {"x"}, {"relu"});
    body_node(otherwise, "Relu", {"relu"}, {"relu2"});
    otherwise->add_output()->set_name("relu2");
    const Graph g = import_onnx_bytes(m.output("picked").bytes(), "if.onnx", LoadOptions{});
    EXPECT_EQ(count_ops(g, "If"), 0);
    EXPECT_EQ(count_ops(g, "Neg"), dim == 2 ? 1 : 0);
    EXPECT_EQ(count_ops(g, "Relu"), dim == 2 ? 0 : 2);
    EXPECT_EQ(shape_of(g, "picked"), (Shape{{2, 3}}));
    EXPECT_TRUE(has_note(g, "1 If(s) replaced by the branch their known condition takes")) << notes_of(g);
  }
}

TEST(OnnxControlFlow, SequencesOfKnownPositionsBecomeTheirTensors) {
  TinyModel m;
  m.input("x", {2, 3}).ints("first", {0}, true).ints("last", {-1}, true).ints("third", {2}, true);
  m.node("Relu", {"x"}, {"r"});
  m.node("Neg", {"x"}, {"n"});
  m.node("SequenceConstruct", {"x", "r"}, {"s1"});
  m.node("SequenceInsert", {"s1", "n", "first"}, {"s2"});   // [n, x, r]
  m.node("SequenceAt", {"s2", "last"}, {"at_last"});       // r
  m.node("SequenceAt", {"s2", "first"}, {"at_first"});     // n
  m.node("SequenceLength", {"s2"}, {"length"});            // 3
  set_attr(m.node("ConcatFromSequence", {"s2"}, {"stacked"}), "new_axis", int64_t{1});  // [3, 2, 3]
  auto& split = m.node("SplitToSequence", {"x"}, {"columns"});  // 3 of [2]
  set_attr(split, "axis", int64_t{1});
  set_attr(split, "keepdims", int64_t{0});
  m.node("SequenceAt", {"columns", "third"}, {"column"});
  m.node("SequenceErase", {"s2"}, {"s3"});                 // [n, x]
  set_attr(m.node("ConcatFromSequence", {"s3"}, {"joined"}), "axis", int64_t{1});  // [2, 6]
  for (const char* o : {"at_last", "at_first", "length", "stacked", "column", "joined"}) m.output(o);
  const Graph g = import_onnx_bytes(m.bytes(), "sequences.onnx", LoadOptions{});

  for (const Node& n : g.nodes) EXPECT_EQ(n.op_type.find("Sequence"), std::string::npos) << n.op_type;
  const auto producer_input = [&](const std::string& name) {
    const Node& p = g.nodes[static_cast<size_t>(g.value(value_named(g, name)).producer)];
    return g.value(p.inputs.at(0)).name;
  };
  EXPECT_EQ(producer_input("at_last"), "r");
  EXPECT_EQ(producer_input("at_first"), "n");
  EXPECT_EQ(g.value(value_named(g, "length")).int_data, (std::vector<int64_t>{3}));
  EXPECT_EQ(shape_of(g, "stacked"), (Shape{{3, 2, 3}}));
  EXPECT_EQ(shape_of(g, "column"), (Shape{{2}}));
  EXPECT_EQ(shape_of(g, "joined"), (Shape{{2, 6}}));
  EXPECT_TRUE(estimate(g).excluded_ops.empty());
}

TEST(OnnxControlFlow, TorchSplitAsALoopOverASequenceUnrollsToSlices) {
  // How torch exports MViT's pooling `split`: a Loop over the chunk bounds, each iteration slicing a chunk and
  // inserting it into a carried sequence; the trip count comes from a shape and the chunks are read back with
  // SequenceAt.
  TinyModel m;
  m.input("x", {2, 10, 4}).ints("bounds", {0, 1, 10}).ints("axes", {1}).ints("zero", {0}).ints("one", {1}, true);
  m.ints("at0", {0}, true).ints("at1", {1}, true);
  m.node("Shape", {"bounds"}, {"bounds_shape"});
  m.node("Gather", {"bounds_shape", "zero"}, {"count"});  // [3]
  m.node("Sub", {"count", "one"}, {"trips"});             // [2]: one chunk between each pair of bounds
  set_attr(m.node("Cast", {"one"}, {"go"}), "to", int64_t{TP::BOOL});
  m.node("SequenceEmpty", {}, {"empty"});
  auto& loop = m.node("Loop", {"trips", "go", "empty"}, {"chunks"}, "/pool/Loop");
  auto* body = add_body(loop, "body");
  body_input(body, "i", TP::INT64);
  body_input(body, "c", TP::BOOL);
  body_input(body, "seq_in", TP::UNDEFINED);
  body_node(body, "Gather", {"bounds", "i"}, {"start"});
  body_node(body, "Add", {"i", "one"}, {"i1"});
  body_node(body, "Gather", {"bounds", "i1"}, {"end"});
  body_node(body, "Unsqueeze", {"start", "zero"}, {"starts"});
  body_node(body, "Unsqueeze", {"end", "zero"}, {"ends"});
  body_node(body, "Slice", {"x", "starts", "ends", "axes"}, {"chunk"});
  body_node(body, "SequenceInsert", {"seq_in", "chunk"}, {"seq_out"});
  body_node(body, "Identity", {"go"}, {"c_out"});
  for (const char* o : {"c_out", "seq_out"}) body->add_output()->set_name(o);
  m.node("SequenceAt", {"chunks", "at0"}, {"class_token"});
  m.node("SequenceAt", {"chunks", "at1"}, {"patches"});
  m.node("Relu", {"patches"}, {"y"});
  m.output("class_token").output("y");
  // torch 1.13 declares what follows such a Loop with a made-up dim; ridge's rules recompute it.
  for (auto* declared : {m.proto().mutable_graph()->mutable_output(1), m.proto().mutable_graph()->add_value_info()}) {
    if (!declared->has_type()) declared->set_name("patches");
    auto* t = declared->mutable_type()->mutable_tensor_type();
    t->set_elem_type(TP::FLOAT);
    for (int64_t d : {2, 7, 4}) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  const Graph g = import_onnx_bytes(m.bytes(), "split.onnx", LoadOptions{});
  EXPECT_EQ(count_ops(g, "Loop"), 0) << notes_of(g);
  EXPECT_EQ(count_ops(g, "Slice"), 2);
  EXPECT_EQ(shape_of(g, "class_token"), (Shape{{2, 1, 4}}));
  EXPECT_EQ(shape_of(g, "y"), (Shape{{2, 9, 4}}));
  EXPECT_TRUE(estimate(g).excluded_ops.empty()) << notes_of(g);
  EXPECT_TRUE(has_note(g, "1 Loop(s) unrolled (2 iterations in all)")) << notes_of(g);
}

TEST(OnnxControlFlow, BodiesOfUnknownShapeKeepWhatTheyReadAliveAndItsParametersCounted) {
  // torch exports nn.EmbeddingBag as a Loop whose body gathers from the table: the table is a parameter of the
  // model (800 here) even when the Loop stays (its trip count is a graph input); an If branch that reads an
  // activation keeps it alive.
  TinyModel m;
  m.input("x", {4, 8});
  m.input("trip", {}, TP::INT64);
  m.input("flag", {}, TP::BOOL);
  m.weight("emb.weight", {100, 8});
  m.node("Relu", {"x"}, {"act"});
  auto& loop = m.node("Loop", {"trip", ""}, {"rows"}, "bag");
  auto* body = add_body(loop, "body");
  body_input(body, "i", TP::INT64);
  body_input(body, "cond", TP::BOOL);
  body_node(body, "Identity", {"cond"}, {"cond_out"});
  body_node(body, "Gather", {"emb.weight", "i"}, {"row"});
  body->add_output()->set_name("cond_out");
  body->add_output()->set_name("row");
  auto& branch = m.node("If", {"flag"}, {"picked"}, "pick");
  body_node(add_body(branch, "then_branch"), "Neg", {"act"}, {"neg"});
  branch.mutable_attribute(0)->mutable_g()->add_output()->set_name("neg");
  body_node(add_body(branch, "else_branch"), "Identity", {"act"}, {"same"});
  branch.mutable_attribute(1)->mutable_g()->add_output()->set_name("same");
  m.output("rows").output("picked");
  const Graph g = import_onnx_bytes(m.bytes(), "control-flow.onnx", LoadOptions{});

  const int table = value_named(g, "emb.weight"), act = value_named(g, "act");
  ASSERT_GE(table, 0);
  EXPECT_EQ(g.value(table).kind, ValueKind::Param);
  const Node& bag = g.nodes[static_cast<size_t>(g.find_node("bag"))];
  EXPECT_NE(std::find(bag.inputs.begin(), bag.inputs.end(), table), bag.inputs.end());
  const Node& pick = g.nodes[static_cast<size_t>(g.find_node("pick"))];
  EXPECT_NE(std::find(pick.inputs.begin(), pick.inputs.end(), act), pick.inputs.end());  // read by both branches
  EXPECT_EQ(std::count(pick.inputs.begin(), pick.inputs.end(), act), 1);
  const ModelCost mc = estimate(g);
  EXPECT_EQ(mc.total.params, 800);  // was 0: the table was read only inside the body
  EXPECT_EQ(mc.excluded_ops.count("Loop"), 1u);  // still named as not costed
  EXPECT_EQ(mc.excluded_ops.count("If"), 1u);
  EXPECT_TRUE(has_note(g, "2 control-flow node(s) kept as ops ridge does not cost (first: Loop 'bag': its trip "
                          "count is not known)"))
      << notes_of(g);

  // A body that reads a tensor nobody defines is refused, naming the node and the tensor.
  body_node(body, "Neg", {"nowhere"}, {"lost"});
  try {
    import_onnx_bytes(m.bytes(), "control-flow.onnx", LoadOptions{});
    FAIL() << "a body reading an undefined tensor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'bag' (Loop): its body reads 'nowhere'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace control_flow_test
}  // namespace ridge
