// Small and classic CNNs: the pytorch/examples MNIST nets, LeNet-5, AlexNet and VGG (torchvision).
#include <fmt/format.h>

#include "load/zoo/builder.hpp"
#include "load/zoo/models.hpp"

namespace ridge::zoo {

// pytorch/examples mnist/main.py Net (conv2_channels = 64); the seeds' variant widens conv2 to 128.
Graph mnist(const BuildArgs& a, int64_t conv2_channels) {
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  x = b.conv2d(x, "conv1", 32, 3);
  x = b.act(OpKind::Relu, x, "", "");
  x = b.conv2d(x, "conv2", conv2_channels, 3);
  x = b.act(OpKind::Relu, x, "", "");
  x = b.maxpool(x, "max_pool2d", 2, 2, 0, false, /*as_module=*/false);
  x = b.dropout(x, "dropout1");
  x = b.flatten(x, 1);
  x = b.linear(x, "fc1", 128, true, "Linear", conv2_channels * 144);
  x = b.act(OpKind::Relu, x, "", "");
  x = b.dropout(x, "dropout2");
  x = b.linear(x, "fc2", 10);
  x = b.softmax(x, 1, /*log=*/true);
  return b.finish({x});
}

// The course slides' MNIST net (torchsummary / torchinfo README example): 21,840 params.
Graph mnist_slides(const BuildArgs& a) {
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  x = b.conv2d(x, "conv1", 10, 5);
  x = b.maxpool(x, "max_pool2d", 2, 2, 0, false, false);
  x = b.act(OpKind::Relu, x, "", "");
  x = b.conv2d(x, "conv2", 20, 5);
  x = b.dropout(x, "conv2_drop", "Dropout2d");
  x = b.maxpool(x, "max_pool2d", 2, 2, 0, false, false);
  x = b.act(OpKind::Relu, x, "", "");
  const Shape s = b.shape(x);
  x = b.reshape(x, Shape{{s[0], s[1] * s[2] * s[3]}});
  x = b.linear(x, "fc1", 50, true, "Linear", 320);
  x = b.act(OpKind::Relu, x, "", "");
  x = b.unary(OpKind::Dropout, x, "dropout");
  x = b.linear(x, "fc2", 10);
  x = b.softmax(x, 1, true);
  return b.finish({x});
}

// LeNet-5 as in DeepSpeed's flops-profiler test (tanh, average pooling, 32x32 input, softmax head):
// returns (logits, probs).
Graph lenet5(const BuildArgs& a) {
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  {
    auto fe = b.module("feature_extractor", "Sequential");
    x = b.conv2d(x, "0", 6, 5);
    x = b.act(OpKind::Tanh, x, "1", "Tanh");
    x = b.avgpool(x, "2", 2, 2);
    x = b.conv2d(x, "3", 16, 5);
    x = b.act(OpKind::Tanh, x, "4", "Tanh");
    x = b.avgpool(x, "5", 2, 2);
    x = b.conv2d(x, "6", 120, 5);
    x = b.act(OpKind::Tanh, x, "7", "Tanh");
  }
  x = b.flatten(x, 1);
  int logits;
  {
    auto cl = b.module("classifier", "Sequential");
    x = b.linear(x, "0", 84, true, "Linear", 120);
    x = b.act(OpKind::Tanh, x, "1", "Tanh");
    logits = b.linear(x, "2", 10);
  }
  int probs = b.softmax(logits, 1);
  return b.finish({logits, probs});
}

// torchvision.models.alexnet
Graph alexnet(const BuildArgs& a) {
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  {
    auto f = b.module("features", "Sequential");
    x = b.conv2d(x, "0", 64, 11, 4, 2);
    x = b.act(OpKind::Relu, x, "1", "ReLU");
    x = b.maxpool(x, "2", 3, 2);
    x = b.conv2d(x, "3", 192, 5, 1, 2);
    x = b.act(OpKind::Relu, x, "4", "ReLU");
    x = b.maxpool(x, "5", 3, 2);
    x = b.conv2d(x, "6", 384, 3, 1, 1);
    x = b.act(OpKind::Relu, x, "7", "ReLU");
    x = b.conv2d(x, "8", 256, 3, 1, 1);
    x = b.act(OpKind::Relu, x, "9", "ReLU");
    x = b.conv2d(x, "10", 256, 3, 1, 1);
    x = b.act(OpKind::Relu, x, "11", "ReLU");
    x = b.maxpool(x, "12", 3, 2);
  }
  x = b.adaptive_avgpool(x, "avgpool", 6, 6);
  x = b.flatten(x, 1);
  {
    auto c = b.module("classifier", "Sequential");
    x = b.dropout(x, "0");
    x = b.linear(x, "1", 4096);
    x = b.act(OpKind::Relu, x, "2", "ReLU");
    x = b.dropout(x, "3");
    x = b.linear(x, "4", 4096);
    x = b.act(OpKind::Relu, x, "5", "ReLU");
    x = b.linear(x, "6", 1000);
  }
  return b.finish({x});
}

// torchvision.models.vgg{11,13,16,19}[_bn]; configurations A, B, D, E of the VGG paper (0 = max-pool).
Graph vgg(const BuildArgs& a, int depth, bool batch_norm) {
  static const std::vector<int> kA = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
  static const std::vector<int> kB = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
  static const std::vector<int> kD = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  static const std::vector<int> kE = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                                      512, 512, 512, 512, 0,   512, 512, 512, 512, 0};
  const std::vector<int>& cfg = depth == 11 ? kA : depth == 13 ? kB : depth == 16 ? kD : kE;
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  {
    auto f = b.module("features", "Sequential");
    int idx = 0;
    for (int c : cfg) {
      if (c == 0) {
        x = b.maxpool(x, std::to_string(idx++), 2, 2);
        continue;
      }
      x = b.conv2d(x, std::to_string(idx++), c, 3, 1, 1);
      if (batch_norm) x = b.batchnorm(x, std::to_string(idx++));
      x = b.act(OpKind::Relu, x, std::to_string(idx++), "ReLU");
    }
  }
  x = b.adaptive_avgpool(x, "avgpool", 7, 7);
  x = b.flatten(x, 1);
  {
    auto c = b.module("classifier", "Sequential");
    x = b.linear(x, "0", 4096);
    x = b.act(OpKind::Relu, x, "1", "ReLU");
    x = b.dropout(x, "2");
    x = b.linear(x, "3", 4096);
    x = b.act(OpKind::Relu, x, "4", "ReLU");
    x = b.dropout(x, "5");
    x = b.linear(x, "6", 1000);
  }
  return b.finish({x});
}

}  // namespace ridge::zoo
