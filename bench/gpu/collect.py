#!/usr/bin/env python3
"""Collects what ridge needs from one NVIDIA GPU (issue 18): wall-clock timings, torch.profiler traces and tables,
per-operator times in Vidur's mlp.csv format (each operator timed from a CUDA graph of 10 calls), a GEMM sweep and a
bandwidth test. bench/gpu/collect.sh drives it
(and runs the ncu profiles with the workloads below); every part writes under --out and never aborts the others.

    python3 bench/gpu/collect.py PART --out DIR [options]

PART: ceilings | resnet | llama | vidur | workload (one profiled step for ncu: --what resnet-train|resnet-infer|
llama-prefill|llama-decode|gemm, inside cudaProfilerStart/Stop so that `ncu --profile-from-start off` sees it alone).
Needs torch (and torchvision, transformers for resnet and llama); runs on the GPU machine only.
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch

DEV = "cuda"


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def stats_ms(times_ms):
    s = sorted(times_ms)
    n = len(s)
    q = lambda f: s[min(n - 1, max(0, int(round(f * (n - 1)))))]
    return {"median_ms": statistics.median(s), "min_ms": s[0], "max_ms": s[-1], "p10_ms": q(0.1), "p90_ms": q(0.9),
            "mean_ms": statistics.fmean(s), "std_ms": statistics.pstdev(s) if n > 1 else 0.0, "n": n}


def time_events(fn, warmup, reps, sync_each=False):
    """Times fn() with CUDA events: one pair per repetition (stream time, launch gaps included), after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    wall0 = time.perf_counter()
    for i in range(reps):
        starts[i].record()
        fn()
        ends[i].record()
        if sync_each:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    wall = time.perf_counter() - wall0
    st = stats_ms([s.elapsed_time(e) for s, e in zip(starts, ends)])
    st["wall_per_rep_ms"] = wall * 1e3 / reps
    return st


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def torch_profile(fn, out_stem, title):
    """One call of fn under torch.profiler: Chrome trace (export_chrome_trace) and the key_averages table."""
    from torch.profiler import profile, ProfilerActivity, record_function
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, with_flops=True) as prof:
        with record_function(title):
            fn()
        torch.cuda.synchronize()
    prof.export_chrome_trace(out_stem + "_trace.json")
    with open(out_stem + "_table.txt", "w") as f:
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=-1, max_name_column_width=120))
        f.write("\n")
    log("profiled", title, "->", out_stem)


# ---------------------------------------------------------------------------------------------------------------
# ceilings: GEMM sweep and bandwidth

GEMM_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}
LLM_NK = {"qkv_llama3_8b": (6144, 4096), "o_proj": (4096, 4096), "gate_up_llama3_8b": (28672, 4096),
          "down_llama3_8b": (4096, 14336), "lm_head_llama3_8b": (128256, 4096)}
LLM_M = [1, 16, 32, 128, 512, 2048, 8192]


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def gemm_cases():
    cases = []
    for name in ["bf16", "fp16", "tf32", "fp32"]:
        for n in [1024, 2048, 4096, 8192, 16384]:
            cases.append((f"square{n}", name, n, n, n))
    for name in ["bf16", "fp16"]:
        for label, (n, k) in LLM_NK.items():
            for m in LLM_M:
                cases.append((label, name, m, n, k))
    return cases


