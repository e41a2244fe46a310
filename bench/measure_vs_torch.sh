#!/usr/bin/env bash
# ridge measure vs PyTorch, end-to-end inference at batch 16 on 2 threads (resnet50, vgg16), plus the figures
# of issue 4: conv layers' fraction of the machine's fp32 peak (median over resnet50's convs) and the per-layer
# timing overhead. A benchmark, not a test: it prints numbers.
# Usage: bench/measure_vs_torch.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
ridge=$build/ridge
batch=16
threads=2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

have_torch() { /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; }
if ! have_torch; then
  echo "measure_vs_torch: installing python3-torch python3-torchvision (Debian) ..." >&2
  SUDO=""; [ "$(id -u)" != 0 ] && SUDO="sudo"
  if ! { $SUDO apt-get install -y -qq --no-install-recommends python3-torch python3-torchvision >/dev/null 2>&1 && have_torch; }; then
    echo "measure_vs_torch: PyTorch not available (apt-get failed); comparing nothing, ridge figures only" >&2
  fi
fi

# The machine profile gives the fp32 peak (measured once, cached).
"$ridge" machine --format json >"$out/machine.json"
peak=$(/usr/bin/python3 -c "import json,sys; j=json.load(open('$out/machine.json')); p=j['peak_gflops']; \
print(p['fp32'] if not isinstance(p['fp32'], dict) else max(v for v in p['fp32'].values() if isinstance(v,(int,float))))")
echo "machine fp32 peak: $peak GFLOP/s (ridge machine, all threads)"

torch_time() {
  /usr/bin/python3 - "$1" "$batch" "$threads" <<'EOF'
import statistics, sys, time
import torch, torchvision
name, batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
model = getattr(torchvision.models, name)().eval()
x = torch.randn(batch, 3, 224, 224)
with torch.no_grad():
    for _ in range(2):
        model(x)
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (len(times) < 20 and time.perf_counter() - start < 60):
        t = time.perf_counter()
        model(x)
        times.append(time.perf_counter() - t)
print("%.4f" % statistics.median(times))
EOF
}

printf "%-10s %14s %14s %10s %18s %16s\n" model ridge_s torch_s torch/ridge conv_peak_median timing_overhead
for model in resnet50 vgg16; do
  "$ridge" measure "$model" --batch $batch --threads $threads --repeat 10 --format json >"$out/$model.json"
  read -r ridge_s overhead conv_frac < <(/usr/bin/python3 - "$out/$model.json" "$peak" <<'EOF'
import json, statistics, sys
j = json.load(open(sys.argv[1])); peak = float(sys.argv[2])
conv = [l["gflops_per_s"] for l in j["layers"] if l["op"] == "Conv" and l.get("gflops_per_s")]
frac = statistics.median(conv) / peak * 100 if conv and peak > 0 else float("nan")
print(j["total_time_s"], j["summary"]["timing_overhead_percent"], "%.1f%%" % frac)
EOF
)
  torch_s="n/a"; ratio="n/a"
  if have_torch; then
    torch_s=$(torch_time "$model")
    ratio=$(/usr/bin/python3 -c "print('%.2fx' % ($torch_s / $ridge_s))")
  fi
  printf "%-10s %14.4f %14s %10s %18s %15.2f%%\n" "$model" "$ridge_s" "$torch_s" "$ratio" "$conv_frac" "$overhead"
done
echo "goals: ridge at least as fast as PyTorch (torch/ridge >= 1), resnet50 conv median >= 60% of fp32 peak, overhead < 2%"
