"""ridge from Python: what a neural network costs (params, MACs, FLOPs forward and backward, bytes, memory) layer by
layer as exact integers, under ridge's convention and other tools', its roofline and predicted time on a device.

    import ridge, torchvision
    model = torchvision.models.resnet50()
    ridge.summary(model, input_size=(3, 224, 224))      # the per-layer table (a notebook shows it as HTML)
    ridge.flops(model, all_conventions=True)             # torchvision, fvcore, ptflops, thop, ... side by side
    ridge.predict(model, device="a100", batch=64)        # time per layer and iteration
    ridge.report(model, "resnet50.html", device="a100")  # the self-contained HTML report

A model is a zoo name ("resnet50", see `ridge list`), a path to an .onnx file or a Hugging Face config.json, ONNX
bytes, a Hugging Face config as a dict, or a torch.nn.Module (exported in memory with torch.onnx.export; ridge reads
the shapes of its weights, never their values). Every function returns a Result (.totals, .layers, .to_pandas(),
.to_json()). Bad arguments raise ValueError; anything ridge cannot do raises ridge.Error with ridge's one-line
message. The C++ library behind it is the one the `ridge` CLI calls; see docs/python.md.
"""
from __future__ import annotations

import html as _html
import io as _io
import json as _json
import os as _os
import weakref as _weakref
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

_DATA = _os.path.join(_os.path.dirname(__file__), "data")
if _os.path.isdir(_DATA) and not _os.environ.get("RIDGE_DATA_DIR"):
    _os.environ["RIDGE_DATA_DIR"] = _DATA  # an installed package carries the device database with it

from . import _ridge as _native  # noqa: E402
from ._ridge import Error  # noqa: E402


class _Checked:
    """The native module, whose functions raise ValueError (one line naming the call) where pybind11 would raise
    TypeError with its signature dump: an argument of the wrong type, or an integer beyond what C++ takes."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._module, name)
        if not callable(target) or isinstance(target, type):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return target(*args, **kwargs)
            except TypeError as e:
                if "incompatible function arguments" not in str(e) and "incompatible constructor" not in str(e):
                    raise
                raise ValueError("{}: an argument has the wrong type or is out of range (names and modes are "
                                 "strings; counts are integers below 2**31)".format(name)) from None
        return call


_ridge = _Checked(_native)

try:
    from ._help import HELP as _HELP  # `ridge COMMAND --help`, captured at build time
except ImportError:  # pragma: no cover - a build without the CLI
    _HELP = {}

__all__ = ["Error", "Model", "Result", "load", "summary", "flops", "predict", "roofline", "measure", "ingest",
           "devices", "serve", "train", "report"]
__version__ = "0.1.0"


# ---- results --------------------------------------------------------------------------------------------------

class Result:
    """What one ridge command reports: the same document the CLI prints.

    `.totals` is the document's "totals" fields (dict), `.layers` its per-layer table (list of dicts, one per row,
    keyed like the CLI's JSON), `.tables` / `.fields` every table / field block by key, `.notes` the notes.
    `.to_json()` is exactly `ridge COMMAND ... --format json`; `repr()` is the terminal table; in a notebook the
    result shows as the HTML report's sortable tables and charts.
    """

    def __init__(self, doc: "_ridge.Document", share_metrics: Sequence[Tuple[str, str]] = (),
                 totals_key: str = "totals", layers_key: str = "layers"):
        self._doc = doc
        self._totals_key = totals_key
        self._layers_key = layers_key
        self._share_metrics = list(share_metrics)
        self._data: Dict[str, Any] = _json.loads(doc.json())

    @property
    def data(self) -> Dict[str, Any]:
        """The whole JSON document as Python values."""
        return self._data

    @property
    def title(self) -> str:
        return self._doc.title

    @property
    def notes(self) -> List[str]:
        return list(self._data.get("notes", []))

    @property
    def tables(self) -> Dict[str, List[Dict[str, Any]]]:
        """Every table of the document by key (e.g. "layers"), each a list of row dicts."""
        return {k: v for k, v in self._data.items() if isinstance(v, list) and (not v or isinstance(v[0], dict))}

    @property
    def fields(self) -> Dict[str, Dict[str, Any]]:
        """Every block of named values by key (e.g. "totals", "memory")."""
        skip = {"inputs", "extra"}
        return {k: v for k, v in self._data.items() if isinstance(v, dict) and k not in skip}

    @property
    def totals(self) -> Dict[str, Any]:
        """The command's headline values (counts are exact ints): "totals" of summary and flops, "summary" of
        predict, "serve" and "train" of those; {} when the command has none (devices)."""
        return self.fields.get(self._totals_key, {})

    @property
    def layers(self) -> List[Dict[str, Any]]:
        """The per-layer table ("layers"; ingest: "kernels"), else the document's first table; one dict per row."""
        t = self.tables
        if self._layers_key in t:
            return t[self._layers_key]
        return next(iter(t.values()), [])

    def to_pandas(self, table: Optional[str] = None):
        """The per-layer table (or the table named `table`) as a pandas.DataFrame."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Result.to_pandas() needs pandas (Debian: apt-get install python3-pandas; "
                              "or pip install pandas)") from e
        rows = self.tables[table] if table is not None else self.layers
        return pandas.DataFrame(rows)

    def to_json(self) -> str:
        """The JSON document, exactly as `ridge COMMAND ... --format json` writes it."""
        return self._doc.json()

    def to_markdown(self) -> str:
        return self._doc.markdown()

    def to_text(self, width: int = 0) -> str:
        """The terminal table fitted to `width` columns (0: every column)."""
        return self._doc.text(width)

    def to_html(self) -> str:
        """A self-contained HTML page: the HTML report's tables and charts for this result."""
        return self._doc.html(self._share_metrics)

    def __getitem__(self, key: str):
        return self._data[key]

    def __repr__(self) -> str:
        return self._doc.text(0)

    def _repr_html_(self) -> str:
        # In an iframe, so that the page's styles and script stay out of the notebook's.
        return ('<iframe srcdoc="{}" style="width:100%;height:640px;border:1px solid #ddd" '
                'sandbox="allow-scripts"></iframe>').format(_html.escape(self.to_html(), quote=True))


