#!/usr/bin/env python3
"""The README's four-line Python flow on torchvision's resnet50, timed after `import torch`: per-layer table, every
convention's headline count, an A100 prediction and the HTML report. Goal: under 2 s for the four lines.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_quickstart.py [--threads N] [--rounds N]

Prints the wall time of each line (and the CPU time of the four: on a loaded machine wall time mostly measures
waiting) and of the four together for a fresh model (its first call exports it to ONNX in
memory) and, in further rounds, for the same model again (the export is cached per module and input size).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch threads for the export's trace (Debian's torch starts with 1)")
parser.add_argument("--rounds", type=int, default=3, help="rounds with a fresh model each")
args = parser.parse_args()

t0 = time.perf_counter()
import torch  # noqa: E402
import torchvision  # noqa: E402
torch_s = time.perf_counter() - t0
torch.set_num_threads(args.threads)
t0 = time.perf_counter()
import ridge  # noqa: E402
ridge_import_s = time.perf_counter() - t0

out = os.path.join(tempfile.mkdtemp(prefix="ridge-bench-"), "resnet50.html")
steps = ["summary", "flops --all-conventions", "predict a100", "report"]


def cpu_s():
    """CPU seconds of this process (every call, ridge.report included, is a library call: no child processes)."""
    return time.process_time()


fresh, again, fresh_cpu, again_cpu = [], [], [], []
for r in range(args.rounds):
    model = torchvision.models.resnet50()  # not timed: torchvision's weight initialisation
    for bucket, cpu in ((fresh, fresh_cpu), (again, again_cpu)):
        times, c0 = [], cpu_s()
        t = time.perf_counter()
        s = ridge.summary(model, input_size=(3, 224, 224))
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        f = ridge.flops(model, input_size=(3, 224, 224), all_conventions=True)
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        p = ridge.predict(model, input_size=(3, 224, 224), device="a100")
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ridge.report(model, out, input_size=(3, 224, 224), device="a100")
        times.append(time.perf_counter() - t)
        bucket.append(times)
        cpu.append(cpu_s() - c0)
    assert s.totals["params"] == 25557032 and os.path.getsize(out) > 10000, "unexpected result"


def show(label, rounds, cpu):
    total = [sum(t) for t in rounds]
    per_step = ", ".join("{} {:.3f} s".format(name, statistics.median(t[i] for t in rounds))
                         for i, name in enumerate(steps))
    print("{}: four lines median {:.3f} s wall (min {:.3f}, max {:.3f}), {:.3f} s CPU; {}".format(
        label, statistics.median(total), min(total), max(total), statistics.median(cpu), per_step))


print("python {}, torch {} ({} threads), import torch+torchvision {:.2f} s, import ridge {:.3f} s".format(
    sys.version.split()[0], torch.__version__, args.threads, torch_s, ridge_import_s))
show("fresh resnet50 (export included)", fresh, fresh_cpu)
show("same resnet50 again (export cached)", again, again_cpu)
print("goal: four lines under 2 s after import torch")
