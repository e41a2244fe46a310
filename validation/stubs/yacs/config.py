"""Stub of yacs.config: fvcore.common.config subclasses CfgNode at import."""


class CfgNode(dict):
    pass