# ---- models ---------------------------------------------------------------------------------------------------

ModelLike = Union[str, "_os.PathLike[str]", bytes, bytearray, memoryview, Dict[str, Any], "Model", Any]


class Model:
    """A model resolved once (a torch.nn.Module is exported to ONNX bytes once) and loadable at any batch size."""

    def __init__(self, model: ModelLike, input_size: Optional[Sequence[int]] = None, example_inputs: Any = None,
                 **export_kwargs: Any):
        self.input_size = tuple(input_size) if input_size is not None else None
        self._spec = _spec_of(model, self.input_size, example_inputs, export_kwargs)
        # A Module exported from example inputs has their shapes, batch included; otherwise its batch is symbolic.
        self._fixed_batch = example_inputs is not None and _is_torch_module(model)

    @property
    def label(self) -> str:
        return self._spec[2]

    def load_options(self, batch: int = 1, dtype: Optional[str] = None, seq_len: Optional[int] = None,
                     inputs: Optional[Dict[str, Sequence[int]]] = None, training: bool = False) -> "_ridge.LoadOptions":
        # A Module's export fixes its input size; the other kinds take it here (zoo CNNs).
        size = None if self._spec[0] == "onnx_bytes" else self.input_size
        if self._fixed_batch and batch != 1:
            raise ValueError("batch: example_inputs fix every shape, batch included (leave batch at 1, or give "
                             "input_size instead)")
        return _ridge.load_options(_positive(batch, "batch"), _dims(size, "input_size"),
                                   None if seq_len is None else _positive(seq_len, "seq_len"),
                                   [(n, _dims(s, "inputs")) for n, s in (inputs or {}).items()], dtype or "fp32",
                                   training)

    def graph(self, batch: int = 1, dtype: Optional[str] = None, seq_len: Optional[int] = None,
              inputs: Optional[Dict[str, Sequence[int]]] = None, training: bool = False) -> "_ridge.Graph":
        """The model loaded at `batch` (ridge's graph: .name, .inputs, .node_count)."""
        opts = self.load_options(batch, dtype, seq_len, inputs, training)
        return _ridge.load(_ridge.ModelSource(*self._spec), opts)

    def onnx_bytes(self) -> bytes:
        """The ONNX model ridge imports (for a torch.nn.Module: its export, weights as shapes only)."""
        if self._spec[0] != "onnx_bytes":
            raise ValueError("model: {} is not held as ONNX".format(self.label))
        return self._spec[1]

    def __repr__(self) -> str:
        return "ridge.Model({})".format(self.label)


