"""torch.backends.cudnn: flags that GPU training scripts set (`cudnn.benchmark = True`); recorded, with
PyTorch's defaults, and without effect: minigrad has no cuDNN."""
enabled = True
benchmark = False
deterministic = False  # minigrad is deterministic anyway: the same seed gives the same run
allow_tf32 = True


def is_available():
    return False


def version():
    """cuDNN's version: None, as PyTorch says where cuDNN is absent."""
    return None
