#!/usr/bin/env bash
# Side-by-side: `ridge machine` against likwid-bench (Debian package likwid) on this machine.
# Peak fp32/fp64 FMA GFLOP/s (1 thread and all threads, working set in L1) and stream triad GB/s (L1 and DRAM,
# 1 thread and all threads). Like with like: the triad rows use likwid's stream_avx512_fma (one FMA per vector as
# ridge's triad; ordinary stores, 24 bytes counted per element, write-allocate not counted: ridge's triad does the
# same). DRAM: on exactly the bytes of ridge's DRAM point. L1: each tool's best over the sizes of ridge's L1
# points (at the smallest, ~100 cycles per pass, likwid's per-pass call weighs more). likwid's stream_mem_avx512 (non-temporal
# stores) is printed beside the DRAM rows for reference, never compared. Prints both numbers, the ratio and
# whether ridge is within 5% of likwid-bench. A benchmark, not a test: it never fails on the numbers.
# DRAM bandwidth of a shared VM drifts by tens of percent within minutes, so likwid's DRAM triads run both right
# before and right after each `ridge machine` run (on the sizes of the previous round, or of a first ridge run)
# and the mean of the two is compared: drift between the two tools' runs cancels to first order.
#
# usage: bench/likwid_compare.sh [path/to/ridge]     (default: build/ridge)
#   ROUNDS=N   alternate N rounds of (ridge machine, likwid-bench) and compare medians (default 1; use 3-5 on a
#              busy machine)
set -euo pipefail
RIDGE=${1:-$(dirname "$0")/../build/ridge}
ROUNDS=${ROUNDS:-1}
command -v likwid-bench >/dev/null || { echo "likwid-bench not installed (scripts/install-deps.sh --with-test-deps)"; exit 0; }
command -v python3 >/dev/null || { echo "python3 needed to read JSON"; exit 0; }
[ -x "$RIDGE" ] || { echo "ridge binary not found at $RIDGE"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
threads=$(nproc)

if grep -qw avx512f /proc/cpuinfo; then
  sp=peakflops_sp_avx512_fma; dp=peakflops_avx512_fma; triad=stream_avx512_fma; nt=stream_mem_avx512
else
  sp=peakflops_sp_avx_fma; dp=peakflops_avx_fma; triad=stream_avx_fma; nt=stream_mem_avx
fi

# likwid-bench -t TEST -W N:SIZE:THREADS KEY: the value on the line starting with KEY ("MFlops/s:", "MByte/s:").
lb() { likwid-bench -t "$1" -W "N:$2:$3" 2>/dev/null | awk -v k="$4" '$1 == k {print $2}'; }
# A size for -W: bytes, or 1000-byte kB from 2^31 bytes on (likwid cannot read larger byte counts).
sz() { if [ "$1" -lt 2147483648 ]; then echo "${1}B"; else echo "$(($1 / 1000))kB"; fi; }

# Total bytes (all threads) of the sweep points in ridge's profile $1: every L1 triad point, 1 thread and all
# threads (each tool's L1 figure is its best over these sizes; sizes joined by commas), then the DRAM point, 1
# thread and all threads.
sweep_sizes() {
  python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
def points(level, threads):
    return [s for s in p["sweep"] if s["kernel"] == "triad" and s["level"] == level and s["threads"] == threads]
def l1(threads):
    return ",".join(str(s["working_set_bytes"] * threads) for s in points("L1", threads)) or "0"
def dram(threads):
    pts = points("DRAM", threads)
    return max(s["working_set_bytes"] for s in pts) * threads if pts else 0
t = p["threads"]
print(l1(1), l1(t), dram(1), dram(t))
PY
}
# A first ridge run gives the DRAM sizes likwid runs on before round 1's ridge run.
"$RIDGE" machine --cache "$tmp/machine0.json" --format table --json "$tmp/ridge0.json" >/dev/null 2>&1
read -r _ _ pre_one pre_all < <(sweep_sizes "$tmp/ridge0.json")

for round in $(seq "$ROUNDS"); do
  echo "== round $round/$ROUNDS: likwid-bench DRAM triads before ridge" >&2
  pre1=$(lb $triad $(sz $pre_one) 1 MByte/s:)
  pre_t=$(lb $triad $(sz $pre_all) $threads MByte/s:)
  echo "== round $round/$ROUNDS: ridge machine --refresh" >&2
  start=$(date +%s.%N)
  "$RIDGE" machine --refresh --cache "$tmp/machine.json" --format table --json "$tmp/ridge$round.json" \
    >"$tmp/ridge.txt" 2>"$tmp/ridge.err"
  end=$(date +%s.%N)
  python3 -c "print($end - $start)" >"$tmp/ridge_s$round"

  read -r l1_one l1_all dram_one dram_all < <(sweep_sizes "$tmp/ridge$round.json")
  # likwid's best over a comma-separated list of sizes.
  best() {
    local test=$1 sizes=$2 threads=$3 best="" v
    for b in ${sizes//,/ }; do
      v=$(lb "$test" "$(sz "$b")" "$threads" MByte/s:)
      best=$(python3 -c "import sys; v=[float(x) for x in sys.argv[1:] if x]; print(max(v) if v else '')" $best $v)
    done
    echo "$best"
  }

  echo "== round $round/$ROUNDS: likwid-bench ($sp, $dp, $triad, $nt)" >&2
  {
    # DRAM first: ridge measured its DRAM point last, so the two DRAM figures are the closest in time (the memory
    # bandwidth of a shared VM drifts by tens of percent over minutes).
    echo "dram_triad_1t $(lb $triad $(sz $dram_one) 1 MByte/s:)"
    echo "dram_triad_all $(lb $triad $(sz $dram_all) $threads MByte/s:)"
    # The same tests before ridge's run, when the sizes were the same (they are unless ridge's plan changed).
    [ "$pre_one" = "$dram_one" ] && echo "dram_triad_1t_before $pre1"
    [ "$pre_all" = "$dram_all" ] && echo "dram_triad_all_before $pre_t"
    echo "fp32_peak_1t $(lb $sp 24kB 1 MFlops/s:)"
    echo "fp32_peak_all $(lb $sp $((24 * threads))kB $threads MFlops/s:)"
    echo "fp64_peak_1t $(lb $dp 24kB 1 MFlops/s:)"
    echo "fp64_peak_all $(lb $dp $((24 * threads))kB $threads MFlops/s:)"
    echo "l1_triad_1t $(best $triad $l1_one 1)"
    echo "l1_triad_all $(best $triad $l1_all $threads)"
    echo "dram_nt_1t $(lb $nt $(sz $dram_one) 1 MByte/s:)"
    echo "dram_nt_all $(lb $nt $(sz $dram_all) $threads MByte/s:)"
    echo "sizes $l1_one $l1_all $dram_one $dram_all"
  } >"$tmp/likwid$round.txt"
  pre_one=$dram_one
  pre_all=$dram_all
done

python3 - "$tmp" "$ROUNDS" "$sp" "$dp" "$triad" "$nt" <<'PY'
import json, statistics, sys
tmp, rounds, sp, dp, triad, nt = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
docs = [json.load(open(f"{tmp}/ridge{r}.json")) for r in range(1, rounds + 1)]
liks = []
for r in range(1, rounds + 1):
    lik = {}
    for line in open(f"{tmp}/likwid{r}.txt"):
        parts = line.split()
        if parts[0] == "sizes":
            lik["sizes"] = parts[1:]
        else:
            lik[parts[0]] = float(parts[1]) / 1000 if len(parts) > 1 else None  # M -> G
    # DRAM rows: the mean of likwid's runs right before and right after ridge's (drift cancels); the run after
    # alone is kept for the line below the table.
    for key in ("dram_triad_1t", "dram_triad_all"):
        lik[key + "_after"] = lik.get(key)
        if lik.get(key) and lik.get(key + "_before"):
            lik[key] = (lik[key] + lik[key + "_before"]) / 2
    liks.append(lik)
def level(doc, name, key):
    return {l["level"]: l for l in doc["profile"]["levels"]}.get(name, {}).get(key)
rows = [
    ("fp32 peak GFLOP/s, 1 thread", lambda d: d["peak_gflops_one_thread"]["fp32"], "fp32_peak_1t", sp),
    ("fp32 peak GFLOP/s, all threads", lambda d: d["peak_gflops"]["fp32"], "fp32_peak_all", sp),
    ("fp64 peak GFLOP/s, 1 thread", lambda d: d["peak_gflops_one_thread"]["fp64"], "fp64_peak_1t", dp),
    ("fp64 peak GFLOP/s, all threads", lambda d: d["peak_gflops"]["fp64"], "fp64_peak_all", dp),
    ("L1 triad GB/s, 1 thread", lambda d: level(d, "L1", "triad_gbs_one_thread"), "l1_triad_1t", triad),
    ("L1 triad GB/s, all threads", lambda d: level(d, "L1", "triad_gbs_all_threads"), "l1_triad_all", triad),
    ("DRAM triad GB/s, 1 thread", lambda d: d["bandwidth_gbs_one_thread"]["DRAM"], "dram_triad_1t", triad),
    ("DRAM triad GB/s, all threads", lambda d: d["bandwidth_gbs"]["DRAM"], "dram_triad_all", triad),
]
secs = [float(open(f"{tmp}/ridge_s{r}").read()) for r in range(1, rounds + 1)]
doc = docs[-1]
print(f"ridge machine: whole run {median(secs):.1f} s (goal <= 30 s); cache sizes from {doc['cpu']['cache_source']}"
      f"; {'median of ' + str(rounds) + ' alternating rounds' if rounds > 1 else 'one round'}")
for note in doc["profile"]["notes"]:
    if note.startswith("DRAM measured") or note.startswith("last-level cache size unknown"):
        print(f"ridge: {note}")
s = liks[-1]["sizes"]
print(f"likwid working sets (bytes, all threads): L1 {s[0]} / {s[1]} (best of these), DRAM {s[2]} / {s[3]} "
      f"(1 / all threads)")
# ratio: of the two medians; paired: the median of each round's ridge / likwid (the two measured minutes apart, so
# drift of the machine between rounds cancels), with the rounds' range. The verdict reads the ratio of medians.
print(f"{'metric':34} {'ridge':>10} {'likwid-bench':>13} {'ratio':>7}  within 5%  {'paired (range)':>22}  (likwid test)")
for name, get, key, test in rows:
    ridge = median([get(d) for d in docs])
    l = median([lik.get(key) for lik in liks])
    if ridge is None or l is None:
        print(f"{name:34} {str(ridge):>10} {str(l):>13} {'-':>7}  -          {'-':>22}  ({test})")
        continue
    ratio = ridge / l
    per_round = [get(d) / lik[key] for d, lik in zip(docs, liks) if get(d) is not None and lik.get(key)]
    paired = f"{median(per_round):.3f} ({min(per_round):.3f}-{max(per_round):.3f})" if per_round else "-"
    print(f"{name:34} {ridge:10.1f} {l:13.1f} {ratio:7.3f}  {'yes' if abs(ratio - 1) <= 0.05 else 'NO':9}  "
          f"{paired:>22}  ({test})")
for key, what in (("dram_triad_1t", "1 thread"), ("dram_triad_all", "all threads")):
    before = median([lik.get(key + "_before") for lik in liks])
    after = median([lik.get(key + "_after") for lik in liks])
    if before is not None and after is not None:
        print(f"likwid DRAM triad, {what}: {before:.1f} GB/s before ridge's run, {after:.1f} after (medians; the "
              f"table compares their mean)")
for key, what in (("dram_nt_1t", "1 thread"), ("dram_nt_all", "all threads")):
    v = median([lik.get(key) for lik in liks])
    if v is not None:
        print(f"reference, not compared: likwid {nt} (non-temporal stores, no write-allocate read), DRAM, {what}: "
              f"{v:.1f} GB/s")
PY
