// Memory: liveness peak, saved activations, training peak, optimizer state.
#include <gtest/gtest.h>

#include "costs/tiny_graphs.hpp"
#include "ridge/cost.hpp"
#include "ridge/load.hpp"

namespace ridge {
namespace {

using test::Tiny;

TEST(Memory, ChainPeakIsTwoAdjacentTensors) {
  // x(100) -> relu(100) -> reshape(view) -> relu(100): at most input + one output live at a time, plus the
  // graph output kept to the end.
  Tiny t;
  int x = t.input(Shape{{1, 100}});
  int a = t.node(OpKind::Relu, "a", {x}, Shape{{1, 100}});
  int v = t.node(OpKind::Reshape, "v", {a}, Shape{{100}});
  int b = t.node(OpKind::Relu, "b", {v}, Shape{{100}});
  MemoryEstimate m = estimate_memory(t.done({b}));
  EXPECT_EQ(m.inference_peak_bytes, 2 * 400);
  EXPECT_EQ(m.activation_bytes, 2 * 400);  // the view allocates nothing
  EXPECT_EQ(m.output_bytes[1], 0);
}

TEST(Memory, ResidualKeepsSkipTensorAlive) {
  Tiny t;
  int x = t.input(Shape{{1, 10}});
  int a = t.node(OpKind::Relu, "a", {x}, Shape{{1, 10}});
  int b = t.node(OpKind::Relu, "b", {a}, Shape{{1, 10}});
  int c = t.node(OpKind::Relu, "c", {b}, Shape{{1, 10}});
  int s = t.node(OpKind::Add, "add", {c, a}, Shape{{1, 10}});
  MemoryEstimate m = estimate_memory(t.done({s}));
  // While computing c: a (skip), b, c live = 3 tensors of 40 bytes.
  EXPECT_EQ(m.inference_peak_bytes, 3 * 40);
}

TEST(Memory, OptimizerStateAndTrainingPeak) {
  Graph g = build_zoo_model("mnist", LoadOptions{});
  MemoryEstimate sgd = estimate_memory(g, Optimizer::SGD);
  MemoryEstimate mom = estimate_memory(g, Optimizer::Momentum);
  MemoryEstimate adam = estimate_memory(g, Optimizer::Adam);
  EXPECT_EQ(sgd.param_bytes, 1199882 * 4);
  EXPECT_EQ(sgd.grad_bytes, sgd.param_bytes);
  EXPECT_EQ(sgd.optimizer_bytes, 0);
  EXPECT_EQ(mom.optimizer_bytes, sgd.param_bytes);
  EXPECT_EQ(adam.optimizer_bytes, 2 * sgd.param_bytes);
  EXPECT_EQ(adam.training_peak_bytes,
            adam.param_bytes + adam.buffer_bytes + adam.grad_bytes + adam.optimizer_bytes + adam.saved_bytes);
  // conv1 saves the image: the first layer still needs its input for grad-weight.
  EXPECT_EQ(sgd.saved_per_node[g.find_node("conv1")], 28 * 28 * 4);
}

TEST(Memory, ScalesLinearlyWithBatch) {
  LoadOptions a, b;
  a.batch = 4;
  b.batch = 8;
  MemoryEstimate m4 = estimate_memory(build_zoo_model("resnet18", a));
  MemoryEstimate m8 = estimate_memory(build_zoo_model("resnet18", b));
  EXPECT_EQ(m8.param_bytes, m4.param_bytes);
  // Activations double; BatchNorm's saved per-channel mean/invstd (2 x 4,800 channels x 4 bytes) does not.
  EXPECT_EQ(2 * m4.saved_bytes - m8.saved_bytes, 2 * 4800 * 4);
  EXPECT_EQ(m8.inference_peak_bytes, 2 * m4.inference_peak_bytes);
}

TEST(Memory, HalfPrecisionHalvesBytes) {
  LoadOptions f32, f16;
  f16.dtype = DType::F16;
  EXPECT_EQ(2 * estimate_memory(build_zoo_model("vgg11", f16)).param_bytes,
            estimate_memory(build_zoo_model("vgg11", f32)).param_bytes);
}

}  // namespace
}  // namespace ridge
