#!/usr/bin/env python3
"""Command-line sweep: every option of every `ridge` command, one at a time, with hostile values.

For each command a valid base invocation (a small model, a device) gets one option added with one value from a
list of edge cases (empty, zero, negative, huge, NaN, inf, not a number, missing and unwritable paths, a directory,
malformed ranges and shapes, a 5,000-character string, bytes that are not UTF-8, files holding garbage); the first
positional argument (MODEL, FILE) gets the same values, and stray words ("---", "--=5", unknown options) are added
before and after. Each run must end as the brief says a user's input may: exit 0, 1 or 2, no signal, and on
failure one line "ridge: error: ..." or "ridge: usage error: ..." on stderr, never "terminate called", an
assertion, a sanitizer report or a stack trace.
Runs that pass the time limit are listed apart (a hostile size may legitimately take long).

usage: scripts/fuzz-cli.py [--ridge build/ridge] [--jobs 2] [--timeout 20] [COMMAND...]
Exit status 1 when any run broke a rule (each is printed with its command line), else 0.
"""
import argparse
import concurrent.futures as cf
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

VALUES = ["", "0", "-1", "1e309", "nan", "inf", "-inf", "99999999999999999999", "2147483648", "1.5", "abc",
          "/nonexistent/dir/x.json", "/dev/null", "/tmp", "1:0:1", "0:0:0", "1:9999999999:1", "1x0x3", "-3x2",
          "x=1x2", "in=1x-2", "%n%s{}", "a" * 5000, b"\xff\xfe".decode("latin-1"),
          "{tmp}/truncated.json", "{tmp}/binary.onnx", "{tmp}/bad-devices"]

STRAY = ["---", "--=5", "-", "--", "--no-such-option", "--no-such-option=1", "-Z", "-" + "x" * 300]

