// torchvision GoogLeNet (no aux heads), MobileNetV2, MNASNet 1.0 and DenseNet-121.
#include <fmt/format.h>

#include "load/zoo/builder.hpp"
#include "load/zoo/models.hpp"

namespace ridge::zoo {

namespace {

// GoogLeNet's BasicConv2d: conv (no bias), BatchNorm(eps=0.001), functional relu.
int basic_conv(Builder& b, int x, const std::string& name, int64_t out, int64_t k, int64_t stride = 1,
               int64_t pad = 0) {
  auto m = b.module(name, "BasicConv2d");
  x = b.conv2d(x, "conv", out, k, stride, pad, 1, false);
  x = b.batchnorm(x, "bn");
  return b.act(OpKind::Relu, x, "", "");
}

int inception(Builder& b, int x, const std::string& name, int64_t c1, int64_t c3r, int64_t c3, int64_t c5r,
              int64_t c5, int64_t pool_proj) {
  auto m = b.module(name, "Inception");
  int b1 = basic_conv(b, x, "branch1", c1, 1);
  int b2, b3, b4;
  {
    auto s = b.module("branch2", "Sequential");
    b2 = basic_conv(b, x, "0", c3r, 1);
    b2 = basic_conv(b, b2, "1", c3, 3, 1, 1);
  }
  {
    auto s = b.module("branch3", "Sequential");
    b3 = basic_conv(b, x, "0", c5r, 1);
    b3 = basic_conv(b, b3, "1", c5, 3, 1, 1);  // torchvision uses 3x3 here (a known deviation from the paper)
  }
  {
    auto s = b.module("branch4", "Sequential");
    b4 = b.maxpool(x, "0", 3, 1, 1, true);
    b4 = basic_conv(b, b4, "1", pool_proj, 1);
  }
  return b.concat({b1, b2, b3, b4}, 1);
}

// Conv2dNormActivation: conv (no bias) + BatchNorm + ReLU6, children named 0, 1, 2.
int conv_bn_relu6(Builder& b, int x, const std::string& name, int64_t out, int64_t k, int64_t stride,
                  int64_t groups) {
  auto m = b.module(name, "Conv2dNormActivation");
  x = b.conv2d(x, "0", out, k, stride, (k - 1) / 2, groups, false);
  x = b.batchnorm(x, "1");
  return b.act(OpKind::Clip, x, "2", "ReLU6", Attrs{}.set("min", 0.0).set("max", 6.0));
}

}  // namespace

Graph googlenet(const BuildArgs& a) {
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  x = basic_conv(b, x, "conv1", 64, 7, 2, 3);
  x = b.maxpool(x, "maxpool1", 3, 2, 0, true);
  x = basic_conv(b, x, "conv2", 64, 1);
  x = basic_conv(b, x, "conv3", 192, 3, 1, 1);
  x = b.maxpool(x, "maxpool2", 3, 2, 0, true);
  x = inception(b, x, "inception3a", 64, 96, 128, 16, 32, 32);
  x = inception(b, x, "inception3b", 128, 128, 192, 32, 96, 64);
  x = b.maxpool(x, "maxpool3", 3, 2, 0, true);
  x = inception(b, x, "inception4a", 192, 96, 208, 16, 48, 64);
  x = inception(b, x, "inception4b", 160, 112, 224, 24, 64, 64);
  x = inception(b, x, "inception4c", 128, 128, 256, 24, 64, 64);
  x = inception(b, x, "inception4d", 112, 144, 288, 32, 64, 64);
  x = inception(b, x, "inception4e", 256, 160, 320, 32, 128, 128);
  x = b.maxpool(x, "maxpool4", 2, 2, 0, true);
  x = inception(b, x, "inception5a", 256, 160, 320, 32, 128, 128);
  x = inception(b, x, "inception5b", 384, 192, 384, 48, 128, 128);
  x = b.adaptive_avgpool(x, "avgpool", 1, 1);
  x = b.flatten(x, 1);
  x = b.dropout(x, "dropout");
  x = b.linear(x, "fc", 1000);
  return b.finish({x});
}

Graph mobilenet_v2(const BuildArgs& a) {
  struct Stage { int64_t t, c, n, s; };
  static const Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  {
    auto f = b.module("features", "Sequential");
    int idx = 0;
    int64_t in_ch = 32;
    x = conv_bn_relu6(b, x, std::to_string(idx++), in_ch, 3, 2, 1);
    for (const Stage& st : kStages) {
      for (int64_t i = 0; i < st.n; ++i) {
        const int64_t stride = i == 0 ? st.s : 1;
        const int64_t hidden = in_ch * st.t;
        auto blk = b.module(std::to_string(idx++), "InvertedResidual");
        int y;
        {
          auto conv = b.module("conv", "Sequential");
          int sub = 0;
          y = x;
          if (st.t != 1) y = conv_bn_relu6(b, y, std::to_string(sub++), hidden, 1, 1, 1);
          y = conv_bn_relu6(b, y, std::to_string(sub++), hidden, 3, stride, hidden);
          y = b.conv2d(y, std::to_string(sub++), st.c, 1, 1, 0, 1, false);
          y = b.batchnorm(y, std::to_string(sub++));
        }
        if (stride == 1 && in_ch == st.c) y = b.binary(OpKind::Add, x, y, "add");
        x = y;
        in_ch = st.c;
      }
    }
    x = conv_bn_relu6(b, x, std::to_string(idx++), 1280, 1, 1, 1);
  }
  x = b.adaptive_avgpool(x, "adaptive_avg_pool2d", 1, 1, /*as_module=*/false);
  x = b.flatten(x, 1);
  {
    auto c = b.module("classifier", "Sequential");
    x = b.dropout(x, "0");
    x = b.linear(x, "1", 1000);
  }
  return b.finish({x});
}

Graph mnasnet1_0(const BuildArgs& a) {
  // torchvision MNASNet(alpha=1.0): stacks of inverted residuals (1x1 expand, kxk depthwise, 1x1 project), ReLU.
  struct Stack { int64_t out, k, stride, expand, repeats; };
  static const Stack kStacks[] = {{24, 3, 2, 3, 3}, {40, 5, 2, 3, 3}, {80, 5, 2, 6, 3},
                                  {96, 3, 1, 6, 2}, {192, 5, 2, 6, 4}, {320, 3, 1, 6, 1}};
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  {
    auto layers = b.module("layers", "Sequential");
    x = b.conv2d(x, "0", 32, 3, 2, 1, 1, false);
    x = b.batchnorm(x, "1");
    x = b.act(OpKind::Relu, x, "2", "ReLU");
    x = b.conv2d(x, "3", 32, 3, 1, 1, 32, false);  // depthwise
    x = b.batchnorm(x, "4");
    x = b.act(OpKind::Relu, x, "5", "ReLU");
    x = b.conv2d(x, "6", 16, 1, 1, 0, 1, false);
    x = b.batchnorm(x, "7");
    int64_t in_ch = 16;
    int idx = 8;
    for (const Stack& st : kStacks) {
      auto stack = b.module(std::to_string(idx++), "Sequential");
      for (int64_t i = 0; i < st.repeats; ++i) {
        const int64_t stride = i == 0 ? st.stride : 1, mid = in_ch * st.expand;
        auto blk = b.module(std::to_string(i), "_InvertedResidual");
        int y;
        {
          auto seq = b.module("layers", "Sequential");
          y = b.conv2d(x, "0", mid, 1, 1, 0, 1, false);
          y = b.batchnorm(y, "1");
          y = b.act(OpKind::Relu, y, "2", "ReLU");
          y = b.conv2d(y, "3", mid, st.k, stride, st.k / 2, mid, false);
          y = b.batchnorm(y, "4");
          y = b.act(OpKind::Relu, y, "5", "ReLU");
          y = b.conv2d(y, "6", st.out, 1, 1, 0, 1, false);
          y = b.batchnorm(y, "7");
        }
        if (stride == 1 && in_ch == st.out) y = b.binary(OpKind::Add, y, x, "add");
        x = y;
        in_ch = st.out;
      }
    }
    x = b.conv2d(x, "14", 1280, 1, 1, 0, 1, false);
    x = b.batchnorm(x, "15");
    x = b.act(OpKind::Relu, x, "16", "ReLU");
  }
  x = b.reduce_mean(x, {2, 3}, false);
  {
    auto c = b.module("classifier", "Sequential");
    x = b.dropout(x, "0");
    x = b.linear(x, "1", 1000);
  }
  return b.finish({x});
}

Graph densenet121(const BuildArgs& a) {
  const int64_t growth = 32, bn_size = 4;
  const int blocks[] = {6, 12, 24, 16};
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  int64_t ch = 64;
  {
    auto f = b.module("features", "Sequential");
    x = b.conv2d(x, "conv0", 64, 7, 2, 3, 1, false);
    x = b.batchnorm(x, "norm0");
    x = b.act(OpKind::Relu, x, "relu0", "ReLU");
    x = b.maxpool(x, "pool0", 3, 2, 1);
    for (int bi = 0; bi < 4; ++bi) {
      {
        auto blk = b.module(fmt::format("denseblock{}", bi + 1), "_DenseBlock");
        std::vector<int> features = {x};
        for (int li = 0; li < blocks[bi]; ++li) {
          auto layer = b.module(fmt::format("denselayer{}", li + 1), "_DenseLayer");
          // bn_function: torch.cat(inputs, 1) of every earlier feature map, then norm1/relu1/conv1.
          int cat = features.size() == 1 ? features[0] : b.concat(features, 1);
          int y = b.batchnorm(cat, "norm1");
          y = b.act(OpKind::Relu, y, "relu1", "ReLU");
          y = b.conv2d(y, "conv1", bn_size * growth, 1, 1, 0, 1, false);
          y = b.batchnorm(y, "norm2");
          y = b.act(OpKind::Relu, y, "relu2", "ReLU");
          y = b.conv2d(y, "conv2", growth, 3, 1, 1, 1, false);
          features.push_back(y);
        }
        x = b.concat(features, 1);
        ch += growth * blocks[bi];
      }
      if (bi != 3) {
        auto t = b.module(fmt::format("transition{}", bi + 1), "_Transition");
        x = b.batchnorm(x, "norm");
        x = b.act(OpKind::Relu, x, "relu", "ReLU");
        x = b.conv2d(x, "conv", ch / 2, 1, 1, 0, 1, false);
        x = b.avgpool(x, "pool", 2, 2);
        ch /= 2;
      }
    }
    x = b.batchnorm(x, "norm5");
  }
  x = b.act(OpKind::Relu, x, "", "");
  x = b.adaptive_avgpool(x, "adaptive_avg_pool2d", 1, 1, false);
  x = b.flatten(x, 1);
  x = b.linear(x, "classifier", 1000);
  return b.finish({x});
}

}  // namespace ridge::zoo
