#!/usr/bin/python3
"""Writes tests/load/data/ort_attention_ops.onnx (and incomplete_custom_op.onnx, a Relu then an op ridge has no
record for, for the INCOMPLETE line and --strict): ONNX Runtime's com.microsoft attention fusions in one small
weightless model, as its transformer optimizer leaves them. Run with Debian's python3-onnx:
`/usr/bin/python3 tests/load/make_ort_contrib_models.py`. Built with onnx.helper without the checker (libonnx has no
schema for contrib ops); float initializers carry dims only, integer ones their values.

  x [1, 4, 32] -> Attention (packed QKV weights [32, 96] + bias, 4 heads)
               -> MatMul q/k/v -> MultiHeadAttention (bias [96], 4 heads)
               -> MatMul q [32, 32], k/v [32, 16] -> GroupQueryAttention (4 heads, 2 kv heads, head 8, rotary,
                  past 6 + 4 new = total_sequence_length 10)"""
import os

from onnx import TensorProto as T
from onnx import helper as h

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def weight(name, dims):
    t = T(name=name, data_type=T.FLOAT)  # dims only (no payload)
    t.dims.extend(dims)
    return t


def ms(op, inputs, outputs, **attrs):
    return h.make_node(op, inputs, outputs, name=op, domain="com.microsoft", **attrs)


def main():
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4, 32])
    past_k = h.make_tensor_value_info("past_key", T.FLOAT, [1, 2, 6, 8])
    past_v = h.make_tensor_value_info("past_value", T.FLOAT, [1, 2, 6, 8])
    nodes = [
        ms("Attention", ["x", "attn.weight", "attn.bias"], ["a"], num_heads=4),
        h.make_node("MatMul", ["a", "mha_q.weight"], ["mq"], name="mha_q"),
        h.make_node("MatMul", ["a", "mha_k.weight"], ["mk"], name="mha_k"),
        h.make_node("MatMul", ["a", "mha_v.weight"], ["mv"], name="mha_v"),
        ms("MultiHeadAttention", ["mq", "mk", "mv", "mha.bias"], ["m"], num_heads=4),
        h.make_node("MatMul", ["m", "gqa_q.weight"], ["gq"], name="gqa_q"),
        h.make_node("MatMul", ["m", "gqa_k.weight"], ["gk"], name="gqa_k"),
        h.make_node("MatMul", ["m", "gqa_v.weight"], ["gv"], name="gqa_v"),
        ms("GroupQueryAttention", ["gq", "gk", "gv", "past_key", "past_value", "seqlens_k", "total_sequence_length",
                                   "cos_cache", "sin_cache"], ["y", "present_key", "present_value"],
           num_heads=4, kv_num_heads=2, do_rotary=1),
    ]
    inits = [weight("attn.weight", [32, 96]), weight("attn.bias", [96]), weight("mha_q.weight", [32, 32]),
             weight("mha_k.weight", [32, 32]), weight("mha_v.weight", [32, 32]), weight("mha.bias", [96]),
             weight("gqa_q.weight", [32, 32]), weight("gqa_k.weight", [32, 16]), weight("gqa_v.weight", [32, 16]),
             h.make_tensor("seqlens_k", T.INT32, [1], [9]), h.make_tensor("total_sequence_length", T.INT32, [], [10]),
             weight("cos_cache", [16, 4]), weight("sin_cache", [16, 4])]
    outs = [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("y", "present_key", "present_value")]
    g = h.make_graph(nodes, "ort_attention_ops", [x, past_k, past_v], outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                     producer_name="ridge-tests")
    m.ir_version = 8
    with open(os.path.join(OUT, "ort_attention_ops.onnx"), "wb") as f:
        f.write(m.SerializeToString())



def incomplete():
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 8])
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Mystery", ["r"], ["y"], name="mystery", domain="com.example")]
    g = h.make_graph(nodes, "incomplete", [x], [h.make_tensor_value_info("y", T.FLOAT, [1, 8])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)],
                     producer_name="ridge-tests")
    m.ir_version = 8
    with open(os.path.join(OUT, "incomplete_custom_op.onnx"), "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
    incomplete()
