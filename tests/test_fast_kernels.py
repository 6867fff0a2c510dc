"""The blocked, prefetching kernels against one-example-at-a-time loops: the same bits.

The perceptron and PA kernels sum several rows' activations side by side, fold an update into the
next block's loop, prefetch rows ahead and read CSR indices through unsigned views. None of it may
change a result. Each kernel here is run against the plain loop it replaces (written out below,
one row at a time, left-to-right sums) on shapes that reach every edge: fewer rows than a block,
rows short and long enough to be prefetched, exact zero activations, empty and zero rows, orders
that repeat rows, a margin threshold, float32 and mixed dtypes. Weights, bias, mistakes, updates
and the mistakes' rows and steps must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit

from lincls.experiments.benchmarks.perceptron import dense_problem, update_share
from lincls.learners import Perceptron
from lincls.learners._kernel_tools import PREFETCH_MIN_ROW_BYTES, unsigned_indices
from lincls.learners.averaged import averaged_pass_csr
from lincls.learners.passive_aggressive import _step_size, pa_pass_csr, pa_pass_dense
from lincls.learners.perceptron import BLOCK, perceptron_pass_csr, perceptron_pass_dense

# --- the plain loops --------------------------------------------------------------------------


@njit
def plain_perceptron_dense(
    X, y, order, w, intercept, lr, intercept_step, threshold, rows, steps, cast
):
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for j in range(X.shape[1]):
            activation += w[j] * X[i, j]
        cast[0] = activation  # rounded to the weights' dtype
        yp = y[i] * (cast[0] + intercept[0])
        if yp <= 0.0:
            rows[mistakes] = i
            steps[mistakes] = k
            mistakes += 1
        if yp <= threshold:
            step = lr * y[i]
            cast[0] = step
            scale = np.float64(cast[0])
            for j in range(X.shape[1]):
                w[j] += np.float64(X[i, j]) * scale
            intercept[0] += step * intercept_step
            updates += 1
    return mistakes, updates


@njit
def plain_perceptron_csr(
    data, indices, indptr, y, order, w, intercept, lr, intercept_step, threshold, rows, steps, cast
):
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            activation += w[indices[p]] * data[p]
        cast[0] = activation
        yp = y[i] * (cast[0] + intercept[0])
        if yp <= 0.0:
            rows[mistakes] = i
            steps[mistakes] = k
            mistakes += 1
        if yp <= threshold:
            step = lr * y[i]
            cast[0] = step
            scale = np.float64(cast[0])
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += np.float64(data[p]) * scale
            intercept[0] += step * intercept_step
            updates += 1
    return mistakes, updates


@njit
def plain_pa(data, indices, indptr, y, order, w, intercept, variant, C, ib, extra, rows, steps):
    """PA over CSR rows; a dense X goes in as a CSR matrix that stores every entry."""
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            activation += w[indices[p]] * data[p]
        yp = y[i] * (activation + intercept[0])
        if yp <= 0.0:
            rows[mistakes] = i
            steps[mistakes] = k
            mistakes += 1
        if yp < 1.0:
            sqnorm = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                sqnorm += np.float64(data[p]) * np.float64(data[p])
            tau = _step_size(variant, 1.0 - yp, sqnorm + extra, C)
            if tau > 0.0:
                for p in range(indptr[i], indptr[i + 1]):
                    w[indices[p]] += np.float64(data[p]) * (tau * y[i])
                intercept[0] += tau * y[i] * ib
                updates += 1
    return mistakes, updates


@njit
def plain_averaged_csr(data, indices, indptr, y, order, w, b, u, ub, lr, ib, step0, rows, steps):
    mistakes = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            activation += w[indices[p]] * data[p]
        if y[i] * (activation + b[0]) <= 0.0:
            rows[mistakes] = i
            steps[mistakes] = k
            mistakes += 1
            step = lr * y[i]
            weighted = np.float64(step0 + k) * step
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += np.float64(data[p]) * step
                u[indices[p]] += np.float64(data[p]) * weighted
            b[0] += step * ib
            ub[0] += weighted * ib
    return mistakes


# --- data ---------------------------------------------------------------------------------------


def make_X(rng, n, d, dtype, kind):
    """Gaussian rows, or small integers (exact zero activations, ties), some rows all zero."""
    if kind == "gauss":
        X = rng.standard_normal((n, d))
    else:
        X = rng.integers(-1, 2, size=(n, d)).astype(np.float64)
    X[rng.random(n) < 0.1] = 0.0
    return np.ascontiguousarray(X, dtype=dtype)


def make_order(rng, n, how):
    if how == "identity":
        return np.arange(n, dtype=np.int64)
    return rng.integers(0, n, size=2 * n + 3).astype(np.int64)  # repeats, any length


def bits(a):
    """The raw bits of a float array, so that 0.0 and -0.0 (or two NaNs) are told apart."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def assert_same(fast, plain):
    """Two (result tuple, arrays...) runs agree exactly."""
    assert fast[0] == plain[0]
    for a, b in zip(fast[1:], plain[1:], strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(bits(a), bits(b))


# Row lengths around the prefetch threshold and the block size, in both dtypes.
WIDE = PREFETCH_MIN_ROW_BYTES // 8 + 1  # float64 rows this long are prefetched
SHAPES = [(1, 1), (2, 3), (BLOCK - 1, 5), (BLOCK, 2), (BLOCK + 1, 8), (7, 20), (40, 9),
          (33, WIDE), (30, 2 * WIDE)]  # fmt: skip
DTYPES = [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64)]


