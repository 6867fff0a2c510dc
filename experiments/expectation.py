"""The referee's statistical check of an expectation bound (a bound of kind ``test_error``, such as
Freund & Schapire's ``voted_fs99``): many independent samples, not one instance.

Such a theorem bounds the probability that a learner trained on m examples of an i.i.d.
sequence of m + 1 errs on the last one, by an expectation over the sequence
(``voted_fs99``: (2/(m + 1))·E[min_{u,γ} ((R + D)/γ)²] for the vote). A single run can only give a
plug-in estimate, so ``lincls check`` draws its own distribution: x uniform on the unit sphere of
R^d with |u·x| ≥ γ₀ for a hidden unit u, labelled by the sign of u·x. Each of K samples is m + 1
fresh examples; the learner is fitted on the first m (one pass, as the theorem's) and errs or not
on the last, and the bound is the registered bound's own value on the whole sequence with the
training size m (``bounds.evaluate``, its best comparator over the m + 1 examples, as the
expectation is taken).

The test, at confidence 1 − δ: the error rate's lower Clopper–Pearson limit at δ/2 (exact, the
errors are Bernoulli) against the bound's mean plus Hoeffding's width at δ/2 over the range of
its values. For ``voted_fs99`` that range is proved: on this distribution its value (a minimum
over (u, γ)) is at most its value at (u, γ₀), 2(1 + c²)/γ₀²/(m + 1) on the vectors (x, c) the
learner sees (c its bias feature). Any other bound's range is the largest value seen, so its
confidence assumes no larger one. A violation is a lower limit on the error above the upper
limit on the bound; its reproducer is the same check with the same seed and sample count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from lincls.bounds import REGISTRY, RunFacts, evaluate
from lincls.bounds._registry import TEST_ERROR
from lincls.errors import LinclsInputError
from lincls.geometry import Certificate
from lincls.registry import build_learner

TRAIN = 20  # m: the training examples of each sample
DIMENSION = 5
MARGIN = 0.5  # γ₀: every example has |u·x| ≥ γ₀ on the unit sphere
DELTA = 0.01  # the check's confidence is 1 − δ
PROVEN = ("voted_fs99",)  # bounds whose values here are at most their value at (u, γ₀)


@dataclass(frozen=True)
class Expectation:
    """One expectation bound over the samples: its test error and its mean, each with its
    one-sided limit at δ/2, and whether the error is above the bound at confidence 1 − δ."""

    name: str
    samples: int
    errors: int
    error_low: float
    bound_mean: float
    bound_high: float

    @property
    def violated(self) -> bool:
        return self.error_low > self.bound_high

    def line(self) -> str:
        """The check's line for it."""
        rate = self.errors / self.samples
        verdict = "VIOLATED" if self.violated else "holds"
        return (
            f"{self.name} (expectation: {self.samples} samples of {TRAIN + 1} i.i.d. examples): "
            f"test error {rate:.4f} (≥ {self.error_low:.4f}), the bound's mean "
            f"{self.bound_mean:.4f} (≤ {self.bound_high:.4f}): {verdict} at confidence "
            f"{1 - DELTA:.0%}"
        )


def expectation_bounds(wanted: list[str] | None) -> list[str]:
    """The registered bounds of kind ``test_error`` (of ``wanted`` only, if given)."""
    return [s.name for s in REGISTRY if s.kind == TEST_ERROR and (not wanted or s.name in wanted)]


def sample(rng: np.random.Generator, unit: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` i.i.d. examples: x uniform on the unit sphere with |u·x| ≥ ``MARGIN``, y = sign."""
    kept: list[np.ndarray] = []
    while sum(len(k) for k in kept) < count:
        draws = rng.standard_normal((4 * count, unit.size))
        draws /= np.linalg.norm(draws, axis=1)[:, np.newaxis]
        kept.append(draws[np.abs(draws @ unit) >= MARGIN])
    X = np.concatenate(kept)[:count]
    return X, np.where(X @ unit > 0.0, 1, -1)


def check_expectations(
    learner: dict, names: list[str], samples: int, seed: int
) -> list[Expectation]:
    """Each of ``names`` that applies to ``learner``, checked over ``samples`` samples drawn
    from ``seed`` (module docstring); a bound that applies to no sample is left out."""
    rng = np.random.default_rng(seed)
    unit = rng.standard_normal(DIMENSION)
    unit /= np.linalg.norm(unit)
    errors = 0
    values: dict[str, list[float]] = {name: [] for name in names}
    for k in range(samples):
        X, y = sample(rng, unit, TRAIN + 1)
        model = build_learner(learner, 1, seed + k)
        try:
            model.fit(X[:TRAIN], y[:TRAIN])
        except LinclsInputError:  # a learner that takes no such data (Winnow: x ≥ 0) is not
            if k == 0:  # checked here: no expectation bound of this kind covers it
                return []
            raise
        errors += int(model.predict(X[TRAIN:])[0] != y[TRAIN])
        margins = y * (X @ unit)
        certificate = Certificate(unit, 0.0, float(margins.min()), 1.0, "generator", margins)
        ones = np.ones(TRAIN + 1)
        radius = float(np.linalg.norm(X, axis=1).max())
        facts = RunFacts(model, radius, certificate, (certificate,), sq_norms=ones,
                         presentations=ones, n_train=TRAIN, X=X, y=y)  # fmt: skip
        found = evaluate(facts).test_error
        if k == 0:  # only the bounds that apply to this learner are checked
            names = [name for name in names if name in found]
            if not names:
                return []
        for name in names:
            if name in found:
                values[name].append(float(found[name]))
    checked = []
    limit = float(beta.ppf(DELTA / 2, errors, samples - errors + 1)) if errors else 0.0
    # the theorem's value at (u, γ₀) on the vectors (x, c) the learner sees
    bias = float(getattr(model, "bias_feature_", 0.0)) if samples else 0.0
    largest = 2.0 * (1.0 + bias**2) / MARGIN**2 / (TRAIN + 1)
    for name in names:
        seen = values[name]
        if len(seen) < samples:  # the bound must be evaluated on every sample to be averaged
            continue
        spread = max(largest, max(seen)) if name in PROVEN else max(seen)
        high = float(np.mean(seen)) + spread * math.sqrt(math.log(2 / DELTA) / (2 * samples))
        checked.append(Expectation(name, samples, errors, limit, float(np.mean(seen)), high))
    return checked
