#!/usr/bin/env bash
# Configures and builds ridge into build/ (binary: build/ridge). Extra arguments go to CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@" >/dev/null
fi
echo "build: compiling with $jobs jobs (first build takes a few minutes)" >&2
cmake --build build -j "$jobs"
