"""Shared pieces of the multiclass tests: seed 001's 3-class example and random certified data."""

from __future__ import annotations

import numpy as np
from _online_cases import certified_data
from hypothesis import strategies as st

from lincls.data import make_multiclass

# Seed 001 §9.4.1: x = [-2, 3, 1], rows w_0, w_1, w_2 (no bias); scores 11, 13, 8.
SEED001_W = np.array([[-2.0, 2.0, 1.0], [0.0, 3.0, 4.0], [1.0, 4.0, -2.0]])
SEED001_x = np.array([-2.0, 3.0, 1.0])
# The example (true class 2) first, then one example of class 0 and one of class 1 that the
# updated rows of both the perceptron and MIRA get right (so every class is present and the
# only update is the seed's).
SEED001_MC_X = np.array([SEED001_x, [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
SEED001_MC_Y = np.array([2, 0, 1])


@st.composite
def multiclass_data(draw):
    """A certified multiclass dataset with drawn n, d, n_classes, radius, margin and seed."""
    d = draw(st.integers(1, 6))
    k = 2 if d == 1 else draw(st.integers(2, 5))
    n = draw(st.integers(k, 40))
    radius = draw(st.sampled_from([0.01, 0.3, 1.0, 7.0, 100.0]))
    # The largest gap a point of norm R can have is below R·√(2/k); stay well inside it.
    margin = radius * draw(st.floats(0.005, 0.15)) / np.sqrt(k)
    seed = draw(st.integers(0, 2**20))
    return make_multiclass(n, d, k, margin, radius, seed=seed, n_test=0)


def bias_and_multiclass_data():
    """A bias rule and a certified dataset: multiclass (homogeneous U), or binary with an offset
    (the learner then gets the multiclass form of (u, b)); homogeneous data without a bias."""
    return st.sampled_from(["feature", "none"]).flatmap(
        lambda bias: st.tuples(
            st.just(bias),
            st.one_of(multiclass_data(), certified_data(homogeneous=bias == "none")),
        )
    )