def load(model: ModelLike, input_size: Optional[Sequence[int]] = None, example_inputs: Any = None,
         **export_kwargs: Any) -> Model:
    """Resolves `model` once (exports a torch.nn.Module to ONNX in memory) for use in several calls.

    input_size is the per-sample size without the batch (3, 224, 224); a Module also takes example_inputs (a
    tensor or a tuple of them, batch included) and keyword arguments for torch.onnx.export (e.g. opset_version).
    """
    if isinstance(model, Model):
        return model
    return Model(model, input_size, example_inputs, **export_kwargs)


def _positive(v: Any, name: str, limit: int = 2**62) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError("{}: {!r} is not a positive integer".format(name, v))
    if v > limit:
        raise ValueError("{}: {} is too large (at most {})".format(name, v, limit))
    return v


def _dims(size: Optional[Iterable[int]], name: str) -> Optional[List[int]]:
    if size is None:
        return None
    if isinstance(size, (str, bytes)):
        raise ValueError("{}: give a tuple of ints such as (3, 224, 224), not {!r}".format(name, size))
    dims = list(size)
    for d in dims:
        _positive(d, name)
    return dims


_EXPORTS: "_weakref.WeakKeyDictionary[Any, Tuple[Any, bytes]]" = _weakref.WeakKeyDictionary()


def _spec_of(model: Any, input_size: Optional[Tuple[int, ...]], example_inputs: Any,
             export_kwargs: Dict[str, Any]) -> Tuple[str, bytes, str]:
    if isinstance(model, Model):
        return model._spec
    if isinstance(model, (str, _os.PathLike)):
        path = _os.fspath(model)
        return ("name", path.encode(), path)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return ("onnx_bytes", bytes(model), "onnx bytes")
    if isinstance(model, dict):
        label = model.get("_name_or_path") or model.get("model_type") or "config dict"
        return ("hf_config", _json.dumps(model).encode(), str(label))
    if _is_torch_module(model):
        return ("onnx_bytes", _export_module(model, input_size, example_inputs, export_kwargs),
                type(model).__name__)
    raise ValueError("model: expected a zoo name, a path, ONNX bytes, a config dict or a torch.nn.Module, got {}"
                     .format(type(model).__name__))


def _is_torch_module(model: Any) -> bool:
    import sys
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


from ._unfolded import as_the_module_is as _as_the_module_is  # noqa: E402 (shared with validation/)


def _export_module(module: Any, input_size: Optional[Tuple[int, ...]], example_inputs: Any,
                   export_kwargs: Dict[str, Any]) -> bytes:
    """torch.onnx.export into memory, weights as shapes only. From input_size the batch axis is symbolic (ridge
    binds it to `batch`); example_inputs fix every shape. Cached per module, shapes and export options."""
    import torch
    if example_inputs is not None and input_size is not None:
        raise ValueError("input_size: example_inputs already fix the input's shape; give one of them")
    symbolic = example_inputs is None  # from input_size: the batch axis ridge binds to `batch`
    if symbolic:
        if input_size is None:
            raise ValueError("input_size: a torch.nn.Module needs input_size (per sample, e.g. (3, 224, 224)) "
                             "or example_inputs")
        shapes: Tuple[Any, ...] = ((1, *_dims(input_size, "input_size")),)
        args: Tuple[Any, ...] = ()  # made on a cache miss only
    else:
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        shapes = tuple(tuple(a.shape) if hasattr(a, "shape") else repr(a) for a in args)
    names = ["input"] if len(shapes) == 1 else ["input_{}".format(i) for i in range(len(shapes))]
    # What the export depends on: the module's structure (repr), its parameters' and buffers' shapes, the inputs'
    # shapes and the export options; a module changed in any of them is exported again.
    key = (symbolic, repr(module), tuple((n, tuple(p.shape)) for n, p in module.named_parameters()),
           tuple((n, tuple(b.shape)) for n, b in module.named_buffers()),
           shapes, repr(sorted(export_kwargs.items())))
    cached = _EXPORTS.get(module)
    if cached is not None and cached[0] == key:
        return cached[1]
    if symbolic:
        args = (torch.randn(*shapes[0]),)
    # Without weights: ridge needs their shapes only (see _ridge.params_to_initializers).
    kwargs = dict(input_names=names, dynamic_axes={n: {0: "batch"} for n in names} if symbolic else None,
                  do_constant_folding=False, opset_version=13, export_params=False)
    kwargs.update(export_kwargs)
    buf = _io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad(), _as_the_module_is(torch):
            torch.onnx.export(module, args, buf, **kwargs)
    except Exception as e:  # torch's own message, with what ridge was doing
        raise Error("{}: torch.onnx.export failed: {}".format(type(module).__name__, str(e).splitlines()[0])) from e
    finally:
        module.train(was_training)
    data = buf.getvalue()
    if not kwargs["export_params"]:
        data = _ridge.params_to_initializers(data, set(names), type(module).__name__)
    _EXPORTS[module] = (key, data)
    return data


