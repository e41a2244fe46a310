"""torch.nn.Module input: exported in memory; the totals equal the CLI's on the same model's ONNX file."""
import pytest

import ridge

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")


@pytest.fixture(scope="module")
def resnet18():
    torch.manual_seed(0)
    return torchvision.models.resnet18()


def test_resnet18_module_equals_its_onnx_export_through_the_cli(resnet18, tmp_path, ridge_cli):
    r = ridge.summary(resnet18, input_size=(3, 224, 224))
    assert r.totals["params"] == 11689512  # torchvision's published count
    # The export ridge imported, written to a file and read by the CLI: the same document.
    path = tmp_path / "resnet18.onnx"
    path.write_bytes(ridge.load(resnet18, input_size=(3, 224, 224)).onnx_bytes())
    cli = ridge_cli("summary", str(path))
    assert r.totals == cli["totals"]
    assert r.data["memory"] == cli["memory"]
    assert [row["params"] for row in r.layers] == [row["params"] for row in cli["layers"]]
    flops_cli = ridge_cli("flops", str(path), "--all-conventions")
    assert ridge.flops(resnet18, input_size=(3, 224, 224), all_conventions=True).tables["conventions"] \
        == flops_cli["conventions"]


def test_resnet18_module_counts_equal_a_plain_export_through_the_cli(resnet18, tmp_path, ridge_cli):
    # torch.onnx.export's defaults (weights in, eval mode) fold each BatchNorm into its Conv; the CLI counts such
    # a file's FLOPs as the model's and says which parameters the file lost.
    path = tmp_path / "resnet18_plain.onnx"
    resnet18.eval()
    with torch.no_grad():
        torch.onnx.export(resnet18, torch.randn(1, 3, 224, 224), str(path))
    cli = ridge_cli("summary", str(path))
    r = ridge.summary(resnet18, input_size=(3, 224, 224))
    for key in ("flops", "macs", "backward_weight_flops"):
        assert r.totals[key] == cli["totals"][key], key
    assert any("BatchNorm folded" in n for n in cli["notes"])
    assert cli["totals"]["params"] < r.totals["params"]


def test_module_batch_binds_the_exported_batch_axis(resnet18):
    one = ridge.flops(resnet18, input_size=(3, 224, 224)).totals
    four = ridge.flops(resnet18, input_size=(3, 224, 224), batch=4).totals
    assert four["flops"] == 4 * one["flops"] and four["params"] == one["params"]


def test_module_is_exported_once_per_shape(resnet18):
    a = ridge.load(resnet18, input_size=(3, 224, 224))
    b = ridge.load(resnet18, input_size=(3, 224, 224))
    assert a._spec[1] is b._spec[1]
    assert a.label == "ResNet"


def test_module_with_two_example_inputs():
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, a, b):
            return self.fc(a + b)

    r = ridge.summary(Two(), example_inputs=(torch.randn(2, 8), torch.randn(2, 8)))
    assert r.totals["params"] == 8 * 4 + 4
    assert r.totals["macs"] == 2 * 8 * 4  # example inputs fix every shape, batch included
    with pytest.raises(ValueError, match="batch"):
        ridge.summary(Two(), example_inputs=(torch.randn(2, 8), torch.randn(2, 8)), batch=4)


def test_module_without_input_size_is_value_error(resnet18):
    with pytest.raises(ValueError, match="input_size"):
        ridge.summary(resnet18)


def test_failing_export_is_ridge_error():
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("cannot run this one")

    with pytest.raises(ridge.Error, match="Broken: torch.onnx.export failed: cannot run this one"):
        ridge.summary(Broken(), input_size=(4,))


def test_weights_sliced_before_their_op_are_parameters():
    # The unfolded export slices and concatenates LSTM and GRU gate weights and MultiheadAttention's
    # in_proj_weight before their ops: still the module's parameters, not buffers.
    lstm = ridge.summary(torch.nn.LSTM(10, 20, 2, batch_first=True), input_size=(5, 10)).totals
    assert lstm["params"] == sum(p.numel() for p in torch.nn.LSTM(10, 20, 2).parameters())  # 5920
    assert lstm["buffers"] == 0
    gru = ridge.summary(torch.nn.GRU(10, 20, batch_first=True), input_size=(5, 10)).totals
    assert gru["params"] == 1920
    x = torch.randn(1, 16, 64)
    mha = ridge.summary(torch.nn.MultiheadAttention(64, 4, batch_first=True), example_inputs=(x, x, x)).totals
    # in_proj_weight (12,288), in_proj_bias (192: sliced, each third added to a MatMul's output), out_proj (4,160).
    mha_module = torch.nn.MultiheadAttention(64, 4, batch_first=True)
    assert mha["params"] == sum(p.numel() for p in mha_module.parameters()) == 16640 and mha["buffers"] == 0


