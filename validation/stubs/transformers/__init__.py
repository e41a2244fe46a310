"""Stub: calflops' package __init__ imports Hugging Face helpers it never uses for nn.Module counting."""


class AutoTokenizer:
    pass
