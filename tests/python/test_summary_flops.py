"""summary and flops: the same documents as the CLI, and the Result's views of them."""
import json

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
