"""Compares the tools' numbers with ridge's conventions, pair by pair (the ctest does the same; this prints all).

Usage: python3 validation/compare.py RIDGE_BINARY RESULTS.json [ONNX_DIR]
"""
import collections
import json
import os
import subprocess
import sys


def ridge_count(binary, path, tool):
    out = subprocess.run([binary, "flops", path, "--convention", tool, "--format", "json"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]
    doc = json.loads(out.stdout)
    return next(c["headline"] for c in doc["conventions"] if c["convention"] == tool or tool == "calflops"
                and c["convention"] == "deepspeed"), None


def main():
    binary, results_path = sys.argv[1], sys.argv[2]
    onnx_dir = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(results_path)
    results = json.load(open(results_path))
    tally = collections.defaultdict(lambda: [0, 0])
    for model, rec in sorted(results.items()):
        path = os.path.join(onnx_dir, model + ".ext_emptybin.onnx")
        for tool, want in sorted(rec["tools"].items()):
            doc, err = ridge_count(binary, path, tool)
            have = doc
            ok = have == want
            tally[tool][0] += ok
            tally[tool][1] += 1
            if not ok:
                print("%-30s %-10s tool %15d ridge %15s  ratio %s" % (
                    model, tool, want, have if err is None else err,
                    "%.4f" % (have / want) if have and want else "-"))
    all_ok = sum(v[0] for v in tally.values())
    all_n = sum(v[1] for v in tally.values())
    for tool, (ok, n) in sorted(tally.items()):
        print("%-10s %3d / %3d exact (%.1f %%)" % (tool, ok, n, 100.0 * ok / n))
    print("%-10s %3d / %3d exact (%.1f %%)" % ("all", all_ok, all_n, 100.0 * all_ok / max(all_n, 1)))


if __name__ == "__main__":
    main()
