#!/usr/bin/python3
"""Writes small ONNX models with control flow and sequences into tests/load/onnx_control_flow_seeds/: seeds for
scripts/fuzz-onnx.sh, so that the fuzzer starts from models the importer inlines (src/load/onnx/inline.cpp).
Run with Debian's python3-onnx: `python3 tests/load/make_control_flow_seeds.py`."""
import os

from onnx import TensorProto as T
from onnx import helper as h

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_control_flow_seeds")


def ints(name, values, scalar=False):
    return h.make_tensor(name, T.INT64, [] if scalar else [len(values)], values)


def save(nodes, inputs, outputs, inits, name):
    g = h.make_graph(nodes, name, inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="ridge-tests")
    m.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


x = h.make_tensor_value_info("x", T.FLOAT, [2, 10, 4])


def untyped(name, elem):
    return h.make_tensor_value_info(name, elem, None)


# A loop with a carried tensor and a scan output.
body = h.make_graph(
    [h.make_node("Identity", ["c"], ["c_out"]), h.make_node("Add", ["acc", "x"], ["acc_out"]),
     h.make_node("Relu", ["acc_out"], ["scan"])],
    "body", [untyped("i", T.INT64), untyped("c", T.BOOL), untyped("acc", T.FLOAT)],
    [untyped("c_out", T.BOOL), untyped("acc_out", T.FLOAT), untyped("scan", T.FLOAT)])
save([h.make_node("Loop", ["trip", "", "x"], ["acc", "scans"], body=body)], [x],
     [untyped("acc", T.FLOAT), untyped("scans", T.FLOAT)], [ints("trip", [3], True)], "loop_scan")

# torch's tensor_split: a loop that slices chunks into a sequence, read back with SequenceAt.
body = h.make_graph(
    [h.make_node("Gather", ["bounds", "i"], ["start"]), h.make_node("Add", ["i", "one"], ["i1"]),
     h.make_node("Gather", ["bounds", "i1"], ["end"]), h.make_node("Unsqueeze", ["start", "zero"], ["starts"]),
     h.make_node("Unsqueeze", ["end", "zero"], ["ends"]),
     h.make_node("Slice", ["x", "starts", "ends", "axes"], ["chunk"]),
     h.make_node("SequenceInsert", ["seq", "chunk"], ["seq_out"]), h.make_node("Identity", ["c"], ["c_out"])],
    "body", [untyped("i", T.INT64), untyped("c", T.BOOL), h.make_tensor_sequence_value_info("seq", T.FLOAT, None)],
    [untyped("c_out", T.BOOL), h.make_tensor_sequence_value_info("seq_out", T.FLOAT, None)])
save([h.make_node("SequenceEmpty", [], ["empty"], dtype=T.FLOAT),
      h.make_node("Loop", ["trips", "", "empty"], ["chunks"], body=body),
      h.make_node("SequenceAt", ["chunks", "at1"], ["patches"]),
      h.make_node("SequenceLength", ["chunks"], ["count"]),
      h.make_node("ConcatFromSequence", ["chunks"], ["joined"], axis=1)],
     [x], [untyped("patches", T.FLOAT), untyped("count", T.INT64), untyped("joined", T.FLOAT)],
     [ints("bounds", [0, 1, 10]), ints("axes", [1]), ints("zero", [0]), ints("one", [1], True),
      ints("trips", [2], True), ints("at1", [1], True)], "tensor_split")

# An If on a shape test, and SplitToSequence without sizes.
then_g = h.make_graph([h.make_node("Neg", ["x"], ["neg"])], "then", [], [untyped("neg", T.FLOAT)])
else_g = h.make_graph([h.make_node("Relu", ["x"], ["relu"])], "else", [], [untyped("relu", T.FLOAT)])
save([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"]),
      h.make_node("Equal", ["n", "two"], ["same"]),
      h.make_node("If", ["same"], ["picked"], then_branch=then_g, else_branch=else_g),
      h.make_node("SplitToSequence", ["picked"], ["rows"], axis=1, keepdims=0),
      h.make_node("SequenceAt", ["rows", "last"], ["row"])],
     [x], [untyped("row", T.FLOAT)], [ints("zero", [0], True), ints("two", [2], True), ints("last", [-1], True)],
     "if_split")
