"""minigrad.utils: data loading (`minigrad.utils.data`) and hook handles (`minigrad.utils.hooks`)."""
from . import data, hooks
