// Bad ONNX input: every case gives a one-line ridge::Error naming the file (and node), never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <random>

#include "load/onnx_tiny_model.hpp"
#include "ridge/error.hpp"
#include "ridge/onnx_import.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using test::set_attr;
using test::TinyModel;

TinyModel valid_model() {
  TinyModel m;
  m.input("x", {-1, 3, 8, 8}).weight("w", {4, 3, 3, 3});
  m.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
  m.node("Relu", {"c"}, {"y"}, "/relu/Relu");
  m.output("y");
  return m;
}

/// The error message of importing `bytes`, or "" when it imported.
std::string error_of(const std::string& bytes, const std::string& label = "bad.onnx") {
  try {
    import_onnx_bytes(bytes, label, LoadOptions{});
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind(label, 0), 0u) << what;
    return what;
  }
  return "";
}

void expect_error(const std::string& bytes, const std::string& fragment) {
  const std::string what = error_of(bytes);
  EXPECT_NE(what.find(fragment), std::string::npos) << "error was: '" << what << "'";
}

TEST(OnnxMalformed, ValidModelImports) { EXPECT_EQ(error_of(valid_model().bytes()), ""); }

TEST(OnnxMalformed, TruncatedFileAtEveryLength) {
  const std::string bytes = valid_model().bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string what = error_of(bytes.substr(0, n));
    // Some prefixes are themselves valid protobuf; those must still fail as a model or import cleanly.
    if (n < 8) {
      EXPECT_FALSE(what.empty()) << n;
    }
  }
}

TEST(OnnxMalformed, RandomBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_FALSE(error_of(bytes).empty());
  }
}

TEST(OnnxMalformed, WrongWireTypesAndFlippedBytesNeverCrash) {
  const std::string bytes = valid_model().bytes();
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string mutated = bytes;
      mutated[i] = static_cast<char>(static_cast<unsigned char>(mutated[i]) ^ flip);
      error_of(mutated);  // either imports or throws ridge::Error; never crashes
    }
}

TEST(OnnxMalformed, Cycle) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Add", {"x", "b"}, {"a"}, "/first/Add");
  m.node("Relu", {"a"}, {"b"}, "/second/Relu");
  m.output("b");
  expect_error(m.bytes(), "cycle");
}

TEST(OnnxMalformed, MissingNodeInput) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Add", {"x", "ghost"}, {"y"}, "/add/Add");
  m.output("y");
  expect_error(m.bytes(), "node '/add/Add' (Add): input 'ghost' is not produced");
}