def test_registered_buffers_are_buffers_even_when_used_like_weights():
    # A normalisation mean and std subtracted and divided in, or a scale multiplied in, read like elementwise
    # weights in the ONNX graph; the module declares them buffers (named_buffers()), and so does ridge.
    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(1, 3, 1, 1))
            self.register_buffer("std", torch.ones(1, 3, 1, 1))
            self.register_buffer("scale", torch.ones(8))
            self.gamma = torch.nn.Parameter(torch.ones(8))
            self.conv = torch.nn.Conv2d(3, 8, 3)

        def forward(self, x):
            y = self.conv((x - self.mean) / self.std)
            return y * self.scale.view(1, 8, 1, 1) * self.gamma.view(1, 8, 1, 1)

    m = Norm()
    t = ridge.summary(m, input_size=(3, 16, 16)).totals
    assert t["params"] == sum(p.numel() for p in m.parameters()) == 224 + 8
    assert t["buffers"] == sum(b.numel() for b in m.buffers()) == 14
    # GroupNorm's affine is exported unsqueezed to [C, 1, 1] before its Mul and Add: still its parameters.
    gn = ridge.summary(torch.nn.GroupNorm(4, 16), input_size=(16, 6, 6)).totals
    assert gn["params"] == 32 and gn["buffers"] == 0


def test_python_arguments_fail_as_the_cli_does():
    with pytest.raises(ValueError, match="example_inputs already fix"):
        ridge.summary(torchvision.models.resnet18(), input_size=(3, 64, 64), example_inputs=torch.randn(1, 3, 64, 64))
    with pytest.raises(ValueError, match="wrong type or is out of range"):
        ridge.summary("resnet18", dtype=5)
    with pytest.raises(ValueError, match="between 0.000001 and 1"):
        ridge.predict("resnet18", device="a100", ppp=5)
    with pytest.raises(ValueError, match="--devices-count"):
        ridge.predict("resnet18", device="a100", train=True, gpus_per_node=8)


class _SelfAttention(torch.nn.Module):
    """One input used as query, key and value: in eval mode torch would run its fused kernel."""

    def __init__(self):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(64, 4, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


@pytest.mark.parametrize("make", [
    _SelfAttention,
    lambda: torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 4, 128), 2),
    lambda: torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2),
], ids=["self-attention", "encoder", "encoder-batch-first"])
@pytest.mark.parametrize("frozen", [False, True], ids=["trainable", "frozen"])
def test_attention_exports_without_torchs_fused_fast_path(make, frozen):
    # The export traces with grad enabled and an input that requires it, so torch does not take
    # aten::_native_multi_head_attention / _transformer_encoder_layer_fwd (no ONNX export), frozen weights included.
    m = make()
    for p in m.parameters():
        p.requires_grad_(not frozen)
    r = ridge.summary(m.eval(), input_size=(10, 64)).totals
    assert r["params"] == sum(p.numel() for p in m.parameters())
    assert r["flops"] > 0 and r["buffers"] == 0
    x = torch.randn(2, 10, 64)
    assert ridge.summary(m, example_inputs=x).totals["params"] == r["params"]
    assert not x.requires_grad and not m.training  # the caller's tensor and the module's mode as they were


