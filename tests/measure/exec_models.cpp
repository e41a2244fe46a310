// Whole graphs through the executor: fixed-seed determinism, ONNX testdata with real weights, unsupported ops,
// memory refusal, training steps, and the `ridge measure` / `ridge run` commands end to end.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "load/onnx_tiny_model.hpp"
#include "measure/exec_support.hpp"
#include "ridge/perf_counters.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/onnx_import.hpp"
#include "support/test_support.hpp"

namespace ridge::test {
namespace {

/// conv -> relu -> pool -> flatten -> gemm: a tiny CNN built by hand.
ExecCase tiny_cnn(int* out) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 8, 8}});
  int w = t.tensor("conv.w", Shape{{4, 3, 3, 3}}, ValueKind::Param, -0.3f, 0.3f);
  int c = t.node(OpKind::Conv, {x, w}, Shape{{2, 4, 8, 8}},
                 Attrs{}.set("kernel_shape", std::vector<int64_t>{3, 3}).set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  int r = t.node(OpKind::Relu, {c}, Shape{{2, 4, 8, 8}});
  int p = t.node(OpKind::MaxPool, {r}, Shape{{2, 4, 4, 4}},
                 Attrs{}.set("kernel_shape", std::vector<int64_t>{2, 2}).set("strides", std::vector<int64_t>{2, 2}));
  int f = t.node(OpKind::Flatten, {p}, Shape{{2, 64}}, Attrs{}.set("axis", int64_t{1}));
  int fw = t.tensor("fc.w", Shape{{10, 64}}, ValueKind::Param, -0.1f, 0.1f);
  int fb = t.tensor("fc.b", Shape{{10}}, ValueKind::Param);
  *out = t.node(OpKind::Gemm, {f, fw, fb}, Shape{{2, 10}}, Attrs{}.set("transB", int64_t{1}));
  return t;
}

TEST(ExecModels, SameSeedSameOutput) {
  int y = -1;
  ExecCase t = tiny_cnn(&y);
  t.g.outputs = {y};
  ExecOptions o;  // everything random from the seed
  const auto a = execute(t.g, o).outputs.begin()->second.data;
  const auto b = execute(t.g, o).outputs.begin()->second.data;
  EXPECT_EQ(a, b);
  o.seed = 43;
  EXPECT_NE(execute(t.g, o).outputs.begin()->second.data, a);
}

TEST(ExecModels, UnsupportedOpIsReportedAndTheRestRuns) {
  ExecCase t;
  int x = t.tensor("x", Shape{{1, 4}});
  int u = t.node(OpKind::Hardmax, {x}, Shape{{1, 4}});
  int r = t.node(OpKind::Relu, {u}, Shape{{1, 4}});
  ExecResult res;
  HostTensor out = t.run(r, &res);
  ASSERT_EQ(res.steps.size(), 2u);
  EXPECT_EQ(res.steps[0].status, StepStatus::NotExecuted);
  EXPECT_NE(res.steps[0].reason.find("no kernel for op Hardmax"), std::string::npos);
  EXPECT_EQ(res.steps[1].status, StepStatus::Executed);
  EXPECT_TRUE(res.steps[1].synthetic_inputs);
  EXPECT_EQ(out.data.size(), 4u);
  for (float v : out.data) EXPECT_GE(v, 0.f);
}

// Integer Add, Sub and Mul (index arithmetic: MViT-v2's relative positions) run in fp32, exact up to 2^24; they
// were not executed before. A result past 2^24 stops the run with an error naming the node, never a rounded value.
TEST(ExecModels, IntegerArithmeticRunsExactlyAndRefusesWhatFp32CannotHold) {
  for (const float big : {4000.f, 5000.f}) {  // 4000^2 = 16,000,000 <= 2^24 < 25,000,000 = 5000^2
    ExecCase t;
    const int x = t.tensor("x", Shape{{3}});
    t.g.value(x).dtype = DType::I64;
    const int sum = t.node(OpKind::Add, {x, x}, Shape{{3}});
    const int diff = t.node(OpKind::Sub, {sum, x}, Shape{{3}});
    const int square = t.node(OpKind::Mul, {diff, diff}, Shape{{3}});
    for (int v : {sum, diff, square}) t.g.value(v).dtype = DType::I64;
    t.g.outputs = {square};
    ExecOptions o = t.options();
    o.inputs["x"] = HostTensor{Shape{{3}}, {-3.f, 7.f, big}};
    if (big == 4000.f) {
      const ExecResult r = execute(t.g, o);
      for (const auto& s : r.steps) EXPECT_EQ(s.status, StepStatus::Executed) << s.name << ": " << s.reason;
      EXPECT_EQ(r.outputs.at(t.g.value(square).name).data, (std::vector<float>{9.f, 49.f, 16000000.f}));
      continue;
    }
    try {
      execute(t.g, o);
      ADD_FAILURE() << "25,000,000 was rounded instead of refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("(Mul, int64): integer result 25000000 is outside [-16777216, 16777216]"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ExecModels, Uint8ArithmeticThatWouldWrapIsRefused) {  // ONNX wraps 200 + 100 around to 44
  ExecCase t;
  const int x = t.tensor("x", Shape{{2}});
  t.g.value(x).dtype = DType::U8;
  const int y = t.node(OpKind::Add, {x, x}, Shape{{2}});
  t.g.value(y).dtype = DType::U8;
  t.g.outputs = {y};
  ExecOptions o = t.options();
  o.inputs["x"] = HostTensor{Shape{{2}}, {100.f, 127.f}};
  EXPECT_EQ(execute(t.g, o).outputs.at(t.g.value(y).name).data, (std::vector<float>{200.f, 254.f}));
  o.inputs["x"] = HostTensor{Shape{{2}}, {100.f, 150.f}};
  try {
    execute(t.g, o);
    ADD_FAILURE() << "300 was kept instead of refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(Add, uint8): integer result 300 is outside [0, 255]"), std::string::npos)
        << e.what();
  }
}

TEST(ExecModels, RefusesABatchThatDoesNotFit) {
  int y = -1;
  ExecCase t = tiny_cnn(&y);
  t.g.outputs = {y};
  ExecOptions o;
  o.available_bytes = Count(1000);
  try {
    execute(t.g, o);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("available"), std::string::npos) << e.what();
  }
}

