#!/usr/bin/env bash
# Wall time and peak memory of the commands that build the largest graphs: expert-heavy LLMs (Qwen3-30B-A3B: 48
# layers x 128 experts, about 76,000 nodes per graph; Qwen3-Next-80B-A3B: 48 x 512, about 297,000), where building and
# costing the graph is the whole run. Each command runs ROUNDS times (default 3); the median wall time and the largest
# peak resident set are printed. With a second binary, both run side by side, alternating, and the ratio is printed
# (e.g. a build configured with -DRIDGE_JEMALLOC=OFF, to see what the allocator gives).
# Usage: bench/graph_build_speed.sh [RIDGE (default build/ridge)] [OTHER_RIDGE]
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-build/ridge}
b=${2:-}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commands=(
  "serve qwen3-30b-a3b --device h100"
  "serve qwen3-next-80b-a3b --device h100 --tp 4"
  "train qwen3-30b-a3b --device h100 --gpus 8 --seq 4096 --global-batch 64 --micro-batch 1 --zero 3"
  "summary qwen3-next-80b-a3b --format json"
  "report qwen3-30b-a3b -o $tmp/report.html"
)
# One run: "seconds peak_KiB" of `binary command...`, its output discarded.
run() {
  local bin=$1 cmd=$2
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" $cmd > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  cat "$tmp/time"
}
# "median_s max_MiB" of a list of "seconds KiB" lines.
summarise() {
  /usr/bin/python3 -c 'import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
print("%.2f %.0f" % (statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows) / 1024))'
}
printf '%-100s %9s %9s' "command" "time [s]" "peak [MiB]"
[[ -n $b ]] && printf ' %9s %9s %7s' "other [s]" "[MiB]" "ratio"
printf '\n'
for cmd in "${commands[@]}"; do
  : > "$tmp/a"; : > "$tmp/b"
  for ((i = 0; i < rounds; ++i)); do
    run "$a" "$cmd" >> "$tmp/a"
    [[ -n $b ]] && run "$b" "$cmd" >> "$tmp/b"
  done
  read -r ta ma < <(summarise < "$tmp/a")
  printf '%-100s %9s %9s' "ridge $cmd" "$ta" "$ma"
  if [[ -n $b ]]; then
    read -r tb mb < <(summarise < "$tmp/b")
    printf ' %9s %9s %7s' "$tb" "$mb" "$(/usr/bin/python3 -c "print('%.2f' % ($tb / $ta))")"
  fi
  printf '\n'
done