class _Switch(torch.nn.Module):
    """forward() reads plain attributes: changing them changes the graph, not the module's repr or shapes."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)
        self.use_b = False
        self.depth = 1

    def forward(self, x):
        for _ in range(self.depth):
            x = self.a(x)
        return self.b(x) if self.use_b else x


def test_changed_plain_attributes_are_exported_again():
    m = _Switch()
    before = ridge.summary(m, input_size=(64,)).totals
    assert ridge.load(m, input_size=(64,))._spec[1] is ridge.load(m, input_size=(64,))._spec[1]  # unchanged: cached
    m.use_b, m.depth = True, 3
    after = ridge.summary(m, input_size=(64,)).totals
    fresh = _Switch()
    fresh.use_b, fresh.depth = True, 3
    assert after == ridge.summary(fresh, input_size=(64,)).totals
    assert (before["params"], before["flops"]) == (4160, 8256)
    assert (after["params"], after["flops"]) == (8320, 33024)
    m.use_b, m.depth = False, 1
    assert ridge.summary(m, input_size=(64,)).totals == before


def test_changed_attribute_of_a_config_object_is_exported_again():
    class Config:
        layers = 1

    class Net(torch.nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            for _ in range(self.config.layers):
                x = self.fc(x)
            return x

    m = Net(Config())
    one = ridge.flops(m, input_size=(8,)).totals["flops"]
    m.config.layers = 2
    assert ridge.flops(m, input_size=(8,)).totals["flops"] == 2 * one


def test_module_with_an_attribute_that_cannot_be_fingerprinted_is_exported_each_time():
    import threading
    m = _Switch()
    m.lock = threading.Lock()  # no __dict__, no __slots__: its state is unknown, so nothing is cached
    a = ridge.load(m, input_size=(64,))
    m.use_b = True
    b = ridge.load(m, input_size=(64,))
    assert a._spec[1] is not b._spec[1]
    assert ridge.summary(b).totals["params"] == 8320


def test_input_size_as_one_int_or_a_numpy_array():
    np = pytest.importorskip("numpy")
    m = torch.nn.Linear(8, 4)
    as_tuple = ridge.summary(m, input_size=(8,)).totals
    assert ridge.summary(m, input_size=8).totals == as_tuple
    assert ridge.summary(m, input_size=np.int64(8)).totals == as_tuple
    assert ridge.summary(m, input_size=np.array([8]), batch=np.int64(1)).totals == as_tuple
    assert ridge.load(m, input_size=np.array([8])).input_size == (8,)


def test_in_place_op_on_the_input_exports_and_leaves_the_callers_tensor():
    # The traced input requires grad (see above) but is not a leaf, so an in-place op on it is allowed.
    class AddInPlace(torch.nn.Module):
        def forward(self, x):
            x += 1
            return x * 2

    assert ridge.summary(torch.nn.Sequential(torch.nn.ReLU(inplace=True), torch.nn.Linear(8, 4)),
                         input_size=(8,)).totals["params"] == 36
    assert ridge.flops(AddInPlace(), input_size=(8,), batch=3).totals["flops"] == 3 * 16
    x = torch.zeros(2, 8)
    ridge.summary(AddInPlace(), example_inputs=x)
    assert not x.any() and not x.requires_grad


def test_detection_models_cost_their_backbone_and_heads_and_name_the_post_processing():
    # torchvision's detection transform computes its resize and padding in float arithmetic; ridge folds it, so
    # the backbone and heads are costed (they were refused, or left with unknown shapes, before 2026-12-07) and
    # the data-dependent post-processing is named as not costed.
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    r = ridge.summary(m, example_inputs=([torch.rand(3, 320, 320)],))
    assert r.totals["params"] == sum(p.numel() for p in m.parameters())  # 3,440,060
    assert r.data["complete"] is False
    assert "NonZero" in repr(r).splitlines()[0] or "nonzero" in repr(r).splitlines()[0]
    # The classification and box heads ran on the six feature maps: ~0.6 GMACs (torchvision lists 0.58).
    assert 1.1e9 < r.totals["flops"] < 1.3e9
    convs = [row for row in r.layers if row["op"] == "Conv"]
    assert len(convs) > 90 and all(row["status"] == "ok" for row in convs)


def test_parameters_forward_does_not_use_are_noted_with_torchs_count():
    # googlenet built without weights keeps its aux classifiers, which forward runs only in training: torch counts
    # 13,004,888 parameters, the eval-mode graph has torchvision's published 6,624,904; the note gives the rest.
    torch.manual_seed(0)
    m = torchvision.models.googlenet(weights=None, aux_logits=True, init_weights=False)
    r = ridge.summary(m, input_size=(3, 224, 224))
    assert r.totals["params"] == 6624904
    notes = [n for n in r.notes if "traced forward pass does not use" in n]
    assert len(notes) == 1 and "6,379,984 parameters" in notes[0] and "aux1, aux2" in notes[0]
    assert 6624904 + 6379984 == sum(p.numel() for p in m.parameters())


class _ZeroesAndScales(torch.nn.Module):
    """Swin V2's two habits in small: Tensor.zero_() on a slice (no ONNX export in torch 1.13) and a parameter
    used only elementwise (logit_scale, [heads, 1, 1]: clamped, exponentiated, multiplied in)."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.logit_scale = torch.nn.Parameter(torch.ones(2, 1, 1))

    def forward(self, x):
        bias = self.proj.bias.clone()
        bias[2:4].zero_()
        y = torch.nn.functional.linear(x, self.proj.weight, bias)
        return y.view(-1, 2, 1, 4) * torch.clamp(self.logit_scale, max=4.6).exp()


