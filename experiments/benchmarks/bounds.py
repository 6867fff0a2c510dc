"""The cost of bounds and certificates against the perceptron fit they describe.

At n = 1k and 100k (d = 100, separable data of margin 0.01 so the fit takes several passes):

- every bound that applies to a perceptron run with a bias (Novikoff's augmented form,
  Freund–Schapire over its γ grid, Mohri–Rostamizadeh), certificates given, including the one
  pass over X for the squared norms the per-example bounds read — against one fit
  (target: bounds ≤ 0.2× the fit, i.e. ratio fit/bounds ≥ 5);
- a certificate: the hard-margin SVM (``lincls.geometry.certificates``), computed once per dataset
  (the cache shares it with every learner, order and seed of a sweep), shown against the fit;
- at n = 100 and 1k: every bound at its best comparator (``lincls.geometry.comparators``: the
  hard-margin SVM of (x, 1) and Freund–Schapire's cone program), solved once per dataset, bias
  feature and presentation counts, then read from the disk cache by every later run (the per-run
  cost, with the in-process memory cleared as in a new worker), both against one fit.
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from lincls import bounds
from lincls.bounds import _best
from lincls.data import make_separable
from lincls.experiments.bench import Row, best_time
from lincls.geometry import certify, row_norms
from lincls.geometry.certificates import svm_certificates
from lincls.learners import Perceptron


def _bounds_of(model, data, certs, cache_dir=None):
    facts = bounds.RunFacts(
        learner=model,
        radius=data.radius,
        certificate=certs[0],
        certificates=tuple(certs),
        sq_norms=row_norms(data.X) ** 2,
        presentations=np.full(data.X.shape[0], model.n_passes_),
        n_train=data.X.shape[0],
        X=data.X if cache_dir else None,
        y=data.y,
        data_key=data.fingerprint,
        cache_dir=cache_dir,
    )
    return bounds.evaluate(facts)


def _best_rows(quick: bool) -> list[Row]:
    rows = []
    for n in (100, 1_000):
        data = make_separable(n, 100, 0.01, 1.0, offset=0.1, seed=0, n_test=0)
        y = np.where(data.y > 0, 1.0, -1.0)

        def fit(data=data):
            return Perceptron(max_passes=10).fit(data.X, data.y)

        fit_seconds = best_time(fit, repeat=2 if quick else 5)
        model = fit()
        certs = [certify(data.X, y, data.u, data.b, "generator")]
        with tempfile.TemporaryDirectory() as cache:
            _best._memory.clear()
            start = time.perf_counter()
            evaluation = _bounds_of(model, data, certs, cache)
            solve_seconds = time.perf_counter() - start

            def cached(m=model, d=data, c=certs, cache=cache):
                _best._memory.clear()
                return _bounds_of(m, d, c, cache)

            run_seconds = best_time(cached, repeat=3 if quick else 10)
        best = sorted(k for k, v in evaluation.sources.items() if v == "best")
        gap = max(evaluation.details[k]["gap"] for k in best)
        rows.append(
            Row("bounds", f"best comparators, first solve ({', '.join(best)}), n={n}, d=100",
                solve_seconds, fit_seconds, "perceptron fit",
                note=f"once per dataset, c and presentation counts; largest gap {gap:.1e}")
        )  # fmt: skip
        rows.append(
            Row("bounds", f"best comparators, per run (disk cache), n={n}, d=100", run_seconds,
                fit_seconds, "perceptron fit", target=1.0,
                note=f"{model.mistakes_} mistakes, {model.n_passes_} passes")
        )  # fmt: skip
    return rows


def run(quick: bool = False) -> list[Row]:
    """Bounds and certificates against a perceptron fit, at n = 1k and 100k (10k when quick),
    and the best comparators' cost at n = 100 and 1k."""
    rows = _best_rows(quick)
    for n in (1_000, 10_000 if quick else 100_000):
        data = make_separable(n, 100, 0.01, 1.0, offset=0.1, seed=0, n_test=0)
        y = np.where(data.y > 0, 1.0, -1.0)

        def fit(data=data):
            return Perceptron(max_passes=10).fit(data.X, data.y)

        fit_seconds = best_time(fit, repeat=2 if quick else 5)
        model = fit()
        start = time.perf_counter()
        svm, separable = svm_certificates(
            data.X, y, homogeneous=False, fingerprint="bench", cache=None
        )
        svm_seconds = time.perf_counter() - start
        certs = [certify(data.X, y, data.u, data.b, "generator"), *svm]
        evaluation = _bounds_of(model, data, certs)
        bound_seconds = best_time(lambda m=model, d=data, c=certs: _bounds_of(m, d, c), repeat=5)
        names = ", ".join(sorted(evaluation.values))
        rows.append(
            Row("bounds", f"every bound ({names}), n={n}, d=100", bound_seconds, fit_seconds,
                f"perceptron fit ({model.n_passes_} passes)", target=5.0,
                note=f"{model.mistakes_} mistakes; tightest {evaluation.tightest[0]}")
        )  # fmt: skip
        rows.append(
            Row("bounds", f"SVM certificate (hard margin), n={n}, d=100", svm_seconds,
                fit_seconds, "perceptron fit",
                note=f"once per dataset (cached); separable={separable}, "
                     f"γ_svm/γ_gen = {svm[0].margin / certs[0].margin:.3f}")
        )  # fmt: skip
    return rows