# ---- commands -------------------------------------------------------------------------------------------------

# The per-layer shares each command's --plot draws (and its notebook view shows): (column key, title).
_SHARES = {
    "summary": [("flops", "FLOPs"), ("params", "params"), ("output_bytes", "output memory")],
    "predict": [("time_s", "predicted time"), ("flops", "FLOPs")],
    "measure": [("time_s", "measured time"), ("flops", "FLOPs")],
}


# Where each command's headline values are (Result.totals).
_TOTALS = {"predict": "summary", "measure": "summary", "serve": "serve", "train": "train"}
# Each command's per-layer table (Result.layers); "layers" where not listed.
_LAYERS = {"ingest": "kernels", "serve": "ops", "train": "op_groups"}


def _finish(doc: "_ridge.Document", command: str, inputs: Dict[str, Any]) -> Result:
    doc.command = command
    doc.set_inputs(_json.dumps({k: v for k, v in inputs.items() if v is not None}))
    return Result(doc, _SHARES.get(command, ()), _TOTALS.get(command, "totals"), _LAYERS.get(command, "layers"))


def _load_args(model: Model, batch: int, dtype: Optional[str], seq_len: Optional[int],
               inputs: Optional[Dict[str, Sequence[int]]]) -> Dict[str, Any]:
    return {"model": model.label, "batch": batch, "dtype": dtype or "fp32", "seq_len": seq_len,
            "input_size": "x".join(map(str, model.input_size)) if model.input_size else None,
            "input": ["{}={}".format(n, "x".join(map(str, s))) for n, s in inputs.items()] if inputs else None}


def summary(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
            convention: Optional[str] = None, dtype: Optional[str] = None, *, depth: int = 0,
            optimizer: str = "sgd", precision: Optional[str] = None, seq_len: Optional[int] = None,
            inputs: Optional[Dict[str, Sequence[int]]] = None, example_inputs: Any = None) -> Result:
    """Per-layer params, MACs, FLOPs (forward and backward), bytes and memory (`ridge summary`)."""
    m = load(model, input_size, example_inputs)
    if not isinstance(depth, int) or isinstance(depth, bool) or not 0 <= depth <= 64:
        raise ValueError("depth: {!r} is not an integer from 0 to 64".format(depth))
    if precision is not None and dtype is None:  # as the CLI: tensors at the precision's activation type
        dtype = _ridge.activation_dtype(precision)
    g = m.graph(batch, dtype, seq_len, inputs)
    doc = _ridge.summary(g, depth, convention, optimizer, precision)
    return _finish(doc, "summary", dict(_load_args(m, batch, dtype, seq_len, inputs), depth=depth,
                                        convention=convention, optimizer=optimizer, precision=precision))


def flops(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
          convention: Optional[str] = None, dtype: Optional[str] = None, *, all_conventions: bool = False,
          seq_len: Optional[int] = None, inputs: Optional[Dict[str, Sequence[int]]] = None,
          example_inputs: Any = None) -> Result:
    """Headline FLOP/MAC counts under ridge's convention and other tools' (`ridge flops`)."""
    m = load(model, input_size, example_inputs)
    doc = _ridge.flops(m.graph(batch, dtype, seq_len, inputs), bool(all_conventions), convention,
                       _ridge.ModelSource(*m._spec))
    return _finish(doc, "flops", dict(_load_args(m, batch, dtype, seq_len, inputs),
                                      all_conventions=bool(all_conventions), convention=convention))