def test_shapes_reach_both_sides_of_the_prefetch_threshold():
    row_bytes = {d * np.dtype(x).itemsize for _, d in SHAPES for x, _ in DTYPES}
    assert min(row_bytes) < PREFETCH_MIN_ROW_BYTES <= max(row_bytes)
    assert any(d * 4 >= PREFETCH_MIN_ROW_BYTES for _, d in SHAPES)  # float32 too


@pytest.mark.parametrize(("n", "d"), SHAPES)
@pytest.mark.parametrize(("x_dtype", "w_dtype"), DTYPES)
@pytest.mark.parametrize("kind", ["gauss", "ints"])
@pytest.mark.parametrize("how", ["identity", "repeats"])
def test_perceptron_dense_kernel_is_the_plain_loop(n, d, x_dtype, w_dtype, kind, how):
    rng = np.random.default_rng([n, d, len(kind), len(how)])
    X = make_X(rng, n, d, x_dtype, kind)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    for threshold, lr, start in ((0.0, 1.0, 0.0), (0.7, 0.3, 0.5)):
        w0 = (start * rng.standard_normal(d)).astype(w_dtype)
        runs = {}
        for name in ("fast", "plain"):
            w, b = w0.copy(), np.array([start])
            out = []
            for _ in range(3):  # passes carry the state on
                order = make_order(np.random.default_rng(len(out)), n, how)
                rows = np.full(order.shape[0], -1, dtype=np.int64)
                steps = rows.copy()
                args = (X, y, order, w, b, lr, 0.5, threshold, rows, steps)
                if name == "fast":
                    nonfinite = np.zeros(1, dtype=np.int64)
                    result = perceptron_pass_dense(*args, nonfinite)
                    assert nonfinite[0] == 0  # finite rows: nothing counted
                else:
                    result = plain_perceptron_dense(*args, np.zeros(1, dtype=w_dtype))
                out.append((result, rows, steps))
            runs[name] = (out, w, b)
        (fast, w_fast, b_fast), (plain, w_plain, b_plain) = runs["fast"], runs["plain"]
        for f, p in zip(fast, plain, strict=True):
            assert_same(f, p)
        assert_same((0, w_fast, b_fast), (0, w_plain, b_plain))
        assert sum(r[0][1] for r in plain) > 0  # the runs updated