def test_parameters_used_only_elementwise_count_and_zero_exports_for_the_call_only(tmp_path):
    m = _ZeroesAndScales()
    r = ridge.summary(m, input_size=(8,))
    assert r.totals["params"] == sum(p.numel() for p in m.parameters()) == 8 * 8 + 8 + 2
    # The stand-in for aten::zero was registered for that export only: torch's own export still refuses it.

    class Zero(torch.nn.Module):
        def forward(self, x):
            y = x.clone()
            y[:, 2:4].zero_()  # on a slice, as Swin V2 does (a whole tensor's zero_ exports)
            return y

    with pytest.raises(Exception, match="aten::zero"):
        torch.onnx.export(Zero(), (torch.randn(1, 8),), str(tmp_path / "z.onnx"), opset_version=13)


class _Warp(torch.nn.Module):
    """grid_sample: torch 1.13 exports it from opset 16 only (RAFT's flow warping)."""

    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(x, grid, align_corners=False)


def test_an_op_torch_exports_from_a_later_opset_is_exported_at_that_opset_unless_one_was_chosen():
    inputs = (torch.rand(1, 2, 8, 8), torch.rand(1, 4, 4, 2))
    r = ridge.summary(_Warp(), example_inputs=inputs)
    assert r.data["complete"] is True
    assert [row["op"] for row in r.layers] == ["GridSample"]
    with pytest.raises(ridge.Error, match="version 16"):  # the caller's opset is kept, and torch says why
        ridge.summary(ridge.load(_Warp(), example_inputs=inputs, opset_version=13))


def test_mvit_pooling_split_unrolls_to_torchs_count_and_is_complete():
    # torchvision's MViT splits off its class token with torch.tensor_split, which torch exports as a Loop that
    # fills a tensor sequence, read back with SequenceAt; the model also tests a shape in an If. ridge unrolls the
    # loop (its trip count is known from the shapes) and takes the branch: every node is costed. Before
    # 2026-12-07, 1,056 (mvit_v1_b) and 4,793 (mvit_v2_s) nodes had unknown shapes.
    from torchvision.models.video.mvit import MSBlockConfig, MViT
    torch.manual_seed(0)
    blocks = [MSBlockConfig(num_heads=1, input_channels=16, output_channels=16, kernel_q=[3, 3, 3],
                            kernel_kv=[3, 3, 3], stride_q=[1, 1, 1], stride_kv=[1, 2, 2]),
              MSBlockConfig(num_heads=2, input_channels=16, output_channels=32, kernel_q=[3, 3, 3],
                            kernel_kv=[3, 3, 3], stride_q=[1, 2, 2], stride_kv=[1, 1, 1])]
    m = MViT(spatial_size=(32, 32), temporal_size=4, block_setting=blocks, residual_pool=True,
             residual_with_cls_embed=False, rel_pos_embed=True, proj_after_attn=True, num_classes=10).eval()
    r = ridge.summary(m, input_size=(3, 4, 32, 32))
    assert r.data["complete"] is True
    assert r.totals["params"] == sum(p.numel() for p in m.parameters())  # 26,282
    assert any("Loop(s) unrolled" in n and "If(s) replaced" in n and "sequence op(s)" in n for n in r.notes)
    assert not [row for row in r.layers if row["op"] in ("Loop", "If", "SequenceAt", "SequenceInsert")]