def run_gemm(label, dname, m, n, k, budget_ms=200.0):
    set_tf32(dname == "tf32")
    dt = GEMM_DTYPES[dname]
    # Several input sets when they fit in L2, so repeated runs do not time the cache.
    sets = 4 if (m * k + k * n) * (2 if dt != torch.float32 else 4) < 64 << 20 else 1
    a = [torch.randn(m, k, device=DEV, dtype=dt) for _ in range(sets)]
    b = [torch.randn(k, n, device=DEV, dtype=dt) for _ in range(sets)]
    c = torch.empty(m, n, device=DEV, dtype=dt)
    it = [0]

    def fn():
        i = it[0] % sets
        it[0] += 1
        torch.matmul(a[i], b[i], out=c)
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = max(1e-6, time.perf_counter() - t0) * 1e3
    reps = int(max(5, min(50, budget_ms / one)))
    st = time_events(fn, warmup=3, reps=reps)
    flops = 2 * m * n * k
    esz = 2 if dt != torch.float32 else 4
    st.update({"label": label, "dtype": dname, "m": m, "n": n, "k": k, "flops": flops,
               "bytes_min": esz * (m * k + k * n + m * n),
               "tflops_per_s_at_median": flops / (st["median_ms"] * 1e-3) / 1e12})
    set_tf32(False)
    return st


def bandwidth_cases():
    out = []
    nbytes = 4 << 30
    x = torch.empty(nbytes // 4, device=DEV, dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    st = time_events(lambda: y.copy_(x), warmup=3, reps=20)
    st.update({"kind": "copy", "bytes_moved": 2 * nbytes, "gb_per_s_at_median": 2 * nbytes / (st["median_ms"] * 1e-3) / 1e9})
    out.append(st)
    st = time_events(lambda: torch.sum(x), warmup=3, reps=20)
    st.update({"kind": "read (sum)", "bytes_moved": nbytes, "gb_per_s_at_median": nbytes / (st["median_ms"] * 1e-3) / 1e9})
    out.append(st)
    st = time_events(lambda: y.fill_(1.0), warmup=3, reps=20)
    st.update({"kind": "write (fill)", "bytes_moved": nbytes, "gb_per_s_at_median": nbytes / (st["median_ms"] * 1e-3) / 1e9})
    out.append(st)
    z = torch.empty_like(x)
    st = time_events(lambda: torch.add(x, y, out=z), warmup=3, reps=20)
    st.update({"kind": "add (2 reads, 1 write)", "bytes_moved": 3 * nbytes,
               "gb_per_s_at_median": 3 * nbytes / (st["median_ms"] * 1e-3) / 1e9})
    out.append(st)
    del x, y, z
    torch.cuda.empty_cache()
    return out


def part_ceilings(args):
    res = {"gemm": [], "bandwidth": []}
    try:
        res["bandwidth"] = bandwidth_cases()
        for b in res["bandwidth"]:
            log(f"bandwidth {b['kind']}: {b['gb_per_s_at_median']:.0f} GB/s")
    except Exception as e:  # noqa: BLE001
        res["bandwidth_error"] = repr(e)
    for case in gemm_cases():
        try:
            r = run_gemm(*case)
            res["gemm"].append(r)
            write_json(os.path.join(args.out, "ceilings.json"), res)
            log(f"gemm {r['label']} {r['dtype']} {r['m']}x{r['n']}x{r['k']}: {r['tflops_per_s_at_median']:.1f} TFLOP/s")
        except Exception as e:  # noqa: BLE001
            res.setdefault("gemm_errors", []).append([list(case), repr(e)])
        torch.cuda.empty_cache()
    write_json(os.path.join(args.out, "ceilings.json"), res)


# ---------------------------------------------------------------------------------------------------------------
# resnet50 (torchvision, random weights), amp-bf16

def resnet_setup(batch, train, channels_last):
    import torchvision
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(weights=None).to(DEV)
    mf = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=mf)
    x = torch.randn(batch, 3, 224, 224, device=DEV).to(memory_format=mf)
    y = torch.randint(0, 1000, (batch,), device=DEV)
    if train:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=True)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
    else:
        model.eval()

        def step():
            with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                model(x)
    return step


RESNET_CASES = [("train", 64), ("train", 256), ("infer", 1), ("infer", 256)]