@pytest.mark.parametrize(("n", "d"), SHAPES[2:])
@pytest.mark.parametrize(("x_dtype", "w_dtype"), DTYPES)
@pytest.mark.parametrize("how", ["identity", "repeats"])
def test_perceptron_dense_kernel_counts_every_presentation_of_a_non_finite_row(
    n, d, x_dtype, w_dtype, how
):
    # A NaN, inf or −inf anywhere in a row makes its activation NaN or ±inf whatever the finite
    # weights (0·inf is NaN), at the first column or the last, from w = 0 or not: the fit leaves
    # the finiteness check of X to this count. (A row of inf that updates makes w, and so every
    # later activation, non-finite too: the count can only grow past the bad presentations.)
    rng = np.random.default_rng([n, d, len(how), np.dtype(x_dtype).itemsize])
    X = make_X(rng, n, d, x_dtype, "gauss")
    bad = rng.choice(n, size=max(1, n // 4), replace=False)
    for k, row in enumerate(bad):
        X[row, rng.integers(0, d) if k % 3 else (d - 1 if k % 2 else 0)] = (
            np.nan,
            np.inf,
            -np.inf,
        )[k % 3]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    order = make_order(rng, n, how)
    presented = int(np.isin(order, bad).sum())
    X_nan = np.where(np.isfinite(X), X, np.nan).astype(x_dtype)  # NaN rows never update
    for start in (0.0, 1.0):
        w0 = (start * rng.standard_normal(d)).astype(w_dtype)

        def count(X, order, w0=w0):
            rows, steps = np.empty(order.shape[0], np.int64), np.empty(order.shape[0], np.int64)
            nonfinite = np.zeros(1, dtype=np.int64)
            args = (w0.copy(), np.zeros(1), 1.0, 1.0, 0.0, rows, steps, nonfinite)
            perceptron_pass_dense(X, y, order, *args)
            return int(nonfinite[0])

        assert presented >= 1 and presented <= count(X, order) <= order.shape[0]
        assert count(X_nan, order) == presented
        assert count(X, order[~np.isin(order, bad)]) == 0  # the finite rows alone


def sparse_rows(rng, n, d, dtype, kind):
    """CSR rows with 0 to d non-zeros (empty rows included), unsorted-free, int32 indices."""
    X = make_X(rng, n, d, dtype, kind)
    X[rng.random((n, d)) < rng.uniform(0.2, 0.9)] = 0.0
    Xs = sp.csr_matrix(X)
    assert Xs.indices.dtype == np.int32
    return Xs


@pytest.mark.parametrize(("n", "d"), [(1, 4), (3, 7), (25, 30), (60, 200)])
@pytest.mark.parametrize(("x_dtype", "w_dtype"), DTYPES)
@pytest.mark.parametrize("kind", ["gauss", "ints"])
@pytest.mark.parametrize("how", ["identity", "repeats"])
def test_perceptron_csr_kernel_is_the_plain_loop(n, d, x_dtype, w_dtype, kind, how):
    rng = np.random.default_rng([n, d, 7, len(kind), len(how)])
    X = sparse_rows(rng, n, d, x_dtype, kind)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    for threshold in (0.0, 0.4):
        results = {}
        for name in ("fast", "plain"):
            w, b = np.zeros(d, dtype=w_dtype), np.zeros(1)
            order = make_order(np.random.default_rng(1), n, how)
            rows = np.full(order.shape[0], -1, dtype=np.int64)
            steps = rows.copy()
            if name == "fast":
                data = (X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr))
                result = perceptron_pass_csr(
                    *data, y, order, w, b, 0.5, 0.01, threshold, rows, steps
                )
            else:
                result = plain_perceptron_csr(
                    X.data, X.indices, X.indptr, y, order, w, b, 0.5, 0.01, threshold,
                    rows, steps, np.zeros(1, dtype=w_dtype),
                )  # fmt: skip
            results[name] = (result, rows, steps, w, b)
        assert_same(results["fast"], results["plain"])


@pytest.mark.parametrize(("n", "d"), SHAPES)
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("how", ["identity", "repeats"])
@pytest.mark.parametrize("sparse", [False, True])
def test_pa_kernels_are_the_plain_loop(n, d, x_dtype, variant, how, sparse):
    rng = np.random.default_rng([n, d, variant, len(how), sparse])
    X = make_X(rng, n, d, x_dtype, "gauss" if variant != 1 else "ints")
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    stored = sp.csr_matrix(X) if sparse else sp.csr_matrix(np.ones_like(X))
    if not sparse:  # every entry stored, zeros included: the dense kernel's arithmetic
        stored.data = X.ravel().copy()
    C, ib, extra = (0.3, 1.0, 1.0) if variant else (1.0, 0.01, 0.0)
    results = {}
    for name in ("fast", "plain"):
        w, b = np.zeros(d), np.zeros(1)
        order = make_order(np.random.default_rng(2), n, how)
        rows = np.full(order.shape[0], -1, dtype=np.int64)
        steps = rows.copy()
        tail = (y, order, w, b, variant, C, ib, extra, rows, steps)
        if name == "plain":
            result = plain_pa(stored.data, stored.indices, stored.indptr, *tail)
        elif sparse:
            data = (stored.data, unsigned_indices(stored.indices), unsigned_indices(stored.indptr))
            result = pa_pass_csr(*data, *tail)
        else:
            result = pa_pass_dense(X, *tail)
        results[name] = (result, rows, steps, w, b)
    assert_same(results["fast"], results["plain"])
    assert results["plain"][0][1] > 0 or n < 7  # the runs updated (a tiny one may not)


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("how", ["identity", "repeats"])
def test_averaged_csr_kernel_is_the_plain_loop(x_dtype, how):
    rng = np.random.default_rng([11, len(how)])
    X = sparse_rows(rng, 80, 50, x_dtype, "gauss")
    y = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    results = {}
    for name in ("fast", "plain"):
        w, b, u, ub = np.zeros(50), np.zeros(1), np.zeros(50), np.zeros(1)
        order = make_order(np.random.default_rng(3), 80, how)
        rows = np.full(order.shape[0], -1, dtype=np.int64)
        steps = rows.copy()
        tail = (y, order, w, b, u, ub, 1.0, 0.01, 17, rows, steps)
        if name == "fast":
            indices, indptr = unsigned_indices(X.indices), unsigned_indices(X.indptr)
            result = averaged_pass_csr(X.data, indices, indptr, *tail)
        else:
            result = plain_averaged_csr(X.data, X.indices, X.indptr, *tail)
        results[name] = (result, rows, steps, w, b, u, ub)
    assert_same(results["fast"], results["plain"])


def test_unsigned_indices_is_a_view_with_the_same_values():
    X = sp.random(20, 30, density=0.3, format="csr", random_state=0)
    view = unsigned_indices(X.indices)
    assert view.dtype == np.uint32 and np.shares_memory(view, X.indices)
    np.testing.assert_array_equal(view, X.indices)
    wide = X.indptr.astype(np.int64)
    assert unsigned_indices(wide).dtype == np.uint64
    assert unsigned_indices(view) is view


def test_bench_update_share_counts_the_updates_of_passes_2_to_5():
    # The epoch rows of ``make bench`` note this share; for the perceptron it is the mistakes.
    X, y = dense_problem(500, 6, seed=2)

    def fit(passes):
        return Perceptron(max_passes=passes, stop_when_converged=False).fit(X, y)

    record = fit(5).mistakes_per_pass_
    assert update_share(fit, 500) == record[1:].sum() / (4 * 500)
    assert 0.05 < update_share(fit, 500) < 0.5  # noisy labels: every pass updates
