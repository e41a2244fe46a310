// Transformers: the pytorch/examples word-language-model TransformerModel, GPT-2 (124M), DistilBERT-base and
// torchvision's Vision Transformers, decomposed into the ops their PyTorch implementations run.
#include <fmt/format.h>

#include <cmath>

#include "load/zoo/builder.hpp"
#include "load/zoo/models.hpp"
#include "ridge/error.hpp"

namespace ridge::zoo {

namespace {

/// Scaled dot-product attention on [.., heads, seq, head_dim] q/k/v: matmul, scale, optional mask, softmax,
/// matmul. `mask_add` adds a float mask (baddbmm); `mask_where` selects with a bool mask; `dropout` false: the
/// attention dropout probability is 0 (scaled_dot_product_attention skips it).
int attention_core(Builder& b, int q, int k, int v, int mask_add, int mask_where, int mask_fill, bool scale_q,
                   bool dropout = true) {
  const Shape qs = b.shape(q);
  const int r = qs.rank();
  int scale = b.constant("scale", Shape{}, DType::F32);
  if (scale_q) q = b.binary(OpKind::Div, q, scale, "div");
  std::vector<int64_t> perm;
  for (int i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  int kt = b.transpose(k, perm, "transpose");
  int scores = b.matmul(q, kt, "matmul");
  if (!scale_q) scores = b.binary(OpKind::Div, scores, scale, "div");
  if (mask_add >= 0) scores = b.binary(OpKind::Add, scores, mask_add, "add_mask", "baddbmm");
  if (mask_where >= 0) scores = b.where(mask_where, mask_fill, scores);
  int w = b.softmax(scores, -1);
  if (dropout) w = b.dropout(w, "attn_dropout");
  return b.matmul(w, v, "matmul");
}

}  // namespace

// pytorch/examples word_language_model TransformerModel (built on nn.Transformer: its encoder has a final
// LayerNorm; its decoder attribute is replaced by the output Linear). Input: token ids [seq, batch].
Graph transformer_lm(const BuildArgs& a) {
  const int64_t ntoken = 33278, d = 200, heads = 2, nhid = 200, layers = 2;
  const int64_t S = a.sample[0], B = a.batch, hd = d / heads;
  Builder b(a.name, a.dtype);
  int ids = b.input("input", Shape{{S, B}}, DType::I64);
  int x = b.embedding(ids, "input_emb", ntoken, d);
  x = b.binary(OpKind::Mul, x, b.constant("sqrt_ninp", Shape{}, a.dtype), "mul");
  {
    auto pe = b.module("pos_encoder", "PositionalEncoding");
    int table = b.param("pe", Shape{{5000, 1, d}}, /*trainable=*/false);
    int rows = b.slice(table, 0, 0, S);
    x = b.binary(OpKind::Add, x, rows, "add");
    x = b.dropout(x, "dropout");
  }
  int mask = b.constant("src_mask", Shape{{S, S}}, a.dtype);
  {
    auto enc = b.module("encoder", "TransformerEncoder");
    {
      auto ls = b.module("layers", "ModuleList");
      for (int64_t l = 0; l < layers; ++l) {
        auto layer = b.module(std::to_string(l), "TransformerEncoderLayer");
        int sa;
        {
          auto mha = b.module("self_attn", "MultiheadAttention");
          int proj = b.linear(x, "in_proj", 3 * d, true, /*type=*/"");
          auto qkv = b.split(proj, 2, {d, d, d}, "chunk");
          int heads_qkv[3];
          for (int i = 0; i < 3; ++i) {
            int t = b.reshape(qkv[i], Shape{{S, B * heads, hd}});
            heads_qkv[i] = b.transpose(t, {1, 0, 2});
          }
          int o = attention_core(b, heads_qkv[0], heads_qkv[1], heads_qkv[2], mask, -1, -1, /*scale_q=*/true);
          o = b.transpose(o, {1, 0, 2});
          o = b.reshape(o, Shape{{S * B, d}});
          o = b.linear(o, "out_proj", d, true, /*type=*/"");
          sa = b.reshape(o, Shape{{S, B, d}});
        }
        sa = b.dropout(sa, "dropout1");
        x = b.layernorm(b.binary(OpKind::Add, x, sa, "add"), "norm1");
        int ff = b.linear(x, "linear1", nhid);
        ff = b.act(OpKind::Relu, ff, "", "", {}, /*captured=*/true);  // self.activation = F.relu
        ff = b.dropout(ff, "dropout");
        ff = b.linear(ff, "linear2", d);
        ff = b.dropout(ff, "dropout2");
        x = b.layernorm(b.binary(OpKind::Add, x, ff, "add"), "norm2");
      }
    }
    x = b.layernorm(x, "norm");
  }
  x = b.linear(x, "decoder", ntoken);
  x = b.softmax(x, -1, /*log=*/true);
  return b.finish({x});
}

// HuggingFace GPT2LMHeadModel "gpt2" (124M): 12 layers, d 768, 12 heads, vocab 50257, context 1024, lm_head tied
// to wte. Input: token ids [batch, seq].
Graph gpt2(const BuildArgs& a) {
  const int64_t vocab = 50257, ctx = 1024, d = 768, heads = 12, layers = 12;
  const int64_t B = a.batch, T = a.sample[0], hd = d / heads;
  Builder b(a.name, a.dtype);
  int ids = b.input("input_ids", Shape{{B, T}}, DType::I64);
  int wte_weight = -1, x;
  {
    auto tr = b.module("transformer", "GPT2Model");
    int tok = b.embedding(ids, "wte", vocab, d);
    wte_weight = b.value_id("transformer.wte.weight");
    int pos_ids = b.constant("position_ids", Shape{{1, T}}, DType::I64);
    int pos = b.embedding(pos_ids, "wpe", ctx, d);
    x = b.binary(OpKind::Add, tok, pos, "add");
    x = b.dropout(x, "drop");
    int causal = b.constant("causal_mask", Shape{{1, 1, T, T}}, DType::Bool);
    int fill = b.constant("mask_value", Shape{}, a.dtype);
    {
      auto hs = b.module("h", "ModuleList");
      for (int64_t l = 0; l < layers; ++l) {
        auto blk = b.module(std::to_string(l), "GPT2Block");
        int residual = x;
        x = b.layernorm(x, "ln_1");
        {
          auto at = b.module("attn", "GPT2Attention");
          int qkv = b.linear(x, "c_attn", 3 * d, true, "Conv1D");
          auto parts = b.split(qkv, 2, {d, d, d});
          int hq[3];
          for (int i = 0; i < 3; ++i) {
            int t = b.reshape(parts[i], Shape{{B, T, heads, hd}});
            hq[i] = b.transpose(t, {0, 2, 1, 3}, "permute");
          }
          int o = attention_core(b, hq[0], hq[1], hq[2], -1, causal, fill, /*scale_q=*/false);
          o = b.transpose(o, {0, 2, 1, 3}, "permute");
          o = b.reshape(o, Shape{{B, T, d}});
          o = b.linear(o, "c_proj", d, true, "Conv1D");
          x = b.dropout(o, "resid_dropout");
        }
        x = b.binary(OpKind::Add, x, residual, "add");
        residual = x;
        x = b.layernorm(x, "ln_2");
        {
          auto mlp = b.module("mlp", "GPT2MLP");
          x = b.linear(x, "c_fc", 4 * d, true, "Conv1D");
          x = b.act(OpKind::Gelu, x, "act", "NewGELUActivation", Attrs{}.set("approximate", std::string("tanh")));
          x = b.linear(x, "c_proj", d, true, "Conv1D");
          x = b.dropout(x, "dropout");
        }
        x = b.binary(OpKind::Add, residual, x, "add");
      }
    }
    x = b.layernorm(x, "ln_f");
  }
  // The tied head reuses the embedding matrix: the same Value, so parameters are counted once.
  return b.finish({b.linear_tied(x, "lm_head", wte_weight)});
}

// HuggingFace DistilBertModel "distilbert-base-uncased": 6 layers, d 768, 12 heads, ffn 3072, vocab 30522.
// Input: token ids [batch, seq]; the attention mask defaults to ones.
Graph distilbert(const BuildArgs& a) {
  const int64_t vocab = 30522, max_pos = 512, d = 768, heads = 12, ffn = 3072, layers = 6;
  const int64_t B = a.batch, T = a.sample[0], hd = d / heads;
  Builder b(a.name, a.dtype);
  int ids = b.input("input_ids", Shape{{B, T}}, DType::I64);
  int x;
  {
    auto emb = b.module("embeddings", "Embeddings");
    int tok = b.embedding(ids, "word_embeddings", vocab, d);
    int pos_ids = b.constant("position_ids", Shape{{1, T}}, DType::I64);
    int pos = b.embedding(pos_ids, "position_embeddings", max_pos, d);
    x = b.binary(OpKind::Add, tok, pos, "add");
    x = b.layernorm(x, "LayerNorm");
    x = b.dropout(x, "dropout");
  }
  int attn_mask = b.constant("attention_mask", Shape{{B, T}}, DType::I64);
  int zero = b.constant("zero", Shape{}, DType::I64);
  int neg_inf = b.constant("min_value", Shape{}, a.dtype);
  {
    auto tr = b.module("transformer", "Transformer");
    auto ls = b.module("layer", "ModuleList");
    for (int64_t l = 0; l < layers; ++l) {
      auto blk = b.module(std::to_string(l), "TransformerBlock");
      int sa;
      {
        auto at = b.module("attention", "MultiHeadSelfAttention");
        int qkv[3];
        const char* names[3] = {"q_lin", "k_lin", "v_lin"};
        for (int i = 0; i < 3; ++i) {
          int t = b.linear(x, names[i], d);
          t = b.reshape(t, Shape{{B, T, heads, hd}});
          qkv[i] = b.transpose(t, {0, 2, 1, 3});
        }
        int m = b.binary(OpKind::Equal, attn_mask, zero, "eq");
        m = b.reshape(m, Shape{{B, 1, 1, T}});
        int o = attention_core(b, qkv[0], qkv[1], qkv[2], -1, m, neg_inf, /*scale_q=*/true);
        o = b.transpose(o, {0, 2, 1, 3});
        o = b.reshape(o, Shape{{B, T, d}});
        sa = b.linear(o, "out_lin", d);
      }
      sa = b.layernorm(b.binary(OpKind::Add, sa, x, "add"), "sa_layer_norm");
      int f;
      {
        auto ff = b.module("ffn", "FFN");
        f = b.linear(sa, "lin1", ffn);
        f = b.act(OpKind::Gelu, f, "activation", "GELUActivation", {}, /*captured=*/true);  // self.act = F.gelu
        f = b.linear(f, "lin2", d);
        f = b.dropout(f, "dropout");
      }
      x = b.layernorm(b.binary(OpKind::Add, f, sa, "add"), "output_layer_norm");
    }
  }
  return b.finish({x});
}

// torchvision.models.VisionTransformer (vit_b_16, vit_b_32, vit_l_16, vit_l_32, vit_h_14): a patch-embedding
// convolution, a class token, learned position embeddings, pre-norm encoder blocks of nn.MultiheadAttention
// (batch_first, need_weights=False: one packed in_proj, scaled_dot_product_attention, out_proj) and a GELU MLP,
// a final LayerNorm and the head on the class token. Dropout and attention dropout are 0.0 (torchvision's default):
// no-ops, even while training. The input must be square and a multiple of the patch size; its side is the
// constructor's image_size, which sizes the position embedding (torchvision refuses any other input).
Graph vit(const BuildArgs& a, const VitShape& v) {
  const int64_t H = a.sample[1], W = a.sample[2], B = a.batch, d = v.hidden, heads = v.heads;
  if (H != W || H % v.patch != 0 || H < v.patch)
    throw Error(fmt::format("--input-size: {} takes a square image whose side is a multiple of its patch size {} "
                            "(torchvision's VisionTransformer asserts both), not {}x{}",
                            a.name, v.patch, H, W));
  const int64_t patches = (H / v.patch) * (W / v.patch), S = patches + 1, hd = d / heads;
  Builder b(a.name, a.dtype);
  int x = b.input("x", a.nchw(), a.dtype);
  // _process_input: conv_proj, then reshape(n, hidden, n_h * n_w).permute(0, 2, 1).
  x = b.conv2d(x, "conv_proj", d, v.patch, v.patch);
  x = b.reshape(x, Shape{{B, d, patches}}, "reshape");
  x = b.transpose(x, {0, 2, 1}, "permute");
  int cls = b.param("class_token", Shape{{1, 1, d}});
  cls = b.expand(cls, Shape{{B, 1, d}});
  x = b.concat({cls, x}, 1);
  {
    auto enc = b.module("encoder", "Encoder");
    x = b.binary(OpKind::Add, x, b.param("pos_embedding", Shape{{1, S, d}}), "add");
    x = b.dropout(x, "dropout", "Dropout", 0.0);
    {
      auto ls = b.module("layers", "Sequential");
      for (int64_t l = 0; l < v.layers; ++l) {
        auto blk = b.module("encoder_layer_" + std::to_string(l), "EncoderBlock");
        const int input = x;
        x = b.layernorm(x, "ln_1");
        {
          auto mha = b.module("self_attention", "MultiheadAttention");
          int t = b.transpose(x, {1, 0, 2});  // batch_first: (seq, batch, d) inside
          int proj = b.linear(t, "in_proj", 3 * d, true, /*type=*/"");
          auto qkv = b.split(proj, 2, {d, d, d}, "chunk");
          int hq[3];
          for (int i = 0; i < 3; ++i) {
            int r = b.reshape(qkv[i], Shape{{S, B * heads, hd}});
            r = b.transpose(r, {1, 0, 2});
            hq[i] = b.reshape(r, Shape{{B, heads, S, hd}});
          }
          int o = attention_core(b, hq[0], hq[1], hq[2], -1, -1, -1, /*scale_q=*/false, /*dropout=*/false);
          o = b.transpose(o, {2, 0, 1, 3}, "permute");
          o = b.reshape(o, Shape{{S * B, d}});
          // F.linear with out_proj's weights: the out_proj module itself is never called (its hooks never run).
          o = b.linear(o, "out_proj", d, true, /*type=*/"");
          o = b.reshape(o, Shape{{S, B, d}});
          x = b.transpose(o, {1, 0, 2});
        }
        x = b.dropout(x, "dropout", "Dropout", 0.0);
        x = b.binary(OpKind::Add, x, input, "add");
        int y = b.layernorm(x, "ln_2");
        {
          auto mlp = b.module("mlp", "MLPBlock");
          y = b.linear(y, "0", v.mlp);
          y = b.act(OpKind::Gelu, y, "1", "GELU");
          y = b.dropout(y, "2", "Dropout", 0.0);
          y = b.linear(y, "3", d);
          y = b.dropout(y, "4", "Dropout", 0.0);
        }
        x = b.binary(OpKind::Add, x, y, "add");
      }
    }
    x = b.layernorm(x, "ln");
  }
  // x[:, 0]: the class token's row.
  x = b.slice(x, 1, 0, 1, "getitem");
  x = b.reshape(x, Shape{{B, d}}, "getitem");
  {
    auto heads_scope = b.module("heads", "Sequential");
    x = b.linear(x, "head", 1000);
  }
  return b.finish({x});
}

}  // namespace ridge::zoo
