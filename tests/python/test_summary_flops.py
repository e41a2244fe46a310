"""summary and flops: the same documents as the CLI, and the Result's views of them."""
import inspect
import json
import os
import re
import subprocess

import pytest

import ridge
from conftest import without_inputs


def test_summary_json_is_the_clis(ridge_cli):
    r = ridge.summary("resnet18", batch=2)
    cli = ridge_cli("summary", "resnet18", "--batch", "2")
    assert without_inputs(json.loads(r.to_json())) == without_inputs(cli)
    assert r.data["command"] == "summary"
    assert r.data["inputs"]["batch"] == 2


def test_summary_with_convention_and_precision_is_the_clis(ridge_cli):
    r = ridge.summary("mobilenet_v2", convention="fvcore", precision="amp-bf16", optimizer="adam", depth=2)
    cli = ridge_cli("summary", "mobilenet_v2", "--convention", "fvcore", "--precision", "amp-bf16",
                    "--optimizer", "adam", "--depth", "2")
    assert without_inputs(r.data) == without_inputs(cli)


def test_summary_totals_and_layers_are_exact_ints():
    r = ridge.summary("resnet50")
    assert r.totals["params"] == 25557032  # torchvision's published count
    assert isinstance(r.totals["flops"], int)
    names = [row["name"] for row in r.layers]
    assert len(names) > 50 and all(isinstance(row, dict) for row in r.layers)
    assert sum(row["params"] for row in r.layers if row["params"] is not None and row["name"] != "total") \
        == r.totals["params"]


def test_flops_all_conventions_is_the_clis(ridge_cli):
    r = ridge.flops("resnet18", all_conventions=True, batch=2)
    cli = ridge_cli("flops", "resnet18", "--all-conventions", "--batch", "2")
    assert without_inputs(r.data) == without_inputs(cli)
    assert {row["convention"] for row in r.tables["conventions"]} >= {"ridge", "torchvision", "fvcore", "thop"}


def test_flops_one_convention():
    r = ridge.flops("resnet18", convention="torchvision")
    assert [row["convention"] for row in r.layers] == ["ridge", "torchvision"]


def test_repr_is_the_terminal_table():
    r = ridge.summary("mnist")
    text = repr(r)
    assert "params" in text and "mnist" in text
    assert r.to_text(80).count("\n") > 3


def test_repr_html_renders_tables_and_a_chart():
    r = ridge.summary("lenet5")
    html = r._repr_html_()
    assert html.startswith("<iframe") and "srcdoc=" in html
    page = r.to_html()
    assert "<table" in page and "<svg" in page and "lenet5" in page


def test_to_pandas_or_a_clear_import_error():
    r = ridge.summary("lenet5")
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            r.to_pandas()
        return
    df = r.to_pandas()
    assert list(df["name"]) == [row["name"] for row in r.layers]
    assert "flops" in df.columns


def test_markdown_and_notes():
    r = ridge.summary("mnist")
    assert r.to_markdown().startswith("#") or "|" in r.to_markdown()
    assert isinstance(r.notes, list)


def test_docstrings_carry_the_cli_help():
    assert "--batch" in ridge.summary.__doc__ and "--all-conventions" in ridge.flops.__doc__


def test_flops_of_an_llm_has_the_llm_table_of_the_cli(ridge_cli):
    r = ridge.flops("llama-2-7b", all_conventions=True)
    cli = ridge_cli("flops", "llama-2-7b", "--all-conventions")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.tables["llm_conventions"]


def test_flops_of_an_llm_config_dict_is_the_clis(ridge_cli, tmp_path):
    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
              "max_position_embeddings": 2048}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    r = ridge.flops(config, all_conventions=True)
    cli = ridge_cli("flops", str(path), "--all-conventions")
    assert r.tables["llm_conventions"] == cli["llm_conventions"]
    assert r.totals == cli["totals"]


