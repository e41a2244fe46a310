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

import contextlib as _contextlib
import html as _html
import io as _io
import json as _json
import operator as _operator
import os as _os
import re as _re
import weakref as _weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

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

_INT64_MIN, _UINT64_MAX = -2**63, 2**64 - 1


def _exact_counts(obj: Dict[str, Any]) -> Dict[str, Any]:
    """A JSON object with its counts beyond 64 bits as ints: the JSON writes a count as a number when it fits in
    int64 or uint64 and as its exact decimal string beyond (report::to_json), so a decimal string outside that range
    is such a count; every other string (names, shapes, "0") stays as it is."""
    for k, v in obj.items():
        if isinstance(v, str) and len(v) >= 19 and v.lstrip("-").isdigit() and v.isascii():
            n = int(v)
            if (n < _INT64_MIN or n > _UINT64_MAX) and str(n) == v:
                obj[k] = n
    return obj


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
        self._data: Dict[str, Any] = _json.loads(doc.json(), object_hook=_exact_counts)

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
        dims = _dims(input_size, "input_size")
        self.input_size = tuple(dims) if dims is not None else None
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
                                   [(n, _dims(s, "inputs")) for n, s in (inputs or {}).items()],
                                   _dtype(dtype) or "fp32",
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


def _integer(v: Any) -> Optional[int]:
    """`v` as a Python int when it is an integer: an int, a numpy integer, a 0-d integer array or tensor (whatever
    operator.index takes); None for anything else, bools (Python's, numpy's, torch's) included."""
    if isinstance(v, bool) or str(getattr(v, "dtype", "")) in ("bool", "torch.bool"):
        return None
    try:
        return _operator.index(v)
    except TypeError:
        return None


def _positive(v: Any, name: str, limit: int = 2**62) -> int:
    n = _integer(v)
    if n is None or n < 1:
        raise ValueError("{}: {!r} is not a positive integer".format(name, v))
    if n > limit:
        raise ValueError("{}: {} is too large (at most {})".format(name, n, limit))
    return n


def _dims(size: Any, name: str) -> Optional[List[int]]:
    """A shape: a tuple, list, torch.Size or integer array of positive ints, or one int (a 1-d shape)."""
    if size is None:
        return None
    if _integer(size) is not None:
        return [_positive(size, name)]
    if isinstance(size, (str, bytes)):
        raise ValueError("{}: give a tuple of ints such as (3, 224, 224), not {!r}".format(name, size))
    try:
        dims = list(size)
    except TypeError:
        raise ValueError("{}: give a tuple of ints such as (3, 224, 224), not {!r}".format(name, size)) from None
    return [_positive(d, name) for d in dims]


def _dtype(v: Any) -> Any:
    """dtype as given (None: the default; a non-string is the native call's "wrong type"), refusing an empty one."""
    if isinstance(v, str) and not v.strip():
        raise ValueError("dtype: {!r} is not an element type (fp32|fp16|bf16|fp64; None: the default)".format(v))
    return v


def _device(v: Any, name: str = "device") -> str:
    """A required device name: a non-empty string."""
    if not isinstance(v, str) or not v.strip():
        raise ValueError("{}: a device name is required, such as 'a100' (see ridge.devices()), not {!r}"
                         .format(name, v))
    return v


def _device_list(v: Any, required: bool) -> List[str]:
    """Device names: one or a list of them, each a non-empty string; none at all is an error when `required`."""
    names = [v] if isinstance(v, str) else ([] if v is None else list(v))
    if required and not names:
        raise ValueError("device: a device name is required, such as 'a100' (see ridge.devices()), not {!r}"
                         .format(v))
    return [_device(d) for d in names]


_EXPORTS: "_weakref.WeakKeyDictionary[Any, Tuple[Any, bytes]]" = _weakref.WeakKeyDictionary()


def _spec_of(model: Any, input_size: Optional[Tuple[int, ...]], example_inputs: Any,
             export_kwargs: Dict[str, Any]) -> Tuple[str, bytes, str]:
    if isinstance(model, Model):
        return model._spec
    if isinstance(model, (str, _os.PathLike)):
        path = _os.fspath(model)
        return ("name", path.encode(), path)
    if isinstance(model, (bytes, bytearray, memoryview)):
        if not bytes(model):
            raise ValueError("model: the ONNX bytes are empty")
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


class _Unknown(Exception):
    """A value _state_of cannot fingerprint: the export is then not cached."""


