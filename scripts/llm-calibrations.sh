#!/usr/bin/env bash
# Fits the shipped LLM operator calibrations (data/calibrations/llm/{a100,h100}-fp16.json) on Vidur's measured
# per-operator times of Llama-2-7B's layer (../shared/reference/measured/vidur, PROVENANCE.md there), and
# data/calibrations/llm/h200-bf16.json on our own H200 measurements (tests/data/gpu/h200, PROVENANCE.md there), then
# prints the hold-out checks quoted in docs/llm.md: each fit redone without some measurements and scored on them.
# Usage: [VIDUR_GIT=path/to/vidur/.git] scripts/llm-calibrations.sh [RIDGE binary, default build/ridge]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge=${1:-build/ridge}
vidur=${VIDUR_DIR:-../shared/reference/measured/vidur}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pair in a100:a100-sxm4-80gb h100:h100-sxm; do
  family=${pair%%:*} device=${pair#*:}
  csv=$vidur/${family}_Llama-2-7b-hf_mlp.csv
  "$ridge" calibrate "$csv" --device "$device" --precision fp16 --output "data/calibrations/llm/$family-fp16.json" \
    --format json >"$tmp/fit.json"
  for rule in "" "tp=8" "tokens>1024" "odd-tokens"; do
    "$ridge" calibrate "$csv" --device "$device" --precision fp16 ${rule:+--hold-out "$rule"} \
      --output "$tmp/cal.json" --format json >"$tmp/out.json"
    /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print("%-5s %-12s median |error| %5.1f %%   p90 %5.1f %%" % (sys.argv[2], sys.argv[3] or "in-sample",
      100 * j["median_abs_error"], 100 * j["p90_abs_error"]))' \
      "$tmp/out.json" "$family" "$rule"
  done
done

# H200 (bf16): our own per-operator times of Llama-3-8B's layer (tests/data/gpu/h200/h200_Meta-Llama-3-8B_mlp.csv,
# bench/gpu/collect.py's part_vidur). They are CUDA-event times around single PyTorch calls, so an operator whose
# kernels take less time than the host takes to launch them is timed at the host's pace: every operator has a floor
# (15-30 us; the attention rope's ten kernels about 95 us) that its smallest shapes all sit on, while the same kernels
# take 1-7 us in the torch.profiler traces (docs/llm.md, "Measured on an H200"). The fit uses the measurements at
# least twice their operator's floor (its smallest median time in the file), which the GPU, not the host, paced:
# each operator's are written to build/h200-llm/ as a Vidur-format file of its own (operators with 3 or more such).
# What remains is GEMMs (79 of 304) and the SiLU x up kernels (12 of 76); the residual add, the norms and the
# embedding lookup never reach 2x their floor and the rope twice, so their classes and the fallback are copied from
# h100-fp16.json (the same GH100 chip; Vidur timed those kernels with CUPTI) and the file says so ("borrowed").
# The Llama-2-7B file is not fitted: its first five rows (TP 1, 1-16 tokens) were timed while the host was still
# warming up (every operator's floor 1.5x higher than in the rest of both files); it is the unseen-model check.
h200_dir=tests/data/gpu/h200
h200_csv=$h200_dir/h200_Meta-Llama-3-8B_mlp.csv
mkdir -p build/h200-llm
rm -f build/h200-llm/*_mlp.csv
/usr/bin/python3 - "$h200_csv" build/h200-llm <<'PY'
import csv, os, sys
src, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(src, newline="")))
shape = ["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp", "num_tokens",
         "num_tensor_parallel_workers"]
stem = os.path.basename(src)[: -len("_mlp.csv")]
for op in [c.split(".")[1] for c in rows[0] if c.startswith("time_stats.") and c.endswith(".median")]:
    floor = min(float(r["time_stats.%s.median" % op]) for r in rows)
    keep = [r for r in rows if float(r["time_stats.%s.median" % op]) >= 2 * floor]
    print("h200  %-26s floor %6.1f us, %2d of %d measurements at >= 2x it" % (op, 1e3 * floor, len(keep), len(rows)))
    if len(keep) < 3:  # ridge calibrate's --min-samples: fewer would only feed the fallback
        continue
    cols = ["time_stats.%s.%s" % (op, s) for s in ("min", "max", "mean", "median", "std")] + shape
    with open(os.path.join(out, "%s_%s_mlp.csv" % (stem, op)), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        w.writerows([[r[c] for c in cols] for r in keep])
PY
h200_fit=(build/h200-llm/*_mlp.csv)
"$ridge" calibrate "${h200_fit[@]}" --device h200-sxm --precision bf16 --output data/calibrations/llm/h200-bf16.json \
  --format json >"$tmp/fit.json"
/usr/bin/python3 - data/calibrations/llm/h200-bf16.json data/calibrations/llm/h100-fp16.json <<'PY'
import json, sys
path, donor_path = sys.argv[1], sys.argv[2]
cal, donor = json.load(open(path)), json.load(open(donor_path))
borrowed = sorted(c for c in donor["classes"] if c not in cal["classes"])
for c in borrowed:
    cal["classes"][c] = donor["classes"][c]
cal["fallback"] = donor["fallback"]
cal["borrowed"] = {
    "from": donor_path, "classes": borrowed, "fallback": True,
    "why": "the H200 operator times are CUDA-event times of single PyTorch calls: the norms, the residual add, the "
           "embedding lookup and the rope never exceed twice their host-bound floor, so the H200 file cannot time "
           "those kernels; the classes fitted here are those with at least 3 measurements at >= 2x their floor "
           "(docs/llm.md, Measured on an H200)"}
cal["source"] = cal["source"] + ["tests/data/gpu/h200/h200_Meta-Llama-3-8B_mlp.csv (split by scripts/llm-calibrations.sh)"]
with open(path, "w") as f:
    json.dump(cal, f, indent=2, sort_keys=True)
    f.write("\n")
print("h200  fitted: %s; borrowed from %s: %s and the fallback" % (", ".join(sorted(set(cal["classes"]) - set(borrowed))), donor_path, ", ".join(borrowed)))
PY
for rule in "" "tp=8" "tokens>1024" "odd-tokens"; do
  "$ridge" calibrate "${h200_fit[@]}" --device h200-sxm --precision bf16 ${rule:+--hold-out "$rule"} \
    --output "$tmp/cal.json" --format json >"$tmp/out.json"
  /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
by = {r["op"]: r for r in j.get("held_out_by_op") or j["by_op"]}
print("%-5s %-12s median |error| %5.1f %%   p90 %5.1f %%   (%s)" % ("h200", sys.argv[2] or "in-sample",
      100 * j["median_abs_error"], 100 * j["p90_abs_error"],
      ", ".join("%s %.1f %% (%d)" % (k, v["median_abs_error"], v["count"]) for k, v in sorted(by.items()))))' \
    "$tmp/out.json" "$rule"
done
# The shipped file on every measurement of both H200 files, the host-bound ones included, and on the GPU-bound
# measurements of the Llama-2-7B file (a model the fit never saw).
for csv in "$h200_csv" "$h200_dir/h200_Llama-2-7b-hf_mlp.csv"; do  # (Llama-2-7B: also without its five warm-up rows)
  "$ridge" calibrate "$csv" --evaluate --calibration data/calibrations/llm/h200-bf16.json --format json >"$tmp/out.json"
  /usr/bin/python3 -c 'import json, sys, statistics
j = json.load(open(sys.argv[1]))  # ops[].error is in percent
floor = {}
for o in j["ops"]:
    floor[o["op"]] = min(floor.get(o["op"], 1e9), o["measured_s"])
def line(ops):
    e = sorted(abs(o["error"]) for o in ops)
    q = 0.9 * (len(e) - 1)
    p90 = e[int(q)] + (q - int(q)) * (e[min(int(q) + 1, len(e) - 1)] - e[int(q)])
    return "%d: median |error| %.1f %%, p90 %.1f %%" % (len(e), statistics.median(e), p90)
gpu = [o for o in j["ops"] if o["measured_s"] >= 2 * floor[o["op"]]]
print("h200  evaluated on %s: all %s; GPU-bound (>= 2x floor) %s" % (sys.argv[2].split("/")[-1], line(j["ops"]), line(gpu)))
for c in sorted(set(o["op_class"] for o in j["ops"])):
    a, g = [o for o in j["ops"] if o["op_class"] == c], [o for o in gpu if o["op_class"] == c]
    print("h200      %-16s all %s; GPU-bound %s" % (c, line(a), line(g) if g else "none"))
if "Llama-2" in sys.argv[2]:  # lines 2-6: TP 1 at 1-16 tokens, timed while the host warmed up
    print("h200      GPU-bound without lines 2-6 (warm-up): %s; gemm %s" % (line([o for o in gpu if o["line"] > 6]),
          line([o for o in gpu if o["line"] > 6 and o["op_class"] == "gemm"])))' "$tmp/out.json" "$csv"
done

# A40: Vidur profiled it too (microsoft/vidur data/profiling/compute/a40/...), but its files are not in ../shared.
# With VIDUR_GIT (the git directory of a clone of microsoft/vidur; nothing is downloaded) the A40 LLM fit and the
# CNN-scope fit are made from it, the profile extracted to build/vidur/ first. Without it they are left as shipped.
if [ -n "${VIDUR_GIT:-}" ]; then
  mkdir -p build/vidur
  csv=build/vidur/a40_Llama-2-7b-hf_mlp.csv
  git --git-dir="$VIDUR_GIT" show "${VIDUR_REF:-7d47513363ec447a741ac5e47241580b47724fbf}:data/profiling/compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv" > "$csv"
  "$ridge" calibrate "$csv" --device a40 --precision fp16 --output data/calibrations/llm/a40-fp16.json --format json >"$tmp/fit.json"
  "$ridge" calibrate "$csv" --device a40 --precision fp16 --scope cnn --output data/calibrations/a40-fp16-vidur.json \
    --format json >"$tmp/fit.json"
  for rule in "" "tp=8" "tokens>1024" "odd-tokens"; do
    "$ridge" calibrate "$csv" --device a40 --precision fp16 ${rule:+--hold-out "$rule"} --output "$tmp/cal.json" \
      --format json >"$tmp/out.json"
    /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print("%-5s %-12s median |error| %5.1f %%   p90 %5.1f %%" % ("a40", sys.argv[2] or "in-sample",
      100 * j["median_abs_error"], 100 * j["p90_abs_error"]))' "$tmp/out.json" "$rule"
  done
else
  echo "llm-calibrations.sh: VIDUR_GIT not set: the A40 fits (from a clone of microsoft/vidur) are left as shipped" >&2
fi
