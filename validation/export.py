"""Export every model of models.py to weightless ONNX, plus two hand-built decoders (opset 18 and 23).

Usage: python3 validation/export.py OUT_DIR [NAME...]
Writes OUT_DIR/NAME.ext_emptybin.onnx and an empty OUT_DIR/NAME.empty.bin per model (the convention of
../shared/fixtures/onnx/README.md: every initializer keeps name, dims and type; its payload is removed and marked
external in the empty .bin). Models are exported as they are, the way ridge's Python module exports one
(python/ridge/_unfolded.py): BatchNorm stays a BatchNormalization node, not folded into the conv before it (a
folded conv that had its own bias would lose it, and the tools count the conv and the BatchNorm apart).
"""
import importlib.util
import io
import os
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 17  # the newest opset torch 1.13's exporter writes


def strip(model, name):
    """Removes every initializer's payload, marking it external in NAME.empty.bin."""
    for t in model.graph.initializer:
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(field)
        del t.external_data[:]
        t.data_location = TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", name + ".empty.bin"
    return model


def save(model, out_dir, name):
    with open(os.path.join(out_dir, name + ".ext_emptybin.onnx"), "wb") as f:
        f.write(strip(model, name).SerializeToString())
    open(os.path.join(out_dir, name + ".empty.bin"), "wb").close()


def nudge(module):
    """Random, pairwise-distinct weights, so the exporter does not merge equal initializers (e.g. BN ones)."""
    import torch
    torch.manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.rand_like(p) * 1e-3)
        for name, b in module.named_buffers():
            if b.is_floating_point():
                b.add_(torch.rand_like(b) * 1e-3)


def _unfolded():
    """python/ridge/_unfolded.py, loaded by path: importing the package `ridge` needs its compiled extension."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "ridge", "_unfolded.py")
    spec = importlib.util.spec_from_file_location("ridge_unfolded", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export_torch(name, build, shape, out_dir):
    import torch
    model = build().eval()
    nudge(model)
    buf = io.BytesIO()
    # grad stays enabled: under no_grad, eval-mode batch-first attention takes torch's fused fast path
    # (aten::_native_multi_head_attention), which the exporter cannot write
    with _unfolded().as_the_module_is(torch):
        torch.onnx.export(model, torch.randn(*shape), buf, opset_version=OPSET, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    save(onnx.load_from_string(buf.getvalue()), out_dir, name)


def init(name, dims):
    """A zero float initializer (its payload is stripped on save)."""
    return helper.make_tensor(name, TensorProto.FLOAT, dims, b"\0" * (4 * _prod(dims)), raw=True)


def _prod(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def decoder(opset, seq=16, d=64, heads=4, ff=128, vocab=100):
    """One pre-norm decoder block over token ids: embedding, LayerNorm (opset 18) or RMSNormalization (23),
    causal attention (MatMul/Softmax at 18, the Attention op at 23), a GELU MLP and a tied output head."""
    hd = d // heads
    nodes, inits = [], [init("embed", [vocab, d]), init("ln1_w", [d]), init("ln2_w", [d]),
                        init("wq", [d, d]), init("wk", [d, d]), init("wv", [d, d]), init("wo", [d, d]),
                        init("w1", [d, ff]), init("b1", [ff]), init("w2", [ff, d]), init("b2", [d]),
                        init("head", [d, vocab])]
    N = helper.make_node
    nodes.append(N("Gather", ["embed", "ids"], ["x"]))  # [1, seq, d]
    if opset >= 23:
        nodes.append(N("RMSNormalization", ["x", "ln1_w"], ["h"], axis=-1, epsilon=1e-5))
    else:
        inits.append(init("ln1_b", [d]))
        nodes.append(N("LayerNormalization", ["x", "ln1_w", "ln1_b"], ["h"], axis=-1, epsilon=1e-5))
    for p in "qkv":
        nodes.append(N("MatMul", ["h", "w" + p], [p]))
    if opset >= 23:
        nodes.append(N("Attention", ["q", "k", "v"], ["ctx"], q_num_heads=heads, kv_num_heads=heads, is_causal=1))
    else:
        # shapes as Constant nodes, as torch writes them: save() strips every initializer's payload
        for shape_name, dims in (("split_shape", [1, seq, heads, hd]), ("merge_shape", [1, seq, d])):
            nodes.append(N("Constant", [], [shape_name],
                           value=helper.make_tensor(shape_name, TensorProto.INT64, [len(dims)], dims)))
        inits += [helper.make_tensor("scale", TensorProto.FLOAT, [], [hd ** -0.5]),
                  helper.make_tensor("mask", TensorProto.FLOAT, [seq, seq],
                                     [0.0 if j <= i else -1e9 for i in range(seq) for j in range(seq)])]
        for p in "qkv":
            nodes.append(N("Reshape", [p, "split_shape"], [p + "4"]))
            nodes.append(N("Transpose", [p + "4"], [p + "h"], perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]))
        nodes += [N("MatMul", ["qh", "kh"], ["s0"]), N("Mul", ["s0", "scale"], ["s1"]),
                  N("Add", ["s1", "mask"], ["s2"]), N("Softmax", ["s2"], ["pr"], axis=-1),
                  N("MatMul", ["pr", "vh"], ["c4"]), N("Transpose", ["c4"], ["c3"], perm=[0, 2, 1, 3]),
                  N("Reshape", ["c3", "merge_shape"], ["ctx"])]
    nodes += [N("MatMul", ["ctx", "wo"], ["ao"]), N("Add", ["x", "ao"], ["r1"])]
    if opset >= 23:
        nodes.append(N("RMSNormalization", ["r1", "ln2_w"], ["h2"], axis=-1, epsilon=1e-5))
    else:
        inits.append(init("ln2_b", [d]))
        nodes.append(N("LayerNormalization", ["r1", "ln2_w", "ln2_b"], ["h2"], axis=-1, epsilon=1e-5))
    nodes += [N("MatMul", ["h2", "w1"], ["f0"]), N("Add", ["f0", "b1"], ["f1"]),
              N("Gelu", ["f1"], ["f2"]) if opset >= 20 else N("Relu", ["f1"], ["f2"]),
              N("MatMul", ["f2", "w2"], ["f3"]), N("Add", ["f3", "b2"], ["f4"]), N("Add", ["r1", "f4"], ["r2"]),
              N("MatMul", ["r2", "head"], ["logits"])]
    graph = helper.make_graph(nodes, "decoder_op%d" % opset,
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, seq])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, seq, vocab])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ridge-validation")
    model.ir_version = 8 if opset == 18 else 11
    return model


HAND_BUILT = {"decoder_opset18": lambda: decoder(18), "decoder_opset23": lambda: decoder(23)}


def main():
    out_dir = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out_dir, exist_ok=True)
    from models import MODELS
    for name, build, shape in MODELS:
        if only and name not in only:
            continue
        try:
            export_torch(name, build, shape, out_dir)
            print("exported", name, flush=True)
        except Exception as e:  # a model that does not export is named, not skipped silently
            print("FAILED", name, type(e).__name__, str(e).splitlines()[0] if str(e) else "", flush=True)
    for name, build in HAND_BUILT.items():
        if not only or name in only:
            save(build(), out_dir, name)
            print("built", name)


if __name__ == "__main__":
    main()
