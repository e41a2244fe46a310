#!/usr/bin/env bash
# Where `ridge measure` falls short of what it measures: for every zoo model and every weightless ONNX export of the
# validation harness (tests/data/validation), one short measured pass, and per model the total of the layer
# medians, how much of it ran in reference kernels (single-threaded loops; oneDNN's RNN implementation is also
# named "ref" but runs oneDNN's GEMMs) and which steps did not run at all, by reason. Prints one line per model.
# Not a test: the times depend on the machine. Usage: bench/executor_coverage.sh [RIDGE] [MODEL...]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge="${1:-build/ridge}"
shift || true
[ -x "$ridge" ] || { echo "executor_coverage: $ridge is not an executable (run scripts/build.sh first)" >&2; exit 1; }
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  # Zoo CNNs and transformers (the LLM entries are measured through their config.json instead), then the exports.
  while read -r name family _; do
    case "$family" in llm|family|"") ;; *) models+=("$name") ;; esac
  done < <("$ridge" list 2>/dev/null | awk 'NR > 4 && NF >= 3 {print $1, $2}')
  for f in tests/data/validation/*.onnx; do models+=("$f"); done
fi
# One line per model from the layers table (CSV on stdin).
summarise=$(cat <<'EOF'
import collections, csv, sys
rows = list(csv.DictReader(sys.stdin))
total = sum(float(r["time_s"] or 0) for r in rows)
ref = sum(float(r["time_s"] or 0) for r in rows
          if r["status"].startswith("executed") and (r["kernel"] == "reference" or r["kernel"].startswith("ref:")))
missing = collections.Counter(r["status"].removeprefix("not executed: ") for r in rows
                              if r["status"].startswith("not executed"))
print("%-40s %12.2f %12.2f %8.1f  %s" % (sys.argv[1], total * 1e3, ref * 1e3, 100 * ref / total if total else 0,
      "; ".join("%d x %s" % (n, why) for why, n in missing.most_common()) or "-"))
EOF
)
printf '%-40s %12s %12s %8s  %s\n' model "layers [ms]" "ref [ms]" "ref [%]" "not executed (by reason)"
for m in "${models[@]}"; do
  echo "executor_coverage: measuring $m" >&2
  csv=$("$ridge" measure "$m" --repeat 3 --max-seconds 2 --format csv 2>/dev/null) || {
    printf '%-40s %s\n' "$(basename "$m" .ext_emptybin.onnx)" "(did not run: $("$ridge" measure "$m" --repeat 1 2>&1 >/dev/null | tail -1))"
    continue
  }
  python3 -c "$summarise" "$(basename "$m" .ext_emptybin.onnx)" <<<"$csv"
done
