// BERT-family encoders from a Hugging Face config.json (bert, roberta, xlm-roberta, distilbert): parsing, the heads
// architectures[0] names, parameter counts equal to transformers', and the graph (bidirectional, post-norm).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using nlohmann::json;

// The config.json files of the checkpoints on the Hugging Face hub (keys that change no count left out).
json bert_base() {
  return json::parse(R"({"architectures":["BertForMaskedLM"],"hidden_act":"gelu","hidden_size":768,
    "intermediate_size":3072,"layer_norm_eps":1e-12,"max_position_embeddings":512,"model_type":"bert",
    "num_attention_heads":12,"num_hidden_layers":12,"pad_token_id":0,"position_embedding_type":"absolute",
    "type_vocab_size":2,"vocab_size":30522})");
}
json bert_large() {
  json j = bert_base();
  j["hidden_size"] = 1024, j["intermediate_size"] = 4096, j["num_attention_heads"] = 16, j["num_hidden_layers"] = 24;
  return j;
}
json roberta_base() {
  return json::parse(R"({"architectures":["RobertaForMaskedLM"],"bos_token_id":0,"eos_token_id":2,
    "hidden_act":"gelu","hidden_size":768,"intermediate_size":3072,"layer_norm_eps":1e-05,
    "max_position_embeddings":514,"model_type":"roberta","num_attention_heads":12,"num_hidden_layers":12,
    "pad_token_id":1,"type_vocab_size":1,"vocab_size":50265})");
}
json distilbert_base() {
  return json::parse(R"({"activation":"gelu","architectures":["DistilBertForMaskedLM"],"dim":768,"dropout":0.1,
    "hidden_dim":3072,"max_position_embeddings":512,"model_type":"distilbert","n_heads":12,"n_layers":6,
    "pad_token_id":0,"sinusoidal_pos_embds":false,"tie_weights_":true,"vocab_size":30522})");
}
json with_arch(json j, const std::string& arch) {
  j["architectures"] = {arch};
  return j;
}

LlmConfig encoder(const json& j) {
  LlmConfig c = parse_llm_config(j, "config.json");
  c.name = "encoder";
  return c;
}

Count encoder_graph_params(const LlmConfig& c, int64_t tokens = 8) {
  LlmShape s;
  s.batch = 2;
  s.tokens = tokens;
  return estimate(build_llm(c, s)).total.params;
}

