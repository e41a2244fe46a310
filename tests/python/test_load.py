"""Models from every kind of source, and errors mapped to Python exceptions."""
import json

import pytest

import ridge


def test_zoo_name_binds_batch_and_input_size():
    g = ridge.load("resnet18", input_size=(3, 64, 64)).graph(batch=2)
    assert g.name == "resnet18"
    assert g.inputs == [("input", [2, 3, 64, 64])]


def test_hf_config_dict_and_path_give_the_same_graph(tmp_path):
    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
              "max_position_embeddings": 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    a = ridge.summary(config, seq_len=16)
    b = ridge.summary(str(path), seq_len=16)
    assert a.totals == b.totals
    assert a.totals["params"] > 0


def test_unknown_model_is_ridge_error_with_suggestions():
    with pytest.raises(ridge.Error, match="resnet18"):
        ridge.summary("resnet1800")


def test_missing_file_is_ridge_error():
    with pytest.raises(ridge.Error, match="nope.onnx"):
        ridge.summary("/nonexistent/nope.onnx")


def test_garbage_onnx_bytes_is_ridge_error():
    with pytest.raises(ridge.Error):
        ridge.summary(b"not a protobuf at all")


@pytest.mark.parametrize("kwargs, match", [
    ({"batch": 0}, "batch"),
    ({"batch": 1.5}, "batch"),
    ({"dtype": "int3"}, "dtype"),
    ({"convention": "nosuchtool"}, "convention"),
    ({"input_size": "3x224x224"}, "input_size"),
    ({"depth": -1}, "depth"),
    ({"optimizer": "lion"}, "optimizer"),
])
def test_bad_arguments_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ridge.summary("mnist", **kwargs)


def test_unsupported_model_type_is_value_error():
    with pytest.raises(ValueError, match="model"):
        ridge.summary(42)


def test_error_is_an_exception_class_of_the_package():
    assert issubclass(ridge.Error, Exception)
    assert not issubclass(ridge.Error, ValueError)


def test_numpy_integers_are_integers():
    np = pytest.importorskip("numpy")
    r = ridge.summary("resnet18", batch=np.int64(2), input_size=np.array([3, 64, 64]), depth=np.int32(1))
    assert r.data["inputs"]["batch"] == 2 and r.data["inputs"]["input_size"] == "3x64x64"
    assert r.totals == ridge.summary("resnet18", batch=2, input_size=(3, 64, 64), depth=1).totals
    assert ridge.load("resnet18", input_size=np.array([3, 64, 64])).graph(np.uint8(2)).inputs == \
        [("input", [2, 3, 64, 64])]
    for bad in (np.True_, np.float64(2.0), np.array([2, 3])):
        with pytest.raises(ValueError, match="batch: .* is not a positive integer"):
            ridge.summary("mnist", batch=bad)


@pytest.mark.parametrize("call, match", [
    (lambda: ridge.predict("mnist", device=None), "device: a device name is required"),
    (lambda: ridge.predict("mnist", device=""), "device: a device name is required"),
    (lambda: ridge.serve("llama-2-7b", device=None), "device: a device name is required"),
    (lambda: ridge.train("llama-2-7b", device=None, gpus=8), "device: a device name is required"),
    (lambda: ridge.roofline("mnist", device=None), "device: a device name is required"),
    (lambda: ridge.roofline("mnist", device=["a100", ""]), "device: a device name is required"),
    (lambda: ridge.summary(b""), "model: the ONNX bytes are empty"),
    (lambda: ridge.summary(bytearray()), "model: the ONNX bytes are empty"),
    (lambda: ridge.summary("mnist", dtype=""), "dtype: '' is not an element type"),
    (lambda: ridge.flops("mnist", dtype=" "), "dtype: ' ' is not an element type"),
    (lambda: ridge.predict("mnist", device="a100", dtype=""), "dtype: '' is not an element type"),
    (lambda: ridge.summary("mnist", depth=1000), "depth: 1000 is not an integer from 0 to 64"),
    (lambda: ridge.summary("mnist", input_size=4.5), "input_size: give a tuple of ints"),
])
def test_argument_errors_say_what_is_wrong(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_report_device_none_is_no_device_but_empty_is_refused(tmp_path):
    with pytest.raises(ValueError, match="device: a device name is required"):
        ridge.report("mnist", tmp_path / "x.html", device="")
    assert ridge.report("mnist", tmp_path / "ok.html", device=None, sweep="1,2").endswith("ok.html")
