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
