#!/usr/bin/python3
"""Writes the small weightless ONNX models of tests/load/data/ that exercise opsets newer than Debian's libonnx
1.12 (which stops at opset 17). Run with Debian's python3-onnx: `python3 tests/load/make_newer_opset_models.py`.
The models are built with onnx.helper without the checker (1.12 has no schema for the newer ops); initializers
carry dims only (no payload), except small integer constants (axes, positions)."""
import os

from onnx import TensorProto as T
from onnx import helper as h

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def weight(name, dims):
    t = T(name=name, data_type=T.FLOAT)  # dims only (no payload), like the weightless fixtures
    t.dims.extend(dims)
    return t


def ints(name, values):
    return h.make_tensor(name, T.INT64, [len(values)], values)


def save(graph, opset, ir, name, extra_opsets=()):
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset), *extra_opsets], producer_name="ridge-tests")
    m.ir_version = ir
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def opset18():
    """ReduceMean with axes as an input, Split with num_outputs, Pad with axes: the opset-18 forms."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 8, 16])
    nodes = [
        h.make_node("ReduceMean", ["x", "axes"], ["mean"], keepdims=1),
        h.make_node("Sub", ["x", "mean"], ["centred"]),
        h.make_node("Split", ["centred"], ["left", "right"], axis=-1, num_outputs=2),
        h.make_node("MatMul", ["left", "w"], ["y"]),
        h.make_node("Pad", ["right", "pads", "", "pad_axes"], ["padded"]),
    ]
    outs = [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("padded", T.FLOAT, None)]
    g = h.make_graph(nodes, "opset18", [x], outs,
                     [ints("axes", [-1]), weight("w", [8, 32]), ints("pads", [1, 3]), ints("pad_axes", [2])])
    save(g, 18, 8, "opset18_reduce_split_pad.onnx")


def decoder23():
    """A decoder block at opset 23: RMSNormalization, RotaryEmbedding (3-D input with num_heads), Attention with
    grouped-query heads (q_num_heads 4, kv_num_heads 2, head size 16), causal, with past key and value."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 64])
    pos = h.make_tensor_value_info("position_ids", T.INT64, ["batch", "seq"])
    past_k = h.make_tensor_value_info("past_key", T.FLOAT, ["batch", 2, "past", 16])
    past_v = h.make_tensor_value_info("past_value", T.FLOAT, ["batch", 2, "past", 16])
    nodes = [
        h.make_node("RMSNormalization", ["x", "norm.weight"], ["h"], axis=-1, epsilon=1e-6),
        h.make_node("MatMul", ["h", "q_proj.weight"], ["q"]),
        h.make_node("MatMul", ["h", "k_proj.weight"], ["k"]),
        h.make_node("MatMul", ["h", "v_proj.weight"], ["v"]),
        h.make_node("RotaryEmbedding", ["q", "cos_cache", "sin_cache", "position_ids"], ["q_rot"], num_heads=4),
        h.make_node("RotaryEmbedding", ["k", "cos_cache", "sin_cache", "position_ids"], ["k_rot"], num_heads=2),
        h.make_node("Attention", ["q_rot", "k_rot", "v", "", "past_key", "past_value"],
                    ["attn", "present_key", "present_value"], is_causal=1, q_num_heads=4, kv_num_heads=2),
        h.make_node("MatMul", ["attn", "o_proj.weight"], ["o"]),
        h.make_node("Add", ["x", "o"], ["y"]),
    ]
    outs = [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("y", "present_key", "present_value")]
    inits = [weight("norm.weight", [64]), weight("q_proj.weight", [64, 64]), weight("k_proj.weight", [64, 32]),
             weight("v_proj.weight", [64, 32]), weight("o_proj.weight", [64, 64]), weight("cos_cache", [256, 8]),
             weight("sin_cache", [256, 8])]
    g = h.make_graph(nodes, "decoder23", [x, pos, past_k, past_v], outs, inits)
    save(g, 23, 11, "opset23_decoder_gqa.onnx")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    opset18()
    decoder23()
