"""``dataset=search``: a run whose data are the worst case a search finds for its learner and one
bound, then run as fixed data.

Like the games, the data exist only once the learner is known: ``play`` searches for the run's
(learner, bound) pair (``lincls.search.targets.search``, with the run's learner as configured and
its passes, every round of it: no time limit, so the same config gives the same run at any load),
then fits the run's learner on the best instance in the fixed order, so the run logs the numbers
the search scored. The instance is saved as the run's artifacts:
``dataset/instance.csv`` (every double exact), ``dataset/certificate.json`` for an instance built
with a certificate (Winnow's disjunction: a CSV cannot carry it, and the SVM's separator is no
disjunction; a multiclass instance's matrix U, which a CSV replay would not find) and
``dataset/search.json`` (the search, its cost, the ratio it scored, and the overrides that
replay it through ``dataset=csv``, beside the run's ``learner.*`` options).
Importing ``lincls.search`` registers the option in ``lincls.registry.DATASETS`` (the registry
sits below the searches, which score with it).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from lincls.data import Dataset
from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.games._play import Game
from lincls.learners._kinds import takes_multiclass
from lincls.orders import fit_in_order
from lincls.registry import LEARNERS
from lincls.search.instance import Found, Target, dataset_of, to_csv
from lincls.search.multiclass import check_searchable, dataset_with
from lincls.search.targets import PLANS, search

METHODS = ("adaptive", "boolean")
INSTANCE_FILE = "dataset/instance.csv"
SEARCH_FILE = "dataset/search.json"
CERTIFICATE_FILE = "dataset/certificate.json"  # u and b, for ``dataset.certificate``
COLUMNS = 16  # the width the learner's input checks are asked about before the search


@dataclass(frozen=True)
class SearchGame(Game):
    """The settings of a search run (``dataset=search``)."""

    bound: str
    method: str
    seed: int
    name: str = "search"
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def columns(self) -> int:
        """A width the learner is checked with (the instance's own is the search's choice)."""
        return COLUMNS

    def check(self, learner, passes: int) -> None:
        """Refuse a learner the search cannot play, or one whose rule the bound is not about."""
        if not takes_multiclass(learner):
            super().check(learner, passes)
        try:
            check_searchable(learner)
        except LinclsInputError as exc:
            field = exc.field if exc.field == "learner" else f"learner.{exc.field}"
            raise LinclsInputError(field, exc.problem) from None
        plan = PLANS[self.bound]
        name = next((k for k, cls in LEARNERS.items() if type(learner) is cls), "?")
        if name != plan.learner:
            raise LinclsInputError(
                "dataset.bound", f"{self.bound} is a bound of learner={plan.learner}, "
                f"not of learner={name}")  # fmt: skip

    def play(self, learner, passes: int) -> tuple[Dataset, np.ndarray]:
        """Search, then fit ``learner`` on the instance found for ``passes`` passes."""
        check_searchable(learner)
        plan = PLANS[self.bound]
        target = Target(clone(learner), self.bound, int(passes), (), plan.max_radius)
        # every round, no time limit: a run's data must not depend on the machine's load
        found = search(target, None, self.seed, self.method)
        if np.unique(found.y).shape[0] < 2:
            raise LinclsInputError(
                "dataset.bound", f"the search found no instance of two classes against "
                f"{self.bound} for this learner")  # fmt: skip
        if found.U is not None:
            dataset = dataset_with(found.X, found.y, found.U)
        else:
            dataset = dataset_of(found.X, found.y, found.u, found.b)
        dataset.params["artifacts"] = artifacts(found, learner)
        shown = fit_in_order(learner, dataset.X, dataset.y, "fixed", 0, self.seed)
        return dataset, shown


def make_search_game(
    bound: str = "novikoff", method: str = "adaptive", seed: int = 0
) -> SearchGame:
    """The search's settings, checked: a bound the frontier searches (``PLANS``), a method that
    searches it (``boolean`` for Winnow's bounds only, and only it for them)."""
    check_choice("bound", bound, sorted(PLANS))
    check_choice("method", method, METHODS)
    boolean = PLANS[bound].adversary == "boolean"
    if boolean != (method == "boolean"):
        wanted = "boolean" if boolean else "adaptive"
        raise LinclsInputError("method", f"{bound} is searched by {wanted}, got {method!r}")
    check_number("seed", seed, low=0, integer=True)
    params = dict(bound=bound, method=method, seed=seed)
    return SearchGame(bound, method, int(seed), params=params)


def artifacts(found: Found, learner) -> dict[str, str]:
    """The instance's files, by artifact name: the CSV and what the search says of it."""
    target = found.target
    settings = {k: v for k, v in learner.get_params().items() if k not in ("max_passes",)}
    record: dict[str, Any] = {
        "bound": target.bound,
        "method": found.method,
        "seconds": round(found.seconds, 3),
        "evaluations": found.evaluations,
        "mistakes": found.scored.mistakes,
        "bound_value": found.scored.bound,
        "ratio": found.ratio,
        "passes": target.passes,
        "learner": {k: v for k, v in settings.items() if _plain(v)},
    }
    files = {INSTANCE_FILE: to_csv(found.X, found.y)}
    replay = ["dataset=csv", f"dataset.path={INSTANCE_FILE.rpartition('/')[2]}",
              "dataset.test_fraction=0", f"passes={target.passes}", "order=fixed"]  # fmt: skip
    if found.u is not None or found.U is not None:
        record_of = (certificate_record(found.u, found.b) if found.U is None
                     else multiclass_certificate_record(found.U))  # fmt: skip
        files[CERTIFICATE_FILE] = json.dumps(record_of)
        replay.append(f"dataset.certificate={CERTIFICATE_FILE.rpartition('/')[2]}")
    record["replay"] = replay  # beside the run's learner.* options, in the downloaded folder
    files[SEARCH_FILE] = json.dumps(record, indent=1, default=float)
    return files


def certificate_record(u: np.ndarray, b: float) -> dict[str, Any]:
    """(u, b) as JSON numbers (shortest reprs: they read back to the same doubles)."""
    return {"u": [float(v) for v in np.asarray(u, dtype=np.float64)], "b": float(b)}


def multiclass_certificate_record(U: np.ndarray) -> dict[str, Any]:
    """A multiclass certificate U (a row per class) as JSON numbers, as ``dataset=csv`` reads
    it back (``dataset.certificate``)."""
    return {"U": [[float(v) for v in row] for row in np.asarray(U, dtype=np.float64)]}


def _plain(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)
