"""Ties: a zero activation is a mistake, and counts at a tie are the same on every processor.

The learners' passes sum w·x in row order in numba (no BLAS, no fused multiply-add), so a run's
counts do not depend on the processor. The adversarial order decides which rows are wrong with
the same sums (``lincls.learners._activations``): with ``X @ w`` it asked OpenBLAS, whose kernel
(chosen by the processor) sums in another order. OpenBLAS's kernel can be chosen by hand
(``OPENBLAS_CORETYPE``), which stands in here for other processors.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lincls.learners._activations import signed_activations, squared_norms
from lincls.orders import fit_in_order
from lincls.registry import build_learner

TINY = 2.0**-54  # half an ulp of 1: 1 − TINY rounds to 1 (to even)


def _tie_rows() -> tuple[np.ndarray, np.ndarray]:
    """Three rows; once w = (1, 1, 1, 1, 0, …) the second's activation is +TINY summed in row
    order ((1 − TINY) rounds to 1, − 1, + TINY), and 0 summed in pairs as BLAS kernels do."""
    X = np.array(
        [[1, 1, 1, 1, 0, 0, 0, 0], [1, -TINY, -1, TINY, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0]],
        dtype=np.float64,
    )
    return X, np.array([1, 1, -1])


@pytest.mark.parametrize("sparse", [False, True])
def test_the_adversary_presents_only_what_the_pass_gets_wrong(sparse):
    X, y = _tie_rows()
    data = sp.csr_matrix(X) if sparse else X
    learner = build_learner({"name": "perceptron", "bias": "none"}, 5, 0)
    presented = fit_in_order(learner, data, y, "adversarial")
    # row 0 first (largest growth), then row 2 (wrong: 0 ≤ 0); row 1 is right for the pass
    # (+TINY). Asked of BLAS, row 1 looked wrong (0): it was shown 14 times to no effect, and
    # row 2, wrong all along, never was.
    assert presented.tolist() == [1, 0, 1]
    assert learner.mistake_indices_.tolist() == [0, 2]
    assert learner.coef_[0].tolist() == [1, 1, 1, 1, -1, 0, 0, 0]
    assert learner.converged_


def test_activations_are_the_passes_sums():
    X, _ = _tie_rows()
    w = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=np.float64)
    y = np.ones(3)
    assert signed_activations(X, y, w, 0.0).tolist() == [4.0, TINY, 0.0]
    assert signed_activations(sp.csr_matrix(X), y, w, 0.5).tolist() == [4.5, 0.5 + TINY, 0.5]
    assert squared_norms(X).tolist() == [4.0, 2.0, 1.0]  # 1 + TINY² + 1 + TINY², rounded
    float32 = signed_activations(X.astype(np.float32), -y, w.astype(np.float32), 0.0)
    assert float32.tolist() == [-4.0, -TINY, 0.0]  # float32 products, summed in float64


SCRIPT = """
import hashlib, json, sys
import numpy as np
from lincls.geometry import certify, certify_multiclass
from lincls.orders import fit_in_order
from lincls.registry import build_learner

data = np.load(sys.argv[1])
out = {}
for k in range(int(data["count"])):
    X, y, u, b = data[f"X{k}"], data[f"y{k}"], data[f"u{k}"], float(data[f"b{k}"])
    for name in ("perceptron", "passive_aggressive", "margin_perceptron"):
        learner = build_learner({"name": name}, 4, 0)
        cert = certify(X, np.where(y > 0, 1.0, -1.0), u, b, "generator")
        shown = fit_in_order(learner, X, y, "adversarial", certificate=cert)
        out[f"{name}{k}"] = [shown.tolist(), hashlib.sha256(learner.coef_.tobytes()).hexdigest()]
    X, y, U = data[f"MX{k}"], data[f"My{k}"], data[f"MU{k}"]
    for name in ("multiclass_perceptron", "mira"):
        learner = build_learner({"name": name, "bias": "none"}, 4, 0)
        cert = certify_multiclass(X, y, U, None, "generator")
        shown = fit_in_order(learner, X, y, "adversarial", certificate=cert)
        out[f"{name}{k}"] = [shown.tolist(), hashlib.sha256(learner.coef_.tobytes()).hexdigest()]
print(json.dumps(out))
"""


def _core_types() -> list[str]:
    """OpenBLAS kernels this processor can run: the generic one, AVX2's and its own."""
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return ["Prescott"] + (["Haswell"] if " avx2" in flags else []) + [""]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 OpenBLAS kernels")
def test_adversarial_games_are_the_same_bits_under_every_blas_kernel(tmp_path):
    from lincls.data import make_multiclass, make_separable

    arrays: dict[str, np.ndarray] = {"count": np.array(6)}
    for k in range(6):
        # small integer-valued coordinates make exact ties common
        binary = make_separable(30, 5, 0.1, 1.0, offset=0.1 * (k % 2), seed=k, n_test=0)
        X = np.round(binary.X * 4) / 4 if k % 3 == 0 else binary.X
        arrays.update({f"X{k}": X, f"y{k}": binary.y, f"u{k}": binary.u,
                       f"b{k}": np.array(binary.b)})  # fmt: skip
        multi = make_multiclass(30, 4, 3, 0.05, 1.0, seed=k, n_test=0)
        arrays.update({f"MX{k}": multi.X, f"My{k}": multi.y, f"MU{k}": multi.U})
    path = tmp_path / "data.npz"
    np.savez(path, **arrays)
    found = {}
    for core in _core_types():
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
        if core:
            env["OPENBLAS_CORETYPE"] = core
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        found[core or "this processor's"] = json.loads(done.stdout)
    first, *others = found.values()
    assert len(first) == 30
    for other in others:
        assert other == first
