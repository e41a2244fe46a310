def init_empty_weights(*a, **k):
    raise NotImplementedError("accelerate stub")
