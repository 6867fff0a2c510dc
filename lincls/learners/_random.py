"""A fit's random orders: the generator of a learner that shuffles, and its permutations."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state


def random_state_for(shuffle: bool, random_state) -> np.random.RandomState | None:
    """The generator of a fit's orders when it shuffles; else None, once ``random_state`` is
    one ``check_random_state`` takes (seeding one costs ~0.45 ms, a tenth of a cheap run)."""
    if shuffle:
        return check_random_state(random_state)
    seed = isinstance(random_state, numbers.Integral) and 0 <= random_state < 2**32
    if random_state is None or seed or isinstance(random_state, np.random.RandomState):
        return None
    return check_random_state(random_state)  # its own error for what it refuses


def permutation(rng: np.random.RandomState, n: int) -> np.ndarray:
    """A random order of ``n`` rows as int64, without a copy where the platform's int is int64."""
    return rng.permutation(n).astype(np.int64, copy=False)
