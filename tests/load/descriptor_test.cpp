// Every reproducible row descriptor re-creates a one-node graph with the same forward cost.
#include <gtest/gtest.h>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"

namespace ridge {
namespace {

TEST(Descriptor, RoundTripsEveryConvGemmMatmulAndElementwiseRow) {
  for (const char* model : {"resnet50", "mobilenet_v2", "distilbert"}) {
    LoadOptions o;
    o.batch = 2;
    if (std::string(model) == "distilbert") o.seq_len = 16;
    Graph g = build_zoo_model(model, o);
    ModelCost mc = estimate(g);
    int checked = 0;
    for (const NodeCost& nc : mc.nodes) {
      if (!is_descriptor(nc.descriptor)) continue;
      const Graph one = graph_from_descriptor(nc.descriptor, DType::F32);
      const Cost c = estimate(one).total;
      EXPECT_EQ(c.macs, nc.cost.macs) << nc.descriptor;
      EXPECT_EQ(c.flops, nc.cost.flops) << nc.descriptor;
      ++checked;
    }
    EXPECT_GT(checked, 20) << model;
  }
}

TEST(Descriptor, LoadModelAcceptsDescriptors) {
  Graph g = load_model("conv:mb1ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh1dw1g1b0", LoadOptions{});
  EXPECT_EQ(estimate(g).total.macs, Count{64} * 56 * 56 * 64 * 9);
  Graph e = load_model("add:1x8,4x1x8", LoadOptions{});
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(estimate(e).total.flops, 32);
}

// What the layer table prints re-runs as written: attributes after '/' (not a path), generic operands that start
// with a letter, INT64_MIN in a Slice; integer payloads only where the rule reads them.
TEST(Descriptor, PrintedFormsWithSlashesLettersAndExtremeIntegersLoad) {
  Graph ln = load_model("layernormalization:2x16x768,768,768/axis=-1/epsilon=1e-05", LoadOptions{});
  ASSERT_EQ(ln.nodes.size(), 1u);
  EXPECT_EQ(ln.nodes[0].op, OpKind::LayerNormalization);
  EXPECT_EQ(estimate(ln).total.params, 1536);
  Graph mm = load_model("matmul:n2x7,p7x2", LoadOptions{});
  EXPECT_EQ(estimate(mm).total.macs, 28);
  EXPECT_EQ(estimate(mm).total.params, 14);
  Graph sl = load_model("slice:n4x6,i1=-9223372036854775808,i1=9223372036854775807", LoadOptions{});
  EXPECT_EQ(to_string(sl.value(sl.outputs[0]).shape), "4x6");
  // An int8 weight's values are no part of its descriptor; a Reshape's target shape is.
  Graph q = load_model("add:n2x3,c2x3@int8=1_2_3_4_5_6", LoadOptions{});
  EXPECT_EQ(estimate(q).nodes[0].descriptor, "add:n2x3,c2x3@int8");
  Graph r = load_model("reshape:n2x6,i2=3_4", LoadOptions{});
  EXPECT_EQ(estimate(r).nodes[0].descriptor, "reshape:n2x6,i2=3_4");
}

TEST(Descriptor, BadDescriptorsNameTheField) {
  auto err = [](const std::string& d) {
    try {
      graph_from_descriptor(d, DType::F32);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("conv:mb1ic3ih8iw8oc4kh3").find("'kw'"), std::string::npos);
  EXPECT_NE(err("conv:mb1ic3ih2iw2oc4kh5kw5").find("does not fit"), std::string::npos);
  EXPECT_NE(err("conv:mb1ic3ih8iw8oc4kh3kw3g2").find("groups"), std::string::npos);
  EXPECT_NE(err("conv:mb1ic3ih8iw8oc4kh3kw3oh99").find("oh99"), std::string::npos);
  EXPECT_NE(err("gemm:m1k").find("cannot read"), std::string::npos);
  EXPECT_NE(err("maxpool:1x3x8x8").find("kernel_shape"), std::string::npos);
  EXPECT_NE(err("nosuchop:1x3").find("unknown op"), std::string::npos);
  EXPECT_NE(err("relu:").find("nothing after"), std::string::npos);
  EXPECT_NE(err("relu:1x3/axis").find("attr=value"), std::string::npos);
  EXPECT_NE(err("reshape:2x3,2=1_2_3").find("3 values"), std::string::npos);
  EXPECT_NE(err("add:2x3,4x5").find("add"), std::string::npos);
  EXPECT_NE(err("add:1x3,1x4").find("broadcast"), std::string::npos);
}

}  // namespace
}  // namespace ridge
