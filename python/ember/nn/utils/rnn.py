"""ember.nn.utils.rnn: packed and padded sequences (filled in with the recurrent layers)."""
from ..._missing import missing

__getattr__ = missing(__name__)
