"""Orders of presentation: fixed, shuffled each pass, and adversarial.

``fit_in_order`` fits an online learner on (X, y) in the order a run asks for and returns how
often each example was presented (the bounds that sum over the sequence, Freund–Schapire's,
need it). ``ordering`` numbers the orderings of one config (``orders: 20`` runs 0..19):

- ``"fixed"``: ordering 0 is the data's own order; ordering k ≥ 1 a fixed random permutation
  (seeded by (seed, k)); every pass repeats it.
- ``"shuffled"``: a fresh permutation every pass, from the seed (seed, k).
- ``"adversarial"``: seed 000 §3.2's perceptron game. Player A sees the learner's current
  weights and presents, among the examples they get wrong (y·(w·x + b) ≤ 0), the one that makes
  the least progress towards the certificate per unit of growth of ‖w‖²: on a mistake at x'
  (the vector (x, c) the learner sees), w·u grows by y u·x' and ‖w/η‖² by ‖x'‖² + 2y (w/η)·x',
  and Novikoff's proof is tight exactly when every mistake has the least of the first and the
  most of the second. Without a certificate it presents the wrong example of largest growth.
  Ties go to the lowest row for ordering 0, to a seeded random one otherwise. The game ends when
  no example is wrong (the learner has converged) or after ``passes × n`` presentations.
  The adversary reads the learner's state between steps, so each step is one call of the
  learner's own one-pass kernel on a single example (``_one_pass``): the learner is the real one.
  It measures activations, norms and the certificate's margins with the pass's own sums
  (``lincls.learners._activations``), never BLAS's, whose order of summation depends on the
  processor: a row is wrong exactly when the pass errs on it, and ties break alike everywhere.

  A multiclass learner (Kesler's construction) errs on (x, y) when it predicts ŷ ≠ y; its step
  adds τ·z to W, z = Φ(x', y) − Φ(x', ŷ) with ‖z‖² = 2‖x'‖² (τ the learner's own step: the
  perceptron's lr, MIRA's capped τ). Then ⟨W, U'⟩ grows by τ(u'_y − u'_ŷ)·x' for a separator
  U' = (U, b/c) of unit Frobenius norm on the vectors x', and ‖W‖² by 2τ(s_y − s_ŷ) + 2τ²‖x'‖²
  (s the current scores). Player A presents the wrong example of least progress per unit of
  growth, given a multiclass certificate, and of largest growth without one; the binary rule
  is the same with z = y·x'. Ties and the end of the game are as above.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lincls.config.run import ORDERS, canonical_orders, permutations  # noqa: F401
from lincls.errors import LinclsInputError
from lincls.geometry import Certificate, MulticlassCertificate, augmented_scale
from lincls.learners._activations import signed_activations, squared_norms
from lincls.learners._base import binary_classes

# the run config checks these values; here for the modules that import them from their subject
from lincls.learners._kinds import takes_multiclass
from lincls.learners._multiclass_base import predictions_csr, predictions_dense


def ordering_seed(seed: int, ordering: int) -> int:
    """The seed of ordering ``ordering`` of a run seeded ``seed`` (independent streams)."""
    return int(np.random.SeedSequence([int(seed), int(ordering)]).generate_state(1)[0])


def fit_in_order(
    learner,
    X,
    y,
    order: str = "fixed",
    ordering: int = 0,
    seed: int = 0,
    certificate: Certificate | None = None,
) -> np.ndarray:
    """Fit ``learner`` on (X, y) in ``order``; returns the presentations of each row (int64).

    The learner's online record (``mistake_indices_``) names rows of the original ``X``.
    """
    n = X.shape[0]
    if order == "adversarial":
        if not hasattr(learner, "_one_pass"):
            raise LinclsInputError("order", f"'adversarial' needs an online learner, not "
                                   f"{type(learner).__name__}")  # fmt: skip
        if getattr(learner, "batch_size", 1) != 1:  # a mini-batch learner steps on M examples
            raise LinclsInputError(
                "batch_size",
                "the adversarial order presents one example at a time, so it needs "
                f"batch_size = 1, got {learner.batch_size!r}",
            )
        rng = np.random.default_rng(ordering_seed(seed, ordering)) if ordering else None
        return adversarial_fit(learner, X, y, certificate, rng)
    if "shuffle" not in learner.get_params():
        if order != "fixed" or ordering:
            raise LinclsInputError(
                "order", f"{type(learner).__name__} takes its examples in one fixed order only"
            )
        learner.fit(X, y)
    elif order == "shuffled":
        learner.set_params(shuffle=True, random_state=ordering_seed(seed, ordering))
        learner.fit(X, y)
    elif ordering == 0:
        learner.set_params(shuffle=False)
        learner.fit(X, y)
    else:
        perm = np.random.default_rng(ordering_seed(seed, ordering)).permutation(n)
        learner.set_params(shuffle=False)
        learner.fit(X[perm], np.asarray(y)[perm])
        learner.mistake_indices_ = perm[learner.mistake_indices_]
    return np.full(n, getattr(learner, "n_passes_", 1), dtype=np.int64)


def training_weights(learner) -> tuple[np.ndarray, float]:
    """The weights the learner predicts with *during* training (w, b).

    The averaged and voted perceptrons keep an average in ``coef_``; their running perceptron
    weights are what decides a mistake.
    """
    if hasattr(learner, "last_coef_"):
        return learner.last_coef_[0], float(learner.last_intercept_[0])
    if hasattr(learner, "_w"):
        return learner._w, float(learner._b[0])
    if not hasattr(learner, "coef_"):
        raise LinclsInputError("order", "'adversarial' needs a learner with linear weights")
    return learner.coef_[0], float(learner.intercept_[0])


def _least_progress(progress, growth) -> np.ndarray:
    """The adversary's score of each wrong example (lowest first): progress per unit of growth,
    or −growth without a certificate; an example that does not grow ‖w‖² scores ∞."""
    if progress is None:
        return -growth
    safe = np.where(growth > 0.0, growth, 1.0)
    return np.where(growth > 0.0, progress / safe, np.inf)


def _binary_adversary(learner, X, y_signed, certificate: Certificate | None):
    """The wrong examples of a binary learner and their scores, at its current weights."""
    c = float(getattr(learner, "bias_feature_", 0.0))
    lr = float(getattr(learner, "lr", 1.0))
    sq_norms = squared_norms(X) + c * c
    progress = None
    if isinstance(certificate, Certificate) and certificate.margins is not None:
        scale = augmented_scale(certificate.b, c)
        if scale is not None:  # y(u·x + b), summed as below: ties in the scores break alike
            u = np.ascontiguousarray(certificate.u, dtype=np.float64)
            progress = signed_activations(X, y_signed, u, certificate.b) / scale

    def choose():
        w, b = training_weights(learner)
        activation = signed_activations(X, y_signed, w, b)  # the pass's own sum, not BLAS's
        wrong = np.flatnonzero(activation <= 0.0)
        growth = sq_norms[wrong] + 2.0 * activation[wrong] / lr
        return wrong, _least_progress(None if progress is None else progress[wrong], growth)

    return choose


def _scores(X, U: np.ndarray, b: np.ndarray) -> np.ndarray:
    """u_r·x_t + b_r of every row and class, summed as a multiclass pass sums (not by BLAS, whose
    order of summation depends on the processor): the adversary's ties break alike everywhere."""
    U = np.ascontiguousarray(U, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    scores = np.empty((X.shape[0], U.shape[0]), dtype=np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        predictions_csr(X.data, X.indices, X.indptr, U, b, scores)
    else:
        predictions_dense(np.ascontiguousarray(X), U, b, scores)
    return scores


def _multiclass_adversary(learner, X, labels, certificate):
    """The wrong examples of a multiclass (Kesler) learner and their scores (module docstring):
    the step τ of each, the growth of ‖W‖² and, with a ``MulticlassCertificate``, the progress."""
    c = float(learner.bias_feature_)
    sq_norms = squared_norms(X) + c * c
    step, capped = learner._kesler_step()
    certified = None  # (u_r·x_t + b_r) of every row and class, on the unit (U, b/c)
    if isinstance(certificate, MulticlassCertificate) and (c != 0.0 or certificate.homogeneous):
        scale = np.sqrt(1.0 + (float(certificate.b @ certificate.b) / c**2 if c else 0.0))
        certified = _scores(X, certificate.U, certificate.b) / scale

    def choose():
        predicted, scores = learner._predictions(X)
        wrong = np.flatnonzero(predicted != labels)
        true, guess = labels[wrong], predicted[wrong]
        gap = scores[wrong, true] - scores[wrong, guess]  # ≤ 0 on a mistake
        q = sq_norms[wrong]
        tau = np.full(wrong.shape[0], step)
        if capped:  # MIRA: min((s_ŷ − s_y + 1)/(2‖x'‖²), M), no step on x' = 0
            safe = np.where(q > 0.0, q, 1.0)
            tau = np.where(q > 0.0, np.minimum((1.0 - gap) / (2.0 * safe), step), 0.0)
        growth = 2.0 * tau * gap + 2.0 * tau * tau * q
        progress = None
        if certified is not None:
            progress = tau * (certified[wrong, true] - certified[wrong, guess])
        return wrong, _least_progress(progress, growth)

    return choose


def adversarial_fit(
    learner, X, y, certificate: Certificate | MulticlassCertificate | None, rng=None
) -> np.ndarray:
    """Play seed 000 §3.2's game against ``learner`` (module docstring); presentations per row."""
    learner._check_params()
    X, y = learner._validate_X_y(X, y, reset=True)
    multiclass = takes_multiclass(learner)
    if multiclass:
        learner.classes_, labels = learner._classes_and_labels(y)
    else:
        learner.classes_ = binary_classes(y)
        labels = learner._signed_labels(y)
    learner._init_weights(X, None, None)
    learner._reset_record()
    if multiclass:
        choose = _multiclass_adversary(learner, X, labels, certificate)
    else:
        choose = _binary_adversary(learner, X, labels, certificate)
    n = X.shape[0]
    presentations = np.zeros(n, dtype=np.int64)
    budget = int(learner.max_passes) * n
    converged = False
    for _ in range(budget):
        wrong, score = choose()
        if wrong.shape[0] == 0:
            converged = True
            break
        best = np.flatnonzero(score == score.min())
        pick = wrong[best[0] if rng is None else rng.choice(best)]
        learner._one_pass(X, labels, np.array([pick], dtype=np.int64))
        presentations[pick] += 1
    learner._finish_record()
    steps = int(learner.n_steps_)
    passes = max(-(-steps // n), 1)
    learner.mistakes_per_pass_ = np.bincount(learner.mistake_steps_ // n, minlength=passes)
    learner.n_passes_ = int(learner.mistakes_per_pass_.shape[0])
    learner.converged_ = converged
    return presentations
