#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install packages, build, run ridge on resnet50.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/ridge summary resnet50 --depth 2