TEST(OnnxMalformed, NegativeAndAbsurdDims) {
  TinyModel neg = valid_model();
  neg.weight("bad", {-3, 2});
  neg.node("Add", {"y", "bad"}, {"z"}, "/add/Add");
  expect_error(neg.bytes(), "negative");
  TinyModel huge;
  huge.input("x", {1'000'000'000'000'000, 4});
  huge.node("Relu", {"x"}, {"y"});
  huge.output("y");
  expect_error(huge.bytes(), "absurd");
  TinyModel reshape;
  reshape.input("x", {2, 4}).ints("shape", {1'000'000'000'000, 1'000'000'000'000});
  reshape.node("Reshape", {"x", "shape"}, {"y"}, "/Reshape");
  reshape.output("y");
  EXPECT_FALSE(error_of(reshape.bytes()).empty());
}

TEST(OnnxMalformed, DomainNotImported) {
  TinyModel m = valid_model();
  m.node("Fancy", {"y"}, {"z"}, "/fancy").set_domain("com.unknown");
  expect_error(m.bytes(), "domain 'com.unknown'");
}

TEST(OnnxMalformed, OpsetNewerThanTheLibrary) {
  TinyModel m(99);
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  expect_error(m.bytes(), "newer");
}

TEST(OnnxMalformed, NoGraph) { expect_error(std::string("\x08\x07", 2), "no graph"); }

TEST(OnnxMalformed, InconsistentShapesNameTheNode) {
  TinyModel m;
  m.input("x", {2, 3, 8, 8}).weight("w", {4, 5, 3, 3});
  m.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
  m.output("y");
  EXPECT_FALSE(error_of(m.bytes()).empty());
  TinyModel r;
  r.input("x", {2, 5}).ints("shape", {3, 3});
  r.node("Reshape", {"x", "shape"}, {"y"}, "/Reshape");
  r.output("y");
  expect_error(r.bytes(), "/Reshape");
}

/// A one-node model over input x of `dims` (opset `opset`); `build` adds initializers and the node "/bad".
std::string one_node(std::vector<int64_t> dims, const std::function<void(TinyModel&)>& build, int opset = 13) {
  TinyModel m(opset);
  m.input("x", std::move(dims));
  build(m);
  m.output("y");
  return m.bytes();
}

TEST(OnnxMalformed, AttributesAndWeightsThatDisagreeNameTheNode) {
  // Pooling with a zero kernel (was negative FLOPs), ConvTranspose with group 0, a kernel_shape other than the
  // weight's, a Softmax axis beyond the rank (was "vector::_M_range_check").
  expect_error(one_node({1, 2, 8, 8}, [](TinyModel& m) {
    set_attr(m.node("MaxPool", {"x"}, {"y"}, "/bad"), "kernel_shape", std::vector<int64_t>{0, 0});
  }), "node '/bad' (MaxPool): kernel_shape [0, 0] must be positive");
  expect_error(one_node({1, 2, 8, 8}, [](TinyModel& m) {
    m.weight("w", {2, 4, 3, 3});
    set_attr(m.node("ConvTranspose", {"x", "w"}, {"y"}, "/bad"), "group", int64_t{0});
  }), "node '/bad' (ConvTranspose): group 0 must be positive");
  expect_error(one_node({1, 2, 8, 8}, [](TinyModel& m) {
    m.weight("w", {4, 2, 3, 3});
    set_attr(m.node("Conv", {"x", "w"}, {"y"}, "/bad"), "kernel_shape", std::vector<int64_t>{5, 5});
  }), "node '/bad' (Conv): kernel_shape [5, 5] does not match the weight 4x2x3x3");
  for (int opset : {11, 13})
    expect_error(one_node({4, 4}, [](TinyModel& m) {
      set_attr(m.node("Softmax", {"x"}, {"y"}, "/bad"), "axis", int64_t{4});
    }, opset), "node '/bad' (Softmax): axis 4 out of range for rank 2");
}

TEST(OnnxMalformed, OperandsThatDisagreeNameTheNode) {
  expect_error(one_node({2, 3}, [](TinyModel& m) {
    m.weight("b", {5, 4});
    set_attr(m.node("Einsum", {"x", "b"}, {"y"}, "/bad"), "equation", std::string("ij,jk->ik"));
  }, 12), "node '/bad' (Einsum): Einsum letter 'j' is 3 in one place and 5 in another");
  expect_error(one_node({4, 4}, [](TinyModel& m) {
    m.ints("s", {3, 3});
    set_attr(m.node("Split", {"x", "s"}, {"y", "z"}, "/bad"), "axis", int64_t{0});
  }), "node '/bad' (Split): Split sizes [3, 3] do not add up to dim 0 (4)");
  expect_error(one_node({4, 4}, [](TinyModel& m) {
    set_attr(m.node("Transpose", {"x"}, {"y"}, "/bad"), "perm", std::vector<int64_t>{0, 0});
  }), "node '/bad' (Transpose): perm [0, 0] is not a permutation");
  expect_error(one_node({2, 4}, [](TinyModel& m) {
    m.weight("b", {4, 3}).weight("c", {5});
    m.node("Gemm", {"x", "b", "c"}, {"y"}, "/bad");
  }), "node '/bad' (Gemm): Gemm C 5 does not broadcast to the output 2x3");
  expect_error(one_node({1, 2, 8, 8}, [](TinyModel& m) {
    m.weight("g", {7}).weight("b", {7}).weight("mean", {7}).weight("var", {7});
    m.node("BatchNormalization", {"x", "g", "b", "mean", "var"}, {"y"}, "/bad");
  }), "node '/bad' (BatchNormalization): input 1 is 7, not one value per channel (2)");
  expect_error(one_node({3, 2, 4}, [](TinyModel& m) {
    m.weight("W", {1, 8, 4}).weight("R", {1, 8, 2});
    set_attr(m.node("LSTM", {"x", "W", "R"}, {"y"}, "/bad"), "hidden_size", int64_t{5});
  }), "node '/bad' (LSTM): W is 1x8x4, but hidden_size 5 and input 3x2x4 make it 1x20x4");
  expect_error(one_node({3, 2, 4}, [](TinyModel& m) {
    m.weight("W", {1, 6, 4}).weight("R", {1, 6, 3});
    set_attr(m.node("GRU", {"x", "W", "R"}, {"y"}, "/bad"), "hidden_size", int64_t{2});
  }), "node '/bad' (GRU): R is 1x6x3, but hidden_size 2 and input 3x2x4 make it 1x6x2");
  expect_error(one_node({1, 2, 3, 8}, [](TinyModel& m) {
    m.weight("k", {1, 2, 4, 6}).weight("v", {1, 2, 4, 8});
    m.node("Attention", {"x", "k", "v"}, {"y"}, "/bad");
  }, 23), "node '/bad' (Attention): Attention: Q 1x2x3x8 and K 1x2x4x6 differ in head size (8 and 6)");
}

TEST(OnnxMalformed, DuplicateTensorName) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "/a");
  m.node("Relu", {"x"}, {"y"}, "/b");
  m.output("y");
  expect_error(m.bytes(), "defined twice");
}