std::string encoder_error(const json& j) {
  try {
    parse_llm_config(j, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LlmEncoder, FamiliesParseAsBidirectionalPostNormEncoders) {
  const LlmConfig b = encoder(bert_base());
  EXPECT_EQ(b.family, "bert");
  EXPECT_FALSE(b.causal);
  EXPECT_TRUE(b.post_norm);
  EXPECT_EQ(b.head, LlmHead::MaskedLm);
  EXPECT_EQ(b.architecture, "BertForMaskedLM");
  EXPECT_EQ(b.token_type_vocab, 2);
  EXPECT_EQ(b.max_positions, 512);
  EXPECT_EQ(b.head_dim, 64);
  EXPECT_EQ(b.activation, "gelu");
  EXPECT_FALSE(b.pooler);  // BertForMaskedLM builds BertModel(add_pooling_layer=False)
  // RoBERTa numbers positions from pad_token_id + 1: 514 rows, 512 usable positions.
  const LlmConfig r = encoder(roberta_base());
  EXPECT_EQ(r.max_positions, 512);
  EXPECT_EQ(r.max_positions + r.position_offset, 514);
  EXPECT_EQ(r.token_type_vocab, 1);
  EXPECT_EQ(r.module_prefix, "Roberta");
  json x = roberta_base();
  x["model_type"] = "xlm-roberta";
  x["architectures"] = {"XLMRobertaForMaskedLM"};
  EXPECT_EQ(encoder(x).module_prefix, "XLMRoberta");
  const LlmConfig d = encoder(distilbert_base());
  EXPECT_EQ(d.hidden_size, 768);
  EXPECT_EQ(d.num_layers, 6);
  EXPECT_EQ(d.intermediate_size, 3072);
  EXPECT_EQ(d.token_type_vocab, 0);
  EXPECT_FALSE(encoder(with_arch(distilbert_base(), "DistilBertModel")).pooler);  // DistilBertModel has none
  EXPECT_TRUE(encoder(with_arch(bert_base(), "BertModel")).pooler);
  // No architectures: the base model, as AutoModel loads it.
  json bare = bert_base();
  bare.erase("architectures");
  EXPECT_EQ(encoder(bare).head, LlmHead::Base);
  // num_labels: id2label's length, else num_labels, else 2.
  json cls = with_arch(bert_base(), "BertForSequenceClassification");
  EXPECT_EQ(encoder(cls).num_labels, 2);
  cls["num_labels"] = 5;
  EXPECT_EQ(encoder(cls).num_labels, 5);
  cls["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  EXPECT_EQ(encoder(cls).num_labels, 3);
}

// The counts transformers gives (model.num_parameters(), tied weights once) for the hub checkpoints; those
// marked "derived" are the same sums for a head the checkpoint does not ship, worked out here term by term.
TEST(LlmEncoder, ParameterCountsEqualTransformers) {
  const struct {
    json config;
    const char* arch;
    Count params;
  } cases[] = {
      {bert_base(), "BertModel", 109482240},                          // bert-base-uncased, published
      {bert_base(), "BertForMaskedLM", 109514298},                    // bert-base-uncased as shipped
      {bert_base(), "BertForPreTraining", 110106428},                 // bert-base-uncased, published
      {bert_base(), "BertForSequenceClassification", 109483778},      // 2 labels, published
      {bert_large(), "BertModel", 335141888},                         // bert-large-uncased, published
      {roberta_base(), "RobertaModel", 124645632},                    // roberta-base, published
      {roberta_base(), "RobertaForMaskedLM", 124697433},              // roberta-base as shipped
      {roberta_base(), "RobertaForSequenceClassification", 124647170},  // 2 labels, published
      {distilbert_base(), "DistilBertModel", 66362880},               // distilbert-base-uncased, published
      {distilbert_base(), "DistilBertForMaskedLM", 66985530},         // distilbert-base-uncased as shipped
      {distilbert_base(), "DistilBertForSequenceClassification", 66955010},  // ...-finetuned-sst-2-english
  };
  for (const auto& k : cases) {
    const LlmConfig c = encoder(with_arch(k.config, k.arch));
    EXPECT_EQ(llm_params(c).total, k.params) << k.arch;
    EXPECT_EQ(encoder_graph_params(c), k.params) << k.arch;
  }
  // bert-base BertModel term by term: embeddings (30522 + 512 + 2) x 768 + LayerNorm 2 x 768; per layer q/k/v/o
  // 4 (768^2 + 768), two LayerNorms 4 x 768, MLP 2 x 768 x 3072 + 3072 + 768; pooler 768^2 + 768.
  const Count h = 768, I = 3072;
  const Count layer = 4 * (h * h + h) + 4 * h + 2 * h * I + I + h;
  EXPECT_EQ((30522 + 512 + 2) * h + 2 * h + 12 * layer + h * h + h, Count{109482240});
  // MLM head: transform dense + LayerNorm + decoder bias (weight tied): 768^2 + 768 + 1536 + 30522; no pooler.
  EXPECT_EQ(Count{109482240} - (h * h + h) + (h * h + h) + 2 * h + 30522, Count{109514298});
  // DistilBERT: the zoo's ONNX-like distilbert graph (src/load/zoo/transformers.cpp) has the same count.
  EXPECT_EQ(estimate(load_model("distilbert", LoadOptions{})).total.params, Count{66362880});
  // xlm-roberta-base (vocabulary 250002): XLMRobertaModel 278,043,648, the count its model card's size rounds.
  json x = roberta_base();
  x["model_type"] = "xlm-roberta", x["vocab_size"] = 250002, x["architectures"] = {"XLMRobertaModel"};
  EXPECT_EQ(llm_params(encoder(x)).total, Count{278043648});
  // Untied decoder (tie_word_embeddings false): its own V x h weight.
  json untied = bert_base();
  untied["tie_word_embeddings"] = false;
  const LlmConfig u = encoder(untied);
  EXPECT_EQ(llm_params(u).total, Count{109514298} + 30522 * h);
  EXPECT_EQ(encoder_graph_params(u), llm_params(u).total);
  // Token classification (9 labels) and question answering: one Linear over every token, no pooler.
  json tok = with_arch(roberta_base(), "RobertaForTokenClassification");
  tok["num_labels"] = 9;
  for (const LlmConfig& c : {encoder(tok), encoder(with_arch(distilbert_base(), "DistilBertForQuestionAnswering"))})
    EXPECT_EQ(encoder_graph_params(c), llm_params(c).total) << c.architecture;
  EXPECT_EQ(llm_params(encoder(tok)).total, Count{124645632} - (h * h + h) + 9 * h + 9);
}

TEST(LlmEncoder, MissingKeysAndUnsupportedHeadsAreOneLineErrors) {
  const std::pair<json, const char*> cases[] = {
      {[] { json j = bert_base(); j.erase("intermediate_size"); return j; }(),
       "config.json: missing required key 'intermediate_size'"},
      {[] { json j = roberta_base(); j.erase("hidden_size"); return j; }(), "config.json: missing required key 'hidden_size'"},
      {[] { json j = distilbert_base(); j.erase("dim"); return j; }(), "config.json: missing required key 'dim'"},
      {[] { json j = distilbert_base(); j.erase("hidden_dim"); return j; }(), "config.json: missing required key 'hidden_dim'"},
      {[] { json j = distilbert_base(); j["n_layers"] = "6"; return j; }(), "key 'n_layers' must be an integer"},
      {[] { json j = distilbert_base(); j["n_layers"] = 0; return j; }(), "config.json: n_layers must be positive, not 0"},
      {[] { json j = distilbert_base(); j["dim"] = int64_t{12} << 22; return j; }(), "config.json: dim 50331648 is beyond"},
      {with_arch(bert_base(), "BertForMultipleChoice"),
       "config.json: architectures[0] 'BertForMultipleChoice' is not supported for model_type 'bert'"},
      {with_arch(bert_base(), "BertLMHeadModel"), "architectures[0] 'BertLMHeadModel' is not supported"},
      {with_arch(roberta_base(), "RobertaForPreTraining"), "'RobertaForPreTraining' is not supported"},
      {with_arch(roberta_base(), "BertForMaskedLM"), "'BertForMaskedLM' is not supported for model_type 'roberta'"},
      {[] { json j = bert_base(); j["architectures"] = "BertModel"; return j; }(), "key 'architectures' must be a list"},
      {[] { json j = bert_base(); j["position_embedding_type"] = "relative_key"; return j; }(),
       "position_embedding_type 'relative_key' is not supported"},
      {[] { json j = bert_base(); j["is_decoder"] = true; return j; }(), "is_decoder / add_cross_attention true"},
      {[] { json j = roberta_base(); j["pad_token_id"] = 600; return j; }(), "pad_token_id 600 leaves no position"},
      {[] { json j = with_arch(bert_base(), "BertForSequenceClassification"); j["num_labels"] = 0; return j; }(),
       "num_labels must be positive, not 0"},
      {[] { json j = bert_base(); j["hidden_act"] = "mish"; return j; }(), "hidden_act 'mish' is not supported"},
  };
  for (const auto& [j, message] : cases) {
    const std::string e = encoder_error(j);
    EXPECT_NE(e.find(message), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

// One BERT layer's forward FLOPs by hand (B = 2 sequences of T = 16 tokens, h = 64, 4 heads, I = 256): the
// linears 2 N (4 h^2 + 2 h I) + their biases N (4 h + I + h), QK^T and SV 2 x 2 B T^2 h over the whole T x T
// score matrix (no causal halving: an encoder's queries see every position), the scaling and the padding mask one
// FLOP per score, softmax 5 T - 2 per row, GELU 5 per element, two residual adds, two LayerNorms.
TEST(LlmEncoder, OneLayerFlopsByHandWithTheWholeScoreMatrix) {
  json j = bert_base();
  j["hidden_size"] = 64, j["num_attention_heads"] = 4, j["intermediate_size"] = 256, j["num_hidden_layers"] = 2;
  j["vocab_size"] = 100;
  const LlmConfig c = encoder(with_arch(j, "BertModel"));
  const Count B = 2, T = 16, h = 64, H = 4, I = 256, N = B * T;
  const LlmShape shape{2, 16, 0, DType::F32};
  const Graph g = build_llm(c, shape);
  const ModelCost mc = estimate(g);
  Count gemm = 0, core = 0, layer = 0, norms = 0;
  bool padding_mask = false;
  for (const auto& nc : mc.nodes) {
    const Node& n = g.nodes[nc.node];
    if (n.name.rfind("bert.encoder.layer.0.", 0) != 0) continue;
    layer += nc.cost.flops;
    if (n.op == OpKind::Gemm) gemm += nc.cost.flops;
    if (n.op == OpKind::MatMul) core += nc.cost.flops;
    if (n.op == OpKind::LayerNormalization) norms += nc.cost.flops;
    if (n.name == "bert.encoder.layer.0.attention.self.add_mask") {
      padding_mask = true;
      EXPECT_EQ(to_string(g.value(n.inputs[1]).shape), "2x1x1x16");  // [B, 1, 1, S]: no causal mask
      EXPECT_EQ(nc.cost.flops, B * H * T * T);
    }
  }
  EXPECT_TRUE(padding_mask);
  EXPECT_EQ(gemm, 2 * N * (4 * h * h + 2 * h * I) + N * (4 * h + I + h));
  EXPECT_EQ(core, 4 * B * T * T * h);
  const Count scores = B * H * T * T;
  EXPECT_EQ(layer, gemm + core + scores /* scaling */ + scores /* mask */ + B * H * T * (5 * T - 2) /* softmax */ +
                       5 * N * I /* GELU */ + 2 * N * h /* residuals */ + norms);
  EXPECT_GT(norms, 0);
  // Post-norm and no final norm: the last node of the body is layer 1's output LayerNorm; the outputs are the
  // sequence and the pooler's tanh.
  EXPECT_GE(g.find_node("bert.encoder.layer.1.output.LayerNorm"), 0);
  EXPECT_GE(g.find_node("bert.encoder.layer.0.attention.output.LayerNorm"), 0);
  EXPECT_GE(g.find_node("bert.pooler.dense"), 0);
  EXPECT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(to_string(g.value(g.outputs[1]).shape), "2x64");
  // The causal twin (same config, causal true) differs only in its mask: the eager graph computes every score.
  LlmConfig twin = c;
  twin.causal = true;
  const Graph tg = build_llm(twin, shape);
  EXPECT_EQ(estimate(tg).total.flops, mc.total.flops);
  const int mask = tg.find_node("bert.encoder.layer.0.attention.self.add_mask");
  ASSERT_GE(mask, 0);
  EXPECT_EQ(to_string(tg.value(tg.nodes[mask].inputs[1]).shape), "2x1x16x16");
}

TEST(LlmEncoder, HeadsAndModuleNamesFollowTransformers) {
  auto nodes_of = [](const json& j) {
    const Graph g = build_llm(encoder(j), LlmShape{1, 8, 0, DType::F32});
    return g;
  };
  Graph g = nodes_of(bert_base());
  for (const char* n : {"bert.embeddings.word_embeddings", "bert.embeddings.token_type_embeddings",
                        "bert.embeddings.LayerNorm", "bert.encoder.layer.11.attention.self.query",
                        "bert.encoder.layer.11.intermediate.dense", "cls.predictions.transform.LayerNorm",
                        "cls.predictions.decoder"})
    EXPECT_GE(g.find_node(n), 0) << n;
  EXPECT_EQ(to_string(g.value(g.outputs[0]).shape), "1x8x30522");
  g = nodes_of(with_arch(bert_base(), "BertForPreTraining"));
  EXPECT_GE(g.find_node("cls.seq_relationship"), 0);
  EXPECT_EQ(to_string(g.value(g.outputs[1]).shape), "1x2");
  g = nodes_of(roberta_base());
  for (const char* n : {"roberta.encoder.layer.0.attention.self.key", "lm_head.dense", "lm_head.layer_norm", "lm_head.decoder"})
    EXPECT_GE(g.find_node(n), 0) << n;
  g = nodes_of(with_arch(roberta_base(), "RobertaForSequenceClassification"));
  EXPECT_GE(g.find_node("classifier.out_proj"), 0);
  EXPECT_LT(g.find_node("roberta.pooler.dense"), 0);
  g = nodes_of(distilbert_base());
  for (const char* n : {"distilbert.transformer.layer.5.attention.q_lin", "distilbert.transformer.layer.5.ffn.lin2",
                        "distilbert.transformer.layer.5.output_layer_norm", "vocab_transform", "vocab_layer_norm",
                        "vocab_projector"})
    EXPECT_GE(g.find_node(n), 0) << n;
  g = nodes_of(with_arch(distilbert_base(), "DistilBertForSequenceClassification"));
  EXPECT_GE(g.find_node("pre_classifier"), 0);
  EXPECT_EQ(to_string(g.value(g.outputs[0]).shape), "1x2");
  // Sequence lengths: 1..max_positions (RoBERTa: 512 of its 514 rows); an encoder has no serving graph.
  LoadOptions o;
  o.seq_len = 513;
  EXPECT_THROW(build_llm(encoder(roberta_base()), o), Error);
  o.seq_len = 512;
  EXPECT_EQ(estimate(build_llm(encoder(roberta_base()), o)).total.params, Count{124697433});
  LlmShape serving{1, 1, 8, DType::F16, true};
  EXPECT_THROW(build_llm(encoder(bert_base()), serving), Error);
}

// Mutations of the encoder seeds (tests/load/llm_config_seeds: bert, roberta, distilbert): a one-line error or a
// config whose graph has exactly the formula's parameter count.
TEST(LlmEncoder, MangledEncoderConfigsAreOneLineErrorsOrConsistentGraphs) {
  int accepted = 0, built = 0;
  for (const char* seed : {"bert", "roberta", "distilbert"}) {
    const std::string text =
        test::slurp(std::string(RIDGE_SOURCE_DIR) + "/tests/load/llm_config_seeds/" + seed + ".json");
    test::survive_mutations(text, [&](const std::string& mutated) {
      const json j = json::parse(mutated, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) throw Error("not JSON");
      LlmConfig c = parse_llm_config(j, "cfg.json");
      ++accepted;
      c.name = "mangled";
      if (c.num_layers > 4 || c.hidden_size > 256 || c.vocab_size > 4096 || c.intermediate_size > 1024 ||
          c.num_heads > 64 || c.num_labels > 64 || c.token_type_vocab > 64 || c.max_positions < 2)
        return;
      EXPECT_EQ(encoder_graph_params(c, 2), llm_params(c).total) << mutated;
      ++built;
    }, 1000);
  }
  EXPECT_GT(accepted, 100) << built;
  EXPECT_GT(built, 50) << accepted;
}

}  // namespace
}  // namespace ridge
