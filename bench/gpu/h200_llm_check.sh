#!/usr/bin/env bash
# ridge serve against our own H200 runs of a Llama-3-8B-shaped model (tests/data/gpu/h200, PROVENANCE.md there):
# prefill of 512 and 2,048 tokens at batch 1 and decode steps at batch 1 and 32 (prompt 512), predicted before
# calibration (--calibration none: the roofline upper bound) and after (the shipped h200-bf16.json, or FILE), against
#   - the GPU kernel time of the profiled step: the kernels of torch.profiler's key_averages table summed (rows
#     with no CPU time of their own; equal to the table's "Self CUDA time total" and, where a Chrome trace was
#     kept, to the trace's kernels, memcpys and memsets), and
#   - the wall-clock median of the timed steps (timings_llama3_8b*.json: CUDA events around each step).
# ridge's eager attention is compared with HF's eager runs, its fused attention with SDPA's (cuDNN) kernels. The
# decode steps' wall-clock is host-bound (HF eager: 22 ms per token for 7 ms of kernels; SDPA's cuDNN backend
# re-plans per KV length), so for decode only the kernel time is a fair target of a GPU-time model. Then, per op
# class, where the time goes (measured: each aten op's own CUDA time in the table; ridge: its per-op times).
# Prints markdown tables; fails on nothing. Reads only files in the repository: no GPU needed.
# Usage: bench/gpu/h200_llm_check.sh [RIDGE binary, default build/ridge] [calibration FILE, default builtin]
set -euo pipefail
cd "$(dirname "$0")/../.."
ridge=${1:-build/ridge}
after=${2:-builtin}
data=tests/data/gpu/h200
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# case: name, ridge attention, batch, prompt, generate (the profiled step), profile table, wall-clock selector
# (file:attn:phase:batch:tokens), and the timed steps' ridge prompt/generate for the wall-clock figure.
cases=(
  "prefill-512|fused|1|512|2|torch_llama3_8b_prefill512_table.txt|timings_llama3_8b.json:sdpa:prefill:1:512|512|2"
  "prefill-2048|fused|1|2048|2|torch_llama3_8b_prefill2048_table.txt|timings_llama3_8b.json:sdpa:prefill:1:2048|2048|2"
  "prefill-512|eager|1|512|2|-|timings_llama3_8b.json:eager:prefill:1:512|512|2"
  "prefill-2048|eager|1|2048|2|-|timings_llama3_8b.json:eager:prefill:1:2048|2048|2"
  "decode-bs1|eager|1|552|2|torch_llama3_8b_decode_eager_bs1_table.txt|timings_llama3_8b_decode.json:eager:decode:1:0|520|33"
  "decode-bs32|eager|32|552|2|torch_llama3_8b_decode_eager_bs32_table.txt|timings_llama3_8b_decode.json:eager:decode:32:0|520|33"
  "decode-bs1|fused|1|552|2|torch_llama3_8b_decode_bs1_table.txt|timings_llama3_8b.json:sdpa:decode:1:0|520|33"
  "decode-bs32|fused|32|552|2|torch_llama3_8b_decode_bs32_table.txt|timings_llama3_8b.json:sdpa:decode:32:0|520|33"
)
serve() {  # serve OUT CALIBRATION ATTENTION BATCH PROMPT GENERATE
  "$ridge" serve "$data/llama3_8b_config.json" --device h200 --compute bf16 --weights bf16 --kv bf16 \
    --calibration "$2" --attention "$3" --batch "$4" --prompt "$5" --generate "$6" --format json >"$1"
}
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r name att batch prompt generate table wall wprompt wgenerate <<<"$c"
  for cal in none "$after"; do
    tag=$([ "$cal" = none ] && echo before || echo after)
    serve "$tmp/$i.$tag.step.json" "$cal" "$att" "$batch" "$prompt" "$generate"
    serve "$tmp/$i.$tag.wall.json" "$cal" "$att" "$batch" "$wprompt" "$wgenerate"
  done
  echo "$name|$att|$table|$wall" >"$tmp/$i.case"
  i=$((i + 1))
done
/usr/bin/python3 - "$tmp" "$data" "$i" "$after" <<'PY'
import collections, json, os, re, sys
tmp, data, n, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def ms(s):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", s)
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]

def table_rows(path):
    lines = open(path).read().splitlines()
    header = next(l for l in lines if "Self CUDA" in l and "Name" in l)
    cols = re.split(r"\s{2,}", header.strip())
    out = []
    for l in lines:
        f = re.split(r"\s{2,}", l.strip())
        if len(f) < len(cols) or f[0] == "Name" or set(l.strip()) <= {"-", " "}:
            continue
        r = dict(zip(cols, f[len(f) - len(cols):]))
        r["Name"] = " ".join(f[:len(f) - len(cols) + 1])
        out.append(r)
    return out

def aten_class(name):  # an aten op's own CUDA time, by what it does
    n = name[len("aten::"):]
    if n in ("mm", "addmm", "linear"): return "projections"
    if n in ("bmm", "baddbmm"): return "attention matmuls"
    if "attention" in n: return "fused attention"
    if "softmax" in n: return "softmax"
    if n in ("mean", "sum"): return "reduction"
    if n in ("copy_", "cat", "clone", "_to_copy", "index_copy_"): return "copies"
    if n in ("embedding", "index_select", "gather"): return "embedding"
    return "elementwise"

