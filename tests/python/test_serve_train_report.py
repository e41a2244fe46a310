"""serve, train and report: library calls like the others, equal to the CLI's output."""
import json
import os
import subprocess

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
    assert r.layers == r.data["ops"]  # every op of every layer, not the per-op-type groups
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


def test_train_flash2_is_the_clis(ridge_cli):
    r = ridge.train("llama-2-7b", device="h100", gpus=8, attention="flash2")
    cli = ridge_cli("train", "llama-2-7b", "--device", "h100", "--gpus", "8", "--attention", "flash2")
    assert without_inputs(r.data) == without_inputs(cli)
    assert any("flash-attention-2 at 35.0 %" in n for n in r.data["notes"])
    with pytest.raises(ValueError, match="flash2"):
        ridge.train("llama-2-7b", device="h100", gpus=8, attention="flash3")


TINY_MOE = {"model_type": "qwen3_moe", "hidden_size": 64, "moe_intermediate_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8,
            "num_experts_per_tok": 2, "vocab_size": 256, "max_position_embeddings": 512}


def test_moe_grouped_is_the_clis(ridge_cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_MOE))
    r = ridge.serve(str(config), device="h100", batch=4, prompt=64, generate=8, moe="grouped")
    cli = ridge_cli("serve", str(config), "--device", "h100", "--batch", "4", "--prompt", "64", "--generate", "8",
                    "--moe", "grouped")
    assert without_inputs(r.data) == without_inputs(cli)
    assert any("--moe grouped" in n for n in r.data["notes"])
    eager = ridge.serve(str(config), device="h100", batch=4, prompt=64, generate=8)
    assert eager.totals["decode_time_per_token_s"] > r.totals["decode_time_per_token_s"]
    t = ridge.train(str(config), device="h100", gpus=8, seq=256, moe="grouped")
    assert any("--moe grouped" in n for n in t.data["notes"])
    with pytest.raises(ValueError, match="moe"):
        ridge.serve(str(config), device="h100", moe="fused")


def test_data_parallel_attention_is_the_clis(ridge_cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_MOE))
    r = ridge.serve(str(config), device="h100", batch=8, prompt=64, generate=8, dp=4)
    cli = ridge_cli("serve", str(config), "--device", "h100", "--batch", "8", "--prompt", "64", "--generate", "8",
                    "--dp", "4")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["alltoall_time_per_layer_decode_s"] > 0
    assert any("--dp 4" in n for n in r.data["notes"])
    with pytest.raises(ValueError, match="dp"):
        ridge.serve(str(config), device="h100", dp=0)
    with pytest.raises(ridge.Error, match="which 3 GPUs do not divide"):
        ridge.serve(str(config), device="h100", prompt=64, generate=8, dp=3)


def test_mla_latent_is_the_clis(ridge_cli):
    r = ridge.serve("deepseek-v2-lite", device="h100", prompt=256, generate=8, mla="latent")
    cli = ridge_cli("serve", "deepseek-v2-lite", "--device", "h100", "--prompt", "256", "--generate", "8",
                    "--mla", "latent")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["kv_cache_bytes"] == r.totals["latent_kv_cache_bytes"]
    assert any("--mla latent" in n for n in r.data["notes"])
    with pytest.raises(ValueError, match="mla"):
        ridge.serve("deepseek-v2-lite", device="h100", mla="compressed")


def test_serve_errors():
    with pytest.raises(ridge.Error, match="nosuch"):
        ridge.serve("nosuch", device="a100")
    with pytest.raises(ValueError, match="batch"):
        ridge.serve("llama-2-7b", device="a100", batch=0)
    with pytest.raises(TypeError):
        ridge.train("llama-2-7b", device="a100", gpus=8, no_such_option=3)
    with pytest.raises(ValueError, match="zero"):
        ridge.train("llama-2-7b", device="a100", gpus=8, zero=7)
    with pytest.raises(ValueError, match="recompute"):
        ridge.train("llama-2-7b", device="a100", gpus=8, recompute="most")


def test_train_options_json_is_the_clis(ridge_cli):
    r = ridge.train("llama-2-13b", device="h100", gpus=32, tp=4, pp=2, zero="fsdp", sp=True, recompute="selective",
                    micro_batch=2, tokens=1e12, attention="fused", calibration="none")
    cli = ridge_cli("train", "llama-2-13b", "--device", "h100", "--gpus", "32", "--tp", "4", "--pp", "2", "--zero",
                    "fsdp", "--sp", "--recompute", "selective", "--micro-batch", "2", "--tokens", "1e12",
                    "--attention", "fused", "--calibration", "none")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["days_for_budget"] > 0


