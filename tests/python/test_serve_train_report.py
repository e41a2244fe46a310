"""serve (a library call, like the others), train and report (still run through the ridge binary)."""
import json

import pytest

import ridge
from conftest import without_inputs

TINY_LLAMA = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
              "max_position_embeddings": 2048}


def test_serve_json_is_the_clis(ridge_cli):
    r = ridge.serve("llama-2-7b", device="a100", batch=8, prompt=1024, generate=64)
    cli = ridge_cli("serve", "llama-2-7b", "--device", "a100", "--batch", "8", "--prompt", "1024",
                    "--generate", "64")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["ttft_s"] > 0 and r.layers
    assert "llama-2-7b" in repr(r)


def test_serve_a_config_dict():
    r = ridge.serve(TINY_LLAMA, device="h100", prompt=128, generate=16)
    assert r.totals["kv_cache_bytes"] > 0


def test_train_json_is_the_clis(ridge_cli):
    r = ridge.train("llama-2-7b", device="a100", gpus=64, tp=2, dp=32, seq=4096, global_batch=1024, zero=1)
    cli = ridge_cli("train", "llama-2-7b", "--device", "a100", "--gpus", "64", "--tp", "2", "--dp", "32",
                    "--seq", "4096", "--global-batch", "1024", "--zero", "1")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["model_flops"] > 0


def test_serve_errors():
    with pytest.raises(ridge.Error, match="nosuch"):
        ridge.serve("nosuch", device="a100")
    with pytest.raises(ValueError, match="batch"):
        ridge.serve("llama-2-7b", device="a100", batch=0)
    with pytest.raises(ValueError):
        ridge.train("llama-2-7b", device="a100", gpus=8, no_such_option=3)


def test_report_writes_html(tmp_path):
    path = ridge.report("lenet5", tmp_path / "lenet5.html", device="a100", sweep="1,2")
    text = open(path).read()
    assert text.lstrip().lower().startswith("<!doctype html") and "lenet5" in text


def test_report_of_a_module(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 30 * 30, 10))
    path = ridge.report(model, tmp_path / "seq.html", input_size=(3, 32, 32), sweep="1,2")
    assert "Sequential" in open(path).read()
