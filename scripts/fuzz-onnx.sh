#!/usr/bin/env bash
# Builds the ONNX importer fuzzer (libFuzzer + AddressSanitizer, clang-14) in build-fuzz-onnx/ (objects shared in
# build-fuzz-obj/, scripts/fuzz-compile.sh) and runs it for a bounded time, seeded with the fixture .onnx files
# read in place (../shared/fixtures/onnx) and tests/load/onnx_control_flow_seeds/. Crash inputs are saved to tests/load/onnx_regressions/ (ridge_tests_load
# replays every file there).
# Usage: scripts/fuzz-onnx.sh [SECONDS (default 60)]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
CXX="${CXX:-clang++-14}"
out=build-fuzz-onnx
fixtures="${RIDGE_SHARED_DIR:-../shared}/fixtures/onnx"
regressions=tests/load/onnx_regressions
mkdir -p "$out/corpus" "$out/seeds" "$regressions"

# The importer and the ops and graph files it uses, instrumented for ASan and libFuzzer's coverage. libonnx and
# libprotobuf are Debian's (not instrumented).
sources=(src/load/onnx/*.cpp src/ops/*.cpp src/graph/*.cpp)
# shellcheck source=scripts/fuzz-compile.sh
source scripts/fuzz-compile.sh
compile_objects fuzz-onnx
bin="$out/ridge_fuzz_onnx"
"$CXX" "${fuzz_flags[@]}" -fsanitize=address,fuzzer fuzz/onnx_import.cpp "${objects[@]}" \
  -lonnx -lonnx_proto -lprotobuf -lfmt -o "$bin"

# Seeds: the fixture models in place (the directory also holds empty .bin files and a README; both are fine
# as seeds but only .onnx files are listed to keep the run focused).
seed_args=()
if [ -d "$fixtures" ]; then
  find "$fixtures" -name '*.onnx' -size -120k > "$out/seed-list"
  while read -r f; do ln -sf "$(realpath "$f")" "$out/seeds/$(echo "$f" | tr / _)"; done < "$out/seed-list"
  seed_args+=("$out/seeds")
fi
# And small models with control flow and sequences (tests/load/make_control_flow_seeds.py), which the importer
# inlines.
seed_args+=(tests/load/onnx_control_flow_seeds)
echo "fuzz-onnx: running for ${seconds}s" >&2
ASAN_OPTIONS=detect_leaks=0 run_fuzzer fuzz-onnx "$out/fuzz.log" "$regressions/onnx-" "$bin" "$out/corpus" \
  "${seed_args[@]}" -max_total_time="$seconds" -max_len=131072 -timeout=20 -rss_limit_mb=4096
