// The zoo table: one row per built-in model with its reference, default input and published parameter count.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "load/zoo/models.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"

namespace ridge {

namespace {

using BuildFn = Graph (*)(const zoo::BuildArgs&);

struct ZooRow {
  ZooEntry entry;
  BuildFn build;
  int64_t max_seq = 0;  ///< language models: longest supported sequence
};

const Shape kImageNet{{3, 224, 224}};

// Appends the LLM zoo (src/load/hf/zoo_configs.cpp): default sequence min(context, 2048), up to the context.
// Entries whose source rounds its parameter count carry the exact count of ridge::llm_params instead.
std::vector<ZooRow> with_llms(std::vector<ZooRow> rows) {
  for (const auto& c : llm_zoo_configs()) {
    const Count published = llm_published_params(c.name);
    rows.push_back({{c.name, "llm",
                     "Hugging Face " + c.family + " config (src/load/hf/zoo_configs.cpp)" +
                         (published ? "" : "; params from the config (the source rounds its count)"),
                     Shape{{std::min<int64_t>(c.max_positions, 2048)}}, true,
                     published ? published : llm_params(c).total},
                    &zoo::llm_zoo, c.max_positions});
  }
  return rows;
}

const std::vector<ZooRow>& rows() {
  using zoo::BuildArgs;
  static const std::vector<ZooRow> kRows = with_llms({
      {{"mnist", "mnist", "pytorch/examples mnist/main.py Net", Shape{{1, 28, 28}}, false, 1199882},
       [](const BuildArgs& a) { return zoo::mnist(a, 64); }},
      {{"mnist-wide", "mnist", "seed 000 variant: conv2 32->128, fc1 18432->128", Shape{{1, 28, 28}}, false, 2398026},
       [](const BuildArgs& a) { return zoo::mnist(a, 128); }},
      {{"mnist-slides", "mnist", "course slides / torchsummary README net (10/20 channels, k5)", Shape{{1, 28, 28}},
        false, 21840},
       &zoo::mnist_slides},
      {{"lenet5", "lenet", "LeNet-5 (tanh, avg-pool) as in DeepSpeed's flops-profiler test", Shape{{1, 32, 32}}, false,
        61706},
       &zoo::lenet5},
      {{"alexnet", "alexnet", "torchvision.models.alexnet", kImageNet, false, 61100840}, &zoo::alexnet},
      {{"vgg11", "vgg", "torchvision.models.vgg11", kImageNet, false, 132863336},
       [](const BuildArgs& a) { return zoo::vgg(a, 11, false); }},
      {{"vgg11_bn", "vgg", "torchvision.models.vgg11_bn", kImageNet, false, 132868840},
       [](const BuildArgs& a) { return zoo::vgg(a, 11, true); }},
      {{"vgg13", "vgg", "torchvision.models.vgg13", kImageNet, false, 133047848},
       [](const BuildArgs& a) { return zoo::vgg(a, 13, false); }},
      {{"vgg13_bn", "vgg", "torchvision.models.vgg13_bn", kImageNet, false, 133053736},
       [](const BuildArgs& a) { return zoo::vgg(a, 13, true); }},
      {{"vgg16", "vgg", "torchvision.models.vgg16", kImageNet, false, 138357544},
       [](const BuildArgs& a) { return zoo::vgg(a, 16, false); }},
      {{"vgg16_bn", "vgg", "torchvision.models.vgg16_bn", kImageNet, false, 138365992},
       [](const BuildArgs& a) { return zoo::vgg(a, 16, true); }},
      {{"vgg19", "vgg", "torchvision.models.vgg19", kImageNet, false, 143667240},
       [](const BuildArgs& a) { return zoo::vgg(a, 19, false); }},
      {{"vgg19_bn", "vgg", "torchvision.models.vgg19_bn", kImageNet, false, 143678248},
       [](const BuildArgs& a) { return zoo::vgg(a, 19, true); }},
      {{"resnet18", "resnet", "torchvision.models.resnet18", kImageNet, false, 11689512},
       [](const BuildArgs& a) { return zoo::resnet(a, 18); }},
      {{"resnet34", "resnet", "torchvision.models.resnet34", kImageNet, false, 21797672},
       [](const BuildArgs& a) { return zoo::resnet(a, 34); }},
      {{"resnet50", "resnet", "torchvision.models.resnet50", kImageNet, false, 25557032},
       [](const BuildArgs& a) { return zoo::resnet(a, 50); }},
      {{"resnet101", "resnet", "torchvision.models.resnet101", kImageNet, false, 44549160},
       [](const BuildArgs& a) { return zoo::resnet(a, 101); }},
      {{"resnet152", "resnet", "torchvision.models.resnet152", kImageNet, false, 60192808},
       [](const BuildArgs& a) { return zoo::resnet(a, 152); }},
      {{"wide_resnet50_2", "resnet", "torchvision.models.wide_resnet50_2", kImageNet, false, 68883240},
       [](const BuildArgs& a) { return zoo::resnet(a, 50, 128); }},
      {{"googlenet", "googlenet", "torchvision.models.googlenet(aux_logits=False)", kImageNet, false, 6624904},
       &zoo::googlenet},
      {{"mobilenet_v2", "mobilenet", "torchvision.models.mobilenet_v2", kImageNet, false, 3504872},
       &zoo::mobilenet_v2},
      {{"mnasnet1_0", "mnasnet", "torchvision.models.mnasnet1_0", kImageNet, false, 4383312}, &zoo::mnasnet1_0},
      {{"densenet121", "densenet", "torchvision.models.densenet121", kImageNet, false, 7978856}, &zoo::densenet121},
      {{"transformer-lm", "transformer", "pytorch/examples word_language_model TransformerModel", Shape{{35}}, true,
        13828878},
       &zoo::transformer_lm, 5000},
      {{"gpt2", "transformer", "HuggingFace GPT2LMHeadModel 'gpt2' (tied lm_head)", Shape{{1024}}, true, 124439808,
        R"({"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12,
            "n_positions": 1024, "activation_function": "gelu_new"})"},
       &zoo::gpt2, 1024},
      {{"distilbert", "transformer", "HuggingFace DistilBertModel 'distilbert-base-uncased'", Shape{{128}}, true,
        66362880,
        R"({"model_type": "distilbert", "architectures": ["DistilBertModel"], "vocab_size": 30522, "dim": 768,
            "n_layers": 6, "n_heads": 12, "hidden_dim": 3072, "max_position_embeddings": 512, "activation": "gelu"})"},
       &zoo::distilbert, 512},
      {{"vit_b_16", "vit", "torchvision.models.vit_b_16", kImageNet, false, 86567656},
       [](const BuildArgs& a) { return zoo::vit(a, {16, 12, 12, 768, 3072}); }},
      {{"vit_b_32", "vit", "torchvision.models.vit_b_32", kImageNet, false, 88224232},
       [](const BuildArgs& a) { return zoo::vit(a, {32, 12, 12, 768, 3072}); }},
      {{"vit_l_16", "vit", "torchvision.models.vit_l_16", kImageNet, false, 304326632},
       [](const BuildArgs& a) { return zoo::vit(a, {16, 24, 16, 1024, 4096}); }},
      {{"vit_l_32", "vit", "torchvision.models.vit_l_32", kImageNet, false, 306535400},
       [](const BuildArgs& a) { return zoo::vit(a, {32, 24, 16, 1024, 4096}); }},
      {{"vit_h_14", "vit", "torchvision.models.vit_h_14 (image_size 224, the SWAG linear-probe weights' size)",
        kImageNet, false, 632045800},
       [](const BuildArgs& a) { return zoo::vit(a, {14, 32, 16, 1280, 5120}); }},
  });
  return kRows;
}

}  // namespace

