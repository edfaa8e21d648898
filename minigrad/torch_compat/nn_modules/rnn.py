"""torch.nn.modules.rnn: RNN, LSTM, GRU and their cells (minigrad/nn/recurrent.py)."""
from ...nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