TEST(OnnxMalformed, InputFlagNamingNoInput) {
  LoadOptions o;
  o.input_shapes = {{"nope", Shape{{1, 3, 8, 8}}}};
  try {
    import_onnx_bytes(valid_model().bytes(), "m.onnx", o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--input nope"), std::string::npos) << e.what();
  }
  o.input_shapes = {{"x", Shape{{1, 3, 8}}}};
  EXPECT_THROW(import_onnx_bytes(valid_model().bytes(), "m.onnx", o), Error);
}

TEST(OnnxMalformed, FilesThatAreNotThere) {
  EXPECT_THROW(import_onnx("/nonexistent/model.onnx", LoadOptions{}), Error);
  EXPECT_THROW(import_onnx(test::temp_dir(), LoadOptions{}), Error);
}

// An input the op's schema requires, left out or named "" (found by the executor's fuzzer: a MatMul without B
// reached the executor, which read value -1), is refused naming the node and the input; optional inputs may be
// left out.
TEST(OnnxMalformed, RequiredInputsAndOutputsMustBeNamed) {
  expect_error(one_node({2, 3}, [](TinyModel& m) { m.node("MatMul", {"x", ""}, {"y"}, "/bad"); }),
               "node '/bad' (MatMul): required input 1 (B) is missing");
  expect_error(one_node({1, 2, 4, 4}, [](TinyModel& m) { m.node("Conv", {"x"}, {"y"}, "/bad"); }),
               "node '/bad' (Conv): required input 1 (W) is missing");
  EXPECT_EQ(error_of(one_node({2, 3}, [](TinyModel& m) {
              m.weight("w", {3, 4});
              m.node("Gemm", {"x", "w", ""}, {"y"});  // C is optional
            })),
            "");
  // A ReduceMax without its output (the executor fuzzer's: std::out_of_range reached terminate in the lowering).
  TinyModel no_output;
  no_output.input("x", {3, 2, 2});
  no_output.node("ReduceMax", {"x"}, {}, "/bad");
  expect_error(no_output.bytes(), "node '/bad' (ReduceMax) has no output");
  expect_error(one_node({1, 4}, [](TinyModel& m) {
                 m.node("Relu", {"x"}, {"y"});
                 m.node("Dropout", {"y"}, {"", "mask"}, "/bad");
               }),
               "node '/bad' (Dropout): required output 0 (output) is missing");
  EXPECT_EQ(error_of(one_node({1, 4}, [](TinyModel& m) { m.node("Dropout", {"x"}, {"y"}); })),  // mask optional
            "");
}

// A shape the file declares for a node's output that the op cannot produce (found by the executor's fuzzer: a
// ReduceMean whose axes attribute was misspelt reduces everything, but the file says 3x2; a Squeeze declared with
// more elements than its input; an Expand to a declared shape its input does not broadcast to) is refused with
// both shapes; before, the file's shape won silently, and the
// executor read past the op's buffer.
TEST(OnnxMalformed, DeclaredOutputShapesTheOpCannotProduceAreRefused) {
  for (const auto& [dims, want] : {std::pair{std::vector<int64_t>{3, 2}, "'y' is declared 3x2 but the op gives scalar"},
                                   std::pair{std::vector<int64_t>{1, 1, 2}, "'y' is declared 1x1x2 but the op gives scalar"}}) {
    TinyModel m;
    m.input("x", {3, 2, 2});
    set_attr(m.node("ReduceMean", {"x"}, {"y"}, "/bad"), "keepdims", int64_t{0});
    m.output("y");
    auto* shape = m.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
    shape->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) shape->mutable_shape()->add_dim()->set_dim_value(d);
    expect_error(m.bytes(), std::string("node '/bad' (ReduceMean): ") + want);
  }
  // A view whose target the rules cannot know (a Squeeze with computed axes) keeps its input's elements.
  TinyModel squeeze;
  squeeze.input("x", {1, 3, 4, 5}).input("axes", {1}, onnx::TensorProto::INT64);
  squeeze.node("Squeeze", {"x", "axes"}, {"y"}, "/bad");
  squeeze.output("y");
  auto* st = squeeze.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  st->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 10, 5}) st->mutable_shape()->add_dim()->set_dim_value(d);
  expect_error(squeeze.bytes(), "node '/bad' (Squeeze): 'y' is declared 3x10x5 (150 elements) but its input 1x3x4x5 has 60");
  // So is an Expand with a computed target whose declared output its input cannot broadcast to.
  TinyModel expand;
  expand.input("x", {3}).input("shape", {2}, onnx::TensorProto::INT64);
  expand.node("Expand", {"x", "shape"}, {"y"}, "/bad");
  expand.output("y");
  auto* et = expand.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  et->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 4}) et->mutable_shape()->add_dim()->set_dim_value(d);
  expect_error(expand.bytes(), "node '/bad' (Expand): Expand: shapes 3 and 3x4 do not broadcast");
  // Agreeing declarations, and a declared symbolic dim, import.
  TinyModel ok;
  ok.input("x", {-1, 2, 2});
  set_attr(ok.node("ReduceMean", {"x"}, {"y"}), "axes", std::vector<int64_t>{2});
  ok.output("y");
  auto* t = ok.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(2);
  t->mutable_shape()->add_dim()->set_dim_value(1);
  EXPECT_EQ(error_of(ok.bytes()), "");
}

TEST(OnnxMalformed, RegressionInputsFromFuzzingImportOrFailCleanly) {
  const std::filesystem::path dir = std::filesystem::path(RIDGE_SOURCE_DIR) / "tests/load/onnx_regressions";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no regression inputs";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    error_of(bytes, entry.path().filename().string());
    ++replayed;
  }
  std::cout << "replayed " << replayed << " fuzzer regression input(s)\n";
}

}  // namespace
}  // namespace ridge
