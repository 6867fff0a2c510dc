"""Shared plumbing of the online linear learners: validation, label mapping and the online record.

A learner subclasses ``OnlineBinaryClassifier`` and supplies three things: ``_check_params``
(range checks of its hyper-parameters), ``_init_weights`` (its state from ``coef_init`` /
``intercept_init``) and ``_run_pass`` (one pass of its numba kernel over the examples in a given
order). The base class runs the passes, shuffles, stops on convergence and keeps the record that
bounds, tracking and reports read (the multiclass base reuses all of it with other labels, through
``_find_classes`` and ``_kernel_labels``, or ``_classes_and_labels`` for both at once):

``mistakes_``           sign wrong or zero activation, over all passes
``updates_``            weight changes (differ from mistakes for margin rules, PA, MIRA)
``mistakes_per_pass_``  int64 array, one entry a pass
``mistake_steps_``      global step (0-based, counting every example presented) of each mistake
``mistake_indices_``    row of the training data behind each mistake
``n_passes_``           passes made
``converged_``          whether the last pass made no update
``n_steps_``            examples presented in all
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_number
from lincls.learners import _plain
from lincls.learners._random import permutation, random_state_for

FLOAT_DTYPES = (np.float64, np.float32)


def check_finite(X: np.ndarray | sp.csr_matrix, field: str = "X") -> None:
    """Raise a one-line error naming the first row of ``X`` that holds NaN or inf."""
    values = X.data if sp.issparse(X) else X
    # one fast sum; only when it is not finite (NaN, inf, or finite values whose sum overflows)
    # the elementwise test
    with np.errstate(over="ignore"):  # the sum is a probe: its overflow is no news
        total = values.sum()
    if values.size == 0 or np.isfinite(total) or np.isfinite(values).all():
        return
    if sp.issparse(X):
        bad = np.flatnonzero(~np.isfinite(X.data))[0]
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
    else:
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
    raise LinclsInputError(
        field, f"contains NaN or inf (first in row {row}); all values must be finite"
    )


def check_same_classes(known: np.ndarray, classes) -> None:
    """Raise a one-line error naming ``classes`` unless its sorted values are ``known``.

    The weights have one meaning per class of the first call: scikit-learn's ``partial_fit``
    refuses other classes later with a ``ValueError``, and so does this.
    """
    given = np.unique(np.asarray(classes))
    if not np.array_equal(given, known):
        raise LinclsInputError(
            "classes",
            f"{given.tolist()} is not the same as on last call to partial_fit, "
            f"was {known.tolist()}",
        )


def sorted_classes(y: np.ndarray, needs: str = "two classes") -> np.ndarray:
    """The sorted label values of ``y``, or a one-line error naming ``y`` if there is only one.

    ``needs`` words what the learner takes, in that error ("two classes", "at least two classes").
    """
    if not _plain.plain_labels(y):  # integer labels are binary or multiclass as they are
        check_classification_targets(y)
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise LinclsInputError(
            "y",
            f"needs {needs}, got one class ({classes[0].tolist()!r}); "
            "a classifier can't train on it",
        )
    return classes


def binary_classes(y: np.ndarray) -> np.ndarray:
    """The two sorted label values of ``y``, or a one-line error naming ``y``."""
    classes = sorted_classes(y)
    if classes.shape[0] > 2:
        kind = type_of_target(y, input_name="y")
        raise LinclsInputError(
            "y",
            f"Only binary classification is supported. The type of the target is {kind} "
            f"({classes.shape[0]} classes); use MulticlassPerceptron or MIRA",
        )
    return classes


@njit(cache=True, nogil=True)
def _two_label_pass(y, out):
    """One pass over the labels ``y``: ``out[i]`` = +1.0 where y[i] is the larger of its two
    values, −1.0 where the smaller. Returns (distinct values: 1, 2, or 3 for more than two, the
    smaller value, the larger value); ``out`` is meaningful only for 2.

    Until the second value shows up every label equals the first, so those entries are written
    once the order of the two is known.
    """
    n = y.shape[0]
    first = y[0]
    k = 1
    while k < n and y[k] == first:
        k += 1
    if k == n:
        return 1, first, first
    second = y[k]
    low, high = (first, second) if first < second else (second, first)
    first_sign = 1.0 if first == high else -1.0
    for i in range(k):
        out[i] = first_sign
    # Branch-free (a select and a count, which numba vectorises): with labels in random order a
    # branch per label is mispredicted half the time, which made this pass 30 times slower.
    others = 0
    for i in range(k, n):
        value = y[i]
        out[i] = 1.0 if value == high else -1.0
        others += (value != high) & (value != low)
    return (3 if others else 2), low, high


# Label dtypes the one-pass kernel takes (numba has no float16; objects and strings go the
# long way).
_FAST_LABEL_KINDS = "biu"
_FAST_LABEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def fast_binary_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(the two sorted classes, the labels as ±1 float64, ``classes[1]`` → +1) in one pass over
    the numeric 1-d ``y``; None when ``y`` is not two such classes (then ``binary_classes``
    and a mapping give the answer or the error).

    Two distinct integers, booleans or whole floats are what scikit-learn's ``type_of_target``
    calls "binary"; ``y`` has been through ``validate_data``, so it is finite.
    """
    if y.ndim != 1 or y.shape[0] == 0:
        return None
    if y.dtype.kind not in _FAST_LABEL_KINDS and y.dtype not in _FAST_LABEL_FLOATS:
        return None
    signed = np.empty(y.shape[0], dtype=np.float64)
    distinct, low, high = _two_label_pass(y, signed)
    if distinct != 2:
        return None
    if y.dtype.kind == "f" and not (float(low).is_integer() and float(high).is_integer()):
        return None  # continuous targets: the long way raises scikit-learn's error
    return np.array([low, high], dtype=y.dtype), signed


