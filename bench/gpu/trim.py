#!/usr/bin/env python3
"""Trims what bench/gpu/collect.sh brought back into test fixtures (tests/data/gpu/<gpu>/), keeping what ridge reads.

    python3 bench/gpu/trim.py DEST SRC_DIR...

- ncu CSVs: the GEMM profile stays as ncu wrote it (the details page: one row per metric per launch); the others
  are rewritten in ncu's raw-page layout (`--page raw`: one row per launch, one column per metric, a units row under
  the header), which holds the same values as the details page in a tenth of the bytes. Values keep ncu's text.
- torch.profiler Chrome traces: only GPU kernels, memcpys and memsets, the cpu_ops that launched them and the
  cpu_ops around those (what names a kernel's layer), and user annotations; of each event only ph, cat, name, pid,
  tid, ts, dur and the args ridge reads. Traces not in TRACES are dropped (their key_averages tables stay).
- Everything else small is copied; the 1 MB `ncu --query-metrics` listing is cut to its tensor-core lines.
Only the Python standard library is used.
"""
import csv
import io
import json
import os
import shutil
import sys

TRACES = {"torch_resnet50_train_bs64_trace.json", "torch_resnet50_infer_bs256_trace.json",
          "torch_llama3_8b_prefill512_trace.json", "torch_llama3_8b_decode_eager_bs1_trace.json"}
KEEP_ARGS = {"External id", "correlation", "device", "stream", "flops", "bytes", "Input type", "Input Dims"}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                  "Grid Size", "Device", "CC"]


def details_to_raw(src, dst):
    lines = [l for l in open(src, newline="") if not l.startswith("==")]
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    if not rows:
        shutil.copy(src, dst)
        return
    nvtx = [c for c in rows[0].keys() if "Domain:" in c]
    launch_cols = LAUNCH_COLUMNS[:4] + nvtx + LAUNCH_COLUMNS[4:]
    metrics, units, launches = [], {}, {}
    order = []
    for r in rows:
        m = r["Metric Name"]
        if not m:
            continue
        if m not in units:
            metrics.append(m)
            units[m] = r["Metric Unit"]
        key = (r["ID"], r["Process ID"], r["Kernel Name"])
        if key not in launches:
            launches[key] = ({c: r[c] for c in launch_cols}, {})
            order.append(key)
        launches[key][1][m] = r["Metric Value"]
    metrics.sort()
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(launch_cols + metrics)
        w.writerow([""] * len(launch_cols) + [units[m] for m in metrics])
        for key in order:
            cols, vals = launches[key]
            w.writerow([cols[c] for c in launch_cols] + [vals.get(m, "") for m in metrics])


def trim_trace(src, dst):
    d = json.load(open(src))
    events = d["traceEvents"]
    gpu = [e for e in events if e.get("cat") in GPU_CATS]
    linked = {e.get("args", {}).get("External id") for e in gpu} - {None}
    cpu = [e for e in events if e.get("cat") == "cpu_op"]
    keep_cpu = [e for e in cpu if e.get("args", {}).get("External id") in linked]
    # The cpu_ops around a launching one (same thread, interval containing it) name its layer: keep them too.
    by_tid = {}
    for e in cpu:
        by_tid.setdefault(e.get("tid"), []).append(e)
    kept_ids = {id(e) for e in keep_cpu}
    for e in list(keep_cpu):
        for o in by_tid.get(e.get("tid"), []):
            if id(o) not in kept_ids and o["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= o["ts"] + o.get("dur", 0):
                kept_ids.add(id(o))
                keep_cpu.append(o)
    annotations = [e for e in events if e.get("cat") in ("user_annotation", "gpu_user_annotation")]
    meta = [e for e in events if e.get("ph") == "M"]
    out = []
    for e in meta + sorted(keep_cpu + annotations + gpu, key=lambda e: e.get("ts", 0)):
        t = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args") if k in e}
        if "args" in t:
            t["args"] = {k: v for k, v in t["args"].items() if k in KEEP_ARGS or e.get("ph") == "M"}
        out.append(t)
    d["traceEvents"] = out
    with open(dst, "w") as f:
        json.dump(d, f, separators=(",", ":"))
        f.write("\n")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    for call, src_dir in enumerate(sys.argv[2:], start=1):
        for name in sorted(os.listdir(src_dir)):
            src = os.path.join(src_dir, name)
            dst = os.path.join(dest, name)
            if os.path.exists(dst) or name == "driver.log":  # a later call's env.txt, clocks, logs: kept beside
                stem, ext = os.path.splitext(name)
                dst = os.path.join(dest, f"{stem}_call{call}{ext}")
            if name.startswith("ncu_") and name.endswith(".csv"):
                if name == "ncu_gemm.csv":
                    shutil.copy(src, dst)
                else:
                    details_to_raw(src, dst)
            elif name.endswith("_trace.json"):
                if name in TRACES:
                    trim_trace(src, dst)
            elif name == "ncu_query_metrics.txt":
                if call == 1:
                    with open(src) as f, open(os.path.join(dest, "ncu_query_metrics_tensor.txt"), "w") as g:
                        for i, line in enumerate(f):
                            if i < 4 or "tensor" in line.split(" ")[0]:
                                g.write(line.rstrip() + "\n")
            elif name.startswith("ncu_metrics_") and call > 1:
                continue  # the same lists as the first call's
            else:
                shutil.copy(src, dst)

if __name__ == "__main__":
    main()
