#!/usr/bin/env bash
# Issue 14 goal: published PyTorch training throughputs (bench/published_throughput.tsv, each with its source)
# predicted by `ridge predict MODEL --device D --batch B --train --precision P [--devices-count N]`; goal within
# 15 %. The published figures are the check, never fitted to. Prints one row per figure: ridge's samples/s,
# its signed error ((ridge - published) / published), whether the number is calibrated or an upper bound, and the
# median |error| of the calibrated rows and of all rows. Deterministic (no timing).
#
# usage: bench/published_throughput.sh [path/to/ridge] [--md]   (default: build/ridge; --md prints a markdown table)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
RIDGE=${1:-$root/build/ridge}
[ -x "$RIDGE" ] || { echo "ridge binary not found at $RIDGE"; exit 1; }
MD=${2:-}
/usr/bin/python3 - "$RIDGE" "$root/bench/published_throughput.tsv" "$MD" <<'PY'
import json, statistics, subprocess, sys
ridge, table, md = sys.argv[1], sys.argv[2], sys.argv[3] == "--md"
rows = []
for line in open(table):
    if line.startswith("#") or not line.strip():
        continue
    model, device, precision, batch, gpus, published, source, url = line.rstrip("\n").split("\t")
    cmd = [ridge, "predict", model, "--device", device, "--batch", batch, "--train", "--precision", precision,
           "--format", "json"]
    if int(gpus) > 1:
        cmd += ["--devices-count", gpus]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{' '.join(cmd[1:])}: {out.stderr.strip()}", file=sys.stderr)
        continue
    j = json.loads(out.stdout)
    dp = j.get("data_parallel") or {}
    sps = dp.get("samples_per_s", j["samples_per_s"])
    err = (sps - float(published)) / float(published)
    kind = "calibrated" if j.get("calibrated") else "upper bound"
    rows.append((model, device, precision, batch, gpus, float(published), sps, err, kind, source, url))
if md:
    print("| model | device | precision | batch/GPU | GPUs | published [img/s] | ridge [img/s] | error | ridge's number | source |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m, d, p, b, g, pub, sps, err, kind, src, url in rows:
        print(f"| {m} | {d} | {p} | {b} | {g} | {pub:,.0f} | {sps:,.0f} | {100 * err:+.1f} % | {kind} | [{src}]({url}) |")
else:
    print(f"{'model':9s} {'device':15s} {'precision':9s} {'batch':>5s} {'GPUs':>4s} {'published':>10s} {'ridge':>10s} {'error':>8s}  kind         source")
    for m, d, p, b, g, pub, sps, err, kind, src, url in rows:
        print(f"{m:9s} {d:15s} {p:9s} {b:>5s} {g:>4s} {pub:10,.0f} {sps:10,.0f} {100 * err:+7.1f}%  {kind:12s} {src}")
def med(sel):
    v = [abs(r[7]) for r in rows if sel(r)]
    return f"{100 * statistics.median(v):.1f} % over {len(v)}" if v else "none"
within = sum(1 for r in rows if abs(r[7]) <= 0.15)
print(f"\nmedian |error|: all {med(lambda r: True)}; calibrated {med(lambda r: r[8] == 'calibrated')}; "
      f"upper bounds {med(lambda r: r[8] != 'calibrated')}")
print(f"goal (within 15 %): {within} of {len(rows)} figures")
PY