# A valid invocation of each command (required arguments only) on inputs that cost little.
SHARED = os.environ.get("RIDGE_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
PROFILE = os.path.join(SHARED, "fixtures/profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log")
VIDUR = os.path.join(SHARED, "reference/measured/vidur/a100_Llama-2-7b-hf_mlp.csv")
BASE = {
    "list": [], "summary": ["mnist"], "flops": ["mnist"], "sweep": ["mnist"], "measure": ["mnist", "--repeat", "2", "--max-seconds", "1", "--machine", "none"],
    "run": ["mnist"], "machine": ["--quick"], "devices": [], "roofline": ["mnist", "-d", "a100"],
    "predict": ["mnist", "-d", "a100"], "calibrate": [VIDUR, "-d", "a100", "-o", "{tmp}/cal.json"], "ingest": [PROFILE],
    "profile-cmd": ["--tool", "ncu", "--", "python3", "train.py"], "report": ["mnist", "-o", "{tmp}/r.html"],
    "compare": ["mnist", "resnet18"], "serve": ["llama-2-7b", "-d", "h100"],
    "train": ["llama-2-7b", "-d", "h100", "--gpus", "8"],
}
# Options whose hostile values would only make a valid run long (measurement budgets): skipped.
SLOW = {("machine", "--refresh"), ("machine", "--huge-pages")}
BROKEN = re.compile(r"terminate called|Assertion|AddressSanitizer|UndefinedBehavior|Segmentation|core dumped|"
                    r"what\(\):|Traceback|internal error|std::")


def options_of(ridge, command):
    """Long option names listed by `ridge COMMAND --help` (help and version left out)."""
    out = subprocess.run([ridge, command, "--help"], capture_output=True, text=True).stdout
    names = set(re.findall(r"^\s+(?:-\w,)?(--[a-z0-9][a-z0-9-]*)", out, re.M))
    return sorted(names - {"--help", "--version"})


def run_one(ridge, args, timeout, cwd):
    try:
        p = subprocess.run([ridge] + args, capture_output=True, timeout=timeout, cwd=cwd,
                           env=dict(os.environ, COLUMNS="200", XDG_CACHE_HOME=cwd))
    except subprocess.TimeoutExpired:
        return "timeout", ""
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode not in (0, 1, 2):
        return "broken", f"exit {p.returncode}: {err.strip()[-300:]}"
    if BROKEN.search(err):
        return "broken", err.strip()[-300:]
    if p.returncode != 0:
        last = [line for line in err.splitlines() if line.strip()][-1:] or [""]
        if not re.match(r"ridge: (usage )?error: ", last[0]):
            return "broken", f"exit {p.returncode} without a one-line error: {err.strip()[-300:]}"
    return "ok", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ridge", default=os.path.join(os.path.dirname(__file__), "..", "build", "ridge"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("commands", nargs="*")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ridge-fuzz-cli-")  # the working folder: relative output paths land here
    # Files that exist but hold garbage: a truncated JSON, random bytes, a folder with a broken device file.
    with open(os.path.join(tmp, "truncated.json"), "w") as f:
        f.write('{"id": "x", "peaks": {')
    with open(os.path.join(tmp, "binary.onnx"), "wb") as f:
        f.write(bytes(range(256)) * 4)
    os.makedirs(os.path.join(tmp, "bad-devices"))
    with open(os.path.join(tmp, "bad-devices", "gpu.json"), "w") as f:
        f.write('{"id": "bad", "memory_bytes": -1, "peaks": {"fp32": "fast"}}')
    values = [v.replace("{tmp}", tmp) for v in VALUES]
    # A copy of the binary and of the backends it loads from its own folder, so a rebuild during the sweep changes
    # nothing (ridge finds data/ by a built-in path).
    shutil.copy2(a.ridge, os.path.join(tmp, "ridge"))
    backends = os.path.join(os.path.dirname(os.path.abspath(a.ridge)), "libridge_backends.so")
    if os.path.exists(backends):
        shutil.copy2(backends, tmp)
    a.ridge = os.path.join(tmp, "ridge")
    cases = []
    for command in a.commands or sorted(BASE):
        base = [x.replace("{tmp}", tmp) for x in BASE[command]]
        if command == "machine":
            base += ["--cache", f"{tmp}/machine.json"]
        # The base invocation must work, or every case would fail on it and test nothing.
        ok = subprocess.run([a.ridge, command] + base, capture_output=True, cwd=tmp, timeout=120,
                            env=dict(os.environ, XDG_CACHE_HOME=tmp))
        if ok.returncode != 0:
            print(f"fuzz-cli: the base invocation `ridge {command} {' '.join(base)}` fails: "
                  f"{ok.stderr.decode('utf-8', 'replace').strip()[-300:]}", file=sys.stderr)
            return 1
        if base and not base[0].startswith("-"):  # the first positional (MODEL, FILE) itself
            cases += [[command, v] + base[1:] for v in values]
        for stray in STRAY:  # words that are no option of any command, before and after the base arguments
            cases += [[command, stray] + base, [command] + base + [stray]]
        for option in options_of(a.ridge, command):
            if (command, option) in SLOW:
                continue
            for v in values:
                # Before the base arguments ("--" ends profile-cmd's options): as two words and as one.
                cases.append([command, option, v] + base)
                cases.append([command, f"{option}={v}"] + base)
    print(f"fuzz-cli: {len(cases)} runs, {a.jobs} at a time, {a.timeout:.0f} s each at most", file=sys.stderr)
    broken, slow = [], []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(run_one, a.ridge, c, a.timeout, tmp): c for c in cases}
        for done, future in enumerate(cf.as_completed(futures), 1):
            args, (status, why) = futures[future], future.result()
            if done % 1000 == 0:
                print(f"fuzz-cli: {done}/{len(cases)}, {len(broken)} broken so far", file=sys.stderr, flush=True)
            line = "ridge " + " ".join(shlex.quote(x if len(x) < 40 else x[:20] + f"...({len(x)} chars)") for x in args)
            if status == "broken":
                broken.append(f"{line}\n    {why}")
            elif status == "timeout":
                slow.append(line)
    for s in slow:
        print(f"slow (over {a.timeout:.0f} s): {s}")
    for b in broken:
        print(f"BROKEN: {b}")
    print(f"fuzz-cli: {len(cases)} runs, {len(broken)} broken, {len(slow)} over the time limit", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
