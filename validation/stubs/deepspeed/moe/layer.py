class MoE:
    """Stub: no validation model is a DeepSpeed MoE."""