def measured(table):
    rows = table_rows(os.path.join(data, table))
    title = rows[0]["Name"]  # the profiled region's annotation
    kernels = sum(ms(r["Self CUDA"]) for r in rows if r["Name"] != title and ms(r["Self CPU"]) == 0 and ms(r["CPU total"]) == 0)
    by = collections.defaultdict(float)
    for r in rows:
        if r["Name"].startswith("aten::") and ms(r["Self CUDA"]) > 0:
            by[aten_class(r["Name"])] += ms(r["Self CUDA"])
    trace = os.path.join(data, table.replace("_table.txt", "_trace.json"))
    if os.path.exists(trace):
        ev = json.load(open(trace))["traceEvents"]
        t = sum(e["dur"] for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")) / 1e3
        assert abs(t - kernels) < 0.01 * kernels, (table, t, kernels)
    return kernels, by

def wall(sel):
    f, attn, phase, batch, tokens = sel.split(":")
    for r in json.load(open(os.path.join(data, f))):
        if r.get("attn") == attn and r.get("phase") == phase and r.get("batch") == int(batch) and \
           (phase == "decode" or (r.get("tokens") == int(tokens) and r.get("logits") == "all")):
            return r["median_ms"]
    raise SystemExit("no wall-clock timing " + sel)

def ridge_class(name, fused):
    leaf = name.split(".")[-1]
    if leaf.endswith("_proj") or leaf == "lm_head": return "projections"
    core = leaf.startswith("matmul") or leaf in ("mul", "add_mask") and ".self_attn." in name or leaf.startswith("softmax")
    if fused and core: return "fused attention"
    if leaf.startswith(("cat_key_cache", "cat_value_cache", "repeat_kv", "to_float32", "to_input_dtype",
                        "cat_rotate_half", "cat_pass")):
        return "copies"  # HF eager's copies, ops of ridge's eager serving graph (docs/llm.md)
    if leaf.startswith("matmul"): return "attention matmuls"
    if leaf.startswith("softmax"): return "softmax"
    if leaf.startswith("mean"): return "reduction"
    if "embed" in leaf: return "embedding"
    return "elementwise"

def predicted(path, phase, fused):
    j = json.load(open(path))
    steps = 1 if phase == "prefill" else j["inputs"]["generate"] - 1
    by = collections.defaultdict(float)
    for o in j["ops"]:
        if o["phase"] == phase:
            by[ridge_class(o["name"], fused)] += 1e3 * o["time_s"] / steps
    total = 1e3 * (j["prefill_time_s"] if phase == "prefill" else j["decode_time_per_token_s"])
    return total, by, j["ttft_s_label"]

def err(p, m):
    return "%+.1f %%" % (100 * (p - m) / m)

label = None
rows, classes = [], []
for i in range(n):
    name, att, table, wsel = open(os.path.join(tmp, "%d.case" % i)).read().strip().split("|")
    phase = name.split("-")[0]
    fused = att == "fused"
    w = wall(wsel)
    b_step, b_by, _ = predicted(os.path.join(tmp, "%d.before.step.json" % i), phase, fused)
    a_step, a_by, label = predicted(os.path.join(tmp, "%d.after.step.json" % i), phase, fused)
    b_wall = predicted(os.path.join(tmp, "%d.before.wall.json" % i), phase, fused)[0]
    a_wall = predicted(os.path.join(tmp, "%d.after.wall.json" % i), phase, fused)[0]
    measured_by = None
    if table != "-":
        k, measured_by = measured(table)
        rows.append((name, att, "kernels (%s)" % table.replace("torch_llama3_8b_", "").replace("_table.txt", ""), k, b_step, a_step))
    wattn = wsel.split(":")[1]
    rows.append((name, att, "wall-clock median (%s)" % wattn, w, b_wall, a_wall))
    if measured_by is not None:
        classes.append((name, att, k, measured_by, b_by, a_by))

print("ridge serve tests/data/gpu/h200/llama3_8b_config.json --device h200 --compute bf16 --weights bf16 --kv bf16; "
      "before: --calibration none, after: %s (%s)" % (after, label))
print()
print("| step | ridge --attention | measured | measured [ms] | before [ms] | error | after [ms] | error |")
print("|---|---|---|---|---|---|---|---|")
for name, att, what, m, b, a in rows:
    print("| %s | %s | %s | %.2f | %.2f | %s | %.2f | %s |" % (name, att, what, m, b, err(b, m), a, err(a, m)))
order = ["projections", "attention matmuls", "fused attention", "softmax", "reduction", "elementwise", "copies", "embedding"]
for name, att, k, m_by, b_by, a_by in classes:
    print()
    print("%s, ridge --attention %s vs the profiled step's kernels (%.2f ms):" % (name, att, k))
    print()
    print("| op class | measured [ms] | before [ms] | after [ms] | after error |")
    print("|---|---|---|---|---|")
    for c in order:
        m, b, a = m_by.get(c, 0.0), b_by.get(c, 0.0), a_by.get(c, 0.0)
        if max(m, b, a) < 0.01:  # e.g. the rotary embedding's 3 us inv_freq bmm
            continue
        print("| %s | %.3f | %.3f | %.3f | %s |" % (c, m, b, a, err(a, m) if m > 0 else "not measured"))
PY