# Module attributes the state fingerprint leaves out: the parameters, buffers and submodules (their shapes and
# structure are in the key, the submodules walked on their own) and the mode (the export is always in eval mode).
_NOT_STATE = frozenset(("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "training"))


def _state_of(module: Any, torch: Any) -> Optional[Tuple[Any, ...]]:
    """A fingerprint of every submodule's plain attributes (`use_b = True`, `depth = 3`, a config object's fields),
    which forward() may read as it runs: equal fingerprints, equal exports. Tensors count by shape and dtype,
    functions by identity, hooks by which are registered; None when an attribute cannot be fingerprinted (an object
    without __dict__, a cycle too deep, more than 100,000 values), and the export is then not cached."""
    import enum
    import functools
    import types
    seen: Dict[int, int] = {}
    budget = [100_000]

    def fp(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > 12:
            raise _Unknown
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes, enum.Enum, torch.dtype,
                                       torch.device, torch.layout, torch.memory_format)):
            return (type(v).__qualname__, repr(v))  # repr: a NaN equals itself
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        if isinstance(v, torch.nn.Module):
            return ("module", id(v))  # its own attributes are walked as a submodule
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)):
            return ("callable", getattr(v, "__module__", None), getattr(v, "__qualname__", None), id(v))
        if id(v) in seen:  # shared (one config object in every layer) or a cycle
            return ("seen", seen[id(v)])
        seen[id(v)] = len(seen)
        if isinstance(v, functools.partial):
            return ("partial", fp(v.func, depth + 1), fp(v.args, depth + 1), fp(v.keywords, depth + 1))
        if isinstance(v, types.MethodType):
            return ("method", fp(v.__self__, depth + 1), fp(v.__func__, depth + 1))
        if isinstance(v, (tuple, list)):
            return (type(v).__qualname__, tuple(fp(x, depth + 1) for x in v))
        if isinstance(v, (set, frozenset)):
            return (type(v).__qualname__, tuple(sorted((fp(x, depth + 1) for x in v), key=repr)))
        if isinstance(v, dict):
            return (type(v).__qualname__, tuple((fp(k, depth + 1), fp(x, depth + 1)) for k, x in v.items()))
        if type(v).__module__ == "numpy" and hasattr(v, "tobytes") and getattr(v, "size", 0) <= 10_000:
            return ("numpy", repr(getattr(v, "shape", ())), str(v.dtype), v.tobytes())
        slots = [n for c in type(v).__mro__ for n in vars(c).get("__slots__", ()) if isinstance(n, str)]
        d = getattr(v, "__dict__", None)
        if not isinstance(d, dict) and not slots:
            raise _Unknown
        return ("object", type(v).__module__, type(v).__qualname__, fp(dict(d or {}), depth + 1),
                tuple((n, fp(getattr(v, n, None), depth + 1)) for n in slots if n not in ("__dict__", "__weakref__")))

    try:
        state = []
        for name, sub in module.named_modules():
            attrs = []
            for k, v in vars(sub).items():
                if k in _NOT_STATE:
                    continue
                if k.endswith("hooks") and isinstance(v, dict):  # which hooks, not what they hold
                    attrs.append((k, tuple((h, id(fn)) for h, fn in v.items())))
                else:
                    attrs.append((k, fp(v, 0)))
            state.append((name, type(sub).__qualname__, tuple(attrs)))
        return tuple(state)
    except (_Unknown, RecursionError):
        return None


# ATen ops torch.onnx cannot export (torch 1.13), each as an ONNX expression of the same shape and type: ridge reads
# shapes, never values. aten::zero is Tensor.zero_(), which Swin V2's attention applies to a slice of its qkv bias.
_SHAPE_ONLY_SYMBOLICS = {
    "aten::zero": lambda g, self: g.op("ConstantOfShape", g.op("Shape", self)),  # zeros: no arithmetic
}