def part_resnet(args):
    res = []
    for layout in ["channels_last", "nchw"]:
        for mode, batch in RESNET_CASES:
            try:
                step = resnet_setup(batch, mode == "train", layout == "channels_last")
                st = time_events(step, warmup=15 if layout == "channels_last" else 8,
                                 reps=(40 if layout == "channels_last" else 20) if batch > 1 else 200)
                st.update({"model": "resnet50", "mode": mode, "batch": batch, "precision": "amp-bf16", "layout": layout,
                           "samples_per_s_at_median": batch / (st["median_ms"] * 1e-3)})
                res.append(st)
                write_json(os.path.join(args.out, "timings_resnet50.json"), res)
                log(f"resnet50 {mode} bs{batch} {layout}: {st['median_ms']:.3f} ms, {st['samples_per_s_at_median']:.0f}/s")
                if layout == "channels_last":
                    torch_profile(step, os.path.join(args.out, f"torch_resnet50_{mode}_bs{batch}"),
                                  f"resnet50_{mode}_bs{batch}")
            except Exception as e:  # noqa: BLE001
                res.append({"model": "resnet50", "mode": mode, "batch": batch, "layout": layout, "error": repr(e)})
                log("resnet error", mode, batch, layout, repr(e))
            torch.cuda.empty_cache()
    write_json(os.path.join(args.out, "timings_resnet50.json"), res)


# ---------------------------------------------------------------------------------------------------------------
# Llama-3-8B-shaped model from a config.json, random weights, bf16

LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256, "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "torch_dtype": "bfloat16",
    "bos_token_id": 128000, "eos_token_id": 128001,
}


def llama_model(layers=None, attn="sdpa"):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = dict(LLAMA3_8B)
    if layers:
        cfg["num_hidden_layers"] = layers
    config = LlamaConfig(**{k: v for k, v in cfg.items() if k not in ("architectures", "model_type", "torch_dtype")})
    try:
        config._attn_implementation = attn
    except Exception as e:  # noqa: BLE001
        log("cannot set attn implementation", attn, repr(e))
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(DEV):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(old)
    model.eval()
    w = model.model.layers[0].mlp.down_proj.weight
    log("llama", config.num_hidden_layers, "layers,", w.dtype, "down_proj std", float(w.float().std()))
    return model, config


def set_attn(model, attn):
    try:
        model.set_attn_implementation(attn)
    except Exception:  # noqa: BLE001
        model.config._attn_implementation = attn


def llama_prefill_fn(model, batch, tokens, keep_last):
    ids = torch.randint(0, LLAMA3_8B["vocab_size"], (batch, tokens), device=DEV)
    kw = {"logits_to_keep": 1} if keep_last else {}

    def fn():
        with torch.inference_mode():
            model(input_ids=ids, use_cache=True, **kw)
    return fn


def llama_decode_state(model, batch, prompt):
    ids = torch.randint(0, LLAMA3_8B["vocab_size"], (batch, prompt), device=DEV)
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
    state = {"past": out.past_key_values, "tok": torch.randint(0, LLAMA3_8B["vocab_size"], (batch, 1), device=DEV)}

    def fn():
        with torch.inference_mode():
            o = model(input_ids=state["tok"], past_key_values=state["past"], use_cache=True)
        state["past"] = o.past_key_values
    return fn, state