// A fill too large to fold at import (a ConstantOfShape of 10^10 floats, 40 GB) is counted by the memory check:
// it used to pass as a view, and oneDNN's allocation then failed with "could not create a memory object".
TEST(ExecModels, RefusesAFillThatDoesNotFit) {
  const Graph g = import_onnx_bytes(
      [] {
        TinyModel m;
        m.ints("shape", {100000, 100000});
        m.node("ConstantOfShape", {"shape"}, {"y"});
        m.output("y");
        return m.bytes();
      }(),
      "huge_fill", LoadOptions{});
  ExecOptions o;
  o.available_bytes = Count(int64_t{8} << 30);
  try {
    execute(g, o);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 40 GB"), std::string::npos) << e.what();
  }
}

// A lowering whose output buffer has another size than the graph's shape for it (here a graph built in code, past
// the importer's check: a ReduceMean over every axis declared 3x2) is not executed, with the reason; the next node
// would have read past the buffer (found by scripts/fuzz-exec.sh).
TEST(ExecModels, AnOutputOfTheWrongSizeIsNotExecuted) {
  ExecCase t;
  int x = t.tensor("x", Shape{{3, 2, 2}});
  int y = t.node(OpKind::ReduceMean, {x}, Shape{{3, 2}}, Attrs{}.set("keepdims", int64_t{0}));
  ExecResult res;
  t.run(y, &res);
  const StepInfo& step = res.steps.back();
  EXPECT_EQ(step.status, StepStatus::NotExecuted);
  EXPECT_NE(step.reason.find("a view of 6 elements over a buffer of 1"), std::string::npos) << step.reason;
}

// Tensor payloads a file can hold but not honestly describe are one-line errors naming the tensor, before any
// allocation: dims whose product overflows, a raw payload too short for its dims (it used to reserve the dims'
// size first: 32 GB here), external-data offsets or lengths that are not byte counts (std::stoll threw
// std::invalid_argument, which the CLI reported as "error: stoll") or negative, or far beyond the dims.
TEST(ExecModels, MalformedTensorPayloadsAreOneLineErrors) {
  const std::string dir = test::temp_dir();
  std::ofstream(dir + "/data.bin", std::ios::binary) << std::string(64, '\0');
  auto error_of = [&](const std::function<void(onnx::TensorProto&)>& fill) {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    fill(t);
    const std::string path = dir + "/t.pb";
    std::ofstream(path, std::ios::binary) << t.SerializeAsString();
    try {
      read_tensor_pb(path);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return std::string(e.what());
    }
    return std::string();
  };
  // 2 floats of external data, `location` (data.bin: 64 bytes) and one more key set: the error, "" when it reads.
  auto external_error = [&](const std::string& key, const std::string& value, const std::string& location) {
    return error_of([&](onnx::TensorProto& t) {
      t.add_dims(2);
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      for (const auto& [k, v] : {std::pair{std::string("location"), location}, std::pair{key, value}}) {
        auto* e = t.add_external_data();
        e->set_key(k), e->set_value(v);
      }
    });
  };
  EXPECT_NE(error_of([](onnx::TensorProto& t) {
              t.add_dims(int64_t{1} << 40), t.add_dims(int64_t{1} << 40);
            }).find("its dims hold more than 2^63 elements"),
            std::string::npos);
  EXPECT_NE(error_of([](onnx::TensorProto& t) {
              t.add_dims(int64_t{1} << 31), t.add_dims(4), t.set_raw_data(std::string(8, '\0'));
            }).find("payload has 8 bytes, expected 8589934592 x 4"),
            std::string::npos);
  for (const std::string bad : {"abc", "-5", "12x", "99999999999999999999"})
    EXPECT_NE(external_error("offset", bad, "data.bin").find("external data offset '" + bad + "' is not a byte count"),
              std::string::npos)
        << bad;
  const std::tuple<std::string, std::string, std::string, std::string> cases[] = {
      {"offset", "1000", "data.bin", "external data is missing"},  // past the file, as before
      {"length", "65", "data.bin", "external data is missing"},    // beyond it, as before
      {"offset", "0", ".", "external data is missing"},  // a directory reads as endless: the fuzzer's 2^63 bytes
      {"length", "64", "data.bin", "external data of 64 bytes for 2 elements"},  // refused before it is read
      {"length", "8", "data.bin", ""}};                                          // 2 floats: fine
  for (const auto& [key, value, location, want] : cases) {
    const std::string error = external_error(key, value, location);
    if (want.empty()) EXPECT_EQ(error, "") << key << "=" << value;
    else EXPECT_NE(error.find(want), std::string::npos) << key << "=" << value << ": " << error;
  }
}

// An elementwise reference kernel whose input does not broadcast to its output (a graph built in code, past the
// importer's checks) is not executed, with the reason; it read past the input's buffer (found by the fuzzer).
TEST(ExecModels, AnInputThatDoesNotBroadcastIsNotExecuted) {
  ExecCase t;
  int x = t.tensor("x", Shape{{3}});
  int y = t.node(OpKind::Expand, {x, t.ints("shape", {3, 4})}, Shape{{3, 4}});
  ExecResult res;
  t.run(y, &res);
  EXPECT_EQ(res.steps.back().status, StepStatus::NotExecuted);
  EXPECT_NE(res.steps.back().reason.find("an input of dims 3 does not broadcast to 3x4"), std::string::npos)
      << res.steps.back().reason;
}

// Inputs saved by scripts/fuzz-exec.sh (tests/measure/exec_regressions/): each imports (and its payloads are read)
// as the fuzzer does, and either fails with a ridge::Error or runs per layer, end to end and as a training step
// without any other exception (and, under the fuzzer's sanitizer, without a memory error).
TEST(ExecModels, FuzzerRegressionInputsRunOrFailCleanly) {
  const std::filesystem::path dir = std::filesystem::path(RIDGE_SOURCE_DIR) / "tests/measure/exec_regressions";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().filename().string());
    LoadOptions load;
    load.batch = 1;
    load.seq_len = 4;
    ++replayed;
    Graph g;
    try {
      g = import_onnx_bytes(bytes, entry.path().filename().string(), load, OnnxImportOptions{false, true});
    } catch (const Error&) {
      continue;
    }
    ExecOptions o;
    try {
      o.weights = read_onnx_weights(entry.path().string());
    } catch (const Error&) {
    }
    o.available_bytes = Count(int64_t{256} << 20);
    for (const bool fuse : {false, true}) {
      o.fuse = fuse;
      try {
        execute(g, o);
      } catch (const Error&) {
      }
    }
    o.fuse = false;
    try {
      parameter_gradients(g, o);
    } catch (const Error&) {
    }
  }
  EXPECT_GT(replayed, 0);
}

