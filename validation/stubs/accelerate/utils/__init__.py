def is_timm_available():
    return False


def is_transformers_available():
    return False
