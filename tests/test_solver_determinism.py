"""Same data, same numbers: every certificate and best comparator is bitwise identical when
solved again, in another process and on a machine kept busy (no solver has a time limit)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from lincls.data import make_noisy, make_separable
from lincls.geometry import comparators
from lincls.geometry.certificates import svm_certificates


def _collinear(n: int, homogeneous: bool):
    """Nearly collinear points (a segment thickened by 1e-6), split with a margin of 1e-4."""
    rng = np.random.default_rng(5)
    t = rng.uniform(-1, 1, n)
    X = np.column_stack([0.3 + t, 0.5 + 0.2 * t, 1e-6 * rng.normal(size=n)])
    split = -0.25 if homogeneous else 0.1
    keep = np.abs(t - split) > 1e-4
    return X[keep], np.where(t[keep] > split, 1.0, -1.0)


def numbers() -> list[bytes]:
    """Every number the solvers give on a few instances, as bytes."""
    out = []
    separable = make_separable(3_000, 8, 0.01, 1.0, offset=0.0, seed=3, n_test=0)
    noisy = make_noisy(400, 5, 0.1, 1.0, flip=0.05, seed=4)
    cases = [
        (separable.X, np.where(separable.y > 0, 1.0, -1.0)),
        (noisy.X, np.where(noisy.y > 0, 1.0, -1.0)),
    ]
    for homogeneous in (False, True):
        cases.append(_collinear(1_500, homogeneous))
        for X, y in cases:
            (cert,), separable_ = svm_certificates(X, y, homogeneous=homogeneous, fingerprint="d")
            out += [cert.u.tobytes(), np.float64(cert.b).tobytes(), np.float64(cert.margin)
                    .tobytes(), repr((cert.gap, cert.source, separable_)).encode()]  # fmt: skip
    Z = cases[0][0] * cases[0][1][:, None]
    counts = np.arange(1.0, Z.shape[0] + 1.0) % 3 + 1.0
    for solution in (comparators.hard_margin(Z), comparators.hard_margin(Z, cases[0][1]),
                     comparators.deficit(Z, counts), comparators.hinge(Z, counts, 0.5, False),
                     comparators.hinge(Z, counts, 0.5, True)):  # fmt: skip
        out += [solution.v.tobytes(), np.float64(solution.value).tobytes(),
                np.float64(solution.gap).tobytes()]  # fmt: skip
    return out


def test_solvers_give_bitwise_identical_numbers_again_elsewhere_and_under_load():
    first = numbers()
    assert numbers() == first
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            loaded = pool.submit(numbers).result()
    finally:
        busy.kill()
        busy.wait()
    assert loaded == first
