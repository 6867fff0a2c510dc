"""The voted perceptron (Freund & Schapire 1999; seed 000 §3.5): every weight vector gets a vote.

Training is the perceptron. Every vector it passes through is kept: v_0 the start, v_k the
weights after the k-th mistake, with c_k the number of steps after which the weights were v_k
(Freund & Schapire's count: a correct prediction adds 1 to the current c_k, a mistake starts the
next vector with c = 1). So Σ c_k = T, the number of steps, and the c-weighted mean
Σ c_k v_k / T is the mean of the weights after every step: ``AveragedPerceptron``'s average.
(Seed 000's table counts the predictions each v_k made instead; the two differ by one step at
every mistake.)

Predictions (``prediction``):

- ``"vote"``: sign(Σ_k c_k·sgn(v_k·x + b_k)), the voted perceptron;
- ``"average"``: sign(v̄·x + b̄) with the c-weighted mean (seed 000's approximation of the vote);
- ``"last"``: the final perceptron weights;
- ``"random"``: for each example a v_k drawn with probability c_k/T (seeded by
  ``random_state``), and its sign.

Keeping every vector costs (mistakes + 1)·n_features floats, so ``max_vectors`` caps it: a run
that would need more raises a one-line error before allocating them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import FLOAT_DTYPES, check_finite
from lincls.learners.perceptron import Perceptron, run_linear_pass

PREDICTIONS = ("vote", "average", "last", "random")
_CHUNK_CELLS = 1 << 22  # scores computed for at most this many (example, vector) pairs at once


@njit(cache=True, nogil=True)
def voted_vectors_dense(X, y, rows, w, intercept, lr, intercept_step, vectors, intercepts):
    """Replay the perceptron's steps on dense rows ``X[rows]`` from (``w``, ``intercept``).

    Writes the weights after each step to ``vectors[k]``, ``intercepts[k]``, with the
    perceptron kernel's arithmetic, so the last row equals the perceptron's final weights.
    """
    n_features = X.shape[1]
    for k in range(rows.shape[0]):
        i = rows[k]
        step = lr * y[i]
        for j in range(n_features):
            w[j] += np.float64(X[i, j]) * step
        intercept[0] += step * intercept_step
        vectors[k, :] = w
        intercepts[k] = intercept[0]


@njit(cache=True, nogil=True)
def voted_vectors_csr(
    data, indices, indptr, y, rows, w, intercept, lr, intercept_step, vectors, intercepts
):
    """``voted_vectors_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    for k in range(rows.shape[0]):
        i = rows[k]
        step = lr * y[i]
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += np.float64(data[p]) * step
        intercept[0] += step * intercept_step
        vectors[k, :] = w
        intercepts[k] = intercept[0]


