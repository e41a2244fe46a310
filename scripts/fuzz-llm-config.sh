#!/usr/bin/env bash
# Builds the Hugging Face config.json fuzzer (libFuzzer + AddressSanitizer, clang-14) in build-fuzz-llm/ (objects
# shared in build-fuzz-obj/, scripts/fuzz-compile.sh) and runs it for a bounded time, seeded with the small configs
# in tests/load/llm_config_seeds (one per model_type family). Crash inputs are saved to
# tests/load/llm_config_regressions/ (ridge_tests_load replays every file there).
# Usage: scripts/fuzz-llm-config.sh [SECONDS (default 30)]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
CXX="${CXX:-clang++-14}"
out=build-fuzz-llm
regressions=tests/load/llm_config_regressions
mkdir -p "$out/corpus" "$regressions"

# The reader, the LLM graph builder and what they use (op rules, graph, costs), instrumented for ASan and
# libFuzzer's coverage.
sources=(src/load/hf/*.cpp src/load/closest_names.cpp src/load/zoo/llm.cpp src/load/zoo/builder.cpp src/ops/*.cpp src/graph/*.cpp src/costs/*.cpp)
# shellcheck source=scripts/fuzz-compile.sh
source scripts/fuzz-compile.sh
compile_objects fuzz-llm-config
bin="$out/ridge_fuzz_llm_config"
"$CXX" "${fuzz_flags[@]}" -fsanitize=address,fuzzer fuzz/llm_config.cpp "${objects[@]}" -lfmt -o "$bin"

echo "fuzz-llm-config: running for ${seconds}s" >&2
ASAN_OPTIONS=detect_leaks=0 run_fuzzer fuzz-llm-config "$out/fuzz.log" "$regressions/config-" "$bin" "$out/corpus" \
  tests/load/llm_config_seeds -max_total_time="$seconds" -max_len=8192 -timeout=20 -rss_limit_mb=4096
