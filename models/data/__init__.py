"""Data for the toy tasks: vocabularies and padding, copy/reverse, dates -> ISO, two-digit addition."""
from .addition import AdditionTask
from .dates import DateTask
from .sequences import SequenceTask
from .vocab import BOS, EOS, PAD, Vocab, pad_batch