def _text(v: Optional[str], name: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ValueError("{}: {!r} is not a string".format(name, v))
    return v


def _dirs(v: Union[None, str, Sequence[str]]) -> List[str]:
    if v is None:
        return []
    return [_os.fspath(v)] if isinstance(v, (str, _os.PathLike)) else [_os.fspath(d) for d in v]


def _opt_real(v: Optional[float], name: str) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise ValueError("{}: {!r} is not a positive number".format(name, v))
    return float(v)


def predict(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
            dtype: Optional[str] = None, *, device: str, precision: str = "fp32", train: bool = False,
            combine: Optional[str] = None, level: str = "dram", calibration: Optional[str] = None, force: bool = False,
            ppp: Optional[float] = None, ppp_mem: Optional[float] = None, launch_overhead: Optional[float] = None,
            flops: Optional[int] = None, devices_count: int = 1, gpus_per_node: Optional[int] = None,
            intra_node: Optional[str] = None, inter_node: Optional[str] = None, nics_per_node: Optional[int] = None,
            allreduce: str = "auto", allreduce_fit: str = "builtin", bucket_mib: float = 25,
            devices_dir: Union[None, str, Sequence[str]] = None, seq_len: Optional[int] = None,
            inputs: Optional[Dict[str, Sequence[int]]] = None, example_inputs: Any = None,
            optimizer: str = "sgd") -> Result:
    """PALEO-style time per layer and per iteration on a device, optionally calibrated and data-parallel
    (`ridge predict`)."""
    m = load(model, input_size, example_inputs)
    kind, payload, label = m._spec
    source = _ridge.ModelSource(kind, payload, label)
    if flops is not None and (isinstance(flops, bool) or not isinstance(flops, int) or flops < 0):
        raise ValueError("flops: {!r} is not a FLOP count (a non-negative int)".format(flops))
    opts = m.load_options(batch, None, seq_len, inputs)
    doc = _ridge.predict(source, opts, dtype, _text(device, "device"), _dirs(devices_dir), precision, bool(train),
                         _text(combine, "combine"), level, _text(calibration, "calibration"), bool(force),
                         _opt_real(ppp, "ppp"), _opt_real(ppp_mem, "ppp_mem"),
                         _opt_real(launch_overhead, "launch_overhead"), None if flops is None else str(flops),
                         _positive(devices_count, "devices_count"),
                         None if gpus_per_node is None else _positive(gpus_per_node, "gpus_per_node"),
                         _text(intra_node, "intra_node"), _text(inter_node, "inter_node"),
                         None if nics_per_node is None else _positive(nics_per_node, "nics_per_node"),
                         allreduce, allreduce_fit, _opt_real(bucket_mib, "bucket_mib"), _text(optimizer, "optimizer"))
    # Every option that changed the result, as the CLI records its flags (None: not given, left out).
    return _finish(doc, "predict", dict(_load_args(m, batch, dtype, seq_len, inputs), device=device,
                                        precision=precision, train=bool(train), combine=combine, level=level,
                                        calibration=calibration, devices_count=devices_count, force=bool(force),
                                        ppp=ppp, ppp_mem=ppp_mem, launch_overhead=launch_overhead, flops=flops,
                                        gpus_per_node=gpus_per_node, intra_node=intra_node, inter_node=inter_node,
                                        nics_per_node=nics_per_node, allreduce=allreduce,
                                        allreduce_fit=allreduce_fit, bucket_mib=bucket_mib, optimizer=optimizer,
                                        devices_dir=_dirs(devices_dir) or None))


def devices(devices_dir: Union[None, str, Sequence[str]] = None, machine_profile: Optional[str] = None) -> Result:
    """The device database: peaks per precision, bandwidths, memory (`ridge devices`)."""
    doc = _ridge.devices(_dirs(devices_dir), _text(machine_profile, "machine_profile"))
    return _finish(doc, "devices", {"devices_dir": _dirs(devices_dir) or None})


def _model_path(m: Model, folder: str, label: Optional[str] = None) -> str:
    """A path naming `m` for calls that take names (roofline, ingest): its name, or its payload written to `folder`
    (a config.json is named after its folder, an ONNX file after itself: both carry `label`, default its own)."""
    kind, payload, own = m._spec
    if kind == "name":
        return payload.decode()
    label = label or own or "model"
    if kind == "hf_config":
        folder = _os.path.join(folder, label)
        _os.makedirs(folder, exist_ok=True)
    path = _os.path.join(folder, "config.json" if kind == "hf_config" else label + ".onnx")
    with open(path, "wb") as f:
        f.write(payload)
    return path


def _named(models: Sequence[Model], folder: str) -> List[str]:
    """Names or paths of `models`; an in-memory one is written to `folder` (a Module's export is weightless)."""
    paths: List[str] = []
    seen: Dict[str, int] = {}
    for i, m in enumerate(models):
        sub = _os.path.join(folder, str(i))
        _os.mkdir(sub)
        # Each in-memory model under its own label, made unique (two ResNet modules: ResNet, ResNet-2).
        label = "".join(c if c.isalnum() or c in "-_." else "_" for c in (m._spec[2] or "model"))
        seen[label] = seen.get(label, 0) + 1
        paths.append(_model_path(m, sub, label if seen[label] == 1 else "{}-{}".format(label, seen[label])))
    return paths


def roofline(models: Union[ModelLike, Sequence[ModelLike]], input_size: Optional[Sequence[int]] = None,
             batch: int = 1, dtype: Optional[str] = None, *, device: Union[str, Sequence[str]],
             precision: str = "fp32", level: str = "dram", measured: Union[None, str, Sequence[str]] = None,
             summary_only: bool = False, devices_dir: Union[None, str, Sequence[str]] = None,
             seq_len: Optional[int] = None, example_inputs: Any = None) -> Result:
    """Layers and models on device rooflines: arithmetic intensity, attainable FLOP/s, ridge point, bound
    (`ridge roofline`). `models` is one model or a list; the notebook view draws one roofline per device."""
    import tempfile
    many = [load(m, input_size, example_inputs)
            for m in (models if isinstance(models, (list, tuple)) else [models])]
    if not many:
        raise ValueError("models: give at least one model")
    opts = many[0].load_options(batch, None, seq_len)
    with tempfile.TemporaryDirectory(prefix="ridge-") as tmp:
        doc = _ridge.roofline(_named(many, tmp), opts, dtype, _dirs(device), _dirs(devices_dir), precision, level,
                              _dirs(measured), bool(summary_only))
    return _finish(doc, "roofline", dict(model=[m.label for m in many], batch=batch, device=_dirs(device),
                                         precision=precision, level=level))


def measure(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
            dtype: Optional[str] = None, *, threads: int = 0, repeat: int = 50, max_seconds: float = 20,
            train: bool = False, seed: int = 42, machine: Optional[str] = None, seq_len: Optional[int] = None,
            inputs: Optional[Dict[str, Sequence[int]]] = None, example_inputs: Any = None,
            end_to_end: bool = False) -> Result:
    """Runs the model on this CPU with oneDNN (random weights) and times every layer next to its estimate and the
    machine's roofline (`ridge measure`); end_to_end: also the whole graph as one fused program."""
    m = load(model, input_size, example_inputs)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads: {!r} is not a thread count (0: all CPUs)".format(threads))
    g = m.graph(batch, dtype, seq_len, inputs, training=bool(train))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError("seed: {!r} is not a non-negative integer".format(seed))
    doc = _ridge.measure(g, threads, seed,
                         bool(train), _positive(repeat, "repeat"), _opt_real(max_seconds, "max_seconds"),
                         _text(machine, "machine"), bool(end_to_end))
    return _finish(doc, "measure", dict(_load_args(m, batch, dtype, seq_len, inputs), threads=threads,
                                        repeat=repeat, max_seconds=max_seconds, train=bool(train), seed=seed,
                                        end_to_end=bool(end_to_end)))


def ingest(files: Union[str, "_os.PathLike[str]", Sequence[Union[str, "_os.PathLike[str]"]]], *,
           model: Optional[ModelLike] = None, input_size: Optional[Sequence[int]] = None, batch: int = 1,
           steps: int = 1, train: bool = False, labels: Optional[Sequence[str]] = None,
           input_format: Optional[str] = None, join: str = "auto", arch: Optional[str] = None,
           tensor_factor: Optional[int] = None, run: Optional[int] = None, group: str = "family",
           top: Optional[int] = None, device: Optional[str] = None, precision: str = "fp32", force: bool = False,
           devices_dir: Union[None, str, Sequence[str]] = None) -> Result:
    """Reads ncu (text, CSV), nsys, nvprof and torch.profiler outputs: exact FLOPs per precision, bytes, time;
    with `model`, compared with ridge's estimate (`ridge ingest`). `labels` (one per file) label runs ("bs=10");
    `device` adds the predicted time per kernel family and the kernel roofline at `precision`; `force` uses a
    profile whose file names another model, batch or GPU anyway (the output says so)."""
    import tempfile
    paths = _dirs(files)
    if not paths:
        raise ValueError("files: give at least one profiler output")
    if labels is not None and len(labels) != len(paths):
        raise ValueError("labels: give one label per file ({} files, {} labels)".format(len(paths), len(labels)))
    with tempfile.TemporaryDirectory(prefix="ridge-") as tmp:
        name = _named([load(model, input_size)], tmp)[0] if model is not None else ""
        doc = _ridge.ingest(list(zip(paths, labels or [""] * len(paths))), _text(input_format, "input_format"), join,
                            _text(arch, "arch"), tensor_factor, None if run is None else _positive(run, "run"),
                            group, top, name, _positive(batch, "batch"), _positive(steps, "steps"), bool(train),
                            _text(device, "device"), _dirs(devices_dir), _text(precision, "precision"), bool(force))
    return _finish(doc, "ingest", dict(files=paths, model=None if model is None else name, batch=batch, steps=steps,
                                       train=bool(train), device=device, precision=precision, force=bool(force),
                                       run=run, group=group, join=join, label=list(labels) if labels else None))


def serve(model: ModelLike, *, device: str, batch: int = 1, prompt: int = 512, generate: int = 128, tp: int = 1,
          weights: str = "fp16", kv: str = "fp16", compute: str = "fp16", attention: str = "eager",
          moe: str = "eager", mla: str = "hf", devices: Union[None, str, Sequence[str]] = None,
          calibration: str = "builtin") -> Result:
    """What an LLM costs to serve: prefill, decode, KV cache, TTFT, tokens/s (`ridge serve`).

    attention: "eager" (scores in memory), "fused" (one kernel at the GEMM factors), "flash2" (FlashAttention-2 at
    its published utilization on the GPU family) or "flash1" (FlashAttention-1 likewise); fused kernels execute only
    the scores the causal mask and sliding window keep. moe: "eager" (HF's loop, a kernel per routed expert and op) or
    "grouped" (one grouped kernel per op of a layer's experts, as vLLM's fused_moe). mla (DeepSeek models): "hf"
    (the cache holds every head's key and value) or "latent" (the latent cache and decode of vLLM and SGLang)."""
    m = load(model)
    dirs = _dirs(devices)
    doc = _ridge.serve(_ridge.ModelSource(*m._spec), _text(device, "device"), dirs, _text(calibration, "calibration"),
                       _positive(batch, "batch"), _positive(prompt, "prompt"), _positive(generate, "generate"),
                       _positive(tp, "tp"), _text(weights, "weights"), _text(kv, "kv"), _text(compute, "compute"),
                       _text(attention, "attention"), _text(moe, "moe"), _text(mla, "mla"))
    return _finish(doc, "serve", dict(model=m.label, device=device, batch=batch, prompt=prompt, generate=generate,
                                      tp=tp, weights=weights, kv=kv, compute=compute, attention=attention, moe=moe, mla=mla,
                                      calibration=calibration, devices=dirs or None))


def train(model: ModelLike, *, device: str, gpus: int, tp: int = 1, pp: int = 1, dp: Optional[int] = None,
          zero: Union[int, str] = 0, interleave: int = 1, ep: int = 1, cp: int = 1, sp: bool = False,
          recompute: str = "none",
          seq: int = 2048, global_batch: Optional[int] = None, micro_batch: int = 1, compute: str = "bf16",
          tokens: Optional[float] = None, attention: str = "eager", moe: str = "eager", calibration: str = "builtin",
          devices: Union[None, str, Sequence[str]] = None) -> Result:
    """What an LLM costs to train: FLOPs, MFU/HFU, time, memory per GPU (`ridge train`).

    attention: "eager", "fused", "flash2" or "flash1", and moe: "eager" or "grouped" (Megatron-LM's --moe-grouped-gemm), as for
    serve(). cp: context-parallel GPUs (each holds seq / cp tokens;
    gpus = tp x cp x pp x dp)."""
    m = load(model)
    dirs = _dirs(devices)
    if isinstance(zero, bool) or not isinstance(zero, (int, str)):
        raise ValueError("zero: {!r} is not a ZeRO stage (0, 1, 2, 3 or 'fsdp')".format(zero))
    doc = _ridge.train(_ridge.ModelSource(*m._spec), _text(device, "device"), dirs, _text(calibration, "calibration"),
                       _positive(gpus, "gpus"), _positive(tp, "tp"), _positive(pp, "pp"),
                       None if dp is None else _positive(dp, "dp"), str(zero), _positive(interleave, "interleave"),
                       _positive(ep, "ep"), _positive(cp, "cp"), bool(sp), _text(recompute, "recompute"), _positive(seq, "seq"),
                       None if global_batch is None else _positive(global_batch, "global_batch"),
                       _positive(micro_batch, "micro_batch"), _text(compute, "compute"),
                       _opt_real(tokens, "tokens"), _text(attention, "attention"), _text(moe, "moe"))
    return _finish(doc, "train", dict(model=m.label, device=device, gpus=gpus, tp=tp, pp=pp, dp=dp, zero=str(zero),
                                      interleave=interleave, ep=ep, cp=cp, sp=bool(sp), recompute=recompute, seq=seq,
                                      global_batch=global_batch, micro_batch=micro_batch, compute=compute,
                                      tokens=tokens, attention=attention, moe=moe, calibration=calibration,
                                      devices=dirs or None))


def _batches(sweep: Union[str, Sequence[int]]) -> List[int]:
    """Batch sizes of a sweep: a list of ints, "1,2,4" or "start:stop:step" (as --sweep)."""
    if isinstance(sweep, str):
        try:
            if ":" in sweep:
                start, stop, *step = (int(p) for p in sweep.split(":"))
                if len(step) > 1:
                    raise ValueError
                return list(range(start, stop + 1, step[0] if step else 1))
            return [int(p) for p in sweep.split(",") if p.strip()]
        except ValueError:
            raise ValueError("sweep: {!r} is not a list of batch sizes (1,2,4 or start:stop:step)".format(sweep))
    return [_positive(b, "sweep") for b in sweep]


def report(model: ModelLike, path: Union[str, "_os.PathLike[str]"], input_size: Optional[Sequence[int]] = None,
           batch: int = 1, *, device: Union[None, str, Sequence[str]] = None, example_inputs: Any = None,
           dtype: Optional[str] = None, precision: Optional[str] = None, train: bool = False, optimizer: str = "sgd",
           devices_dir: Union[None, str, Sequence[str]] = None, measure: bool = False,
           profile: Union[None, str, Sequence[str]] = None, force: bool = False,
           sweep: Union[str, Sequence[int]] = "1,2,4,8,16,32,64", depth: int = 1, top: int = 5,
           serve: bool = False, prompt: int = 512, generate: int = 128, tp: int = 1, weights: str = "fp16",
           kv: str = "fp16", strict: bool = False, seq_len: Optional[int] = None,
           inputs: Optional[Dict[str, Sequence[int]]] = None, end_to_end: bool = False, attention: str = "eager",
           moe: str = "eager", mla: str = "hf") -> str:
    """Writes the self-contained HTML report (`ridge report MODEL -o PATH`) and returns its path; `serve=True`
    reports an LLM's serving (prompt, generate, tp, weights, kv, attention, moe, mla as for serve()) on each device
    instead. precision: None is fp32, or fp16 with serve=True (which takes fp16, bf16 or fp32). end_to_end (with
    measure=True): also time the whole graph as one fused program."""
    m = load(model, input_size, example_inputs)
    path = _os.path.abspath(_os.fspath(path))
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise ValueError("depth: {!r} is not 0 (every layer) or more".format(depth))
    opts = m.load_options(batch, None, seq_len, inputs)
    _ridge.report(_ridge.ModelSource(*m._spec), opts, dtype, bool(strict), _text(precision, "precision"), bool(train),
                  _text(optimizer, "optimizer"), _dirs(device), _dirs(devices_dir), bool(measure), _dirs(profile),
                  bool(force), _batches(sweep), depth, _positive(top, "top"), bool(serve), _positive(prompt, "prompt"),
                  _positive(generate, "generate"), _positive(tp, "tp"), _text(weights, "weights"), _text(kv, "kv"),
                  path, bool(end_to_end), _text(attention, "attention"), _text(moe, "moe"), _text(mla, "mla"))
    return path


def _with_help(fn, command: str) -> None:
    text = _HELP.get(command)
    if text:
        fn.__doc__ = "{}\n\nThe CLI's `ridge {} --help` (keyword arguments take the option names with - as _):\n\n{}" \
            .format(fn.__doc__, command, "\n".join("    " + line for line in text.splitlines()))


for _fn, _cmd in ((summary, "summary"), (flops, "flops"), (predict, "predict"), (devices, "devices"),
                  (serve, "serve"), (train, "train"), (report, "report"), (roofline, "roofline"),
                  (measure, "measure"), (ingest, "ingest")):
    _with_help(_fn, _cmd)
