def model_info(*a, **k):
    raise NotImplementedError("huggingface_hub stub")
