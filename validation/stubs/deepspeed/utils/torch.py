import torch


def required_torch_version(min_version=None, max_version=None):
    v = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    v = v[0] + v[1] / 10
    return (min_version is None or v >= min_version) and (max_version is None or v <= max_version)
