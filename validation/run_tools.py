"""Runs every peer tool on every model of models.py and writes their headline numbers as exact integers.

Usage: PYTHONPATH=validation:$SRC/fvcore:$SRC/ptflops:... python3 validation/run_tools.py OUT.json
       [--tools fvcore,torchinfo,...] [NAME...]
(validation/fetch_tools.sh prints the PYTHONPATH). With --tools only those tools run and the other tools' numbers
already in OUT.json are kept. Each number is the integer the tool computes before it
pretty-prints it; a tool that fails records its error, never a silent zero.
"""
import contextlib
import io
import json
import os
import sys
import traceback

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs"))  # after the real sources

import torch  # noqa: E402

from models import MODELS  # noqa: E402


def as_int(v):
    """The tool's number as an exact integer (thop and DeepSpeed accumulate in floats of whole numbers)."""
    v = float(v.item() if hasattr(v, "item") else v)
    if v != int(v):
        raise ValueError("not an integer: %r" % v)
    return int(v)


def fvcore(model, x):
    from fvcore.nn import FlopCountAnalysis
    a = FlopCountAnalysis(model, x).unsupported_ops_warnings(False).uncalled_modules_warnings(False)
    return a.total()


def ptflops(model, x):
    from ptflops import get_model_complexity_info
    # kwargs input: ptflops divides by len(input[0]) only for positional inputs; every model runs at batch 1
    macs, _ = get_model_complexity_info(model, tuple(x.shape), as_strings=False, print_per_layer_stat=False,
                                        input_constructor=lambda _: {"x": x}, backend="pytorch")
    return macs


def thop(model, x):
    from thop import profile
    macs, _ = profile(model, inputs=(x,), verbose=False)
    return macs


def torchinfo(model, x):
    from torchinfo import summary
    return summary(model, input_data=[x], verbose=0).total_mult_adds


def pthflops(model, x):
    from pthflops import count_ops
    total, _ = count_ops(model, x, mode="fx", print_readable=False, verbose=False)
    return total


def deepspeed(model, x):
    import ds_profiler
    flops, _, _ = ds_profiler.get_model_profile(model, args=[x], print_profile=False, detailed=False,
                                                as_string=False, warm_up=1)
    return flops


def calflops(model, x):
    from calflops import calculate_flops
    flops, _, _ = calculate_flops(model, args=[x], print_results=False, print_detailed=False,
                                  output_as_string=False)
    return flops


TOOLS = {"fvcore": fvcore, "ptflops": ptflops, "thop": thop, "torchinfo": torchinfo, "pthflops": pthflops,
         "deepspeed": deepspeed, "calflops": calflops}


# torch 1.13 has no F.scaled_dot_product_attention (torch 2.0); DeepSpeed's profiler patches it unconditionally.
# A placeholder lets it patch; no model here calls it on torch 1.13.
if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
    def _no_sdpa(*args, **kwargs):
        raise NotImplementedError("scaled_dot_product_attention is torch >= 2.0")
    torch.nn.functional.scaled_dot_product_attention = _no_sdpa

_PATCHABLE = [torch, torch.nn.functional, torch.Tensor]


def snapshot():
    """The function tables the tools patch, so a tool that fails half way cannot leak patches into the next."""
    return [(ns, dict(vars(ns))) for ns in _PATCHABLE]


def restore(saved):
    for ns, table in saved:
        for key, value in table.items():
            if vars(ns).get(key) is not value:
                try:
                    setattr(ns, key, value)
                except (AttributeError, TypeError):
                    pass


def build(builder):
    torch.manual_seed(0)
    return builder().eval()


def run_model(name, builder, shape, tools, rec):
    model = build(builder)
    rec = rec or {"tools": {}, "errors": {}}
    rec.update(input_shape=list(shape), params=sum(p.numel() for p in model.parameters()))
    for tool in tools:
        fn = TOOLS[tool]
        rec["tools"].pop(tool, None)
        rec["errors"].pop(tool, None)
        model = build(builder)
        x = torch.randn(*shape)
        saved = snapshot()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                rec["tools"][tool] = as_int(fn(model, x))
        except Exception as e:  # named, never a silent gap
            rec["errors"][tool] = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])
            traceback.print_exc(limit=2, file=sys.stderr)
        finally:
            restore(saved)
    return rec


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    tools = list(TOOLS)
    if args[:1] == ["--tools"]:
        tools = args[1].split(",")
        del args[:2]
        unknown = [t for t in tools if t not in TOOLS]
        if unknown:
            sys.exit("run_tools.py: --tools: unknown tool %s (known: %s)" % (unknown[0], ",".join(TOOLS)))
    only = set(args)
    results = json.load(open(out)) if os.path.exists(out) and (only or tools != list(TOOLS)) else {}
    for name, builder, shape in MODELS:
        if only and name not in only:
            continue
        keep = results.get(name) if tools != list(TOOLS) else None
        results[name] = run_model(name, builder, shape, tools, keep)
        print(name, results[name]["params"], results[name]["tools"], results[name]["errors"], flush=True)
        with open(out, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
