// Zoo model builders, one function per architecture family. Each takes the resolved options (batch, input
// size, dtype) and returns a validated Graph whose node names are the torch module paths of the reference.
#pragma once
#include "ridge/load.hpp"

namespace ridge::zoo {

/// Resolved build options: per-sample input size (C,H,W or sequence length) plus LoadOptions.
struct BuildArgs {
  std::string name;
  int64_t batch = 1;
  Shape sample;   ///< CxHxW for CNNs, {seq_len} for language models
  DType dtype = DType::F32;
  bool training = false;

  /// The image input's shape, batch x C x H x W.
  Shape nchw() const { return Shape{{batch, sample[0], sample[1], sample[2]}}; }
};

Graph mnist(const BuildArgs& a, int64_t conv2_channels);
Graph mnist_slides(const BuildArgs& a);
Graph lenet5(const BuildArgs& a);
Graph alexnet(const BuildArgs& a);
Graph vgg(const BuildArgs& a, int depth, bool batch_norm);
Graph resnet(const BuildArgs& a, int depth, int64_t width_per_group = 64);
Graph googlenet(const BuildArgs& a);
Graph mobilenet_v2(const BuildArgs& a);
Graph mnasnet1_0(const BuildArgs& a);
Graph densenet121(const BuildArgs& a);
Graph transformer_lm(const BuildArgs& a);
Graph gpt2(const BuildArgs& a);
Graph distilbert(const BuildArgs& a);
/// A torchvision VisionTransformer's hyper-parameters (vit_b_16: patch 16, 12 layers, 12 heads, hidden 768, mlp 3072).
struct VitShape {
  int64_t patch, layers, heads, hidden, mlp;
};
Graph vit(const BuildArgs& a, const VitShape& v);
/// The LLM zoo entries (llama-2-7b, mixtral-8x7b, ...; configs in src/load/hf/zoo_configs.cpp).
Graph llm_zoo(const BuildArgs& a);

}  // namespace ridge::zoo
