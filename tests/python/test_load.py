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