def part_llama(args):
    with open(os.path.join(args.out, "llama3_8b_config.json"), "w") as f:
        json.dump(LLAMA3_8B, f, indent=1)
        f.write("\n")
    res = []
    model, _ = llama_model()
    nparams = sum(p.numel() for p in model.parameters())
    log("llama params", nparams)
    for attn in ["sdpa", "eager"]:
        set_attn(model, attn)
        for tokens in [512, 2048]:
            for keep_last in [False, True]:
                try:
                    fn = llama_prefill_fn(model, 1, tokens, keep_last)
                    st = time_events(fn, warmup=3, reps=15)
                    st.update({"phase": "prefill", "batch": 1, "tokens": tokens, "attn": attn,
                               "logits": "last" if keep_last else "all", "params": nparams})
                    res.append(st)
                    write_json(os.path.join(args.out, "timings_llama3_8b.json"), res)
                    log(f"prefill {tokens} {attn} logits={'last' if keep_last else 'all'}: {st['median_ms']:.2f} ms")
                    if attn == "sdpa" and not keep_last:
                        torch_profile(fn, os.path.join(args.out, f"torch_llama3_8b_prefill{tokens}"), f"prefill{tokens}")
                except Exception as e:  # noqa: BLE001
                    res.append({"phase": "prefill", "tokens": tokens, "attn": attn, "error": repr(e)})
                    log("prefill error", repr(e))
                torch.cuda.empty_cache()
    set_attn(model, "sdpa")
    for batch in [1, 32]:
        try:
            fn, state = llama_decode_state(model, batch, 512)
            st = time_events(fn, warmup=8, reps=32)
            st.update({"phase": "decode", "batch": batch, "context_start": 512 + 8, "context_end": 512 + 8 + 32,
                       "attn": "sdpa", "params": nparams, "tokens_per_s_at_median": batch / (st["median_ms"] * 1e-3)})
            res.append(st)
            log(f"decode bs{batch}: {st['median_ms']:.2f} ms/token")
            torch_profile(fn, os.path.join(args.out, f"torch_llama3_8b_decode_bs{batch}"), f"decode_bs{batch}")
            # The same step replayed from a CUDA graph would remove the launch gaps; note the share instead:
            st2 = time_events(fn, warmup=0, reps=8, sync_each=True)
            st["sync_each_median_ms"] = st2["median_ms"]
            write_json(os.path.join(args.out, "timings_llama3_8b.json"), res)
        except Exception as e:  # noqa: BLE001
            res.append({"phase": "decode", "batch": batch, "error": repr(e)})
            log("decode error", repr(e))
        torch.cuda.empty_cache()
    write_json(os.path.join(args.out, "timings_llama3_8b.json"), res)


def part_decode(args):
    """Decode steps with attention kernels that plan nothing per step: HF eager attention (the graph ridge's
    serving model mirrors) and SDPA held to FlashAttention. (SDPA's default cuDNN backend re-plans for every new
    KV length: 2 ms of host time per layer per token on torch 2.11.)"""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    res = []
    model, _ = llama_model()
    for attn, backend in [("eager", None), ("sdpa", SDPBackend.FLASH_ATTENTION)]:
        set_attn(model, attn)
        for batch in [1, 32]:
            try:
                ctx = sdpa_kernel([backend]) if backend is not None else contextlib.nullcontext()
                with ctx:
                    fn, _ = llama_decode_state(model, batch, 512)
                    st = time_events(fn, warmup=8, reps=32)
                    st.update({"phase": "decode", "batch": batch, "context_start": 520, "context_end": 552,
                               "attn": attn if backend is None else "sdpa-flash",
                               "tokens_per_s_at_median": batch / (st["median_ms"] * 1e-3)})
                    if attn == "eager":
                        torch_profile(fn, os.path.join(args.out, f"torch_llama3_8b_decode_eager_bs{batch}"),
                                      f"decode_eager_bs{batch}")
                res.append(st)
                write_json(os.path.join(args.out, "timings_llama3_8b_decode.json"), res)
                log(f"decode {attn} {backend} bs{batch}: {st['median_ms']:.2f} ms/token")
            except Exception as e:  # noqa: BLE001
                res.append({"phase": "decode", "batch": batch, "attn": attn, "error": repr(e)})
                log("decode error", repr(e))
            torch.cuda.empty_cache()
    write_json(os.path.join(args.out, "timings_llama3_8b_decode.json"), res)


# ---------------------------------------------------------------------------------------------------------------
# Vidur-format per-operator times of one decoder layer (mlp.csv columns)