TEST(ExecModels, TrainingStepRunsBackwardForEveryLayer) {
  int y = -1;
  ExecCase t = tiny_cnn(&y);
  t.g.outputs = {y};
  MeasureOptions o;
  o.exec.train = true;
  o.min_repeats = o.max_repeats = 2;
  o.warmup = 1;
  ModelMeasurement m = measure_graph(t.g, o);
  for (const auto& l : m.layers) {
    if (l.step.op == "Flatten" || l.step.op == "Reorder") continue;
    EXPECT_TRUE(l.step.has_backward) << l.step.name;
    EXPECT_EQ(l.backward.samples, 2) << l.step.name;
  }
  EXPECT_EQ(m.update.samples, 2);
}

/// Sum of the graph's outputs for the case's data with one weight element nudged.
double loss_with(ExecCase& t, const std::string& param, size_t k, float delta) {
  ExecOptions o = t.options();
  o.train = true;  // the same forward the gradients are taken of (BatchNorm uses batch statistics)
  o.weights.at(param).data.at(k) += delta;
  double sum = 0;
  for (const auto& [name, out] : execute(t.g, o).outputs)
    for (float v : out.data) sum += v;
  return sum;
}

/// Backward kernels against central finite differences of the forward pass (loss = sum of outputs).
/// Tolerance: 2e-2 relative + 5e-3 absolute (fp32 forward, step 1e-3; ReLU/max kinks stay rare at that step).
void expect_gradients_match(ExecCase& t) {
  const TensorMap grads = parameter_gradients(t.g, t.options());
  ASSERT_FALSE(grads.empty());
  for (const auto& [name, g] : grads) {
    for (size_t k = 0; k < g.data.size(); k += std::max<size_t>(1, g.data.size() / 3)) {
      const double fd = (loss_with(t, name, k, 1e-3f) - loss_with(t, name, k, -1e-3f)) / 2e-3;
      EXPECT_NEAR(g.data[k], fd, 5e-3 + 2e-2 * std::abs(fd)) << name << "[" << k << "]";
    }
  }
}

TEST(ExecGradients, ConvReluPoolGemm) {
  int y = -1;
  ExecCase t = tiny_cnn(&y);
  t.g.outputs = {y};
  expect_gradients_match(t);
}

TEST(ExecGradients, BatchNormGroupedConvAndAdd) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 4, 5, 5}});
  int w = t.tensor("w", Shape{{4, 2, 3, 3}}, ValueKind::Param, -0.3f, 0.3f);
  int c = t.node(OpKind::Conv, {x, w}, Shape{{2, 4, 5, 5}},
                 Attrs{}.set("kernel_shape", std::vector<int64_t>{3, 3}).set("pads", std::vector<int64_t>{1, 1, 1, 1}).set("group", int64_t{2}));
  int s = t.tensor("bn.s", Shape{{4}}, ValueKind::Param);
  int b = t.tensor("bn.b", Shape{{4}}, ValueKind::Param);
  int m = t.tensor("bn.m", Shape{{4}}, ValueKind::Buffer);
  int v = t.tensor("bn.v", Shape{{4}}, ValueKind::Buffer, 0.5f, 1.5f);
  int n = t.node(OpKind::BatchNormalization, {c, s, b, m, v}, Shape{{2, 4, 5, 5}});
  int sig = t.node(OpKind::Sigmoid, {n}, Shape{{2, 4, 5, 5}});
  int add = t.node(OpKind::Add, {sig, c}, Shape{{2, 4, 5, 5}});
  int g = t.node(OpKind::GlobalAveragePool, {add}, Shape{{2, 4, 1, 1}});
  t.g.outputs = {g};
  expect_gradients_match(t);
}

TEST(ExecGradients, LayerNormMatMulSoftmax) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 6}});
  int s = t.tensor("ln.s", Shape{{6}}, ValueKind::Param);
  int b = t.tensor("ln.b", Shape{{6}}, ValueKind::Param);
  int ln = t.node(OpKind::LayerNormalization, {x, s, b}, Shape{{2, 3, 6}});
  int w = t.tensor("proj.w", Shape{{6, 4}}, ValueKind::Param, -0.5f, 0.5f);
  int mm = t.node(OpKind::MatMul, {ln, w}, Shape{{2, 3, 4}});
  int sm = t.node(OpKind::Softmax, {mm}, Shape{{2, 3, 4}}, Attrs{}.set("axis", int64_t{-1}));
  int sq = t.node(OpKind::Mul, {sm, mm}, Shape{{2, 3, 4}});
  t.g.outputs = {sq};
  expect_gradients_match(t);
}

TEST(ExecGradients, ConvTransposePadResizeSlice) {
  ExecCase t;
  int x = t.tensor("x", Shape{{1, 4, 3, 3}});
  int w = t.tensor("up.w", Shape{{4, 3, 3, 3}}, ValueKind::Param, -0.3f, 0.3f);  // [in, out/group, k, k]
  int b = t.tensor("up.b", Shape{{6}}, ValueKind::Param);
  int up = t.node(OpKind::ConvTranspose, {x, w, b}, Shape{{1, 6, 6, 6}},
                  Attrs{}
                      .set("strides", std::vector<int64_t>{2, 2})
                      .set("pads", std::vector<int64_t>{1, 1, 1, 1})
                      .set("output_padding", std::vector<int64_t>{1, 1})
                      .set("group", int64_t{2}));
  int pad = t.node(OpKind::Pad, {up, t.ints("pads", {0, 0, 1, 2, 0, 0, 2, 1})}, Shape{{1, 6, 9, 9}},
                   Attrs{}.set("mode", std::string("reflect")));
  int lin = t.node(OpKind::Resize, {pad, -1, t.floats("scales", {1, 1, 0.5f, 1.5f})}, Shape{{1, 6, 4, 13}},
                   Attrs{}.set("mode", std::string("linear")));
  int near = t.node(OpKind::Resize, {lin, -1, -1, t.ints("sizes", {1, 6, 8, 13})}, Shape{{1, 6, 8, 13}});
  int sl = t.node(OpKind::Slice,
                  {near, t.ints("starts", {-1}), t.ints("ends", {std::numeric_limits<int64_t>::min()}),
                   t.ints("axes", {3}), t.ints("steps", {-3})},
                  Shape{{1, 6, 8, 5}});
  t.g.outputs = {t.node(OpKind::Mul, {sl, sl}, Shape{{1, 6, 8, 5}})};
  expect_gradients_match(t);
}

