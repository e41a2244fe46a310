"""torch.onnx.export of a module as it is. Pure Python with no import of ridge, so validation/export.py loads this
file by path (without the compiled extension) and exports the models it checks the tools on the same way."""
from typing import Any, Dict


class as_the_module_is:
    """Turns off two passes of torch.onnx.export that change what the module is: the eval-mode "peephole" fuses
    each BatchNorm into the Conv before it (the BatchNorm layers and their parameters are gone) and the initializer
    de-duplication merges weights of equal values (a fresh model's BatchNorm weights are all 1). ridge reports the
    module as it is; a torch without these private passes is left as it is."""

    _PASSES = ("_jit_pass_onnx_eval_peephole", "_jit_pass_onnx_deduplicate_initializers")

    def __init__(self, torch: Any):
        self._c = torch._C
        self._saved: Dict[str, Any] = {}

    def __enter__(self):
        for name in self._PASSES:
            if hasattr(self._c, name):
                self._saved[name] = getattr(self._c, name)
                setattr(self._c, name, lambda graph, params, *rest: params)
        return self

    def __exit__(self, *exc):
        for name, fn in self._saved.items():
            setattr(self._c, name, fn)
        return False
