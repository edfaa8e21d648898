"""torch.nn.modules.channelshuffle: ChannelShuffle (minigrad/nn/pooling.py)."""
from ...nn.pooling import ChannelShuffle

__all__ = ["ChannelShuffle"]
