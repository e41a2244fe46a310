#!/usr/bin/env bash
# Installs every Debian 12 (bookworm) package ridge needs to build, test and benchmark.
# Idempotent: packages already present are skipped quickly by apt-get.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev
  libnlopt-dev   # NLopt: the max-model calibration fit (Nelder-Mead)
  libjemalloc-dev   # the ridge binary's allocator (graph building is allocation-bound under glibc malloc)
  clang-14 libclang-rt-14-dev
  libpng-dev
  librsvg2-bin   # rsvg-convert: SVG -> PNG charts (--plot FILE.png)
  pybind11-dev python3-dev   # the Python module (python/)
)
TEST_PKGS=(
  python3 python3-onnx python3-numpy
  chromium chromium-driver nodejs   # nodejs runs tests/scripts/browser_check.mjs
  slurm-wlm munge
  likwid
  python3-pytest python3-torch python3-torchvision python3-pandas   # tests/python (torch.nn.Module input)
)

want=("${BUILD_PKGS[@]}")
if [ "${1:-}" = "--with-test-deps" ]; then want+=("${TEST_PKGS[@]}"); fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present" >&2
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