VIDUR_OPS = ["emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
             "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]
VIDUR_TOKENS = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
VIDUR_SHAPES = {  # file stem: n_head, n_kv_head, n_embd, n_expanded_embd, vocab
    "Llama-2-7b-hf": (32, 32, 4096, 11008, 32768),
    "Meta-Llama-3-8B": (32, 8, 4096, 14336, 128256),
}


def rope(q, k, cos, sin):
    def rot(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    return q * cos + rot(q) * sin, k * cos + rot(k) * sin


def vidur_row(shape, tokens, tp, dt=torch.bfloat16):
    heads, kv, h, mlp, vocab = shape
    hd = h // heads
    hq, hkv, m = heads // tp, max(1, kv // tp), mlp // tp
    emb = torch.randn(vocab // tp, h, device=DEV, dtype=dt)
    ids = torch.randint(0, vocab // tp, (tokens,), device=DEV)
    x = torch.randn(tokens, h, device=DEV, dtype=dt)
    w_norm = torch.ones(h, device=DEV, dtype=dt)
    w_qkv = torch.randn((hq + 2 * hkv) * hd, h, device=DEV, dtype=dt) * 0.02
    w_o = torch.randn(h, hq * hd, device=DEV, dtype=dt) * 0.02
    w_up = torch.randn(2 * m, h, device=DEV, dtype=dt) * 0.02
    w_down = torch.randn(h, m, device=DEV, dtype=dt) * 0.02
    q = torch.randn(tokens, hq, hd, device=DEV, dtype=dt)
    k = torch.randn(tokens, hkv, hd, device=DEV, dtype=dt)
    cos = torch.randn(tokens, 1, hd, device=DEV, dtype=dt)
    sin = torch.randn(tokens, 1, hd, device=DEV, dtype=dt)
    attn_out = torch.randn(tokens, hq * hd, device=DEV, dtype=dt)
    gate_up = torch.randn(tokens, 2 * m, device=DEV, dtype=dt)
    act = torch.randn(tokens, m, device=DEV, dtype=dt)
    F = torch.nn.functional
    fns = {
        "emb": lambda: F.embedding(ids, emb),
        "input_layernorm": lambda: F.rms_norm(x, (h,), w_norm, 1e-5),
        "attn_pre_proj": lambda: F.linear(x, w_qkv),
        "attn_rope": lambda: rope(q, k, cos, sin),
        "attn_post_proj": lambda: F.linear(attn_out, w_o),
        "post_attention_layernorm": lambda: F.rms_norm(x, (h,), w_norm, 1e-5),
        "mlp_up_proj": lambda: F.linear(x, w_up),
        "mlp_act": lambda: F.silu(gate_up[:, :m]) * gate_up[:, m:],
        "mlp_down_proj": lambda: F.linear(act, w_down),
        "add": lambda: x + x,
    }
    row = {}
    with torch.inference_mode():
        for op in VIDUR_OPS:
            row[op] = time_graph(fns[op])
    return row


def time_graph(fn, calls=10, reps=10):
    """Per-call GPU time of fn, from a CUDA graph of `calls` back-to-back calls replayed `reps` times: the host
    launches one graph, so small kernels are timed at the GPU's pace. (Events around single Python calls, as the
    2026-11-28 H200 profile was taken, put every small operator on a 15-95 us host floor.) Falls back to events
    around single calls where capture fails."""
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        st = time_events(graph.replay, warmup=2, reps=reps)
        for k in ("median_ms", "min_ms", "max_ms", "p10_ms", "p90_ms", "mean_ms", "std_ms", "wall_per_rep_ms"):
            st[k] /= calls
        st["method"] = f"cuda graph of {calls} calls"
        return st
    except Exception as e:  # noqa: BLE001
        log("graph capture failed, timing single calls:", repr(e))
        st = time_events(fn, warmup=3, reps=reps)
        st["method"] = "events around single calls"
        return st


def gpu_family():
    """'NVIDIA H200' -> 'h200', 'NVIDIA H100 80GB HBM3' -> 'h100': the prefix ridge reads a device family from."""
    words = torch.cuda.get_device_name(0).split()
    return (words[1] if words[0] == "NVIDIA" and len(words) > 1 else words[0]).lower()


def part_vidur(args):
    for stem, shape in VIDUR_SHAPES.items():
        heads, kv, h, mlp, vocab = shape
        header = []
        for op in VIDUR_OPS:
            header += [f"time_stats.{op}.{s}" for s in ["min", "max", "mean", "median", "std"]]
        header += ["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp", "num_tokens",
                   "num_tensor_parallel_workers"]
        lines = [",".join(header)]
        for tp in [1, 2, 4, 8]:
            for tokens in VIDUR_TOKENS:
                try:
                    row = vidur_row(shape, tokens, tp)
                except Exception as e:  # noqa: BLE001
                    log("vidur error", stem, tokens, tp, repr(e))
                    continue
                cells = []
                for op in VIDUR_OPS:
                    st = row[op]
                    cells += [repr(st["min_ms"]), repr(st["max_ms"]), repr(st["mean_ms"]), repr(st["median_ms"]),
                              repr(st["std_ms"])]
                cells += [str(heads), str(kv), str(h), str(mlp), str(vocab), "True", str(tokens), str(tp)]
                lines.append(",".join(cells))
            torch.cuda.empty_cache()
            with open(os.path.join(args.out, f"{gpu_family()}_{stem}_{args.tag}mlp.csv"), "w") as f:
                f.write("\n".join(lines) + "\n")
            log("vidur", stem, "tp", tp, "done")


# ---------------------------------------------------------------------------------------------------------------
# workload: one step inside cudaProfilerStart/Stop, for ncu --profile-from-start off

NCU_GEMMS = [("square4096", "bf16", 4096, 4096, 4096), ("square4096", "fp16", 4096, 4096, 4096),
             ("square4096", "tf32", 4096, 4096, 4096), ("square4096", "fp32", 4096, 4096, 4096),
             ("square1024", "bf16", 1024, 1024, 1024), ("gate_up_llama3_8b", "bf16", 512, 28672, 4096),
             ("down_llama3_8b", "bf16", 1, 4096, 14336), ("down_llama3_8b", "bf16", 32, 4096, 14336)]


def part_workload(args):
    import torch.cuda.nvtx as nvtx
    what = args.what
    if what == "gemm":
        fns = []
        for label, dname, m, n, k in NCU_GEMMS:
            dt = GEMM_DTYPES[dname]
            a = torch.randn(m, k, device=DEV, dtype=dt)
            b = torch.randn(k, n, device=DEV, dtype=dt)

            def fn(a=a, b=b, tf32=(dname == "tf32")):
                set_tf32(tf32)
                torch.matmul(a, b)
            fns.append((f"{label}_{dname}_{m}x{n}x{k}", fn))
        for _, fn in fns:
            fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for name, fn in fns:
            nvtx.range_push(name)
            fn()
            torch.cuda.synchronize()
            nvtx.range_pop()
        torch.cuda.profiler.stop()
        return
    if what.startswith("resnet"):
        step = resnet_setup(args.batch, what == "resnet-train", True)
    elif what == "llama-prefill":
        model, _ = llama_model(layers=args.layers)
        step = llama_prefill_fn(model, args.batch, args.tokens, False)
    elif what == "llama-decode":
        model, _ = llama_model(layers=args.layers)
        step, _ = llama_decode_state(model, args.batch, args.tokens)
    else:
        raise SystemExit(f"workload: unknown --what {what}")
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    nvtx.range_push(what)
    step()
    torch.cuda.synchronize()
    nvtx.range_pop()
    torch.cuda.profiler.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["ceilings", "resnet", "llama", "decode", "vidur", "workload"])
    p.add_argument("--out", required=True)
    p.add_argument("--what", default="")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--layers", type=int, default=0)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--tag", default="", help="vidur: inserted before mlp.csv in the file names (e.g. graph_)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    {"ceilings": part_ceilings, "resnet": part_resnet, "llama": part_llama, "decode": part_decode, "vidur": part_vidur,
     "workload": part_workload}[args.part](args)


if __name__ == "__main__":
    main()
