#!/usr/bin/python3
"""Runs the LLM presets' own code from their git mirrors and prints the numbers ridge's tests hard-code.

Usage (run by hand; needs no network, only the mirrors' git directories and Debian's python3):
  MEGATRON_GIT=.../Megatron-LM/.git LLM_ANALYSIS_GIT=.../llm-analysis/.git LLM_VIEWER_GIT=.../LLM-Viewer/.git \
    /usr/bin/python3 validation/llm_presets.py

- Megatron-LM: num_floating_point_operations() of megatron/training/training.py is taken out of the file (ast)
  and run with an argparse-like namespace (no torch needed).
- llm-analysis: llm_analysis/ is checked out to a temporary folder and LLMAnalysis is imported (a stand-in for
  `fire`, only used by its CLI entry point); get_num_flops_fwd_total() is called.
- LLM-Viewer: ModelAnalyzer.analyze() runs with a stand-in `transformers.AutoConfig` that returns the config below.
Each tool runs at its HEAD (or REF_MEGATRON / REF_LLM_ANALYSIS / REF_LLM_VIEWER); the commits are printed.
"""
import ast
import os
import subprocess
import sys
import tarfile
import tempfile
import types
from types import SimpleNamespace

# HF configs of the zoo entries (src/load/hf): name -> (vocab, hidden, layers, heads, kv_heads, intermediate,
# experts, top_k)
MODELS = {
    "llama-2-7b": (32000, 4096, 32, 32, 32, 11008, 0, 0),
    "llama-2-70b": (32000, 8192, 80, 64, 8, 28672, 0, 0),
    "mixtral-8x7b": (32000, 4096, 32, 32, 8, 14336, 8, 2),
}
BATCH, SEQ = 1, 128


def checkout(git_dir, ref):
    dest = tempfile.mkdtemp(prefix="ridge-llm-presets-")
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", ref], check=True, capture_output=True).stdout
    path = os.path.join(dest, "src.tar")
    with open(path, "wb") as f:
        f.write(archive)
    with tarfile.open(path) as t:
        t.extractall(dest)
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", ref], check=True, capture_output=True,
                            text=True).stdout.strip()
    return dest, commit


def megatron(git_dir):
    src = subprocess.run(["git", "--git-dir", git_dir, "show", os.environ.get("REF_MEGATRON", "HEAD") +
                          ":megatron/training/training.py"], check=True, capture_output=True, text=True).stdout
    fn = next(n for n in ast.parse(src).body
              if isinstance(n, ast.FunctionDef) and n.name == "num_floating_point_operations")
    env = {"is_hybrid_model": lambda a: False, "is_linear_attention_variant": lambda v: False,
           "is_gated_delta_net_variant": lambda v: False}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "training.py", "exec"), env)
    for name, (V, h, L, H, kv, I, E, k) in MODELS.items():
        args = SimpleNamespace(
            group_query_attention=kv != H, num_query_groups=kv, num_attention_heads=H, num_experts=E or None,
            moe_layer_freq=1, moe_router_topk=k, mtp_num_layers=None, moe_ffn_hidden_size=I, ffn_hidden_size=I,
            moe_latent_size=None, moe_shared_expert_intermediate_size=None, swiglu=True, multi_latent_attention=False,
            kv_channels=h // H, attention_output_gate=False, experimental_attention_variant=None, hidden_size=h,
            num_layers=L, padded_vocab_size=(V + 127) // 128 * 128, seq_length=SEQ)
        print(f"megatron-code {name} B={BATCH} s={SEQ}: {int(env['num_floating_point_operations'](args, BATCH))}")


def llm_analysis(git_dir):
    dest, commit = checkout(git_dir, os.environ.get("REF_LLM_ANALYSIS", "HEAD"))
    print("llm-analysis", commit)
    sys.modules.setdefault("fire", types.ModuleType("fire"))
    sys.path.insert(0, dest)
    from llm_analysis.analysis import LLMAnalysis  # noqa: E402
    from llm_analysis.config import ModelConfig  # noqa: E402
    for name, (V, h, L, H, kv, I, E, k) in MODELS.items():
        mc = ModelConfig(name=name, max_seq_len=4096, num_layers=L, n_head=H, hidden_dim=h, vocab_size=V,
                         num_key_value_heads=kv, ffn_embed_dim=I, mlp_gated_linear_units=True,
                         moe_num_experts=E or 1, moe_top_k=k or 1)
        a = LLMAnalysis.__new__(LLMAnalysis)
        a.model_config = mc
        print(f"llm-analysis {name} B={BATCH} s={SEQ}: {int(a.get_num_flops_fwd_total(BATCH, SEQ))}")


def llm_viewer(git_dir):
    dest, commit = checkout(git_dir, os.environ.get("REF_LLM_VIEWER", "HEAD"))
    print("llm-viewer", commit)
    tf = types.ModuleType("transformers")
    current = {}
    tf.AutoConfig = SimpleNamespace(from_pretrained=lambda *a, **kw: current["cfg"])
    tf.AutoTokenizer = tf.AutoModelForCausalLM = None
    sys.modules["transformers"] = tf
    sys.path.insert(0, dest)
    os.chdir(dest)
    from model_analyzer import ModelAnalyzer  # noqa: E402
    for name, (V, h, L, H, kv, I, E, k) in MODELS.items():
        if E:
            continue  # LLM-Viewer's Llama rule has no experts
        current["cfg"] = SimpleNamespace(num_attention_heads=H, hidden_size=h, num_key_value_heads=kv,
                                         num_hidden_layers=L, intermediate_size=I, vocab_size=V)
        m = ModelAnalyzer("meta-llama/" + name + "-Llama", "nvidia_A100", config_file="configs/Llama.py")
        r = m.analyze(SEQ, BATCH)
        for stage in ("prefill", "decode"):
            t = r["total_results"][stage]
            print(f"llm-viewer {name} {stage} B={BATCH} s={SEQ}: OPs {int(t['OPs'])} memory_access "
                  f"{int(t['memory_access'])}")
        q = r["prefill"]["q_proj"]
        print(f"llm-viewer {name} prefill q_proj: OPs {int(q['OPs'])} memory_access {int(q['memory_access'])}")


if __name__ == "__main__":
    for var, run in (("MEGATRON_GIT", megatron), ("LLM_ANALYSIS_GIT", llm_analysis), ("LLM_VIEWER_GIT", llm_viewer)):
        if os.environ.get(var):
            run(os.environ[var])
