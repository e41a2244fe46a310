#!/usr/bin/env bash
# Side-by-side: `ridge machine` against likwid-bench (Debian package likwid) on this machine.
# Peak fp32/fp64 FMA GFLOP/s (1 thread and all threads, working set in L1) and stream triad GB/s (L1 and DRAM,
# 1 thread and all threads, the same working sets ridge used). Prints both numbers, the ratio and whether
# ridge is within 5% of likwid-bench. A benchmark, not a test: it never fails on the numbers.
#
# usage: bench/likwid_compare.sh [path/to/ridge]     (default: build/ridge)
set -euo pipefail
RIDGE=${1:-$(dirname "$0")/../build/ridge}
command -v likwid-bench >/dev/null || { echo "likwid-bench not installed (scripts/install-deps.sh --with-test-deps)"; exit 0; }
command -v python3 >/dev/null || { echo "python3 needed to read JSON"; exit 0; }
[ -x "$RIDGE" ] || { echo "ridge binary not found at $RIDGE"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
threads=$(nproc)

echo "== ridge machine --refresh (fresh profile in $tmp)" >&2
start=$(date +%s.%N)
"$RIDGE" machine --refresh --cache "$tmp/machine.json" --format table --json "$tmp/ridge.json" >"$tmp/ridge.txt" 2>"$tmp/ridge.err"
end=$(date +%s.%N)
ridge_s=$(python3 -c "print(f'{$end - $start:.1f}')")

if grep -qw avx512f /proc/cpuinfo; then
  sp=peakflops_sp_avx512_fma; dp=peakflops_avx512_fma; triad=stream_avx512
else
  sp=peakflops_sp_avx_fma; dp=peakflops_avx_fma; triad=stream_avx
fi

# likwid-bench -t TEST -W N:SIZE:THREADS KEY: the value on the line starting with KEY ("MFlops/s:", "MByte/s:").
lb() { likwid-bench -t "$1" -W "N:$2:$3" 2>/dev/null | awk -v k="$4" '$1 == k {print $2}'; }

# DRAM working set per thread that ridge used (largest one-thread and all-thread sweep points of the triad).
read -r dram_one dram_all < <(python3 - "$tmp/ridge.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
def biggest(threads):
    ws = [s["working_set_bytes"] for s in p["sweep"] if s["kernel"] == "triad" and s["threads"] == threads]
    return max(ws) if ws else 0
print(biggest(1) // 1024, biggest(p["threads"]) * p["threads"] // 1024)
PY
)

echo "== likwid-bench ($sp, $dp, $triad)" >&2
{
  echo "fp32_peak_1t $(lb $sp 24kB 1 MFlops/s:)"
  echo "fp32_peak_all $(lb $sp $((24 * threads))kB $threads MFlops/s:)"
  echo "fp64_peak_1t $(lb $dp 24kB 1 MFlops/s:)"
  echo "fp64_peak_all $(lb $dp $((24 * threads))kB $threads MFlops/s:)"
  echo "l1_triad_1t $(lb $triad 15kB 1 MByte/s:)"
  echo "l1_triad_all $(lb $triad $((15 * threads))kB $threads MByte/s:)"
  echo "dram_triad_1t $(lb $triad ${dram_one}kB 1 MByte/s:)"
  echo "dram_triad_all $(lb $triad ${dram_all}kB $threads MByte/s:)"
} >"$tmp/likwid.txt"

python3 - "$tmp/ridge.json" "$tmp/likwid.txt" "$ridge_s" "$sp" "$dp" "$triad" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
lik = {}
for line in open(sys.argv[2]):
    parts = line.split()
    lik[parts[0]] = float(parts[1]) / 1000 if len(parts) > 1 else None  # M -> G
levels = {l["level"]: l for l in doc["profile"]["levels"]}
rows = [
    ("fp32 peak GFLOP/s, 1 thread", doc["peak_gflops_one_thread"]["fp32"], "fp32_peak_1t", sys.argv[4]),
    ("fp32 peak GFLOP/s, all threads", doc["peak_gflops"]["fp32"], "fp32_peak_all", sys.argv[4]),
    ("fp64 peak GFLOP/s, 1 thread", doc["peak_gflops_one_thread"]["fp64"], "fp64_peak_1t", sys.argv[5]),
    ("fp64 peak GFLOP/s, all threads", doc["peak_gflops"]["fp64"], "fp64_peak_all", sys.argv[5]),
    ("L1 triad GB/s, 1 thread", levels.get("L1", {}).get("triad_gbs_one_thread"), "l1_triad_1t", sys.argv[6]),
    ("L1 triad GB/s, all threads", levels.get("L1", {}).get("triad_gbs_all_threads"), "l1_triad_all", sys.argv[6]),
    ("DRAM triad GB/s, 1 thread", doc["bandwidth_gbs_one_thread"]["DRAM"], "dram_triad_1t", sys.argv[6]),
    ("DRAM triad GB/s, all threads", doc["bandwidth_gbs"]["DRAM"], "dram_triad_all", sys.argv[6]),
]
print(f"ridge machine: whole run {sys.argv[3]} s (goal <= 30 s); cache sizes from {doc['cpu']['cache_source']}")
for note in doc["profile"]["notes"]:
    if note.startswith("DRAM measured") or note.startswith("last-level cache size unknown"):
        print(f"ridge: {note}")
print(f"{'metric':34} {'ridge':>10} {'likwid-bench':>13} {'ratio':>7}  within 5%  (likwid test)")
for name, ridge, key, test in rows:
    l = lik.get(key)
    if ridge is None or l is None:
        print(f"{name:34} {str(ridge):>10} {str(l):>13} {'-':>7}  -          ({test})")
        continue
    ratio = ridge / l
    print(f"{name:34} {ridge:10.1f} {l:13.1f} {ratio:7.3f}  {'yes' if abs(ratio - 1) <= 0.05 else 'NO':9}  ({test})")
PY
