# Type hints of the `ridge` package (python/ridge/__init__.py); the docstrings are there.
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

class Error(RuntimeError):
    """A failure ridge reports in one line naming the file, option or node and why (the CLI's exit code 1)."""

class Graph:
    name: str
    node_count: int
    inputs: List[Tuple[str, List[int]]]

class Result:
    @property
    def data(self) -> Dict[str, Any]: ...
    @property
    def title(self) -> str: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def tables(self) -> Dict[str, List[Dict[str, Any]]]: ...
    @property
    def fields(self) -> Dict[str, Dict[str, Any]]: ...
    @property
    def totals(self) -> Dict[str, Any]: ...
    @property
    def layers(self) -> List[Dict[str, Any]]: ...
    def to_pandas(self, table: Optional[str] = ...) -> Any: ...
    def to_json(self) -> str: ...
    def to_markdown(self) -> str: ...
    def to_text(self, width: int = ...) -> str: ...
    def to_html(self) -> str: ...
    def __getitem__(self, key: str) -> Any: ...
    def _repr_html_(self) -> str: ...

ModelLike = Union[str, os.PathLike[str], bytes, bytearray, memoryview, Dict[str, Any], "Model", Any]
Shape = Union[Sequence[int], int, Any]  # a tuple, list, torch.Size or integer array of ints; one int is (int,)
Dirs = Union[None, str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]]

class Model:
    input_size: Optional[Tuple[int, ...]]
    def __init__(self, model: ModelLike, input_size: Optional[Shape] = ..., example_inputs: Any = ...,
                 **export_kwargs: Any) -> None: ...
    @property
    def label(self) -> str: ...
    def graph(self, batch: int = ..., dtype: Optional[str] = ..., seq_len: Optional[int] = ...,
              inputs: Optional[Dict[str, Shape]] = ..., training: bool = ...) -> Graph: ...
    def onnx_bytes(self) -> bytes: ...

def load(model: ModelLike, input_size: Optional[Shape] = ..., example_inputs: Any = ...,
         **export_kwargs: Any) -> Model: ...

def summary(model: ModelLike, input_size: Optional[Shape] = ..., batch: int = ..., convention: Optional[str] = ...,
            dtype: Optional[str] = ..., *, depth: int = ..., optimizer: str = ..., precision: Optional[str] = ...,
            seq_len: Optional[int] = ..., inputs: Optional[Dict[str, Shape]] = ...,
            example_inputs: Any = ..., strict: bool = ...) -> Result: ...

def flops(model: ModelLike, input_size: Optional[Shape] = ..., batch: int = ..., convention: Optional[str] = ...,
          dtype: Optional[str] = ..., *, all_conventions: bool = ..., seq_len: Optional[int] = ...,
          inputs: Optional[Dict[str, Shape]] = ..., example_inputs: Any = ..., strict: bool = ...) -> Result: ...

def predict(model: ModelLike, input_size: Optional[Shape] = ..., batch: int = ..., dtype: Optional[str] = ..., *,
            device: str, precision: str = ..., train: bool = ..., combine: str = ..., level: str = ...,
            calibration: Optional[str] = ..., force: bool = ..., ppp: Optional[float] = ...,
            ppp_mem: Optional[float] = ..., launch_overhead: Optional[float] = ..., flops: Optional[int] = ...,
            devices_count: int = ..., gpus_per_node: Optional[int] = ..., intra_node: Optional[str] = ...,
            inter_node: Optional[str] = ..., nics_per_node: Optional[int] = ..., allreduce: str = ...,
            allreduce_fit: str = ..., bucket_mib: float = ..., devices_dir: Dirs = ...,
            seq_len: Optional[int] = ..., inputs: Optional[Dict[str, Shape]] = ...,
            example_inputs: Any = ..., optimizer: str = ..., strict: bool = ...) -> Result: ...

def devices(devices_dir: Dirs = ..., machine_profile: Optional[str] = ...) -> Result: ...

def roofline(models: Union[ModelLike, Sequence[ModelLike]], input_size: Optional[Shape] = ..., batch: int = ...,
             dtype: Optional[str] = ..., *, device: Union[str, Sequence[str]], precision: str = ..., level: str = ...,
             measured: Dirs = ..., summary_only: bool = ..., devices_dir: Dirs = ..., seq_len: Optional[int] = ...,
             example_inputs: Any = ..., strict: bool = ...) -> Result: ...

def measure(model: ModelLike, input_size: Optional[Shape] = ..., batch: int = ..., dtype: Optional[str] = ..., *,
            threads: int = ..., repeat: int = ..., max_seconds: float = ..., train: bool = ..., seed: int = ...,
            machine: Optional[str] = ..., seq_len: Optional[int] = ..., inputs: Optional[Dict[str, Shape]] = ...,
            example_inputs: Any = ..., end_to_end: bool = ..., strict: bool = ...) -> Result: ...

def ingest(files: Dirs, *, model: Optional[ModelLike] = ..., input_size: Optional[Shape] = ..., batch: int = ...,
           steps: int = ..., train: bool = ..., labels: Optional[Sequence[str]] = ..., input_format: Optional[str] = ...,
           join: str = ..., arch: Optional[str] = ..., tensor_factor: Optional[int] = ..., run: Optional[int] = ...,
           group: str = ..., top: Optional[int] = ...) -> Result: ...

def serve(model: ModelLike, *, device: str, batch: int = ..., prompt: int = ..., generate: int = ..., tp: int = ...,
          weights: str = ..., kv: str = ..., compute: str = ..., attention: str = ..., moe: str = ..., mla: str = ...,
          devices: Dirs = ..., calibration: str = ..., dp: int = ...) -> Result: ...

def train(model: ModelLike, *, device: str, gpus: int, tp: int = ..., pp: int = ..., dp: Optional[int] = ...,
          zero: Union[int, str] = ..., interleave: int = ..., ep: int = ..., cp: int = ..., sp: bool = ...,
          recompute: str = ..., seq: int = ..., global_batch: Optional[int] = ..., micro_batch: int = ...,
          compute: str = ..., tokens: Optional[float] = ..., attention: str = ..., moe: str = ..., calibration: str = ...,
          devices: Union[None, str, Sequence[str]] = ...) -> Result: ...

def report(model: ModelLike, path: Union[str, os.PathLike[str]], input_size: Optional[Shape] = ..., batch: int = ...,
           *, device: Union[None, str, Sequence[str]] = ..., example_inputs: Any = ..., dtype: Optional[str] = ...,
           precision: Optional[str] = ..., train: Optional[bool] = ..., optimizer: Optional[str] = ...,
           devices_dir: Union[None, str, Sequence[str]] = ..., measure: Optional[bool] = ...,
           profile: Union[None, str, Sequence[str]] = ..., force: Optional[bool] = ...,
           sweep: Union[None, str, Sequence[int]] = ..., depth: Optional[int] = ..., top: int = ..., serve: bool = ...,
           prompt: Optional[int] = ..., generate: Optional[int] = ..., tp: Optional[int] = ...,
           weights: Optional[str] = ..., kv: Optional[str] = ..., strict: Optional[bool] = ...,
           seq_len: Optional[int] = ..., inputs: Optional[Dict[str, Shape]] = ..., end_to_end: Optional[bool] = ...,
           attention: Optional[str] = ..., moe: Optional[str] = ..., mla: Optional[str] = ...,
           dp: Optional[int] = ...) -> str: ...
