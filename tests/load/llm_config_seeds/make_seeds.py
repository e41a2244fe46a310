#!/usr/bin/env python3
"""Writes the seed configs of scripts/fuzz-llm-config.sh: one small config.json per supported model_type family
(the fuzzer mutates them; small sizes keep every accepted mutation buildable). Run from this folder."""
import json

COMMON = {"vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
          "max_position_embeddings": 64}
SEEDS = {
    "llama": dict(COMMON, model_type="llama", num_key_value_heads=2, intermediate_size=48),
    "mixtral": dict(COMMON, model_type="mixtral", num_key_value_heads=1, intermediate_size=16, num_local_experts=4,
                    num_experts_per_tok=2, sliding_window=8),
    "qwen2_moe": dict(COMMON, model_type="qwen2_moe", intermediate_size=48, moe_intermediate_size=16,
                      shared_expert_intermediate_size=24, num_experts=4, num_experts_per_tok=2),
    "qwen3_moe": dict(COMMON, model_type="qwen3_moe", num_key_value_heads=2, head_dim=16, moe_intermediate_size=16,
                      num_experts=4, num_experts_per_tok=2, mlp_only_layers=[]),
    "gemma2": dict(COMMON, model_type="gemma2", num_key_value_heads=2, head_dim=8, intermediate_size=48,
                   sliding_window=8, attn_logit_softcapping=50.0, final_logit_softcapping=30.0),
    "gemma3_text": dict(COMMON, model_type="gemma3_text", num_hidden_layers=3, num_key_value_heads=1, head_dim=8,
                        intermediate_size=48, sliding_window=8,
                        layer_types=["sliding_attention", "sliding_attention", "full_attention"]),
    "deepseek_v3": dict(COMMON, model_type="deepseek_v3", intermediate_size=48, moe_intermediate_size=8,
                        n_shared_experts=1, n_routed_experts=4, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=4,
                        v_head_dim=8, qk_nope_head_dim=8, num_experts_per_tok=2, first_k_dense_replace=1),
    "gpt_oss": dict(COMMON, model_type="gpt_oss", intermediate_size=16, num_key_value_heads=2, head_dim=8,
                    num_local_experts=4, num_experts_per_tok=2, sliding_window=8),
    "phi3": dict(COMMON, model_type="phi3", num_key_value_heads=2, intermediate_size=48, partial_rotary_factor=0.5,
                 sliding_window=8),
    "gpt2": {"model_type": "gpt2", "vocab_size": 64, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64},
    "falcon": dict(COMMON, model_type="falcon", new_decoder_architecture=True, num_kv_heads=2, alibi=True, bias=True),
    "bloom": {"model_type": "bloom", "vocab_size": 64, "n_embed": 32, "n_layer": 2, "num_attention_heads": 4},
    "bert": dict(COMMON, model_type="bert", intermediate_size=48, type_vocab_size=2,
                 architectures=["BertForPreTraining"]),
    "roberta": dict(COMMON, model_type="roberta", intermediate_size=48, type_vocab_size=1, pad_token_id=1,
                    architectures=["RobertaForSequenceClassification"], id2label={"0": "NEG", "1": "POS", "2": "NEU"}),
    "distilbert": {"model_type": "distilbert", "vocab_size": 64, "dim": 32, "n_layers": 2, "n_heads": 4,
                   "hidden_dim": 48, "max_position_embeddings": 64, "activation": "gelu",
                   "sinusoidal_pos_embds": False, "architectures": ["DistilBertForMaskedLM"]},
    "gptj": {"model_type": "gptj", "vocab_size": 64, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64,
             "rotary_dim": 4},
    "codegen": {"model_type": "codegen", "vocab_size": 64, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64,
                "rotary_dim": 4, "n_inner": 48},
    "gpt_bigcode": {"model_type": "gpt_bigcode", "vocab_size": 64, "n_embd": 32, "n_layer": 2, "n_head": 4,
                    "n_positions": 64, "multi_query": True},
    "starcoder2": dict(COMMON, model_type="starcoder2", num_key_value_heads=2, intermediate_size=48, sliding_window=8,
                       use_bias=True),
    "stablelm": dict(COMMON, model_type="stablelm", num_key_value_heads=2, intermediate_size=48, use_qkv_bias=True,
                     use_parallel_residual=True, partial_rotary_factor=0.5),
    "granite": dict(COMMON, model_type="granite", num_key_value_heads=2, intermediate_size=48, embedding_multiplier=12.0,
                    residual_multiplier=0.22, attention_multiplier=0.125, logits_scaling=8.0),
    "cohere": dict(COMMON, model_type="cohere", num_key_value_heads=2, intermediate_size=48, logit_scale=0.0625),
    "olmo": dict(COMMON, model_type="olmo", num_key_value_heads=2, intermediate_size=48, clip_qkv=8.0),
    "olmo3": dict(COMMON, model_type="olmo3", num_hidden_layers=4, num_key_value_heads=2, intermediate_size=48,
                  sliding_window=8),
    "olmoe": dict(COMMON, model_type="olmoe", num_key_value_heads=2, intermediate_size=16, num_experts=4,
                  num_experts_per_tok=2, clip_qkv=8.0),
    "glm4": dict(COMMON, model_type="glm4", num_key_value_heads=2, head_dim=8, intermediate_size=48),
    "glm4_moe": dict(COMMON, model_type="glm4_moe", num_hidden_layers=3, num_key_value_heads=2, head_dim=8,
                     intermediate_size=48, moe_intermediate_size=16, n_routed_experts=4, num_experts_per_tok=2,
                     n_shared_experts=1, first_k_dense_replace=1, use_qk_norm=True, attention_bias=True),
    "minimax_m2": dict(COMMON, model_type="minimax_m2", num_key_value_heads=2, head_dim=8, rotary_dim=4,
                       intermediate_size=16, num_local_experts=4, num_experts_per_tok=2),
    "llama4_text": dict(COMMON, model_type="llama4_text", num_hidden_layers=4, num_key_value_heads=2, head_dim=8,
                        intermediate_size=16, intermediate_size_mlp=48, num_local_experts=4, num_experts_per_tok=2,
                        interleave_moe_layer_step=2, attention_chunk_size=8, no_rope_layers=[1, 1, 1, 0]),
    "smollm3": dict(COMMON, model_type="smollm3", num_hidden_layers=4, num_key_value_heads=2, intermediate_size=48,
                    no_rope_layers=[1, 1, 1, 0]),
    "arcee": dict(COMMON, model_type="arcee", num_key_value_heads=2, intermediate_size=48),
}

if __name__ == "__main__":
    for name, config in SEEDS.items():
        with open(f"{name}.json", "w") as f:
            json.dump(config, f, indent=1)
            f.write("\n")