def test_train_context_parallel_is_the_clis(ridge_cli):
    r = ridge.train("llama-2-7b", device="h100", gpus=16, cp=2, seq=4096, global_batch=16, zero=1, attention="fused")
    cli = ridge_cli("train", "llama-2-7b", "--device", "h100", "--gpus", "16", "--cp", "2", "--seq", "4096",
                    "--global-batch", "16", "--zero", "1", "--attention", "fused")
    assert without_inputs(r.data) == without_inputs(cli)
    assert "cp 2" in r.data["title"] and "dp 8" in r.data["title"]
    assert "cp_comm_s" in r.totals
    with pytest.raises(ridge.Error, match="--cp 3"):
        ridge.train("llama-2-7b", device="h100", gpus=12, cp=3, seq=4096)
    with pytest.raises(ValueError, match="cp"):
        ridge.train("llama-2-7b", device="h100", gpus=8, cp=0)


def test_train_a_config_dict():
    r = ridge.train(TINY_LLAMA, device="a100", gpus=2, seq=512)
    assert r.totals["model_flops"] > 0


def _cli_report(tmp_path, name, *args):
    binary = os.environ.get("RIDGE_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("RIDGE_BINARY is not set to the built ridge binary")
    path = tmp_path / name
    out = subprocess.run([binary, "report", *args, "-o", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return path.read_text()


def test_report_html_is_the_clis(tmp_path):
    path = ridge.report("lenet5", tmp_path / "py.html", batch=2, device=["a100", "h100"], sweep="1,2,4", depth=0,
                        precision="amp-bf16", train=True, optimizer="adam")
    cli = _cli_report(tmp_path, "cli.html", "lenet5", "-b", "2", "-d", "a100", "-d", "h100", "--sweep", "1,2,4",
                      "--depth", "0", "-p", "amp-bf16", "--train", "--optimizer", "adam")
    assert open(path).read() == cli


def test_serve_report_html_is_the_clis(tmp_path):
    path = ridge.report("llama-2-7b", tmp_path / "py.html", batch=4, device="a100", serve=True, prompt=256,
                        generate=32, tp=2)
    cli = _cli_report(tmp_path, "cli.html", "llama-2-7b", "--serve", "-b", "4", "-d", "a100", "--prompt", "256",
                      "--generate", "32", "--tp", "2")
    assert open(path).read() == cli


def test_report_errors(tmp_path):
    with pytest.raises(ValueError, match="sweep"):
        ridge.report("lenet5", tmp_path / "x.html", sweep="1,x")
    with pytest.raises(ValueError, match="serve"):
        ridge.report("llama-2-7b", tmp_path / "x.html", serve=True)
    with pytest.raises(ridge.Error, match="nosuch"):
        ridge.report("nosuch", tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


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


def test_report_takes_serves_kernel_options(tmp_path):
    # As `ridge report --serve --moe grouped --attention flash2`: the page names the choices it was timed with.
    path = ridge.report(TINY_LLAMA, str(tmp_path / "s.html"), serve=True, device="h100", prompt=64, generate=8,
                        attention="flash2", moe="grouped")
    html = open(path, encoding="utf-8").read()
    assert "flash-attention-2" in html
    with pytest.raises(ValueError, match="moe needs serve=True"):
        ridge.report("resnet18", str(tmp_path / "x.html"), moe="grouped")


@pytest.mark.parametrize("sweep, match", [
    ("1:100000000", "sweep: '1:100000000' has more than 10000 points"),
    ("1:20000", "has more than 10000 points"),
    ("5:1", "sweep: '5:1' stops before it starts"),
    ("1:0:1", "batch sizes must be positive"),
    ("1,,2", "'' is not a positive integer"),
    ("-1,2", "'-1' is not a positive integer"),
    ("1:2:3:4", "is not START:STOP"),
    ("1:9999999999999", "too large"),
])
def test_report_refuses_the_sweeps_the_cli_refuses(tmp_path, sweep, match):
    # As `ridge report --sweep` (cli::parse_batch_list): refused at once, not run for minutes.
    with pytest.raises(ValueError, match=match):
        ridge.report("mnist", tmp_path / "x.html", sweep=sweep)
    assert not (tmp_path / "x.html").exists()


def test_report_sweep_at_the_limit_runs(tmp_path):
    assert ridge._batches("1:10001") == list(range(1, 10002))  # (stop - start) / step = 10000: the CLI takes it
    assert ridge._batches("2:9:3") == [2, 5, 8]
    assert os.path.exists(ridge.report("mnist", tmp_path / "ok.html", sweep="1:64:8"))


@pytest.mark.parametrize("kwargs, match", [
    ({"tp": 2}, "tp needs serve=True"),
    ({"tp": 1}, "tp needs serve=True"),  # given at its default: the CLI refuses `--tp 1` too
    ({"prompt": 64}, "prompt needs serve=True"),
    ({"generate": 8}, "generate needs serve=True"),
    ({"weights": "int4"}, "weights needs serve=True"),
    ({"kv": "fp8"}, "kv needs serve=True"),
    ({"attention": "flash2"}, "attention needs serve=True"),
    ({"mla": "latent"}, "mla needs serve=True"),
])
def test_report_refuses_serving_options_without_serve(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ridge.report("mnist", tmp_path / "x.html", **kwargs)


@pytest.mark.parametrize("kwargs", [{"sweep": "1,2"}, {"depth": 0}, {"train": True}, {"measure": False},
                                    {"dtype": "fp16"}, {"seq_len": 64}, {"optimizer": "adam"}, {"strict": True}])
def test_serve_report_refuses_the_model_reports_options(tmp_path, kwargs):
    with pytest.raises(ValueError, match="{} does not apply to serve=True".format(next(iter(kwargs)))):
        ridge.report(TINY_LLAMA, tmp_path / "x.html", serve=True, device="h100", **kwargs)


def test_report_depth_is_capped_as_summarys(tmp_path):
    for depth in (1000, 65, -1, True):
        with pytest.raises(ValueError, match="depth: .* is not an integer from 0 to 64"):
            ridge.report("mnist", tmp_path / "x.html", depth=depth)
    with pytest.raises(ValueError, match="depth: 1000 is not an integer from 0 to 64"):
        ridge.summary("mnist", depth=1000)


def test_precision_modes_are_the_clis(ridge_cli, tmp_path):
    """serve(precision=) and train(precision=) read predict's precision table as the CLI's --precision does."""
    r = ridge.serve("llama-2-7b", device="a100", prompt=128, generate=8, precision="amp-bf16")
    cli = ridge_cli("serve", "llama-2-7b", "--device", "a100", "--prompt", "128", "--generate", "8",
                    "--precision", "amp-bf16")
    assert without_inputs(r.data) == without_inputs(cli)
    assert "weights fp32, KV bf16, compute bf16" in r.data["title"]
    kept = ridge.serve("llama-2-7b", device="a100", prompt=128, generate=8, precision="bf16", kv="fp8")
    assert "weights bf16, KV fp8, compute bf16" in kept.data["title"]
    t = ridge.train("llama-2-7b", device="a100", gpus=8, zero=3, seq=1024, global_batch=16, precision="amp-bf16")
    tcli = ridge_cli("train", "llama-2-7b", "--device", "a100", "--gpus", "8", "--zero", "3", "--seq", "1024",
                     "--global-batch", "16", "--precision", "amp-bf16")
    assert without_inputs(t.data) == without_inputs(tcli)
    default = ridge.train("llama-2-7b", device="a100", gpus=8, zero=3, seq=1024, global_batch=16)
    assert t.data["memory_per_gpu_bytes"]["weights"] == 2 * default.data["memory_per_gpu_bytes"]["weights"]
    with pytest.raises(ValueError, match="give one"):
        ridge.train("llama-2-7b", device="a100", gpus=8, precision="bf16", compute="bf16")
    with pytest.raises(ValueError, match="inference mode"):
        ridge.train("llama-2-7b", device="a100", gpus=8, precision="int8")
    with pytest.raises(ValueError, match="give one"):
        ridge.serve("llama-2-7b", device="a100", precision="fp16", compute="fp16")
    page = ridge.report("llama-2-7b", tmp_path / "serve.html", device="a100", serve=True, precision="amp-bf16")
    assert "weights fp32, KV bf16, compute bf16" in open(page).read()