// ScatterND's backward: replace (the data's gradient is zero where an update landed) then add (it passes
// through), both updates' gradients gathered at their rows; indices are a constant payload.
TEST(ExecGradients, ScatterNdReplaceThenAdd) {
  ExecCase t;
  int x = t.tensor("x", Shape{{4, 3}});
  int w = t.tensor("w", Shape{{4, 3}}, ValueKind::Param);
  int data = t.node(OpKind::Mul, {x, w}, Shape{{4, 3}});
  int u1 = t.tensor("u1", Shape{{2, 3}}, ValueKind::Param), u2 = t.tensor("u2", Shape{{2, 3}}, ValueKind::Param);
  int s1 = t.node(OpKind::ScatterND, {data, t.floats("i1", {2, 0}), u1}, Shape{{4, 3}});
  t.g.values[t.g.nodes.back().inputs[1]].shape = Shape{{2, 1}};
  int s2 = t.node(OpKind::ScatterND, {s1, t.floats("i2", {0, 3}), u2}, Shape{{4, 3}},
                  Attrs{}.set("reduction", std::string("add")));
  t.g.values[t.g.nodes.back().inputs[1]].shape = Shape{{2, 1}};
  t.data["i1"].shape = t.data["i2"].shape = Shape{{2, 1}};
  t.g.outputs = {t.node(OpKind::Mul, {s2, s2}, Shape{{4, 3}})};
  expect_gradients_match(t);
}

// ScatterND's backward with reduction mul (two updates on one row: each factor gets the product of the others; a
// zero factor included), max and min (the gradient goes to the factor that won), against finite differences;
// these had none.
TEST(ExecGradients, ScatterNdMulMaxMin) {
  for (const std::string reduction : {"mul", "max", "min"}) {
    SCOPED_TRACE(reduction);
    ExecCase t;
    int x = t.tensor("x", Shape{{4, 3}});
    int data = t.node(OpKind::Mul, {x, t.tensor("w", Shape{{4, 3}}, ValueKind::Param)}, Shape{{4, 3}});
    int u = t.tensor("u", Shape{{3, 3}}, ValueKind::Param);
    if (reduction == "mul") {  // row 0, column 0: data 0.9 x 0.8, then u[3] = 0 (a zero factor) and u[6] = 0.7
      t.data["x"].data[0] = 0.9f, t.data["w"].data[0] = 0.8f;
      t.data["u"].data[3] = 0.f, t.data["u"].data[6] = 0.7f;
    }
    int s = t.node(OpKind::ScatterND, {data, t.floats("i", {2, 0, 0}), u}, Shape{{4, 3}},
                   Attrs{}.set("reduction", reduction));
    t.g.values[t.g.nodes.back().inputs[1]].shape = Shape{{3, 1}};
    t.data["i"].shape = Shape{{3, 1}};
    // Weighted, not squared: dY stays non-zero where the zero factor makes the output 0.
    t.g.outputs = {t.node(OpKind::Mul, {s, t.tensor("c", Shape{{4, 3}}, ValueKind::Buffer, 0.5f, 1.5f)}, Shape{{4, 3}})};
    expect_gradients_match(t);
  }
}

// Dropout's backward when training: the kept elements' gradient scaled by 1 / (1 - ratio), the dropped ones' 0
// (each pass of one program draws its own mask; every execute() starts from the same seed, so the finite
// differences see the mask the backward used).
TEST(ExecGradients, DropoutWhenTraining) {
  ExecCase t;
  int x = t.tensor("x", Shape{{6, 5}});
  int w = t.tensor("w", Shape{{6, 5}}, ValueKind::Param);
  int d = t.node(OpKind::Dropout, {t.node(OpKind::Mul, {x, w}, Shape{{6, 5}}), t.floats("ratio", {0.4f})},
                 Shape{{6, 5}});
  t.g.outputs = {t.node(OpKind::Mul, {d, d}, Shape{{6, 5}})};
  expect_gradients_match(t);
}

// RMSNormalization's backward (over the last axis with a per-element scale, and over the last two with a scalar
// scale) against finite differences; it had none.
TEST(ExecGradients, RmsNormalization) {
  for (const int64_t axis : {-1, 1}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{2, 3, 4}});
    int w = t.tensor("w", axis == -1 ? Shape{{4}} : Shape{{1}}, ValueKind::Param, 0.5f, 1.5f);
    int in = t.node(OpKind::Mul, {x, t.tensor("a", Shape{{2, 3, 4}}, ValueKind::Param)}, Shape{{2, 3, 4}});
    int y = t.node(OpKind::RMSNormalization, {in, w}, Shape{{2, 3, 4}}, Attrs{}.set("axis", axis).set("epsilon", 1e-3));
    t.g.outputs = {t.node(OpKind::Mul, {y, y}, Shape{{2, 3, 4}})};
    expect_gradients_match(t);
  }
}

