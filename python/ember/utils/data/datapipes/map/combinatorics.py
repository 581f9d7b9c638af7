"""Shuffler (.shuffle) of a MapDataPipe: an IterDataPipe of its items in a random order, drawn
anew (from ember's generator, unless set_seed fixes it) at each new iterator."""
import random

import ember
from ..datapipe import IterDataPipe, MapDataPipe

__all__ = ["ShufflerIterDataPipe"]


class ShufflerIterDataPipe(IterDataPipe):
    """datapipe[i] for the indices (all by default) in a random order."""

    def __init__(self, datapipe, *, indices=None):
        super().__init__()
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed = None
        self._rng = random.Random()
        self._shuffled_indices = self.indices

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            for idx in self.indices:
                yield self.datapipe[idx]
        else:
            while self._shuffled_indices:
                idx = self._shuffled_indices.pop()
                yield self.datapipe[idx]

    def reset(self):
        if self._enabled and self._seed is None:
            self._seed = int(ember.empty((), dtype=ember.int64).random_().item())
        self._rng.seed(self._seed)
        self._seed = None
        self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self):
        return len(self.datapipe)

    def __getstate__(self):
        state = (self.datapipe, self.indices, self._enabled, self._seed, self._rng.getstate(),
                 self._shuffled_indices, self._valid_iterator_id,
                 self._number_of_samples_yielded)
        if IterDataPipe.getstate_hook is not None:
            return IterDataPipe.getstate_hook(state)
        return state

    def __setstate__(self, state):
        (self.datapipe, self.indices, self._enabled, self._seed, rng_state,
         self._shuffled_indices, self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