def scores_linearly(learner_class: type) -> bool:
    """Whether the class's ``decision_function`` is the linear score w·x + b of its ``coef_`` and
    ``intercept_`` (scikit-learn's, or this base's same products for a run's arrays)."""
    linear = (LinearClassifierMixin.decision_function, OnlineBinaryClassifier.decision_function)
    return learner_class.decision_function in linear


class OnlineBinaryClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Base of the binary online learners: ``fit`` runs passes of ``_run_pass``; the record.

    Public as ``lincls.learners.OnlineBinaryClassifier``. A subclass (a learner of lincls, or of
    a plugin registered with ``lincls.plugins.register_learner``) provides:

    - ``__init__`` taking every option as a keyword and storing it, unchanged, as the attribute
      of that name (scikit-learn's rule: no checks there), among them ``max_passes``,
      ``stop_when_converged``, ``shuffle`` and ``random_state`` (a run sets ``max_passes`` and
      ``random_state`` from its ``passes`` and ``seed``);
    - ``_check_params()``: the range checks of its options, each refused as a
      ``lincls.errors.LinclsInputError`` naming the option (calling ``super()._check_params()``);
    - ``_init_weights(X, coef_init, intercept_init)``: sets ``coef_`` (shape (1, d), X's dtype)
      and ``intercept_`` (shape (1,)), ``initial_weights`` giving zeros or the given values;
    - ``_run_pass(X, y, order)``: one pass over the rows ``order`` of ``X`` with labels ``y`` in
      ±1, updating ``coef_`` and ``intercept_`` in place, returning (mistakes, updates, the rows
      of the mistakes, their 0-based steps within the pass), the last two int64 arrays; a
      mistake is y·(w·x + b) ≤ 0.

    It gives the rest: ``fit`` (up to ``max_passes`` passes, shuffled if ``shuffle``, stopping
    at a pass without updates if ``stop_when_converged``), ``partial_fit``, ``predict``,
    ``decision_function``, ``score``, ``classes_``, the checks of X and y, and the record the
    bounds and tracking read (``mistakes_``, ``updates_``, ``mistakes_per_pass_``,
    ``mistake_steps_``, ``mistake_indices_``, ``n_passes_``, ``converged_``, ``n_steps_``).
    A learner of lincls also sets ``bound_family``, which of lincls's own bounds cover its rule;
    a plugin's bounds name its class instead (``lincls.plugins.Bound.learner``).
    """

    # Subclasses set these in __init__ (sklearn style: no logic there).
    max_passes: int
    stop_when_converged: bool
    shuffle: bool
    random_state: int | np.random.RandomState | None

    # --- hooks -----------------------------------------------------------------------------
    def _check_params(self) -> None:
        check_number("max_passes", self.max_passes, low=1, integer=True)
        if not isinstance(self.shuffle, bool | np.bool_):
            raise LinclsInputError("shuffle", f"must be true or false, got {self.shuffle!r}")

    def _init_weights(self, X, coef_init, intercept_init) -> None:  # pragma: no cover
        raise NotImplementedError

    def _run_pass(self, X, y, order: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
        """One pass over ``X[order]``: (mistakes, updates, rows of the mistakes, their steps).

        Steps are 0-based positions within this pass; the base class offsets them.
        """  # pragma: no cover
        raise NotImplementedError

    def _find_classes(self, y: np.ndarray) -> np.ndarray:
        """The sorted labels of ``y`` (exactly two here; the multiclass base takes more)."""
        return binary_classes(y)

    def _kernel_labels(self, y: np.ndarray) -> np.ndarray:
        """Labels as the kernels take them: ±1 here (class indices in the multiclass base)."""
        return self._signed_labels(y)

    def _classes_and_labels(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``_find_classes(y)``, the kernel labels of ``y`` under them), in one pass over ``y``
        where it is two numeric classes (finding the classes and then mapping ``y`` to them
        took 21 of a 1-pass fit's 38 ms on 1M labels, the epoch 15)."""
        fast = fast_binary_labels(y)
        if fast is not None:
            return fast
        classes = self._find_classes(y)
        self.classes_ = classes
        return classes, self._kernel_labels(y)

    # --- sklearn API -----------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X) -> np.ndarray:
        """w·x + b for each row of ``X`` (scikit-learn's linear score)."""
        check_is_fitted(self)
        plain = _plain.scores(self, X)  # a run's data: the same products, without the checks
        return super().decision_function(X) if plain is None else plain

    def predict(self, X) -> np.ndarray:
        """The class of each row: ``classes_[1]`` where the score is > 0 (scikit-learn's rule)."""
        plain = None
        if type(self).decision_function is OnlineBinaryClassifier.decision_function:  # w·x + b
            check_is_fitted(self)
            plain = _plain.scores(self, X)
        if plain is None:  # another score of the subclass's, or input of another kind
            return super().predict(X)
        return self.classes_[(plain > 0).astype(np.intp)]

    def _validate_X_y(self, X, y, reset: bool):
        """X (float64 or float32, C-ordered or CSR) and y, checked, X's values finite."""
        X, y = self._validate_layout(X, y, reset)
        check_finite(X)
        return X, y

    def _validate_fit_input(self, X, y, reset: bool):
        """``_validate_X_y`` for ``fit`` and ``partial_fit``; a learner whose kernel notices
        non-finite values itself may leave that check to the pass."""
        return self._validate_X_y(X, y, reset)

    def _validate_layout(self, X, y, reset: bool):
        """X and y as the kernels take them (``validate_data``), X's values not yet checked."""
        plain = _plain.layout(self, X, y, reset)  # a run's arrays: known without the general path
        if plain is not None:
            return plain
        return validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            order="C",
            accept_large_sparse=False,
            ensure_all_finite=False,
            reset=reset,
        )

    def _signed_labels(self, y: np.ndarray) -> np.ndarray:
        """Labels mapped to ±1: ``classes_[1]`` is +1, as in scikit-learn."""
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise LinclsInputError(
                "y", f"label {y[unknown][0]!r} is not one of the classes {list(self.classes_)}"
            )
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def fit(self, X, y, coef_init=None, intercept_init=None):
        """Fit from ``coef_init``, ``intercept_init`` (default 0) in up to ``max_passes`` passes."""
        self._check_params()
        X, y = self._validate_fit_input(X, y, reset=True)
        self.classes_, labels = self._classes_and_labels(y)
        self._init_weights(X, coef_init, intercept_init)
        self._reset_record()
        rng = random_state_for(self.shuffle, self.random_state)
        identity = np.arange(X.shape[0], dtype=np.int64)
        for _ in range(self.max_passes):
            order = permutation(rng, X.shape[0]) if self.shuffle else identity
            updates = self._one_pass(X, labels, order)
            if self.stop_when_converged and updates == 0:
                break
        self._finish_record()
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over ``X``, continuing from the current state and record.

        The first call takes ``classes`` (all labels the learner will see) or those of ``y``; a
        later call may repeat them, and raises (as scikit-learn does) if they differ.
        """
        first = not hasattr(self, "classes_")
        if first:
            self._check_params()
        elif classes is not None:
            self._check_same_classes(classes)
        X, y = self._validate_fit_input(X, y, reset=first)
        if first:
            self.classes_ = self._find_classes(np.asarray(classes) if classes is not None else y)
            self._init_weights(X, None, None)
            self._reset_record()
        else:
            self._resume_record()
        labels = self._kernel_labels(y)
        order = np.arange(X.shape[0], dtype=np.int64)
        if self.shuffle:
            order = permutation(random_state_for(True, self.random_state), X.shape[0])
        self._one_pass(X, labels, order)
        self._finish_record()
        return self

    def _check_same_classes(self, classes) -> None:
        """``check_same_classes`` against this learner's ``classes_``."""
        check_same_classes(self.classes_, classes)

    # --- the online record -----------------------------------------------------------------
    # The mistakes' rows and steps go straight into two growing arrays: a pass's kernel writes
    # its mistakes at the end of the record (``_mistake_buffers``), so nothing is copied or
    # concatenated per pass (fresh per-pass arrays cost ~10% of a short epoch in page faults).
    def _reset_record(self) -> None:
        self._pass_mistakes: list[int] = []
        self._record_rows = np.empty(0, dtype=np.int64)
        self._record_steps = np.empty(0, dtype=np.int64)
        self._recorded = 0
        self.updates_ = 0
        self.n_steps_ = 0
        self.converged_ = False

    def _resume_record(self) -> None:
        self._pass_mistakes = list(self.mistakes_per_pass_)
        self._record_rows = np.array(self.mistake_indices_, dtype=np.int64)
        self._record_steps = np.array(self.mistake_steps_, dtype=np.int64)
        self._recorded = self._record_rows.shape[0]

    def _mistake_buffers(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Room for ``n`` more mistakes at the end of the record: (rows, steps) int64 views."""
        start, end = self._recorded, self._recorded + n
        if self._record_rows.shape[0] < end:
            capacity = max(end, 2 * self._record_rows.shape[0])
            for name in ("_record_rows", "_record_steps"):
                grown = np.empty(capacity, dtype=np.int64)
                grown[:start] = getattr(self, name)[:start]
                setattr(self, name, grown)
        return self._record_rows[start:end], self._record_steps[start:end]

    def _one_pass(self, X, labels: np.ndarray, order: np.ndarray) -> int:
        mistakes, updates, rows, steps = self._run_pass(X, labels, order)
        # A learner that wrote into ``_mistake_buffers`` hands back the same memory: then these
        # are in place already; otherwise its arrays are appended.
        rows_out, steps_out = self._mistake_buffers(mistakes)
        if mistakes and rows.ctypes.data != rows_out.ctypes.data:
            rows_out[:] = rows
        np.add(steps, self.n_steps_, out=steps_out, casting="unsafe")
        self._recorded += mistakes
        self._pass_mistakes.append(mistakes)
        self.updates_ += updates
        self.n_steps_ += order.shape[0]
        self.converged_ = updates == 0
        return updates

    def _finish_record(self) -> None:
        self.mistakes_per_pass_ = np.asarray(self._pass_mistakes, dtype=np.int64)
        self.mistakes_ = int(self.mistakes_per_pass_.sum())
        self.n_passes_ = int(self.mistakes_per_pass_.shape[0])
        self.mistake_steps_ = self._record_steps[: self._recorded]
        self.mistake_indices_ = self._record_rows[: self._recorded]
        del self._pass_mistakes, self._record_rows, self._record_steps, self._recorded

    def _check_fitted(self) -> None:
        check_is_fitted(self, "coef_")


def initial_weights(
    X, coef_init, intercept_init, n_outputs: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Zero weights of ``X``'s dtype (coef) and float64 (intercept), or copies of the given ones."""
    n_features = X.shape[1]
    coef = np.zeros((n_outputs, n_features), dtype=X.dtype)
    intercept = np.zeros(n_outputs, dtype=np.float64)
    if coef_init is not None:
        given = np.asarray(coef_init, dtype=np.float64).reshape(-1)
        if given.shape[0] != n_outputs * n_features or not np.isfinite(given).all():
            raise LinclsInputError(
                "coef_init",
                f"must hold {n_outputs * n_features} finite values, got {given.shape[0]}",
            )
        coef[:] = given.reshape(n_outputs, n_features)
    if intercept_init is not None:
        given = np.asarray(intercept_init, dtype=np.float64).reshape(-1)
        if given.shape[0] != n_outputs or not np.isfinite(given).all():
            raise LinclsInputError(
                "intercept_init", f"must hold {n_outputs} finite values, got {given.shape[0]}"
            )
        intercept[:] = given
    return coef, intercept


__all__ = [
    "FLOAT_DTYPES",
    "OnlineBinaryClassifier",
    "binary_classes",
    "check_finite",
    "fast_binary_labels",
    "initial_weights",
    "permutation",
    "scores_linearly",
    "sorted_classes",
]