// Elementwise ops with broadcasting, in oneDNN's binary (second operand broadcast: Mul, Div) and in the reference
// loop (first operand broadcast: Sub, Div; Pow, Where, Expand), and GPT-2's position embedding ([T, C] onto
// [1, T, C], which a reorder could not take): gradients against finite differences. Before, Mul and Div with
// broadcasting and every reference elementwise op had no backward, and that Add was not executed when training.
TEST(ExecGradients, BroadcastingElementwiseOps) {
  ExecCase t;
  const Shape full{{2, 3, 4}}, row{{3, 1}}, col{{4}};
  int x = t.tensor("x", full, ValueKind::Input, 0.5f, 1.5f);
  int a = t.node(OpKind::Mul, {x, t.tensor("pa", full, ValueKind::Param, 0.5f, 1.5f)}, full);
  int r = t.tensor("pr", row, ValueKind::Param, 0.5f, 1.5f), c = t.tensor("pc", col, ValueKind::Param, 0.5f, 1.5f);
  int mul = t.node(OpKind::Mul, {a, r}, full);                     // oneDNN, broadcast second operand
  int div = t.node(OpKind::Div, {mul, c}, full);                   // oneDNN
  int sub = t.node(OpKind::Sub, {r, div}, full);                   // reference: first operand broadcast
  int rdiv = t.node(OpKind::Div, {c, t.node(OpKind::Add, {sub, t.floats("three", {3.f})}, full)}, full);  // reference
  int pw = t.node(OpKind::Pow, {t.node(OpKind::Add, {rdiv, t.floats("two", {2.f})}, full), c}, full);
  int cond = t.tensor("cond", Shape{{3, 4}}, ValueKind::Buffer);
  for (size_t i = 0; i < t.data["cond"].data.size(); ++i) t.data["cond"].data[i] = i % 3 == 0 ? 0.f : 1.f;
  int wh = t.node(OpKind::Where, {cond, pw, r}, full);
  int ex = t.node(OpKind::Expand, {c, t.ints("shape", {2, 3, 4})}, full);
  int pos = t.tensor("pos", Shape{{3, 4}}, ValueKind::Param);
  int emb = t.node(OpKind::Add, {t.node(OpKind::Mul, {wh, ex}, full), pos}, full);
  t.g.outputs = {t.node(OpKind::Mul, {emb, emb}, full)};
  expect_gradients_match(t);
}

// ReduceMean (MnasNet's and ShuffleNet's pooling), ReduceSum, ReduceMax (keepdims 0 and 1) and HardSigmoid
// (MobileNetV3's squeeze-excitation gate): backwards against finite differences; they had none.
TEST(ExecGradients, ReductionsAndHardSigmoid) {
  ExecCase t;
  const Shape full{{2, 3, 4}};
  int x = t.node(OpKind::Mul, {t.tensor("x", full), t.tensor("w", full, ValueKind::Param)}, full);
  int mean = t.node(OpKind::ReduceMean, {x}, Shape{{2, 3}}, Attrs{}.set("axes", std::vector<int64_t>{2}).set("keepdims", int64_t{0}));
  int sum = t.node(OpKind::ReduceSum, {x, t.ints("axes", {0})}, Shape{{1, 3, 4}});
  int max = t.node(OpKind::ReduceMax, {x}, Shape{{2, 1, 1}}, Attrs{}.set("axes", std::vector<int64_t>{1, 2}));
  int hs = t.node(OpKind::HardSigmoid, {x}, full, Attrs{}.set("alpha", 2.0).set("beta", 0.5));
  int a = t.node(OpKind::Mul, {t.node(OpKind::Add, {hs, sum}, full), t.node(OpKind::Unsqueeze, {mean, t.ints("ax", {2})}, Shape{{2, 3, 1}})}, full);
  int y = t.node(OpKind::Mul, {a, max}, full);
  t.g.outputs = {t.node(OpKind::Mul, {y, y}, full)};
  expect_gradients_match(t);
}

// The Attention op's backward (4-D, grouped-query heads, past key/value, causal, softcap, a float mask broadcast
// over the heads, as a learned position bias is; and 3-D with the default scale): dQ, dK, dV, the mask's and the
// past's gradients, the present outputs' gradients included (the loss sums every output), against finite
// differences; it had none.
TEST(ExecGradients, AttentionWithPastAndGroupedHeads) {
  for (const bool four_d : {true, false}) {
    const int64_t B = 2, Hq = 4, Hkv = 2, L = 3, Tn = 2, P = four_d ? 2 : 0, T = P + Tn, E = 4, Ev = 3;
    ExecCase t;
    auto param_times = [&](const std::string& name, const Shape& s) {  // an activation that depends on a param
      return t.node(OpKind::Mul, {t.tensor(name, s), t.tensor(name + ".w", s, ValueKind::Param, 0.5f, 1.5f)}, s);
    };
    std::vector<int> ins;
    Attrs a;
    Shape out;
    if (four_d) {
      ins = {param_times("q", Shape{{B, Hq, L, E}}), param_times("k", Shape{{B, Hkv, Tn, E}}),
             param_times("v", Shape{{B, Hkv, Tn, Ev}}), param_times("mask", Shape{{B, 1, L, T}}),
             param_times("pk", Shape{{B, Hkv, P, E}}), param_times("pv", Shape{{B, Hkv, P, Ev}})};
      a = Attrs{}.set("is_causal", int64_t{1}).set("softcap", 0.5).set("scale", 1.0);  // scores reach the cap
      out = Shape{{B, Hq, L, Ev}};
    } else {
      ins = {param_times("q", Shape{{B, L, Hq * E}}), param_times("k", Shape{{B, Tn, Hkv * E}}),
             param_times("v", Shape{{B, Tn, Hkv * Ev}})};
      a = Attrs{}.set("q_num_heads", Hq).set("kv_num_heads", Hkv);
      out = Shape{{B, L, Hq * Ev}};
    }
    int y = t.node(OpKind::Attention, ins, out, a);
    std::vector<int> outs{y};
    if (four_d)  // present key / value: outputs 1 and 2 of the Attention node
      outs.push_back(t.extra_output(y, Shape{{B, Hkv, T, E}})), outs.push_back(t.extra_output(y, Shape{{B, Hkv, T, Ev}}));
    t.g.outputs.clear();
    for (int o : outs) t.g.outputs.push_back(t.node(OpKind::Mul, {o, o}, t.g.value(o).shape));
    expect_gradients_match(t);
  }
}

// MatMul with broadcast batch dims (and 1-D operands): each operand's gradient is summed over the batch dims it
// was broadcast across; before, such MatMuls had no backward.
TEST(ExecGradients, MatMulWithBroadcastBatchDims) {
  struct Case {
    Shape a, b, y;
  };
  for (const Case& c : {Case{Shape{{2, 1, 3, 4}}, Shape{{5, 4, 2}}, Shape{{2, 5, 3, 2}}},
                        Case{Shape{{4}}, Shape{{2, 4, 3}}, Shape{{2, 3}}}, Case{Shape{{2, 3, 4}}, Shape{{4}}, Shape{{2, 3}}},
                        Case{Shape{{1, 3, 4}}, Shape{{2, 4, 2}}, Shape{{2, 3, 2}}}}) {
    SCOPED_TRACE(to_string(c.a) + " x " + to_string(c.b));
    ExecCase t;
    int a = t.node(OpKind::Mul, {t.tensor("a", c.a), t.tensor("a.w", c.a, ValueKind::Param, 0.5f, 1.5f)}, c.a);
    int y = t.node(OpKind::MatMul, {a, t.tensor("b", c.b, ValueKind::Param)}, c.y);
    t.g.outputs = {t.node(OpKind::Mul, {y, y}, c.y)};
    expect_gradients_match(t);
  }
}

