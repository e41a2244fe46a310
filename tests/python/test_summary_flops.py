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
