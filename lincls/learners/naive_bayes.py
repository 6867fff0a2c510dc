"""Naive Bayes as a linear classifier (seed 000 §2): Bernoulli naive Bayes on binary features.

For binary x ∈ {0, 1}ⁿ and labels ±1 (``classes_[1]`` is +1, as in scikit-learn), naive Bayes
predicts the sign of

    Σ_i log P(x_i | Y=+1)/P(x_i | Y=−1) + log P(Y=+1)/P(Y=−1),

and with the seed's

    p_i = log P(X_i=1 | Y=+1)/P(X_i=1 | Y=−1),   q_i = log P(X_i=0 | Y=+1)/P(X_i=0 | Y=−1)

each term is x_i(p_i − q_i) + q_i, so the classifier is linear:

    w_i = p_i − q_i,   w_0 = Σ_i q_i + log P(Y=+1)/P(Y=−1),   decision = w·x + w_0.

The probabilities are scikit-learn's ``BernoulliNB(alpha=α)`` estimates: with N_c examples of
class c, N_ic of them with x_i = 1, P(X_i=1 | c) = (N_ic + α)/(N_c + 2α) (Laplace smoothing α > 0),
P(X_i=0 | c) = (N_c − N_ic + α)/(N_c + 2α), and the prior P(c) = N_c/N (not smoothed). The log of
P(X_i=0 | c) is taken from its counts, not as log(1 − P(X_i=1 | c)), which loses digits when
P(X_i=1 | c) is near 1.

A zero decision predicts ``classes_[0]`` (−1), as ``BernoulliNB``'s argmax does on a tie of the two
joint likelihoods (seed 000's sign(0) = +1 differs only on such exact ties).

``binarize`` is ``BernoulliNB``'s and has its default, 0.0: x_i > binarize counts as 1 and the
rest as 0, in ``fit`` and in prediction alike, so any real features are taken (binary data are
unchanged by it). ``binarize=None`` takes the features as they are and requires them to be 0 or
1 (other values are a one-line error). Fitting is counting, N_ic = Σ_t x_ti [y_t = c]: one
matrix product handed to numpy, so there is no loop to write as a numba kernel.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_number
from lincls.learners._base import FLOAT_DTYPES, binary_classes, check_finite, check_same_classes


def first_non_binary(X) -> tuple[int, float] | None:
    """(row, value) of the first entry of ``X`` that is neither 0 nor 1, or None."""
    values = X.data if sp.issparse(X) else X.ravel()
    bad = np.flatnonzero((values != 0.0) & (values != 1.0))
    if bad.size == 0:
        return None
    if sp.issparse(X):
        row = int(np.searchsorted(X.indptr, bad[0], side="right") - 1)
    else:
        row = int(bad[0] // X.shape[1])
    return row, float(values[bad[0]])


class NaiveBayesLinear(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Bernoulli naive Bayes written as w·x + w_0 (seed 000 §2).

    Parameters
    ----------
    alpha : float > 0
        Laplace smoothing α of P(X_i = 1 | c) = (N_ic + α)/(N_c + 2α), as ``BernoulliNB``'s.
    binarize : float or None, default 0.0
        A number t: x > t counts as 1 and x ≤ t as 0, in fit and prediction (``BernoulliNB``'s
        default). None: the features must already be 0 or 1 (else a one-line error).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), w_i = p_i − q_i
    intercept_ : ndarray (1,), w_0 = Σ q_i + log P(Y=+1)/P(Y=−1)
    classes_ : the two labels; ``classes_[1]`` is Y = +1
    class_count_ : ndarray (2,), N_c of each class (float)
    feature_count_ : ndarray (2, n_features), N_ic
    feature_log_prob_ : ndarray (2, n_features), log P(X_i = 1 | c) (``BernoulliNB``'s)
    feature_log_prob_off_ : ndarray (2, n_features), log P(X_i = 0 | c)
    class_log_prior_ : ndarray (2,), log P(c)
    log_ratio_on_ : ndarray (n_features,), the seed's p_i
    log_ratio_off_ : ndarray (n_features,), the seed's q_i
    """

    def __init__(self, alpha: float = 1.0, binarize: float | None = 0.0):
        self.alpha = alpha
        self.binarize = binarize

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        check_number("alpha", self.alpha, low=0, low_open=True)
        if self.binarize is not None:
            check_number("binarize", self.binarize)

    def _binary_X(self, X):
        """``X`` with 0/1 values: thresholded by ``binarize``, or checked to be 0/1 already."""
        check_finite(X)
        if self.binarize is not None:
            threshold = float(self.binarize)
            if sp.issparse(X):
                if threshold < 0:
                    raise LinclsInputError(
                        "binarize",
                        f"must be ≥ 0 for sparse X (its zeros would turn into ones), got "
                        f"{self.binarize!r}",
                    )
                X = X.copy()
                X.data = (X.data > threshold).astype(X.dtype)
                X.eliminate_zeros()
                return X
            return (X > threshold).astype(X.dtype)
        bad = first_non_binary(X)
        if bad is not None:
            row, value = bad
            raise LinclsInputError(
                "X",
                f"NaiveBayesLinear with binarize=None needs binary features (0 or 1), row {row} "
                f"holds {value:g}; set binarize to a threshold (x > threshold counts as 1)",
            )
        return X

    def _validate_X_y(self, X, y, reset: bool):
        """Checked arrays, X made binary (or a one-line error naming X)."""
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            accept_large_sparse=False,
            ensure_all_finite=False,
            reset=reset,
        )
        return self._binary_X(X), y

    def _count(self, X, y) -> None:
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise LinclsInputError(
                "y", f"label {y[unknown][0]!r} is not one of the classes {list(self.classes_)}"
            )
        onehot = np.zeros((X.shape[0], 2))
        onehot[np.arange(X.shape[0]), np.searchsorted(self.classes_, y)] = 1.0
        self.class_count_ += onehot.sum(axis=0)
        self.feature_count_ += np.asarray(X.T @ onehot, dtype=np.float64).T

    def _set_weights(self) -> None:
        alpha = float(self.alpha)
        counts = self.class_count_[:, np.newaxis]
        log_total = np.log(counts + 2.0 * alpha)
        self.feature_log_prob_ = np.log(self.feature_count_ + alpha) - log_total
        self.feature_log_prob_off_ = np.log(counts - self.feature_count_ + alpha) - log_total
        with np.errstate(divide="ignore"):  # a class not seen yet (partial_fit): log 0 = −inf
            self.class_log_prior_ = np.log(self.class_count_) - np.log(self.class_count_.sum())
        on, off = self.feature_log_prob_, self.feature_log_prob_off_
        self.log_ratio_on_ = on[1] - on[0]  # p_i
        self.log_ratio_off_ = off[1] - off[0]  # q_i
        self.coef_ = (self.log_ratio_on_ - self.log_ratio_off_)[np.newaxis, :]
        prior_log_odds = self.class_log_prior_[1] - self.class_log_prior_[0]
        self.intercept_ = np.array([self.log_ratio_off_.sum() + prior_log_odds])

    def _reset_counts(self, n_features: int) -> None:
        self.class_count_ = np.zeros(2)
        self.feature_count_ = np.zeros((2, n_features))

    def fit(self, X, y):
        """Count the classes and the active features per class; set w and w_0."""
        self._check_params()
        X, y = self._validate_X_y(X, y, reset=True)
        self.classes_ = binary_classes(y)
        self._reset_counts(X.shape[1])
        self._count(X, y)
        self._set_weights()
        return self

    def partial_fit(self, X, y, classes=None):
        """Add the counts of ``X``, ``y``; the first call takes ``classes`` (both labels)."""
        first = not hasattr(self, "classes_")
        if first:
            self._check_params()
        X, y = self._validate_X_y(X, y, reset=first)
        if first:
            self.classes_ = binary_classes(np.asarray(classes) if classes is not None else y)
            self._reset_counts(X.shape[1])
        elif classes is not None:
            check_same_classes(self.classes_, classes)
        self._count(X, y)
        self._set_weights()
        return self

    def decision_function(self, X) -> np.ndarray:
        """w·x + w_0 on the binary (or binarized) ``X``: log P(+1 | x)/P(−1 | x) under the model."""
        check_is_fitted(self, "coef_")
        X = validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            reset=False,
            ensure_all_finite=False,
        )
        X = self._binary_X(X)
        return np.asarray(X @ self.coef_[0], dtype=np.float64) + self.intercept_[0]

    def predict_proba(self, X) -> np.ndarray:
        """(P(classes_[0] | x), P(classes_[1] | x)) under the naive Bayes model."""
        score = self.decision_function(X)
        return np.column_stack([expit(-score), expit(score)])

    def predict_log_proba(self, X) -> np.ndarray:
        """The log of ``predict_proba``, from the log-odds without rounding to 0 or 1."""
        score = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, score), -np.logaddexp(0.0, -score)])


__all__ = ["NaiveBayesLinear", "first_non_binary"]