// Einsum had no kernel (MViT-v2's relative positions: "bythwc,hkc->bythwk"). One loop over the equation's indices,
// forward and backward: a contraction, a diagonal with an implicit output, an ellipsis that broadcasts and a named
// letter of extent 1 that broadcasts (as numpy and torch allow); the gradients of both operands against finite
// differences (the ONNX backend's einsum cases check the forward).
TEST(ExecGradients, Einsum) {
  struct Case {
    const char* equation;
    Shape a, b, y;
  };
  for (const Case& c : {Case{"bij,bjk->bik", Shape{{2, 3, 4}}, Shape{{2, 4, 2}}, Shape{{2, 3, 2}}},
                        Case{"ii,ij", Shape{{3, 3}}, Shape{{3, 2}}, Shape{{2}}},
                        Case{"...ij,jk->...ik", Shape{{2, 1, 3, 4}}, Shape{{4, 2}}, Shape{{2, 1, 3, 2}}},
                        Case{"...j,...j->...", Shape{{2, 3, 4}}, Shape{{1, 4}}, Shape{{2, 3}}},
                        Case{"ij,ij->ij", Shape{{3, 4}}, Shape{{1, 4}}, Shape{{3, 4}}},
                        Case{"ij,jk->ik", Shape{{3, 1}}, Shape{{4, 2}}, Shape{{3, 2}}}}) {
    SCOPED_TRACE(c.equation);
    ExecCase t;
    int a = t.node(OpKind::Mul, {t.tensor("a", c.a), t.tensor("a.w", c.a, ValueKind::Param, 0.5f, 1.5f)}, c.a);
    int y = t.node(OpKind::Einsum, {a, t.tensor("b", c.b, ValueKind::Param)}, c.y,
                   Attrs{}.set("equation", std::string(c.equation)));
    t.g.outputs = {t.node(OpKind::Mul, {y, y}, c.y)};
    expect_gradients_match(t);
  }
  // The forward by hand: "ii,ij" sums the diagonal of A times each column of B.
  ExecCase t;
  const int a = t.tensor("a", Shape{{2, 2}}), b = t.tensor("b", Shape{{2, 2}});
  t.g.outputs = {t.node(OpKind::Einsum, {a, b}, Shape{{2}}, Attrs{}.set("equation", std::string("ii,ij")))};
  ExecOptions o = t.options();
  o.inputs["a"] = HostTensor{Shape{{2, 2}}, {1, 2, 3, 4}};
  o.inputs["b"] = HostTensor{Shape{{2, 2}}, {5, 6, 7, 8}};
  const ExecResult r = execute(t.g, o);
  EXPECT_EQ(r.outputs.begin()->second.data, (std::vector<float>{1 * 5 + 4 * 7, 1 * 6 + 4 * 8}));
  // A letter of extent 1 in one operand broadcasts: "ij,ij->ij" with A 1 x 2 multiplies each row of B by A's row.
  ExecCase u;
  const int ua = u.tensor("a", Shape{{1, 2}}), ub = u.tensor("b", Shape{{2, 2}});
  u.g.outputs = {u.node(OpKind::Einsum, {ua, ub}, Shape{{2, 2}}, Attrs{}.set("equation", std::string("ij,ij->ij")))};
  ExecOptions uo = u.options();
  uo.inputs["a"] = HostTensor{Shape{{1, 2}}, {2, 3}};
  uo.inputs["b"] = HostTensor{Shape{{2, 2}}, {5, 6, 7, 8}};
  EXPECT_EQ(execute(u.g, uo).outputs.begin()->second.data, (std::vector<float>{10, 18, 14, 24}));
}