def test_counts_beyond_64_bits_are_python_ints():
    # The JSON writes a count beyond uint64 as its exact decimal string; the Result's dicts hold it as an int.
    r = ridge.summary("resnet18", batch=2**32)
    doc = json.loads(r.to_json())  # the CLI's JSON, untouched
    assert isinstance(doc["totals"]["training_flops"], str) and int(doc["totals"]["training_flops"]) > 2**64
    big = [k for k, v in doc["totals"].items() if isinstance(v, str) and v.isdigit()]
    assert "backward_flops" in big and "training_flops" in big
    for key in big:
        assert r.totals[key] == int(doc["totals"][key]) and isinstance(r.totals[key], int), key
    t = r.totals
    assert t["training_flops"] == t["flops"] + t["backward_flops"]
    assert t["backward_flops"] == t["backward_input_flops"] + t["backward_weight_flops"]
    one = ridge.summary("resnet18").totals
    assert t["backward_flops"] == 2**32 * one["backward_flops"]
    for row in r.layers:  # strings that are not counts stay strings
        assert all(isinstance(row[k], str) for k in ("name", "op", "output_shape", "descriptor", "status"))
    assert r.data["title"] == doc["title"] and r.notes == doc["notes"]


def test_only_decimal_strings_beyond_64_bits_become_ints():
    exact = ridge._exact_counts
    assert exact({"name": "0", "shape": "4294967296x1000", "id": "18446744073709551615"}) == \
        {"name": "0", "shape": "4294967296x1000", "id": "18446744073709551615"}  # fits uint64: a count is an int
    assert exact({"a": "18446744073709551616", "b": "-9223372036854775809", "c": "0018446744073709551616",
                  "d": "+18446744073709551616"}) == \
        {"a": 2**64, "b": -2**63 - 1, "c": "0018446744073709551616", "d": "+18446744073709551616"}


def test_strict_raises_as_the_clis_strict(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="relu"),
                               helper.make_node("Frobnicate", ["t"], ["y"], name="frob", domain="my.domain")],
                              "g", [x], [y])
    path = tmp_path / "frob.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                             helper.make_opsetid("my.domain", 1)]).SerializeToString())
    message = ("--strict: {}: node 'frob' (op my.domain.Frobnicate) cannot be costed: op my.domain.Frobnicate has no "
               "cost rule".format(path))
    calls = [(ridge.summary, {}), (ridge.flops, {}), (ridge.predict, {"device": "a100"}),
             (ridge.roofline, {"device": "a100"}), (ridge.measure, {"repeat": 2, "max_seconds": 1, "machine": "none"})]
    for fn, kwargs in calls:
        with pytest.raises(ridge.Error) as e:
            fn(str(path), strict=True, **kwargs)
        assert str(e.value) == message, fn.__name__
        fn(str(path), **kwargs)  # without strict: lower bounds
    r = ridge.summary("mnist", strict=True)
    assert r.data["inputs"]["strict"] is True and r.data["complete"] is True
    binary = os.environ.get("RIDGE_BINARY")
    if binary and os.path.exists(binary):
        out = subprocess.run([binary, "summary", str(path), "--strict"], capture_output=True, text=True)
        assert out.returncode == 1 and out.stderr.strip() == "ridge: error: " + message


def _cli_options(command):
    """The long names of `ridge COMMAND --help`'s options, less help, version and the output options."""
    text = ridge._HELP[command].split("\nOutput:")[0]
    names = {m.group(2) for m in (re.match(r"\s+(-\w,)?--([\w-]+)", line) for line in text.splitlines()) if m}
    return names - {"help", "version", "plot"}


@pytest.mark.parametrize("command", ["summary", "flops", "predict", "devices", "serve", "train", "report", "roofline",
                                     "measure", "ingest"])
def test_every_cli_option_is_a_keyword_or_its_docstring_says_what_instead(command):
    if not ridge._HELP:
        pytest.skip("a build without the CLI's help")
    fn = getattr(ridge, command)
    params = set(inspect.signature(fn).parameters)
    notes = " ".join(ridge._KEYWORD_NOTES.get(command, []))
    for option in _cli_options(command):
        assert option.replace("-", "_") in params or "--" + option in notes, (command, option)
    assert "keyword arguments are the options' long names" in fn.__doc__
    if "--strict" in ridge._HELP[command]:
        assert "strict" in params
