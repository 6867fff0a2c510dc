"""The voted, averaged and last kernel perceptron, one against the rest (Freund & Schapire 1999).

Each class c gets a binary kernel perceptron on the labels y = +1 (class c) and −1 (the rest),
trained by ``lincls.learners.kernel``'s pass (``kernel_pass_dense``) over the training Gram
matrix K: the matrix is handed to that pass as its cache of kernel rows, every row present, so
a mistake adds a stored row instead of computing one. The classes share K, computed once.

A class's perceptron passes through v_0 = 0 and v_k = Σ_{j≤k} y_{m_j} φ(x_{m_j}) after its k-th
mistake (on training row m_k), and v_k survives c_k steps (``VotedPerceptron``'s count: they sum
to the steps T). On a test point, v_k·φ(x) = Σ_{j≤k} y_{m_j} K(x_{m_j}, x), a running sum over
the mistakes, so every prefix of the training is scored at once:

- ``"vote"``: Σ_k c_k·sgn(v_k·φ(x)) / T (``VotedPerceptron``'s vote share);
- ``"average"``: Σ_k c_k·v_k·φ(x) / T (the averaged perceptron);
- ``"last"``: v_K·φ(x), the final weights.

The predicted class is the one of the highest score (the lowest class index on ties). There is
no separate bias: the polynomial kernel (1 + x·z)^d holds a constant feature. The training rows
are presented in one seeded random order (``random_state``), the same in every pass.
``staged_errors`` gives the test error of the three rules after any number of steps, e.g. after
0.1, 1, 2, … passes, from one fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import check_choice, check_number
from lincls.geometry import row_norms
from lincls.learners._base import check_finite, sorted_classes
from lincls.learners.kernel import KERNELS, kernel_matrix, kernel_pass_dense

RULES = ("vote", "average", "last")


def checkpoint_steps(n_train: int, passes: int, first: float = 0.1) -> list[int]:
    """The steps after ``first`` of a pass (rounded, at least 1), then after each whole pass."""
    head = max(1, round(first * n_train)) if 0 < first < 1 else None
    return ([head] if head else []) + [p * n_train for p in range(1, passes + 1)]


def prefix_scores(
    K_test: np.ndarray, rows: np.ndarray, signs: np.ndarray, steps: np.ndarray, T: int
) -> dict[str, np.ndarray]:
    """One binary perceptron's scores of each rule on the test points after T steps.

    ``K_test[:, j]``: K(x_test, training row j); ``rows``, ``steps``: its mistakes (row, step)
    in order, ``signs`` their labels ±1. Only the mistakes before step T count.
    """
    made = int(np.searchsorted(steps, T))  # mistakes at steps 0 … T − 1
    if made == 0:
        zero = np.zeros(K_test.shape[0])
        return {"vote": zero, "average": zero, "last": zero}
    running = np.cumsum(K_test[:, rows[:made]] * signs[:made], axis=1)  # v_k·φ(x), k = 1…made
    counts = np.diff(np.append(steps[:made], T)).astype(np.float64)  # c_1 … c_made
    # v_0 = 0 scores 0 under every rule, so its count c_0 adds nothing
    return {
        "vote": np.sign(running) @ counts / T,
        "average": running @ counts / T,
        "last": running[:, -1].copy(),
    }


class KernelVotedPerceptron(ClassifierMixin, BaseEstimator):
    """The kernel perceptron one against the rest, predicting by vote, average or last weights.

    Parameters
    ----------
    prediction : {"vote", "average", "last"}
        The rule of ``predict`` and ``decision_function`` (module docstring).
    kernel : {"linear", "poly", "rbf"}
        As ``KernelPerceptron``'s: x·z, (1 + x·z)^degree, exp(−gamma‖x − z‖²).
    degree : int ≥ 1
    gamma : float > 0
    epochs : int ≥ 1
        Passes over the training data (every one, converged or not: a further pass still adds
        to the survival counts). Not ``max_passes``: the run's ``passes`` does not set it, the
        study names its epochs.
    random_state : int, RandomState or None
        Seeds the order the training rows are presented in.

    Attributes
    ----------
    classes_ : the sorted labels
    support_vectors_ : the training rows some class erred on, dense float64
    mistake_rows_ : list, per class, the mistakes' rows of ``support_vectors_`` in order
    mistake_signs_ : list, per class, their labels ±1
    mistake_steps_ : list, per class, the step (0-based, over every pass) of each mistake
    mistakes_per_class_ : ndarray (n_classes,)
    n_steps_ : steps per class (epochs × training rows)
    n_train_ : training rows
    """

    no_bound_reason = "a multiclass kernel learner measured by its test error (FS99): no bound"

    def __init__(
        self,
        prediction: str = "vote",
        kernel: str = "poly",
        degree: int = 1,
        gamma: float = 1.0,
        epochs: int = 10,
        random_state=None,
    ):
        self.prediction = prediction
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.epochs = epochs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def _check_params(self) -> None:
        check_choice("prediction", self.prediction, RULES)
        check_choice("kernel", self.kernel, KERNELS)
        check_number("degree", self.degree, low=1, integer=True)
        check_number("gamma", self.gamma, low=0, low_open=True)
        check_number("epochs", self.epochs, low=1, integer=True)

    def fit(self, X, y):
        """Train one kernel perceptron per class for ``epochs`` passes over (X, y)."""
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", ensure_all_finite=False)
        check_finite(X)
        self.classes_ = sorted_classes(y, "at least two classes")
        n = X.shape[0]
        order = check_random_state(self.random_state).permutation(n).astype(np.int64)
        gram = np.ascontiguousarray(kernel_matrix(X, X, self.kernel, self.degree, self.gamma))
        # the pass's cache of kernel rows, filled: row t of the Gram matrix sits in slot t
        slot_of, used = np.arange(n, dtype=np.int64), np.array([n], dtype=np.int64)
        sq, spare = row_norms(X) ** 2, np.empty(n)
        kind = KERNELS.index(self.kernel)  # the pass's kernel code: only used on a cache miss
        records = []
        for label in self.classes_:
            signs = np.where(y == label, 1.0, -1.0)
            g, alpha, intercept = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(1)
            rows, steps = [], []
            for p in range(int(self.epochs)):
                found_rows, found_steps = np.empty(n, np.int64), np.empty(n, np.int64)
                made = kernel_pass_dense(
                    X, sq, signs, order, g, alpha, intercept, 0.0, kind, int(self.degree),
                    float(self.gamma), gram, slot_of, used, spare, found_rows, found_steps,
                )  # fmt: skip
                rows.append(found_rows[:made])
                steps.append(found_steps[:made] + p * n)
            records.append((np.concatenate(rows), np.concatenate(steps), signs))
        support = np.unique(np.concatenate([r for r, _, _ in records]))
        where = np.full(n, -1, dtype=np.int64)
        where[support] = np.arange(support.shape[0])
        self.support_vectors_ = X[support]
        self.mistake_rows_ = [where[r] for r, _, _ in records]
        self.mistake_signs_ = [s[r] for r, _, s in records]
        self.mistake_steps_ = [st for _, st, _ in records]
        self.mistakes_per_class_ = np.array([r.shape[0] for r, _, _ in records])
        self.n_steps_ = int(self.epochs) * n
        self.n_train_ = n
        return self

    def _kernel_to_support(self, X) -> np.ndarray:
        check_is_fitted(self, "support_vectors_")
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        check_finite(X)
        return kernel_matrix(X, self.support_vectors_, self.kernel, self.degree, self.gamma)

    def _scores(self, K_test: np.ndarray, T: int) -> dict[str, np.ndarray]:
        """Each rule's (n_test, n_classes) scores after T steps."""
        per_class = [
            prefix_scores(K_test, r, s, st, T)
            for r, s, st in zip(
                self.mistake_rows_, self.mistake_signs_, self.mistake_steps_, strict=True
            )
        ]
        return {rule: np.column_stack([c[rule] for c in per_class]) for rule in RULES}

    def decision_function(self, X) -> np.ndarray:
        """(n_samples, n_classes) scores of ``prediction`` after the whole training."""
        check_choice("prediction", self.prediction, RULES)
        return self._scores(self._kernel_to_support(X), self.n_steps_)[self.prediction]

    def predict(self, X) -> np.ndarray:
        """The class of the highest score (the lowest index on ties)."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def staged_errors(self, X, y, steps: Sequence[int]) -> dict[str, list[tuple[int, float]]]:
        """Test error of each rule after each of ``steps`` (≤ ``n_steps_``): rule → [(T, error)]."""
        K_test = self._kernel_to_support(X)
        y = np.asarray(y)
        out: dict[str, list[tuple[int, float]]] = {rule: [] for rule in RULES}
        for T in steps:
            for rule, scores in self._scores(K_test, int(T)).items():
                wrong = self.classes_[np.argmax(scores, axis=1)] != y
                out[rule].append((int(T), float(np.mean(wrong))))
        return out

    def mistakes_before(self, T: int) -> int:
        """Mistakes of every class at steps 0 … T − 1."""
        return int(sum(np.searchsorted(st, T) for st in self.mistake_steps_))

    def test_measures(self, X, y) -> tuple[dict[str, float], dict[str, list[tuple[int, float]]]]:
        """What a run logs of the test data: each rule's test error after 0.1 pass and after
        every pass (curves ``test_error.<rule>``, step = steps per class so far) and the mistakes
        of all classes so far (``online_mistakes``)."""
        steps = checkpoint_steps(self.n_train_, int(self.epochs))
        curves = {
            f"test_error.{rule}": points for rule, points in self.staged_errors(X, y, steps).items()
        }
        curves["online_mistakes"] = [(T, float(self.mistakes_before(T))) for T in steps]
        # each curve's last point is its value in the runs table (MLflow's latest step)
        metrics = {
            "epochs": float(self.epochs), "n_train": float(self.n_train_),
            "n_test": float(np.asarray(y).shape[0]),
            "support_vectors": float(self.support_vectors_.shape[0]),
        }  # fmt: skip
        return metrics, curves