// Every export in tests/data/validation built as a training step (its small fixed input): every step executes, and
// no node whose float inputs and outputs need gradients lacks a backward (the executor notes such a node, so an op
// added without one is never silently frozen).
TEST(ExecGradients, EveryValidationExportHasABackwardForEveryNode) {
  for_each_validation_export([](const Graph& g, ExecOptions o) {
    o.train = true;
    const ExecResult r = execute(g, o);
    for (const auto& s : r.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << s.name << ": " << s.reason;
    for (const auto& n : r.notes) EXPECT_EQ(n.find("has no backward"), std::string::npos) << n;
  });
}

/// An LSTM, GRU or RNN node over an input and initial states that depend on params, its outputs squared.
/// Sequence 3, batch 2, input 3, hidden 2.
ExecCase recurrent_case(OpKind op, const std::string& direction, int64_t linear_before_reset = 0) {
  const int64_t T = 3, N = 2, I = 3, H = 2, D = direction == "bidirectional" ? 2 : 1;
  const int64_t G = op == OpKind::LSTM ? 4 : op == OpKind::GRU ? 3 : 1;
  ExecCase t;
  auto param_times = [&](const std::string& name, const Shape& s) {  // an activation that depends on a param
    return t.node(OpKind::Mul, {t.tensor(name, s), t.tensor(name + ".w", s, ValueKind::Param, 0.5f, 1.5f)}, s);
  };
  const Shape state{{D, N, H}};
  std::vector<int> ins{param_times("x", Shape{{T, N, I}}), t.tensor("w", Shape{{D, G * H, I}}, ValueKind::Param),
                       t.tensor("r", Shape{{D, G * H, H}}, ValueKind::Param),
                       t.tensor("b", Shape{{D, 2 * G * H}}, ValueKind::Param), -1, param_times("h0", state)};
  if (op == OpKind::LSTM) ins.push_back(param_times("c0", state));
  Attrs a = Attrs{}.set("hidden_size", H).set("direction", direction);
  if (op == OpKind::GRU) a.set("linear_before_reset", linear_before_reset);
  const int y = t.node(op, ins, Shape{{T, D, N, H}}, a);
  std::vector<int> outs{y, t.extra_output(y, state)};  // Y, Y_h (and LSTM's Y_c)
  if (op == OpKind::LSTM) outs.push_back(t.extra_output(y, state));
  t.g.outputs.clear();
  for (int o : outs) t.g.outputs.push_back(t.node(OpKind::Mul, {o, o}, t.g.value(o).shape));
  return t;
}

// The recurrent cells' backward (oneDNN's lstm, gru, lbr_gru and vanilla_rnn backward): gradients to the input,
// the initial states, W, R and B (ONNX's gate order and two biases) through Y, Y_h and Y_c, forward, reverse and
// bidirectional, against finite differences; they had none.
TEST(ExecGradients, RecurrentCells) {
  for (const auto& [op, direction, lbr] : {std::tuple{OpKind::LSTM, "bidirectional", 0}, std::tuple{OpKind::LSTM, "reverse", 0},
                                           std::tuple{OpKind::GRU, "forward", 0}, std::tuple{OpKind::GRU, "bidirectional", 1},
                                           std::tuple{OpKind::RNN, "bidirectional", 0}}) {
    SCOPED_TRACE(std::string(op_name(op)) + " " + direction + (lbr ? " linear_before_reset" : ""));
    ExecCase t = recurrent_case(op, direction, lbr);
    expect_gradients_match(t);
  }
}

// The SGD update reaches what the kernels read: parameters after two training steps equal those after one minus
// the learning rate times the gradient taken at them. Convs and Gemms update their packed weights in place (read
// back in the graph's element order); the recurrent cells re-pack theirs from the graph's each step (before,
// nothing checked either).
TEST(ExecGradients, TrainingUpdatesReachTheKernels) {
  int y = -1;
  std::vector<ExecCase> cases;
  cases.push_back(tiny_cnn(&y));
  cases.back().g.outputs = {y};
  cases.push_back(recurrent_case(OpKind::LSTM, "bidirectional"));
  cases.push_back(recurrent_case(OpKind::GRU, "forward", 1));
  {  // ConvTranspose: its weights are kept as [out, in/g, k, k], read back in the graph's [in, out/g, k, k]
    ExecCase& t = cases.emplace_back();
    int x = t.tensor("x", Shape{{1, 4, 3, 3}});
    int w = t.tensor("up.w", Shape{{4, 3, 3, 3}}, ValueKind::Param, -0.3f, 0.3f);
    int up = t.node(OpKind::ConvTranspose, {x, w}, Shape{{1, 6, 5, 5}}, Attrs{}.set("group", int64_t{2}));
    t.g.outputs = {t.node(OpKind::Mul, {up, up}, Shape{{1, 6, 5, 5}})};
  }
  for (ExecCase& t : cases) {
    ExecOptions o = t.options();
    o.learning_rate = 0.05f;
    const TensorMap one = trained_parameters(t.g, o, 1), two = trained_parameters(t.g, o, 2);
    ExecOptions at_one = o;
    for (const auto& [name, w] : one) at_one.weights[name] = w;
    const TensorMap grads = parameter_gradients(t.g, at_one);
    ASSERT_EQ(grads.size(), one.size());
    for (const auto& [name, w] : one) {
      const HostTensor& next = two.at(name);
      double moved = 0;
      for (size_t k = 0; k < w.data.size(); ++k) {
        EXPECT_NEAR(next.data[k], w.data[k] - o.learning_rate * grads.at(name).data[k], 1e-5) << name << "[" << k << "]";
        moved += std::abs(next.data[k] - w.data[k]);
      }
      EXPECT_GT(moved, 0) << name << " was not updated";
    }
  }
}

// The hand-built opset-23 decoder (tests/data/validation: RMSNormalization and the Attention op, causal) runs
// every node, with finite outputs.
TEST(ExecModels, Opset23DecoderWithTheAttentionOpRunsEveryNode) {
  const Graph g =
      load_model(std::string(RIDGE_SOURCE_DIR) + "/tests/data/validation/decoder_opset23.ext_emptybin.onnx", LoadOptions{});
  ASSERT_TRUE(std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op == OpKind::Attention; }));
  const ExecResult r = execute(g, ExecOptions{});
  for (const auto& s : r.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << s.name << " " << s.reason;
  for (const auto& [name, out] : r.outputs)
    EXPECT_TRUE(std::all_of(out.data.begin(), out.data.end(), [](float x) { return std::isfinite(x); })) << name;
}

TEST(ExecModels, OnnxTestdataReproducesPyTorch) {
  RIDGE_REQUIRE_SHARED();
  for (const char* name : {"mnist_cnn", "mnist_old"}) {
    const std::string dir = fixture(std::string("onnx/testdata/") + name);
    auto [in_name, input] = read_tensor_pb(dir + "/test_data_set_0/input_0.pb");
    auto [out_name, expected] = read_tensor_pb(dir + "/test_data_set_0/output_0.pb");
    LoadOptions lo;
    Graph probe = load_model(dir + "/model.onnx", lo);
    lo.input_shapes = {{probe.value(probe.inputs.at(0)).name, input.shape}};
    Graph g = load_model(dir + "/model.onnx", lo);
    ExecOptions eo;
    eo.weights = read_onnx_weights(dir + "/model.onnx");
    eo.inputs[g.value(g.inputs.at(0)).name] = input;
    ExecResult r = execute(g, eo);
    for (const auto& s : r.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << name << ": " << s.name << " " << s.reason;
    const HostTensor& out = r.outputs.at(g.value(g.outputs.at(0)).name);
    Comparison c = compare_tensors(out, expected, 1e-4, 1e-5);
    EXPECT_TRUE(c.passed) << name << ": max abs diff " << c.max_abs_diff << ", " << to_string(c.mismatches)
                          << " mismatches";
  }
}

// torch exports a Linear's weight as a transposed copy named "onnx::MatMul_N"; the importer names it
// "fc.weight" (as torch does). The file's payload must still be the one that runs: before, it was looked up
// under the new name, not found, and the weight was random (swin_t's MLPs gave wrong outputs in `ridge run`).
TEST(ExecModels, RenamedLinearWeightsRunWithTheFilesPayload) {
  TinyModel m;
  m.input("x", {2, 3});
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("onnx::MatMul_9");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) w->add_float_data(v);
  m.floats("fc.bias", {0.5f, -0.5f});
  m.node("MatMul", {"x", "onnx::MatMul_9"}, {"p"}, "/fc/MatMul");
  m.node("Add", {"fc.bias", "p"}, {"y"}, "/fc/Add");
  m.output("y");
  const std::string file = temp_dir() + "/renamed_linear.onnx";
  {
    std::ofstream out(file, std::ios::binary);
    out << m.bytes();
  }
  const Graph g = load_model(file, LoadOptions{});
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_EQ(g.value(g.nodes[0].inputs[1]).name, "fc.weight");
  ExecOptions eo;
  eo.weights = read_onnx_weights(file);
  eo.inputs["x"] = HostTensor{Shape{{2, 3}}, {1, 0, 0, 0, 1, -1}};
  const ExecResult r = execute(g, eo);
  EXPECT_EQ(r.outputs.at("y").data, (std::vector<float>{1.5f, 1.5f, -1.5f, -2.5f}))
      << "row 0 = W[0] + b, row 1 = W[1] - W[2] + b";
  for (const std::string& note : r.notes) EXPECT_EQ(note.find("random"), std::string::npos) << note;
}

