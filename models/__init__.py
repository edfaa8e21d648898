"""Whole models built from minigrad: the encoder-decoder Transformer and a decoder-only language model."""
