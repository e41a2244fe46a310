#!/usr/bin/env bash
# Builds the ingest fuzzers (libFuzzer + AddressSanitizer, clang-14) in build-fuzz/ (objects shared in
# build-fuzz-obj/, scripts/fuzz-compile.sh) and runs each for a bounded time, nproc at once, seeded with the profiler
# fixtures read in place (../shared/fixtures/profiles) and the small committed inputs in tests/ingest/data (the
# torch.profiler Chrome trace). Crash inputs are saved to tests/ingest/regressions/ (ridge_tests_ingest replays
# every file there).
# Usage: scripts/fuzz-ingest.sh [SECONDS_PER_PARSER (default 20)] [PARSER...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
shift || true
parsers=("$@")
[ ${#parsers[@]} -gt 0 ] || parsers=(ncu_text ncu_csv nvprof nsys torch chrome sniff)
CXX="${CXX:-clang++-14}"
out=build-fuzz
seeds="${RIDGE_SHARED_DIR:-../shared}/fixtures/profiles"
regressions=tests/ingest/regressions
mkdir -p "$out" "$regressions"

# The readers and the graph stage they use (data_dir.cpp finds data/gpu/architectures.json; the graph stage uses no
# later stage, so all of it links), instrumented for ASan and libFuzzer's coverage.
sources=(src/ingest/*.cpp src/graph/*.cpp)
# shellcheck source=scripts/fuzz-compile.sh
source scripts/fuzz-compile.sh
compile_objects fuzz-ingest

# One fuzzer per reader, linked nproc at a time (a failed link fails the script).
for p in "${parsers[@]}"; do
  "$CXX" "${fuzz_flags[@]}" -fsanitize=address,fuzzer "fuzz/ingest_$p.cpp" "${objects[@]}" -lfmt \
    -o "$out/ridge_fuzz_ingest_$p" &
  bg_started
done
bg_drain
[ "$bg_status" = 0 ] || { echo "fuzz-ingest: a fuzzer failed to link" >&2; exit 1; }

# Each fuzzer runs on one core: nproc of them at a time.
fuzz_one() {
  local p=$1 corpus="$out/corpus-$1" seed_dirs=()
  mkdir -p "$corpus"
  [ -d "$seeds" ] && seed_dirs+=("$seeds")
  seed_dirs+=(tests/ingest/data)
  echo "fuzz-ingest: running $p for ${seconds}s" >&2
  run_fuzzer "fuzz-ingest: $p" "$out/$p.log" "$regressions/$p-" "$out/ridge_fuzz_ingest_$p" "$corpus" \
    "${seed_dirs[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048
}
for p in "${parsers[@]}"; do
  fuzz_one "$p" &
  bg_started
done
bg_drain
exit $bg_status