class VotedPerceptron(Perceptron):
    """The voted perceptron: the perceptron's vectors v_k, each voting with its survival c_k.

    Parameters
    ----------
    prediction : {"vote", "average", "last", "random"}
        How ``predict`` and ``decision_function`` combine the vectors (module docstring).
    max_vectors : int ≥ 1
        The most vectors (mistakes + 1) a fit may keep; more raises ``LinclsInputError``.
    lr, bias, max_passes, shuffle, random_state, intercept_decay : as ``Perceptron``'s
        (``random_state`` also seeds the draws of ``prediction="random"``).
    stop_when_converged : bool, default False
        As ``Perceptron``'s; off by default because further passes still add to the counts.

    Attributes
    ----------
    vectors_ : ndarray (n_vectors, n_features), float64
        v_0 (the start), then the weights after each mistake.
    vector_intercepts_ : ndarray (n_vectors,)
    counts_ : ndarray (n_vectors,), int64
        c_k: the steps after which the weights were v_k; they sum to ``n_steps_``.
    coef_, intercept_ : the linear rule of ``prediction`` ("last": v_last; otherwise the
        c-weighted mean, which is exact for "average" and seed 000's approximation of the vote)
    radius_, bias_feature_, zero_init_ and the online record : as ``Perceptron``'s
    """

    def __init__(
        self,
        prediction: str = "vote",
        max_vectors: int = 10_000,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = False,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.prediction = prediction
        self.max_vectors = max_vectors
        super().__init__(
            lr=lr,
            bias=bias,
            max_passes=max_passes,
            stop_when_converged=stop_when_converged,
            shuffle=shuffle,
            random_state=random_state,
            intercept_decay=intercept_decay,
        )

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("prediction", self.prediction, PREDICTIONS)
        check_number("max_vectors", self.max_vectors, low=1, integer=True)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        super()._init_weights(X, coef_init, intercept_init)
        self._w = self.coef_[0].astype(np.float64)
        self._b = self.intercept_.copy()
        self._blocks = [(self._w[np.newaxis, :].copy(), self._b.copy())]
        self._n_vectors = 1

    def _run_pass(self, X, y, order):
        start_w, start_b = self._w.copy(), self._b.copy()
        mistakes, updates, rows, steps = run_linear_pass(
            X,
            y,
            order,
            self._w,
            self._b,
            float(self.lr),
            self._intercept_step,
            0.0,
            self._mistake_buffers(order.shape[0]),
        )
        if self._n_vectors + mistakes > self.max_vectors:
            raise LinclsInputError(
                "max_vectors",
                f"the run needs more than {self.max_vectors} vectors (one per mistake plus the "
                f"start; {self._n_vectors + mistakes} so far, each {X.shape[1]} floats); allowed: "
                "an integer ≥ that, or use AveragedPerceptron",
            )
        vectors = np.empty((mistakes, X.shape[1]), dtype=np.float64)
        intercepts = np.empty(mistakes, dtype=np.float64)
        lr = float(self.lr)
        if sp.issparse(X):
            voted_vectors_csr(
                X.data, X.indices, X.indptr, y, rows, start_w, start_b,
                lr, self._intercept_step, vectors, intercepts,
            )  # fmt: skip
        else:
            voted_vectors_dense(
                X, y, rows, start_w, start_b, lr, self._intercept_step, vectors, intercepts
            )
        self._blocks.append((vectors, intercepts))
        self._n_vectors += mistakes
        return mistakes, updates, rows, steps

    def _finish_record(self) -> None:
        super()._finish_record()
        self.vectors_ = np.concatenate([v for v, _ in self._blocks])
        self.vector_intercepts_ = np.concatenate([b for _, b in self._blocks])
        self._blocks = [(self.vectors_, self.vector_intercepts_)]
        edges = np.concatenate(([0], self.mistake_steps_, [self.n_steps_]))
        self.counts_ = np.diff(edges).astype(np.int64)
        total = max(int(self.n_steps_), 1)
        weights = self.counts_ / total
        if self.prediction == "last":
            self.coef_ = self._w[np.newaxis, :].copy()
            self.intercept_ = self._b.copy()
        else:
            self.coef_ = (weights @ self.vectors_)[np.newaxis, :]
            self.intercept_ = np.array([weights @ self.vector_intercepts_])

    # --- prediction --------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The score of ``prediction``: the vote share Σ c_k sgn(v_k·x + b_k)/T for "vote",
        v_k·x + b_k of the drawn k for "random", else the linear score of ``coef_``."""
        self._check_fitted()
        check_choice("prediction", self.prediction, PREDICTIONS)
        if self.prediction in ("average", "last"):
            return super().decision_function(X)
        X = validate_data(
            self, X, accept_sparse="csr", dtype=list(FLOAT_DTYPES), reset=False,
            ensure_all_finite=False,
        )  # fmt: skip
        check_finite(X)
        if self.prediction == "vote":
            return self._vote(X)
        return self._random(X)

    def _vote(self, X) -> np.ndarray:
        weights = self.counts_ / max(int(self.n_steps_), 1)
        keep = weights > 0  # a vector that never survived a step has no vote
        V, vb, weights = self.vectors_[keep], self.vector_intercepts_[keep], weights[keep]
        out = np.empty(X.shape[0], dtype=np.float64)
        chunk = max(1, _CHUNK_CELLS // max(V.shape[0], 1))
        for start in range(0, X.shape[0], chunk):
            scores = np.asarray(X[start : start + chunk] @ V.T) + vb
            out[start : start + chunk] = np.sign(scores) @ weights
        return out

    def _random(self, X) -> np.ndarray:
        rng = check_random_state(self.random_state)
        p = self.counts_ / self.counts_.sum()
        picks = rng.choice(self.vectors_.shape[0], size=X.shape[0], p=p)
        out = np.empty(X.shape[0], dtype=np.float64)
        chunk = max(1, _CHUNK_CELLS // max(self.vectors_.shape[1], 1))
        for start in range(0, X.shape[0], chunk):
            rows = X[start : start + chunk]
            chosen = self.vectors_[picks[start : start + chunk]]
            if sp.issparse(rows):
                dots = np.asarray(rows.multiply(chosen).sum(axis=1)).ravel()
            else:
                dots = np.einsum("ij,ij->i", rows, chosen)
            out[start : start + chunk] = (
                dots + self.vector_intercepts_[picks[start : start + chunk]]
            )
        return out