// Two tensors the file stores once: torch's Identity copy of an equal-valued parameter ("b.bias" = "a.bias"),
// and a Constant inside a Loop body that the importer unrolls (one copy per iteration). Each copy runs with the
// file's payload; before, both were random in `ridge run` (torch exports of freshly built models gave wrong
// outputs wherever two LayerNorms or two zero biases were equal).
TEST(ExecModels, CopiedWeightsAndUnrolledLoopConstantsRunWithTheFilesPayloads) {
  TinyModel m;
  m.input("x", {3});
  m.floats("a.bias", {1.f, 2.f, 3.f});
  m.ints("trip", {2}, true);
  m.node("Identity", {"a.bias"}, {"b.bias"});
  m.node("Add", {"x", "a.bias"}, {"y1"});
  m.node("Add", {"y1", "b.bias"}, {"y2"});
  auto& loop = m.node("Loop", {"trip", "", "y2"}, {"y"}, "/loop");
  auto* body = test::add_body(loop, "body");
  test::body_input(body, "i", onnx::TensorProto::INT64);
  test::body_input(body, "c", onnx::TensorProto::BOOL);
  test::body_input(body, "acc", onnx::TensorProto::FLOAT);
  auto* step = test::body_node(body, "Constant", {}, {"step"});
  auto* value = step->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(3);
  for (float v : {10.f, 20.f, 30.f}) value->mutable_t()->add_float_data(v);
  test::body_node(body, "Add", {"acc", "step"}, {"next"});
  test::body_node(body, "Identity", {"c"}, {"c_out"});
  for (const char* o : {"c_out", "next"}) body->add_output()->set_name(o);
  m.output("y");
  const std::string file = temp_dir() + "/copied_payloads.onnx";
  {
    std::ofstream out(file, std::ios::binary);
    out << m.bytes();
  }
  const Graph g = load_model(file, LoadOptions{});
  ExecOptions eo;
  eo.weights = read_onnx_weights(file);
  eo.inputs["x"] = HostTensor{Shape{{3}}, {0.5f, 0.f, -1.f}};
  const ExecResult r = execute(g, eo);
  for (const auto& s : r.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << s.name << " " << s.reason;
  EXPECT_EQ(r.outputs.at("y").data, (std::vector<float>{22.5f, 44.f, 65.f})) << "x + 2 bias + 2 step";
  for (const std::string& note : r.notes) EXPECT_EQ(note.find("random"), std::string::npos) << note;
}

TEST(ExecCli, RunReproducesTestdataAndFailsOnWrongExpectation) {
  RIDGE_REQUIRE_SHARED();
  const std::string dir = fixture("onnx/testdata/mnist_cnn");
  auto ok = run_ridge("run " + dir + "/model.onnx --input " + dir + "/test_data_set_0/input_0.pb --output " + dir +
                      "/test_data_set_0/output_0.pb --rtol 1e-4 --atol 1e-5 --format json");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["outputs"][0]["status"], "pass");
  EXPECT_EQ(j["passed"], true);
  // the input file given as the expected output: wrong shape -> one-line error, exit 1
  auto bad = run_ridge("run " + dir + "/model.onnx --input " + dir + "/test_data_set_0/input_0.pb --output " + dir +
                       "/test_data_set_0/input_0.pb");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("shape mismatch"), std::string::npos) << bad.err;
}

TEST(ExecCli, MeasureZooModelJson) {
  auto r = run_ridge("measure mnist --batch 2 --repeat 3 --threads 1 --machine none --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["total_time_s"].get<double>(), 0);
  ASSERT_FALSE(j["layers"].empty());
  bool conv = false;
  for (const auto& l : j["layers"]) {
    EXPECT_TRUE(l.contains("name") && l.contains("op") && l.contains("time_s") && l.contains("flops") &&
                l.contains("gflops_per_s"));
    if (l["op"] == "Conv") {
      conv = true;
      EXPECT_GT(l["time_s"].get<double>(), 0);
      EXPECT_GT(l["flops"].get<int64_t>(), 0);
    }
  }
  EXPECT_TRUE(conv);
}

TEST(ExecCli, MeasureRefusesHugeBatchBeforeAllocating) {
  auto r = run_ridge("measure resnet50 --batch 100000 --machine none");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(ExecCli, MeasureTrainReportsBackward) {
  auto r = run_ridge("measure mnist --batch 2 --repeat 2 --threads 1 --train --machine none --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool any_backward = false;
  for (const auto& l : j["layers"]) any_backward |= l.contains("backward_time_s") && l["backward_time_s"].is_number();
  EXPECT_TRUE(any_backward);
}

TEST(ExecModels, HardwareCountersPerLayerOrOneNoteWhyNot) {
  int y = -1;
  ExecCase t = tiny_cnn(&y);
  t.g.outputs = {y};
  MeasureOptions o;
  o.min_repeats = o.max_repeats = 2;
  o.warmup = 1;
  ModelMeasurement m = measure_graph(t.g, o);
  const std::string& why = measure::counters_unavailable_reason();
  const auto notes = std::count_if(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n.find("hardware counters unavailable") != std::string::npos;
  });
  if (!why.empty()) {
    EXPECT_EQ(notes, 1);  // said once, and the measurement carried on
    for (const auto& l : m.layers) EXPECT_TRUE(l.counters.empty()) << l.step.name;
  } else {
    EXPECT_EQ(notes, 0);
    bool any_cycles = false;
    for (const auto& l : m.layers)
      for (const auto& [name, v] : l.counters) any_cycles = any_cycles || (name == "cycles" && v > 0);
    EXPECT_TRUE(any_cycles);
  }
}

}  // namespace
}  // namespace ridge::test