const std::vector<ZooEntry>& zoo_entries() {
  static const std::vector<ZooEntry> kEntries = [] {
    std::vector<ZooEntry> out;
    for (const auto& r : rows()) out.push_back(r.entry);
    return out;
  }();
  return kEntries;
}

const ZooEntry* find_zoo_entry(const std::string& name) {
  for (const auto& e : zoo_entries())
    if (e.name == name) return &e;
  return nullptr;
}

Graph build_zoo_model(const std::string& name, const LoadOptions& opts) {
  const ZooRow* row = nullptr;
  for (const auto& r : rows())
    if (r.entry.name == name) row = &r;
  if (!row) {
    std::vector<std::string> names;
    for (const auto& e : zoo_entries()) names.push_back(e.name);
    auto near = closest_names(name, names);
    std::string hint = near.empty() ? "run `ridge list` for the zoo" : "did you mean " + fmt::format("{}", fmt::join(near, ", ")) + "?";
    throw Error(fmt::format("unknown model '{}' (not a file and not in the zoo); {}", name, hint));
  }
  if (opts.batch < 1) throw Error(fmt::format("--batch: {} is not a positive batch size", opts.batch));
  if (opts.batch > (int64_t{1} << 40))
    throw Error(fmt::format("--batch: {} is above the largest batch a model is built for (2^40)", opts.batch));
  zoo::BuildArgs a;
  a.name = name;
  a.batch = opts.batch;
  a.dtype = opts.dtype;
  a.training = opts.training;
  a.sample = row->entry.input;
  if (row->entry.sequence_input) {
    if (opts.input_size)
      throw Error(fmt::format("--input-size: {} takes token ids; set the sequence length with --seq-len", name));
    if (opts.seq_len) {
      if (*opts.seq_len < 1 || *opts.seq_len > row->max_seq)
        throw Error(fmt::format("--seq-len: {} is out of range for {} (1..{})", *opts.seq_len, name, row->max_seq));
      a.sample = Shape{{*opts.seq_len}};
    }
  } else {
    if (opts.seq_len) throw Error(fmt::format("--seq-len: {} is not a sequence model", name));
    if (opts.input_size) {
      if (opts.input_size->rank() != 3 || (*opts.input_size)[0] != row->entry.input[0])
        throw Error(fmt::format("--input-size: {} takes {} (channels x height x width, {} channels), not {}", name,
                                to_string(row->entry.input), row->entry.input[0], to_string(*opts.input_size)));
      a.sample = *opts.input_size;
    }
  }
  for (const auto& [in_name, shape] : opts.input_shapes) {
    (void)shape;
    throw Error(fmt::format("--input {}=...: zoo models take --batch and --input-size/--seq-len instead", in_name));
  }
  Graph g = row->build(a);
  if (opts.training)  // nn.Dropout in train(): it masks and scales (a view at inference)
    for (Node& n : g.nodes)
      if (n.op == OpKind::Dropout) n.attrs.set("training_mode", int64_t{1});
  return g;
}

}  // namespace ridge
