"""predict and devices: the CLI's documents from the library calls."""
import pytest

import ridge
from conftest import without_inputs


def test_predict_json_is_the_clis(ridge_cli):
    r = ridge.predict("resnet18", device="a100", batch=8)
    cli = ridge_cli("predict", "resnet18", "--device", "a100", "--batch", "8")
    assert without_inputs(r.data) == without_inputs(cli)
    assert r.totals["total_time_s"] > 0 and r.totals["device"]
    assert len(r.layers) > 20


def test_predict_training_data_parallel_is_the_clis(ridge_cli):
    r = ridge.predict("resnet50", device="a100", batch=32, train=True, precision="amp-bf16", devices_count=16,
                      gpus_per_node=8, inter_node="ib-hdr")
    cli = ridge_cli("predict", "resnet50", "--device", "a100", "--batch", "32", "--train", "--precision", "amp-bf16",
                    "--devices-count", "16", "--gpus-per-node", "8", "--inter-node", "ib-hdr")
    assert without_inputs(r.data) == without_inputs(cli)
    assert "buckets" in r.tables and "data_parallel" in r.fields


def test_predict_hand_given_flops():
    r = ridge.predict("paper-model", device="v100", flops=15503 * 10**6)
    assert r.layers[0]["flops"] == 15503 * 10**6


def test_predict_unknown_device_is_ridge_error():
    with pytest.raises(ridge.Error, match="nosuchgpu"):
        ridge.predict("mnist", device="nosuchgpu")


@pytest.mark.parametrize("kwargs, match", [
    ({"precision": "fp7"}, "precision"),
    ({"combine": "avg"}, "combine"),
    ({"ppp": 0}, "ppp"),
    ({"devices_count": 0}, "devices_count"),
    ({"flops": -5}, "flops"),
])
def test_predict_bad_arguments_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ridge.predict("mnist", device="a100", **kwargs)


def test_predict_requires_a_device():
    with pytest.raises(TypeError):
        ridge.predict("mnist")


def test_devices_is_the_clis(ridge_cli):
    r = ridge.devices()
    cli = ridge_cli("devices")
    assert without_inputs(r.data) == without_inputs(cli)
    ids = [row["id"] for row in r.layers]
    assert "a100-sxm4-40gb" in ids or any(i.startswith("a100") for i in ids)


def test_devices_bad_folder_is_ridge_error(tmp_path):
    (tmp_path / "bad.json").write_text("{ not json")
    with pytest.raises(ridge.Error, match="bad.json"):
        ridge.devices(devices_dir=str(tmp_path))


def test_predict_html_has_the_time_share_chart():
    page = ridge.predict("lenet5", device="a100").to_html()
    assert "<svg" in page and "predicted time" in page