@_contextlib.contextmanager
def _shape_only_symbolics(torch: Any, ops: List[str], opset: int):
    """Registers the _SHAPE_ONLY_SYMBOLICS for `ops` for one export, and removes them after, leaving torch's
    registry as it was (torch 1.13's unregister leaves an empty entry behind, on which a later export of the op
    fails with "min() arg is an empty sequence" instead of torch's own message)."""
    try:
        from torch.onnx._internal import registration
        table = registration.registry._registry
    except (ImportError, AttributeError):  # another torch: its public unregister is all there is
        table = None
    absent = [op for op in ops if table is not None and op not in table]
    for op in ops:
        torch.onnx.register_custom_op_symbolic(op, _SHAPE_ONLY_SYMBOLICS[op], opset)
    try:
        yield
    finally:
        for op in ops:
            if hasattr(torch.onnx, "unregister_custom_op_symbolic"):
                torch.onnx.unregister_custom_op_symbolic(op, opset)
            if op in absent:
                table.pop(op, None)


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
    # What the export depends on: the module's structure (repr), its parameters' and buffers' shapes and dtypes,
    # every submodule's plain attributes (_state_of), the inputs' shapes and dtypes and the export options; a module
    # changed in any of them is exported again. A module whose attributes cannot be fingerprinted is not cached.
    state = _state_of(module, torch)
    key = (symbolic, repr(module), tuple((n, tuple(p.shape), p.dtype) for n, p in module.named_parameters()),
           tuple((n, tuple(b.shape), b.dtype) for n, b in module.named_buffers()), state,
           shapes, tuple(str(getattr(a, "dtype", "")) for a in args), repr(sorted(export_kwargs.items())))
    cached = _EXPORTS.get(module)
    if state is not None and cached is not None and cached[0] == key:
        return cached[1]
    # Inputs that require grad, traced with grad enabled: torch's fused inference kernels for MultiheadAttention and
    # the Transformer layers (aten::_native_multi_head_attention, _transformer_encoder_layer_fwd; no ONNX export)
    # run only in eval mode with grad off or nothing requiring it, so the export takes the layers' plain ops. Each
    # input is a copy that is not a leaf, so an in-place op on it (ReLU(inplace=True) first) is allowed and leaves
    # the caller's tensor as it was.
    def traced(a: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return a.detach().requires_grad_().clone()
        return a
    args = tuple(traced(a) for a in ((torch.randn(*shapes[0]),) if symbolic else args))
    # Without weights: ridge needs their shapes only (see _ridge.params_to_initializers).
    kwargs = dict(input_names=names, dynamic_axes={n: {0: "batch"} for n in names} if symbolic else None,
                  do_constant_folding=False, opset_version=13, export_params=False)
    kwargs.update(export_kwargs)
    buf = _io.BytesIO()
    was_training = module.training
    module.eval()
    # Two failures are retried: an op torch cannot export at all, with a shape-only stand-in (_SHAPE_ONLY_SYMBOLICS),
    # and an op torch exports only from a later opset ("added in version 16": RAFT's grid_sample), at that opset
    # unless the caller chose one (ridge reads opsets up to 23).
    stand_ins: List[str] = []
    try:
        with torch.enable_grad(), _as_the_module_is(torch):
            for attempt in range(4):
                buf = _io.BytesIO()
                try:
                    with _shape_only_symbolics(torch, stand_ins, kwargs["opset_version"]):
                        torch.onnx.export(module, args, buf, **kwargs)
                    break
                except Exception as e:
                    missing = [op for op in _SHAPE_ONLY_SYMBOLICS if "'{}'".format(op) in str(e) and op not in stand_ins]
                    later = _re.search(r"added in version (\d+), try exporting with this version", str(e))
                    if missing and attempt < 3:
                        stand_ins += missing
                    elif later and "opset_version" not in export_kwargs and attempt < 3 and \
                            kwargs["opset_version"] < int(later.group(1)) <= 23:
                        kwargs["opset_version"] = int(later.group(1))
                    else:
                        raise
    except Exception as e:  # torch's own message, with what ridge was doing
        raise Error("{}: torch.onnx.export failed: {}".format(type(module).__name__, str(e).splitlines()[0])) from e
    finally:
        module.train(was_training)
    data = buf.getvalue()
    if not kwargs["export_params"]:
        data = _ridge.params_to_initializers(data, set(names), type(module).__name__,
                                             {n for n, _ in module.named_buffers()},
                                             [(n, p.numel()) for n, p in module.named_parameters()])
    if state is not None:
        _EXPORTS[module] = (key, data)
    else:
        _EXPORTS.pop(module, None)
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
_LAYERS = {"ingest": "kernels", "serve": "ops", "train": "op_groups", "devices": "devices"}


def _plain(v: Any) -> Any:
    """A numpy or torch number (an argument as given) as the JSON number it is."""
    n = _integer(v)
    if n is not None:
        return n
    if hasattr(v, "__float__"):
        return float(v)
    if hasattr(v, "tolist"):  # an integer array given as a shape
        return v.tolist()
    raise TypeError("{!r} is not JSON serializable".format(v))


def _finish(doc: "_ridge.Document", command: str, inputs: Dict[str, Any]) -> Result:
    doc.command = command
    doc.set_inputs(_json.dumps({k: v for k, v in inputs.items() if v is not None}, default=_plain))
    return Result(doc, _SHARES.get(command, ()), _TOTALS.get(command, "totals"), _LAYERS.get(command, "layers"))


def _require_complete(data: Dict[str, Any], label: str) -> None:
    """strict=True: raises ridge.Error with the CLI's --strict message (require_complete) when the document says a
    node was not costed."""
    missing = data.get("not_costed") or []
    if data.get("complete", True) is False and missing:
        first = missing[0]
        raise Error("--strict: {}: node '{}' (op {}) cannot be costed: {}{}".format(
            label, first.get("node"), first.get("op"), first.get("reason"),
            " (and {} more)".format(len(missing) - 1) if len(missing) > 1 else ""))


def _require_costed(graph: "_ridge.Graph", label: str) -> None:
    """strict=True for commands whose document does not say what was not costed (measure, roofline): the graph's
    summary does, checked before the command runs, as the CLI checks."""
    _require_complete(_json.loads(_ridge.summary(graph, 0, None, "sgd", None).json()), label)


def _load_args(model: Model, batch: int, dtype: Optional[str], seq_len: Optional[int],
               inputs: Optional[Dict[str, Sequence[int]]], strict: bool = False) -> Dict[str, Any]:
    return {"model": model.label, "batch": batch, "dtype": dtype or "fp32", "seq_len": seq_len, "strict": bool(strict),
            "input_size": "x".join(map(str, model.input_size)) if model.input_size else None,
            "input": ["{}={}".format(n, "x".join(map(str, s))) for n, s in inputs.items()] if inputs else None}


def summary(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
            convention: Optional[str] = None, dtype: Optional[str] = None, *, depth: int = 0,
            optimizer: str = "sgd", precision: Optional[str] = None, seq_len: Optional[int] = None,
            inputs: Optional[Dict[str, Sequence[int]]] = None, example_inputs: Any = None,
            strict: bool = False) -> Result:
    """Per-layer params, MACs, FLOPs (forward and backward), bytes and memory (`ridge summary`); strict: raise
    ridge.Error when a node cannot be costed instead of reporting lower bounds."""
    m = load(model, input_size, example_inputs)
    depth = _depth(depth)
    if precision is not None and dtype is None:  # as the CLI: tensors at the precision's activation type
        dtype = _ridge.activation_dtype(precision)
    g = m.graph(batch, dtype, seq_len, inputs)
    doc = _ridge.summary(g, depth, convention, optimizer, precision)
    r = _finish(doc, "summary", dict(_load_args(m, batch, dtype, seq_len, inputs, strict), depth=depth,
                                     convention=convention, optimizer=optimizer, precision=precision))
    if strict:
        _require_complete(r.data, m.label)
    return r


def flops(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
          convention: Optional[str] = None, dtype: Optional[str] = None, *, all_conventions: bool = False,
          seq_len: Optional[int] = None, inputs: Optional[Dict[str, Sequence[int]]] = None,
          example_inputs: Any = None, strict: bool = False) -> Result:
    """Headline FLOP/MAC counts under ridge's convention and other tools' (`ridge flops`); strict: raise ridge.Error
    when a node cannot be costed."""
    m = load(model, input_size, example_inputs)
    doc = _ridge.flops(m.graph(batch, dtype, seq_len, inputs), bool(all_conventions), convention,
                       _ridge.ModelSource(*m._spec))
    r = _finish(doc, "flops", dict(_load_args(m, batch, dtype, seq_len, inputs, strict),
                                   all_conventions=bool(all_conventions), convention=convention))
    if strict:
        _require_complete(r.data, m.label)
    return r


def _depth(v: Any) -> int:
    """A module depth: 0 (every node) to 64, as `ridge summary --depth`."""
    n = _integer(v)
    if n is None or not 0 <= n <= 64:
        raise ValueError("depth: {!r} is not an integer from 0 to 64".format(v))
    return n


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


def _opt_text(v: Optional[str], name: str) -> Optional[str]:
    return None if v is None else _text(v, name)


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
            optimizer: str = "sgd", strict: bool = False) -> Result:
    """PALEO-style time per layer and per iteration on a device, optionally calibrated and data-parallel
    (`ridge predict`); strict: raise ridge.Error when a node cannot be costed."""
    m = load(model, input_size, example_inputs)
    kind, payload, label = m._spec
    source = _ridge.ModelSource(kind, payload, label)
    if flops is not None:
        if _integer(flops) is None or _integer(flops) < 0:
            raise ValueError("flops: {!r} is not a FLOP count (a non-negative int)".format(flops))
        flops = _integer(flops)
    opts = m.load_options(batch, None, seq_len, inputs)
    doc = _ridge.predict(source, opts, _dtype(dtype), _device(device), _dirs(devices_dir), precision, bool(train),
                         _text(combine, "combine"), level, _text(calibration, "calibration"), bool(force),
                         _opt_real(ppp, "ppp"), _opt_real(ppp_mem, "ppp_mem"),
                         _opt_real(launch_overhead, "launch_overhead"), None if flops is None else str(flops),
                         _positive(devices_count, "devices_count"),
                         None if gpus_per_node is None else _positive(gpus_per_node, "gpus_per_node"),
                         _text(intra_node, "intra_node"), _text(inter_node, "inter_node"),
                         None if nics_per_node is None else _positive(nics_per_node, "nics_per_node"),
                         allreduce, allreduce_fit, _opt_real(bucket_mib, "bucket_mib"), _text(optimizer, "optimizer"))
    # Every option that changed the result, as the CLI records its flags (None: not given, left out).
    if strict:
        _require_complete(_json.loads(doc.json()), m.label)
    return _finish(doc, "predict", dict(_load_args(m, batch, dtype, seq_len, inputs, strict), device=device,
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
             seq_len: Optional[int] = None, example_inputs: Any = None, strict: bool = False) -> Result:
    """Layers and models on device rooflines: arithmetic intensity, attainable FLOP/s, ridge point, bound
    (`ridge roofline`). `models` is one model or a list; the notebook view draws one roofline per device. strict:
    raise ridge.Error when a node of a model cannot be costed."""
    import tempfile
    many = [load(m, input_size, example_inputs)
            for m in (models if isinstance(models, (list, tuple)) else [models])]
    if not many:
        raise ValueError("models: give at least one model")
    opts = many[0].load_options(batch, None, seq_len)
    devices = _device_list(device, True)
    if strict:
        for m in many:
            _require_costed(m.graph(batch, dtype, seq_len), m.label)
    with tempfile.TemporaryDirectory(prefix="ridge-") as tmp:
        doc = _ridge.roofline(_named(many, tmp), opts, _dtype(dtype), devices, _dirs(devices_dir), precision, level,
                              _dirs(measured), bool(summary_only))
    return _finish(doc, "roofline", dict(model=[m.label for m in many], batch=batch, device=devices,
                                         precision=precision, level=level, strict=bool(strict)))


def _cpu_count() -> int:
    """The CPUs this process may run on. measure(threads=0) asks for them all explicitly: once torch is imported,
    OpenMP's default is what torch set (often 1 thread), not the machine."""
    try:
        return max(1, len(_os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, _os.cpu_count() or 1)


class _OpenMPThreads:
    """Runs the executor on `threads` OpenMP threads (0: every CPU) and then gives OpenMP back the thread count it
    had, which torch uses for its own ops. Needed where the OpenMP runtime is the process's (torch loaded it):
    torch sets its default to torch's thread count, often 1, and the executor's "runtime default" would be that."""

    def __init__(self, threads: int):
        self._threads = threads or _cpu_count()
        self._saved: Optional[int] = None
        self._set: Any = None

    def __enter__(self) -> int:
        import ctypes
        try:
            lib = ctypes.CDLL(None)
            get, self._set = lib.omp_get_max_threads, lib.omp_set_num_threads
        except (AttributeError, OSError):  # no OpenMP in the process's global symbols: the executor's own
            return self._threads
        self._saved = int(get())
        self._set(self._threads)
        return self._threads

    def __exit__(self, *exc: Any) -> bool:
        if self._saved is not None:
            self._set(self._saved)
        return False


def measure(model: ModelLike, input_size: Optional[Sequence[int]] = None, batch: int = 1,
            dtype: Optional[str] = None, *, threads: int = 0, repeat: int = 50, max_seconds: float = 20,
            train: bool = False, seed: int = 42, machine: Optional[str] = None, seq_len: Optional[int] = None,
            inputs: Optional[Dict[str, Sequence[int]]] = None, example_inputs: Any = None,
            end_to_end: bool = False, strict: bool = False) -> Result:
    """Runs the model on this CPU with oneDNN (random weights) and times every layer next to its estimate and the
    machine's roofline (`ridge measure`); end_to_end: also the whole graph as one fused program. threads=0 is every
    CPU this process may run on (os.sched_getaffinity), also once torch has set OpenMP's default to 1; torch's own
    thread count is as it was afterwards. strict: raise ridge.Error, before measuring, when a node cannot be
    costed."""
    m = load(model, input_size, example_inputs)
    if _integer(threads) is None or _integer(threads) < 0:
        raise ValueError("threads: {!r} is not a thread count (0: all CPUs)".format(threads))
    threads = _integer(threads)
    g = m.graph(batch, dtype, seq_len, inputs, training=bool(train))
    if _integer(seed) is None or _integer(seed) < 0:
        raise ValueError("seed: {!r} is not a non-negative integer".format(seed))
    seed = _integer(seed)
    if strict:
        _require_costed(g, m.label)
    with _OpenMPThreads(threads) as n:
        doc = _ridge.measure(g, n, seed, bool(train), _positive(repeat, "repeat"),
                             _opt_real(max_seconds, "max_seconds"), _text(machine, "machine"), bool(end_to_end))
    return _finish(doc, "measure", dict(_load_args(m, batch, dtype, seq_len, inputs, strict), threads=threads,
                                        repeat=repeat, max_seconds=max_seconds, train=bool(train), seed=seed,
                                        end_to_end=bool(end_to_end)))


def ingest(files: Union[str, "_os.PathLike[str]", Sequence[Union[str, "_os.PathLike[str]"]]], *,
           model: Optional[ModelLike] = None, input_size: Optional[Sequence[int]] = None, batch: int = 1,
           steps: int = 1, train: bool = False, labels: Optional[Sequence[str]] = None,
           input_format: Optional[str] = None, join: str = "auto", arch: Optional[str] = None,
           tensor_factor: Optional[int] = None, run: Optional[int] = None, group: str = "family",
           top: Optional[int] = None, device: Optional[str] = None, precision: str = "fp32", force: bool = False,
           devices_dir: Union[None, str, Sequence[str]] = None, calibration: str = "builtin") -> Result:
    """Reads ncu (text, CSV), nsys, nvprof and torch.profiler outputs: exact FLOPs per precision, bytes, time;
    with `model`, compared with ridge's estimate (`ridge ingest`). `labels` (one per file) label runs ("bs=10");
    `join="sequence"` reads the files as consecutive slices of one capture (ncu --launch-skip); `device` adds the
    predicted time per kernel family (with `calibration`: "builtin", "none" for the roofline bound, or a file) and
    the kernel roofline at `precision`; `force` uses a profile whose file names another model, batch or GPU anyway
    (the output says so)."""
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
                            _text(device, "device"), _dirs(devices_dir), _text(precision, "precision"), bool(force),
                            _text(calibration, "calibration") if device is not None else "")
    return _finish(doc, "ingest", dict(files=paths, model=None if model is None else name, batch=batch, steps=steps,
                                       train=bool(train), device=device, precision=precision, force=bool(force),
                                       run=run, group=group, join=join, label=list(labels) if labels else None,
                                       calibration=calibration if device is not None else None))


def serve(model: ModelLike, *, device: str, batch: int = 1, prompt: int = 512, generate: int = 128, tp: int = 1,
          weights: Optional[str] = None, kv: Optional[str] = None, compute: Optional[str] = None,
          attention: str = "eager", moe: str = "eager", mla: str = "hf", devices: Union[None, str, Sequence[str]] = None,
          calibration: str = "builtin", dp: int = 1, precision: Optional[str] = None) -> Result:
    """What an LLM costs to serve: prefill, decode, KV cache, TTFT, tokens/s (`ridge serve`).

    attention: "eager" (scores in memory), "fused" (one kernel at the GEMM factors), "flash2" (FlashAttention-2 at
    its published utilization on the GPU family) or "flash1" (FlashAttention-1 likewise); fused kernels execute only
    the scores the causal mask and sliding window keep. moe: "eager" (HF's loop, a kernel per routed expert and op) or
    "grouped" (one grouped kernel per op of a layer's experts, as vLLM's fused_moe). mla (DeepSeek models): "hf"
    (the cache holds every head's key and value) or "latent" (the latent cache and decode of vLLM and SGLang).
    dp (mixture-of-experts models, tp 1): data-parallel attention over dp GPUs, each attending for its share of the
    batch with every head and holding 1/dp of the experts, reached by all-to-alls (SGLang's --enable-dp-attention).
    weights, kv and compute: None is fp16. precision (instead of compute): fp32, tf32, bf16, fp16, amp-bf16 or
    amp-fp16 as predict() and train() read it: the compute precision, weights at its weight type (amp-*: fp32) and
    the KV cache at its activation type, unless weights or kv are given."""
    m = load(model)
    dirs = _dirs(devices)
    doc = _ridge.serve(_ridge.ModelSource(*m._spec), _device(device), dirs, _text(calibration, "calibration"),
                       _positive(batch, "batch"), _positive(prompt, "prompt"), _positive(generate, "generate"),
                       _positive(tp, "tp"), _opt_text(weights, "weights"), _opt_text(kv, "kv"),
                       _opt_text(compute, "compute"), _text(attention, "attention"), _text(moe, "moe"), _text(mla, "mla"),
                       _positive(dp, "dp"), _opt_text(precision, "precision"))
    return _finish(doc, "serve", dict(model=m.label, device=device, batch=batch, prompt=prompt, generate=generate,
                                      tp=tp, dp=dp, weights=weights, kv=kv, compute=compute, attention=attention, moe=moe, mla=mla,
                                      calibration=calibration, devices=dirs or None, precision=precision))


def train(model: ModelLike, *, device: str, gpus: int, tp: int = 1, pp: int = 1, dp: Optional[int] = None,
          zero: Union[int, str] = 0, interleave: int = 1, ep: int = 1, cp: int = 1, sp: bool = False,
          recompute: str = "none",
          seq: int = 2048, global_batch: Optional[int] = None, micro_batch: int = 1, compute: Optional[str] = None,
          tokens: Optional[float] = None, attention: str = "eager", moe: str = "eager", calibration: str = "builtin",
          devices: Union[None, str, Sequence[str]] = None, precision: Optional[str] = None) -> Result:
    """What an LLM costs to train: FLOPs, MFU/HFU, time, memory per GPU (`ridge train`).

    attention: "eager", "fused", "flash2" or "flash1", and moe: "eager" or "grouped" (Megatron-LM's --moe-grouped-gemm), as for
    serve(). cp: context-parallel GPUs (each holds seq / cp tokens;
    gpus = tp x cp x pp x dp). compute: None is bf16 with Megatron/DeepSpeed mixed precision (bf16 weights and
    gradients, fp32 master + 2 Adam moments). precision (instead of compute): a training mode as predict() reads it
    (amp-bf16: PyTorch autocast, fp32 weights, gradients and Adam states; bf16: everything in bf16; fp32, tf32, ...)."""
    m = load(model)
    dirs = _dirs(devices)
    if _integer(zero) is not None:
        zero = _integer(zero)
    elif not isinstance(zero, str):
        raise ValueError("zero: {!r} is not a ZeRO stage (0, 1, 2, 3 or 'fsdp')".format(zero))
    doc = _ridge.train(_ridge.ModelSource(*m._spec), _device(device), dirs, _text(calibration, "calibration"),
                       _positive(gpus, "gpus"), _positive(tp, "tp"), _positive(pp, "pp"),
                       None if dp is None else _positive(dp, "dp"), str(zero), _positive(interleave, "interleave"),
                       _positive(ep, "ep"), _positive(cp, "cp"), bool(sp), _text(recompute, "recompute"), _positive(seq, "seq"),
                       None if global_batch is None else _positive(global_batch, "global_batch"),
                       _positive(micro_batch, "micro_batch"), _opt_text(compute, "compute"),
                       _opt_real(tokens, "tokens"), _text(attention, "attention"), _text(moe, "moe"),
                       _opt_text(precision, "precision"))
    return _finish(doc, "train", dict(model=m.label, device=device, gpus=gpus, tp=tp, pp=pp, dp=dp, zero=str(zero),
                                      interleave=interleave, ep=ep, cp=cp, sp=bool(sp), recompute=recompute, seq=seq,
                                      global_batch=global_batch, micro_batch=micro_batch, compute=compute,
                                      tokens=tokens, attention=attention, moe=moe, calibration=calibration,
                                      devices=dirs or None, precision=precision))


def _batches(sweep: Union[str, Sequence[int]]) -> List[int]:
    """Batch sizes of a sweep: a list of ints, "1,2,4" or "start:stop:step", refused as --sweep is
    (cli::parse_batch_list): at most 10000 points, a range that stops before it starts."""
    if not isinstance(sweep, str):
        return [_positive(b, "sweep") for b in sweep]

    def num(part: str) -> int:
        if not part or not all("0" <= c <= "9" for c in part):
            raise ValueError("sweep: '{}' is not a positive integer (in '{}')".format(part, sweep))
        if len(part) > 12:
            raise ValueError("sweep: batch size {} is too large (at most 999,999,999,999; in '{}')".format(part, sweep))
        if int(part) < 1:
            raise ValueError("sweep: batch sizes must be positive (got {} in '{}')".format(int(part), sweep))
        return int(part)

    if ":" in sweep:
        parts = sweep.split(":")
        if len(parts) > 3:
            raise ValueError("sweep: '{}' is not START:STOP[:STEP]".format(sweep))
        start, stop, step = num(parts[0]), num(parts[1]), num(parts[2]) if len(parts) == 3 else 1
        if stop < start:
            raise ValueError("sweep: '{}' stops before it starts".format(sweep))
        if (stop - start) // step > 10000:
            raise ValueError("sweep: '{}' has more than 10000 points".format(sweep))
        return list(range(start, stop + 1, step))
    return [num(p) for p in sweep.split(",")]


# report()'s serving options (--serve only) and their defaults; and the model report's options, which the serving
# report refuses (its graphs come from the LLM's config), as `ridge report` does.
_SERVE_ONLY = {"prompt": 512, "generate": 128, "tp": 1, "weights": "fp16", "kv": "fp16", "attention": "eager",
               "moe": "eager", "mla": "hf", "dp": 1}
_MODEL_ONLY = ("profile", "train", "optimizer", "measure", "end_to_end", "sweep", "seq_len", "inputs", "input_size",
               "example_inputs", "dtype", "strict", "force", "depth")


def report(model: ModelLike, path: Union[str, "_os.PathLike[str]"], input_size: Optional[Sequence[int]] = None,
           batch: int = 1, *, device: Union[None, str, Sequence[str]] = None, example_inputs: Any = None,
           dtype: Optional[str] = None, precision: Optional[str] = None, train: Optional[bool] = None,
           optimizer: Optional[str] = None, devices_dir: Union[None, str, Sequence[str]] = None,
           measure: Optional[bool] = None, profile: Union[None, str, Sequence[str]] = None,
           force: Optional[bool] = None, sweep: Union[None, str, Sequence[int]] = None, depth: Optional[int] = None,
           top: int = 5, serve: bool = False, prompt: Optional[int] = None, generate: Optional[int] = None,
           tp: Optional[int] = None, weights: Optional[str] = None, kv: Optional[str] = None,
           strict: Optional[bool] = None, seq_len: Optional[int] = None,
           inputs: Optional[Dict[str, Sequence[int]]] = None, end_to_end: Optional[bool] = None,
           attention: Optional[str] = None, moe: Optional[str] = None, mla: Optional[str] = None,
           dp: Optional[int] = None) -> str:
    """Writes the self-contained HTML report (`ridge report MODEL -o PATH`) and returns its path; `serve=True`
    reports an LLM's serving (prompt, generate, tp, dp, weights, kv, attention, moe, mla as for serve()) on each device
    instead. precision: None is fp32, or with serve=True fp16 compute, weights and KV; with serve=True it means what
    serve(precision=) does. end_to_end (with
    measure=True): also time the whole graph as one fused program. sweep: a list of batch sizes, "1,2,4" or
    "start:stop:step" (at most 10000 points; default 1,2,4,8,16,32,64); depth: 0 to 64 (default 1). As the CLI,
    the serving options given without serve=True, or the model report's options (sweep, depth, train, measure,
    profile, input_size, dtype, ...) given with it, are refused with ValueError; None leaves an option unset."""
    given = dict(prompt=prompt, generate=generate, tp=tp, dp=dp, weights=weights, kv=kv, attention=attention, moe=moe,
                 mla=mla, profile=profile, train=train, optimizer=optimizer, measure=measure, end_to_end=end_to_end,
                 sweep=sweep, seq_len=seq_len, inputs=inputs, input_size=input_size, example_inputs=example_inputs,
                 dtype=dtype, strict=strict, force=force, depth=depth)
    if not serve:
        for name in _SERVE_ONLY:
            if given[name] is not None:
                raise ValueError("{} needs serve=True (as --{} needs --serve)".format(name, name))
    else:
        for name in _MODEL_ONLY:
            if given[name] is not None:
                raise ValueError("{} does not apply to serve=True (its graphs come from the LLM's config)"
                                 .format(name))
    serving = {k: _SERVE_ONLY[k] if given[k] is None else given[k] for k in _SERVE_ONLY}
    depth = _depth(1 if depth is None else depth)
    batches = _batches("1,2,4,8,16,32,64" if sweep is None else sweep)
    m = load(model, input_size, example_inputs)
    path = _os.path.abspath(_os.fspath(path))
    opts = m.load_options(batch, None, seq_len, inputs)
    # measure=True times on every CPU, as measure(threads=0).
    with _OpenMPThreads(0) if measure else _contextlib.nullcontext():
        _ridge.report(_ridge.ModelSource(*m._spec), opts, _dtype(dtype), bool(strict), _text(precision, "precision"),
                      bool(train), _text(optimizer or "sgd", "optimizer"), _device_list(device, False),
                      _dirs(devices_dir), bool(measure), _dirs(profile), bool(force), batches, depth,
                      _positive(top, "top"), bool(serve),
                      _positive(serving["prompt"], "prompt"), _positive(serving["generate"], "generate"),
                      _positive(serving["tp"], "tp"), _text(serving["weights"], "weights"), _text(serving["kv"], "kv"),
                      path, bool(end_to_end), _text(serving["attention"], "attention"), _text(serving["moe"], "moe"),
                      _text(serving["mla"], "mla"), _positive(serving["dp"], "dp"), given["weights"] is not None,
                      given["kv"] is not None)
    return path


# Where a function's keyword arguments differ from its command's options (`ridge COMMAND --help`): every other
# option is the keyword of its long name with - as _ (--seq-len is seq_len=, --strict is strict=True).
_OUTPUT_OPTIONS = ("--format, --json, --csv, --csv-totals, --md, --wide and --plot are the Result's methods "
                   "(to_json(), to_pandas(), to_markdown(), to_text(), to_html(); a notebook shows the charts)")
_KEYWORD_NOTES = {
    "summary": ["--input NAME=SHAPE is inputs={NAME: SHAPE}"],
    "flops": ["--input NAME=SHAPE is inputs={NAME: SHAPE}"],
    "predict": ["--input NAME=SHAPE is inputs={NAME: SHAPE}", "--devices-dir/--devices is devices_dir="],
    "roofline": ["MODELS is models= (one or a list)", "--input NAME=SHAPE is not taken (give example_inputs)",
                 "--summary is summary_only=", "--force is not taken", "--devices-dir/--devices is devices_dir="],
    "measure": ["--input NAME=SHAPE is inputs={NAME: SHAPE}", "--machine FILE|none is machine="],
    "ingest": ["FILES is files= (one or a list)", "--label is labels= (one per file)", "--chart is not taken",
               "--devices-dir/--devices is devices_dir="],
    "devices": ["--devices-dir/--devices is devices_dir=", "machine_profile= is Python's only"],
    "serve": ["--devices is devices=", "--all-ops is not needed: .tables holds both \"ops\" and \"op_groups\""],
    "train": ["--devices is devices="],
    "report": ["-o/--output is path", "--input NAME=SHAPE is inputs={NAME: SHAPE}",
               "--devices-dir/--devices is devices_dir=", "--device/-d is device= (one or a list)"],
}


def _with_help(fn, command: str) -> None:
    text = _HELP.get(command)
    if text:
        notes = "; ".join(_KEYWORD_NOTES.get(command, []) + [_OUTPUT_OPTIONS])
        fn.__doc__ = ("{}\n\nThe CLI's `ridge {} --help` below: keyword arguments are the options' long names with "
                      "- as _ (--seq-len is seq_len=; a flag is =True), except: {}.\n\n{}").format(
            fn.__doc__, command, notes, "\n".join("    " + line for line in text.splitlines()))


for _fn, _cmd in ((summary, "summary"), (flops, "flops"), (predict, "predict"), (devices, "devices"),
                  (serve, "serve"), (train, "train"), (report, "report"), (roofline, "roofline"),
                  (measure, "measure"), (ingest, "ingest")):
    _with_help(_fn, _cmd)
