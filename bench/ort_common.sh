# Shared by measure_vs_ort.sh and run_vs_ort.sh (sourced, not run): ONNX Runtime from npm, and random weights for
# the weightless fixtures. The sourcing script sets `me` (its name, for messages) first; this file sets `cache`
# (where onnxruntime-node is installed: RIDGE_ORT_CACHE, default ~/.cache/ridge/ort-node) and `out` (a temp
# folder, removed at exit).

cache=${RIDGE_ORT_CACHE:-$HOME/.cache/ridge/ort-node}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# ort_install: onnxruntime-node into $cache when missing; returns 1 (after a message) when npm is unavailable or
# the install fails. --ignore-scripts skips the install script (it would download GPU binaries from a host this
# machine cannot reach); the CPU build ships inside the package.
ort_install() {
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "$me: npm/node not available; nothing to compare against (skipped)" >&2
    return 1
  fi
  [ -d "$cache/node_modules/onnxruntime-node" ] && return 0
  echo "$me: installing onnxruntime-node into $cache ..." >&2
  mkdir -p "$cache"
  if ! npm install --ignore-scripts --no-audit --no-fund --prefix "$cache" onnxruntime-node >"$out/npm.log" 2>&1; then
    echo "$me: npm install onnxruntime-node failed (skipped):" >&2
    tail -5 "$out/npm.log" >&2
    return 1
  fi
}

ort_version() { node -e "console.log(require('$cache/node_modules/onnxruntime-node/package.json').version)"; }

# fill_weights SRC DST: a weightless fixture (NAME.ext_emptybin.onnx) with random weights (fixed seed; integer
# initializers 0/1, running variances in [0.5, 1.5]: a negative one is NaN in ORT) in one self-contained file.
fill_weights() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import sys, numpy as np, onnx
from onnx import numpy_helper
src, dst = sys.argv[1:3]
m = onnx.load(src, load_external_data=False)
rng = np.random.default_rng(42)
for i, init in enumerate(m.graph.initializer):
    if init.data_location != onnx.TensorProto.EXTERNAL:
        continue
    dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[init.data_type]
    shape = tuple(init.dims)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    if np.issubdtype(dtype, np.integer): data = rng.integers(0, 2, shape)
    elif "var" in init.name: data = rng.uniform(0.5, 1.5, shape)
    else: data = rng.uniform(-1, 1, shape) / np.sqrt(fan_in)
    m.graph.initializer[i].CopyFrom(numpy_helper.from_array(data.astype(dtype), init.name))
onnx.save(m, dst)
EOF
}
