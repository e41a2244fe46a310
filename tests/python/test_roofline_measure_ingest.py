"""roofline, measure and ingest: the library calls behind the CLI's commands."""
import os

import pytest

import ridge
from conftest import without_inputs

SHARED = os.environ.get("RIDGE_SHARED_DIR", "")
NCU = os.path.join(SHARED, "fixtures", "profiles", "01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log")


def test_roofline_json_is_the_clis(ridge_cli):
    r = ridge.roofline(["vgg11", "resnet18"], device=["v100", "a100"], batch=16)
    cli = ridge_cli("roofline", "vgg11", "resnet18", "--device", "v100", "--device", "a100", "--batch", "16")
    assert without_inputs(r.data) == without_inputs(cli)
    assert {"devices", "models"} <= set(r.tables)
    assert r.to_html().count("<svg") >= 2  # one roofline per device


def test_roofline_of_a_module_and_a_zoo_model():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    r = ridge.roofline([model, "mnist"], input_size=(64,), device="a100")
    assert [row["model"] for row in r.tables["models"]][:1] == ["Sequential"]


def test_roofline_unknown_device_is_ridge_error():
    with pytest.raises(ridge.Error, match="nosuchgpu"):
        ridge.roofline("mnist", device="nosuchgpu")


def test_measure_times_every_layer():
    r = ridge.measure("mnist", repeat=3, max_seconds=1, machine="none", threads=1)
    executed = [row for row in r.layers if row["status"] == "executed"]
    assert executed and all(row["time_s"] > 0 for row in executed)
    with pytest.raises(ValueError, match="threads"):
        ridge.measure("mnist", threads=-1)


def test_measure_a_module():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    r = ridge.measure(model, input_size=(64,), batch=4, repeat=3, max_seconds=1, machine="none", threads=1)
    assert any(row["status"] == "executed" for row in r.layers)


@pytest.mark.skipif(not os.path.exists(NCU), reason="shared fixtures absent")
def test_ingest_is_the_clis(ridge_cli):
    r = ridge.ingest(NCU, model="resnet18", batch=10, train=True)
    cli = ridge_cli("ingest", NCU, "--model", "resnet18", "--batch", "10", "--train")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.layers and "compare" in r.tables


@pytest.mark.skipif(not os.path.exists(NCU), reason="shared fixtures absent")
def test_ingest_takes_the_clis_device_precision_and_force(ridge_cli):
    # The docstring promised the CLI's options; device, precision and force were missing, so a profile of another
    # model could not be used at all from Python.
    r = ridge.ingest(NCU, model="resnet18", batch=10, train=True, device="a100")
    cli = ridge_cli("ingest", NCU, "--model", "resnet18", "--batch", "10", "--train", "--device", "a100")
    assert without_inputs(r.data) == without_inputs(cli)
    with pytest.raises(ridge.Error, match="use --force"):
        ridge.ingest(NCU, model="resnet50", batch=10)
    forced = ridge.ingest(NCU, model="resnet50", batch=10, force=True)
    assert any(n.startswith("forced:") for n in forced.notes)


H200 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gpu", "h200")


def test_ingest_joins_slices_and_takes_the_calibration(ridge_cli):
    # The two ncu slices of one H200 training step (--launch-skip) are one capture; the per-family prediction is the
    # shipped calibration's, or the roofline bound with calibration="none", as on the command line.
    files = [os.path.join(H200, f) for f in ("ncu_resnet50_train_bs64.csv", "ncu_resnet50_train_bs64_rest.csv")]
    r = ridge.ingest(files, join="sequence", model="resnet50", batch=64, train=True, device="h200",
                     precision="amp-bf16", calibration="none")
    cli = ridge_cli("ingest", *files, "--join", "sequence", "--model", "resnet50", "--batch", "64", "--train",
                    "--device", "h200", "--precision", "amp-bf16", "--calibration", "none")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.data["totals"]["kernels"] == 879
    assert "amp-bf16, upper bound (uncalibrated))" in repr(r)
    calibrated = ridge.ingest(files, join="sequence", model="resnet50", batch=64, train=True, device="h200",
                              precision="amp-bf16")
    assert "(resnet50 on h200-sxm, amp-bf16, calibrated)" in repr(calibrated)


def test_ingest_needs_files():
    with pytest.raises(ValueError, match="files"):
        ridge.ingest([])
    with pytest.raises(ridge.Error):
        ridge.ingest("/nonexistent/profile.log")


def test_roofline_names_in_memory_models_by_their_labels():
    cfg = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 1000, "max_position_embeddings": 2048,
           "_name_or_path": "tiny-llama"}
    r = ridge.roofline([cfg, cfg], device="h100", seq_len=64, summary_only=True)
    assert [m["model"] for m in r["models"]] == ["tiny-llama", "tiny-llama-2"]


def test_measure_threads_0_is_every_cpu_even_after_torch_set_one():
    # torch sets OpenMP's default to its own thread count (often 1): threads=0 asks for this process's CPUs.
    torch = pytest.importorskip("torch")
    import os
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        r = ridge.measure("mnist", repeat=3, max_seconds=1, machine="none", threads=0)
    finally:
        torch.set_num_threads(before)
    assert "batch 1, {} thread{})".format(cpus, "" if cpus == 1 else "s") in r.title, r.title
    assert r.data["inputs"]["threads"] == 0  # as asked, as the CLI records --threads 0


def test_measure_gives_torch_its_thread_count_back():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ridge.measure("mnist", repeat=3, max_seconds=1, machine="none", threads=0)
        assert torch.get_num_threads() == 1
        ridge.measure("mnist", repeat=3, max_seconds=1, machine="none", threads=2)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
