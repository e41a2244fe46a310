"""Stub: DeepSpeed's profiler patches einops.einsum; no validation model calls it."""


def einsum(*args):
    raise NotImplementedError("einops stub")
