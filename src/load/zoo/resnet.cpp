// torchvision ResNet family (resnet18/34/50/101/152, wide_resnet50_2).
#include "load/zoo/builder.hpp"
#include "load/zoo/models.hpp"

namespace ridge::zoo {

namespace {

int basic_block(Builder& b, int x, int64_t planes, int64_t stride, bool downsample) {
  int identity = x;
  int out = b.conv2d(x, "conv1", planes, 3, stride, 1, 1, false);
  out = b.batchnorm(out, "bn1");
  out = b.act(OpKind::Relu, out, "relu", "ReLU");
  out = b.conv2d(out, "conv2", planes, 3, 1, 1, 1, false);
  out = b.batchnorm(out, "bn2");
  if (downsample) {
    auto d = b.module("downsample", "Sequential");
    identity = b.conv2d(x, "0", planes, 1, stride, 0, 1, false);
    identity = b.batchnorm(identity, "1");
  }
  out = b.binary(OpKind::Add, out, identity, "add", "iadd");  // `out += identity`
  return b.act(OpKind::Relu, out, "relu", "ReLU");
}

int bottleneck(Builder& b, int x, int64_t planes, int64_t stride, bool downsample, int64_t width_per_group) {
  const int64_t width = planes * width_per_group / 64;
  int identity = x;
  int out = b.conv2d(x, "conv1", width, 1, 1, 0, 1, false);
  out = b.batchnorm(out, "bn1");
  out = b.act(OpKind::Relu, out, "relu", "ReLU");
  out = b.conv2d(out, "conv2", width, 3, stride, 1, 1, false);
  out = b.batchnorm(out, "bn2");
  out = b.act(OpKind::Relu, out, "relu", "ReLU");
  out = b.conv2d(out, "conv3", planes * 4, 1, 1, 0, 1, false);
  out = b.batchnorm(out, "bn3");
  if (downsample) {
    auto d = b.module("downsample", "Sequential");
    identity = b.conv2d(x, "0", planes * 4, 1, stride, 0, 1, false);
    identity = b.batchnorm(identity, "1");
  }
  out = b.binary(OpKind::Add, out, identity, "add", "iadd");  // `out += identity`
  return b.act(OpKind::Relu, out, "relu", "ReLU");
}

}  // namespace

Graph resnet(const BuildArgs& a, int depth, int64_t width_per_group) {
  struct Layout { int depth; bool bottleneck; int blocks[4]; };
  static const Layout kLayouts[] = {{18, false, {2, 2, 2, 2}},
                                    {34, false, {3, 4, 6, 3}},
                                    {50, true, {3, 4, 6, 3}},
                                    {101, true, {3, 4, 23, 3}},
                                    {152, true, {3, 8, 36, 3}}};
  const Layout* lay = nullptr;
  for (const auto& l : kLayouts)
    if (l.depth == depth) lay = &l;
  Builder b(a.name, a.dtype);
  int x = b.input("input", a.nchw(), a.dtype);
  x = b.conv2d(x, "conv1", 64, 7, 2, 3, 1, false);
  x = b.batchnorm(x, "bn1");
  x = b.act(OpKind::Relu, x, "relu", "ReLU");
  x = b.maxpool(x, "maxpool", 3, 2, 1);
  const int expansion = lay->bottleneck ? 4 : 1;
  int64_t inplanes = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    const int64_t stride = stage == 0 ? 1 : 2;
    auto layer = b.module("layer" + std::to_string(stage + 1), "Sequential");
    for (int i = 0; i < lay->blocks[stage]; ++i) {
      const int64_t s = i == 0 ? stride : 1;
      const bool down = i == 0 && (s != 1 || inplanes != planes * expansion);
      auto blk = b.module(std::to_string(i), lay->bottleneck ? "Bottleneck" : "BasicBlock");
      x = lay->bottleneck ? bottleneck(b, x, planes, s, down, width_per_group) : basic_block(b, x, planes, s, down);
      inplanes = planes * expansion;
    }
  }
  x = b.adaptive_avgpool(x, "avgpool", 1, 1);
  x = b.flatten(x, 1);
  x = b.linear(x, "fc", 1000);
  return b.finish({x});
}

}  // namespace ridge::zoo
