"""The executor's recurrent cells (oneDNN rnn / gru / lbr_gru / lstm) against PyTorch: nn.RNN, nn.GRU and nn.LSTM,
one and two layers, one and two directions, exported to ONNX with their weights; `ridge run` must reproduce
PyTorch's outputs. ONNX's own node tests cover the forward, single-layer cases with linear_before_reset 0; PyTorch
exports GRU with linear_before_reset 1 and stacks bidirectional layers, which only these cases reach."""
import json
import os
import subprocess

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

CASES = [
    ("RNN", 1, False, False),
    ("RNN", 2, True, True),
    ("GRU", 1, False, True),
    ("GRU", 2, True, False),
    ("LSTM", 1, False, True),
    ("LSTM", 2, True, True),
]


class WithState(torch.nn.Module):
    """The cell with explicit initial states as graph inputs, returning every output ONNX has."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x, *state):
        out = self.cell(x, state if len(state) > 1 else state[0]) if state else self.cell(x)
        y, last = out
        return (y, *last) if isinstance(last, tuple) else (y, last)


@pytest.mark.parametrize("kind,layers,bidirectional,initial_state", CASES)
def test_recurrent_cells_reproduce_pytorch(kind, layers, bidirectional, initial_state, tmp_path):
    binary = os.environ.get("RIDGE_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("RIDGE_BINARY is not set to the built ridge binary")
    torch.manual_seed(1)
    T, N, I, H = 5, 3, 4, 6
    cell = getattr(torch.nn, kind)(I, H, num_layers=layers, bidirectional=bidirectional)
    model = WithState(cell).eval()
    D = 2 if bidirectional else 1
    inputs = [torch.randn(T, N, I)]
    if initial_state:
        inputs.append(torch.randn(layers * D, N, H))
        if kind == "LSTM":
            inputs.append(torch.randn(layers * D, N, H))
    with torch.no_grad():
        outputs = model(*inputs)
        path = tmp_path / "cell.onnx"
        torch.onnx.export(model, tuple(inputs), str(path), opset_version=14)
    args = [binary, "run", str(path), "--threads", "1", "--rtol", "1e-4", "--atol", "1e-5", "--format", "json"]
    for i, t in enumerate(inputs):
        f = tmp_path / f"input_{i}.pb"
        f.write_bytes(numpy_helper.from_array(t.numpy()).SerializeToString())
        args += ["--input", str(f)]
    for i, t in enumerate(outputs):
        f = tmp_path / f"output_{i}.pb"
        f.write_bytes(numpy_helper.from_array(t.numpy()).SerializeToString())
        args += ["--output", str(f)]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    doc = json.loads(run.stdout)
    assert doc.get("not_executed", 0) == 0
    cells = [s for s in doc["steps"] if s.get("op") == kind]
    assert len(cells) == layers and all(s["status"] == "executed" for s in cells)
