"""Small numba pieces the linear kernels share: dtype rounding, software prefetch, index views.

- ``as_weight_dtype(value, w)``: ``value`` rounded to ``w``'s dtype, returned as float64. It is
  the float32 rounding scikit-learn's SGD loop applies to the dot product and to the step; for
  float64 weights it compiles to nothing (it replaces a round trip through a 1-element array,
  whose cost was within the noise at float64).
- ``prefetch(array, index)``: ask for the cache line of ``array[index]`` (an int, or a tuple for a
  2-d array) ahead of use. A kernel that walks several dense rows at once reads them as separate
  streams, which the hardware prefetcher of the machine the benchmarks ran on did not follow once a
  row spanned more than about five cache lines (a 4-row walk over 200k×100 float64 rows took twice
  the time of a 1-row walk without it, 0.65 of it with it).
- ``prefetch_dense_row`` / ``prefetch_csr_row``: every cache line of a row about to be read.
- ``unsigned_indices(a)``: an unsigned view of a CSR index array. numba wraps negative indices
  around: with int32 ``indptr`` and ``indices`` every ``data[p]``, ``indices[p]`` and
  ``w[indices[p]]`` carried a sign extension and a wraparound select; unsigned ones need neither
  (a CSR pass took 0.7 of the time). CSR indices are never negative, so the view is exact.

numba's on-disk cache (``cache=True``) is keyed on the file of the kernel that uses these pieces,
not on this file: after editing it, delete the ``*.nbi``/``*.nbc`` files under ``__pycache__``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

CACHE_LINE = 64  # bytes
# Dense rows at least this long are prefetched: shorter ones, read several at a time, lie in one
# short run of memory the hardware prefetcher follows (prefetching them cost 5-15% of a pass at
# d = 20-32 float64; it saved 8% at d = 40, 11% at 48, 58% at 64 and 56% at 100).
PREFETCH_MIN_ROW_BYTES = 320
ROWS_AHEAD = 8  # how far ahead of the rows in use dense rows are prefetched
CSR_ROWS_AHEAD = 4  # the same for CSR rows (2 to 16 measured alike)


def as_weight_dtype(value, w):
    """``value`` rounded to the dtype of the weights ``w``, as a float64 (numba only)."""
    return np.float64(w.dtype.type(value))


@overload(as_weight_dtype, inline="always")
def _as_weight_dtype(value, w):
    if w.dtype == types.float32:
        return lambda value, w: np.float64(np.float32(value))
    return lambda value, w: value


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line of ``array[index]`` for reading (numba only; no bounds check)."""
    if not isinstance(array, types.Array):
        return None
    indices = list(index) if isinstance(index, types.BaseTuple) else [index]
    if len(indices) != array.ndim or not all(isinstance(t, types.Integer) for t in indices):
        return None

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        ary = context.make_array(array_type)(context, builder, args[0])
        if isinstance(index_type, types.BaseTuple):
            raw = cgutils.unpack_tuple(builder, args[1], len(index_type))
            kinds = list(index_type)
        else:
            raw, kinds = [args[1]], [index_type]
        idx = [context.cast(builder, v, t, types.intp) for v, t in zip(raw, kinds, strict=True)]
        pointer = cgutils.get_item_pointer(context, builder, array_type, ary, idx, wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # read (0), keep in all cache levels (3), data cache (1)
        read, locality, data = ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)
        builder.call(fn, [builder.bitcast(pointer, i8p), read, locality, data])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=True, nogil=True, inline="always")
def prefetch_dense_row(X, i, line):
    """Prefetch every cache line of the row ``X[i]``; ``line`` = elements a cache line holds."""
    n_features = X.shape[1]
    for j in range(0, n_features, line):
        prefetch(X, (i, j))
    prefetch(X, (i, n_features - 1))  # a row that starts mid-line ends on one line more


@njit(cache=True, nogil=True, inline="always")
def prefetch_csr_row(data, indices, indptr, i):
    """Prefetch every cache line of CSR row ``i``'s values and column indices."""
    start = indptr[i]
    end = indptr[i + 1]
    if end > start:
        for p in range(start, end, max(CACHE_LINE // data.itemsize, 1)):
            prefetch(data, p)
        for p in range(start, end, max(CACHE_LINE // indices.itemsize, 1)):
            prefetch(indices, p)
        prefetch(data, end - 1)
        prefetch(indices, end - 1)


def unsigned_indices(a: np.ndarray) -> np.ndarray:
    """An unsigned view of the integer array ``a`` (same width), or ``a`` if already unsigned."""
    if a.dtype.kind == "i":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


@njit(cache=True, nogil=True, inline="always")
def dense_prefetch_plan(X, n):
    """(first row of ``order`` to prefetch, elements a cache line holds) for a dense kernel.

    The first is ``n`` (none) for rows shorter than ``PREFETCH_MIN_ROW_BYTES``. The line is
    worked out here, once a pass, on purpose: with a literal 8 in the prefetch loop the same
    kernel compiled to code that ran a 200k×100 float64 pass 1.7× slower (measured; the hot
    loops were the same instructions).
    """
    first = 0 if X.shape[1] * X.itemsize >= PREFETCH_MIN_ROW_BYTES else n
    return first, max(CACHE_LINE // X.itemsize, 1)


__all__ = [
    "CACHE_LINE",
    "CSR_ROWS_AHEAD",
    "ROWS_AHEAD",
    "as_weight_dtype",
    "dense_prefetch_plan",
    "prefetch",
    "prefetch_csr_row",
    "prefetch_dense_row",
    "unsigned_indices",
]
