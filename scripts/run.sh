#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install packages, build, and write a self-contained HTML report
# of resnet50 (estimates, every chart, prediction, and per-layer measurements on this CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/ridge summary resnet50 --depth 1
./build/ridge report resnet50 --measure -o report.html
echo "open $(pwd)/report.html in a browser (no network needed)"
