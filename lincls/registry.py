"""The one place a learner or a dataset is named: config names → estimators and datasets.

A new learner is a class in ``lincls.learners`` plus one line in ``LEARNERS`` (and its config
schema in ``lincls.config`` with a YAML file in ``conf/learner/``); a new dataset likewise in
``DATASETS``. Another package adds its learners through ``lincls.plugins``: ``learners()`` (which
``build_learner`` calls) loads them once and puts them in ``LEARNERS`` and ``LEARNER_SCHEMAS``.
Building checks every value and raises ``LinclsInputError`` naming the config field
(``learner.lr``, ``dataset.margin``, …), so bad input is refused before anything is written.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

from lincls import plugins
from lincls.config import (
    DATASET_SCHEMAS,
    LEARNER_SCHEMAS,
    studies,  # noqa: F401  (adds the studies' schemas to the tables)
)
from lincls.data import (
    Dataset,
    load_breast_cancer,
    load_csv,
    load_digits,
    load_iris,
    load_playtennis,
    load_svmlight,
    load_wine,
    make_disjunction,
    make_far_points,
    make_multiclass,
    make_noisy,
    make_orthonormal,
    make_plane,
    make_separable,
)
from lincls.data.mnist import load_mnist_5k
from lincls.data.phishing import load_phishing
from lincls.errors import LinclsInputError, available_memory, byte_size
from lincls.games import (
    make_disjunction_game,
    make_multiclass_orthogonal_game,
    make_orthogonal_game,
    make_perceptron_game,
)
from lincls.learners import (
    ALMA,
    MIRA,
    Adaline,
    AveragedPerceptron,
    BalancedWinnow,
    BatchPerceptron,
    KernelPerceptron,
    LearningRatePerceptron,
    LeastSquaresClassifier,
    MarginPerceptron,
    MaxEnt,
    MulticlassPerceptron,
    NaiveBayesLinear,
    PassiveAggressive,
    Perceptron,
    VotedPerceptron,
    Winnow,
)
from lincls.learners.arow import AROW
from lincls.learners.budget_perceptron import BudgetPerceptron
from lincls.learners.confidence_weighted import ConfidenceWeighted
from lincls.learners.forgetron import Forgetron
from lincls.learners.kernel_voted import KernelVotedPerceptron
from lincls.learners.projectron import Projectron
from lincls.learners.romma import ROMMA
from lincls.learners.second_order import SecondOrderPerceptron
from lincls.learners.svm import MaxMarginSVC

LEARNERS: dict[str, type] = {
    "perceptron": Perceptron,
    "averaged_perceptron": AveragedPerceptron,
    "voted_perceptron": VotedPerceptron,
    "margin_perceptron": MarginPerceptron,
    "learning_rate_perceptron": LearningRatePerceptron,
    "passive_aggressive": PassiveAggressive,
    "kernel_perceptron": KernelPerceptron,
    "winnow": Winnow,
    "balanced_winnow": BalancedWinnow,
    "multiclass_perceptron": MulticlassPerceptron,
    "mira": MIRA,
    "alma": ALMA,
    "naive_bayes_linear": NaiveBayesLinear,
    "maxent": MaxEnt,
    "least_squares": LeastSquaresClassifier,
    "adaline": Adaline,
    "batch_perceptron": BatchPerceptron,
    "romma": ROMMA,
    "second_order_perceptron": SecondOrderPerceptron,
    "arow": AROW,
    "confidence_weighted": ConfidenceWeighted,
    "budget_perceptron": BudgetPerceptron,
    "projectron": Projectron,
    "forgetron": Forgetron,
    "kernel_voted_perceptron": KernelVotedPerceptron,
    "svm": MaxMarginSVC,
}

DATASETS: dict[str, Callable[..., Any]] = {
    "separable": make_separable,
    "orthonormal": make_orthonormal,
    "disjunction": make_disjunction,
    "csv": load_csv,
    "playtennis": load_playtennis,
    "multiclass": make_multiclass,
    "noisy": make_noisy,
    "plane": make_plane,
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
    "iris": load_iris,
    "wine": load_wine,
    "svmlight": load_svmlight,
    "far_points": make_far_points,
    "perceptron_game": make_perceptron_game,
    "orthogonal_game": make_orthogonal_game,
    "multiclass_orthogonal_game": make_multiclass_orthogonal_game,
    "disjunction_game": make_disjunction_game,
    "phishing": load_phishing,
    "mnist_5k": load_mnist_5k,
}


# The learners ``learners()`` took from lincls.plugins, so one unregistered since leaves too.
_FROM_PLUGINS: dict[str, type] = {}


def learners() -> dict[str, type]:
    """Every learner by config name: the built-in ones and those registered through
    ``lincls.plugins`` (whose entry points this loads, once)."""
    plugins.load_plugins()
    for name in [n for n in _FROM_PLUGINS if n not in plugins.LEARNERS]:
        LEARNERS.pop(name, None)
        LEARNER_SCHEMAS.pop(name, None)
        del _FROM_PLUGINS[name]
    for name, entry in plugins.LEARNERS.items():
        if name in LEARNERS and name not in _FROM_PLUGINS:
            continue  # a built-in learner's name (register_learner refuses it)
        LEARNERS[name] = _FROM_PLUGINS[name] = entry.estimator
        LEARNER_SCHEMAS[name] = entry.schema
    return LEARNERS


def prefixed(group: str, build: Callable[[], Any], learner=None) -> Any:
    """Run ``build``; re-raise a bad-input error with its field under ``group.``.

    While fitting ``learner``, an error about one of its parameters (e.g. ``max_vectors``
    exceeded) goes under ``learner.`` instead.
    """
    try:
        return build()
    except LinclsInputError as exc:
        owner = group
        if learner is not None and exc.field.split(".")[0] in learner.get_params(deep=False):
            owner = "learner"
        raise LinclsInputError(f"{owner}.{exc.field}", exc.problem) from None
    except TypeError as exc:  # a keyword the learner or generator does not take
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LinclsInputError(group, message.split("() ", 1)[-1]) from None


def _options(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k != "name"}


def check_keys(group: str, name: str, options: Mapping[str, Any], schema: type | None) -> None:
    """Refuse a key the ``group`` option ``name`` does not have (``+learner.foo=1`` adds one to
    the config Hydra composes); the message lists the keys it has, from its schema."""
    if schema is None:
        return
    known = [f.name for f in dataclasses.fields(schema) if f.name != "name"]
    for key in options:
        if key not in known:
            raise LinclsInputError(
                f"{group}.{key}",
                f"is not an option of {group} {name!r}; its options: {', '.join(sorted(known))}",
            )


@functools.cache
def parameter_names(cls: type) -> frozenset[str]:
    """The parameters of an estimator class (``get_params``'s keys), read from its signature
    once: scikit-learn reads it on every call, ~0.3 ms of a run's ~0.5 ms check."""
    return frozenset(cls._get_param_names())


def build_learner(learner_cfg: Mapping[str, Any], passes: int, seed: int):
    """The estimator a learner config names, with its parameters checked."""
    name = learner_cfg.get("name")
    known = learners()
    if name not in known:
        raise LinclsInputError("learner.name", f"must be one of {sorted(known)}, got {name!r}")
    cls = known[name]
    check_keys("learner", name, _options(learner_cfg), LEARNER_SCHEMAS.get(name))

    def build():
        learner = cls(**_options(learner_cfg))
        known = parameter_names(cls)
        for key, value in (("max_passes", passes), ("random_state", seed)):
            if key in known:  # what set_params does with a parameter of the estimator's own
                setattr(learner, key, value)
        if hasattr(learner, "_check_params"):
            learner._check_params()
        return learner

    return prefixed("learner", build)


def build_dataset(dataset_cfg: Mapping[str, Any]) -> Dataset:
    """The dataset a dataset config names (generated, or read from a file)."""
    name = dataset_cfg.get("name")
    if name not in DATASETS:
        raise LinclsInputError("dataset.name", f"must be one of {sorted(DATASETS)}, got {name!r}")
    options = _options(dataset_cfg)
    check_keys("dataset", name, options, DATASET_SCHEMAS.get(name))
    for key, value in options.items():
        if value == "???":  # Hydra's mark of a value the config leaves to the command line
            raise LinclsInputError(f"dataset.{key}", f"is required: give dataset.{key}=…")
    check_memory(options)
    return prefixed("dataset", lambda: DATASETS[name](**options))


# A generator holds a few arrays of the data's size at once (the draw, its scaling, the result).
ARRAYS_AT_ONCE = 3


def check_memory(options: Mapping[str, Any]) -> None:
    """Refuse, before allocating, a generated dataset (``n`` rows, ``d`` or ``n_features``
    columns, ``n_test`` more rows) whose float64 arrays would not fit in the memory there is."""
    rows, columns = options.get("n"), options.get("d", options.get("n_features"))
    numbers = (rows, columns, options.get("n_test") or 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in numbers[:2]):
        return  # not a generated table, or a value the generator's own checks refuse
    if not isinstance(numbers[2], int) or numbers[2] < 0:
        return
    need = (rows + numbers[2]) * columns * 8 * ARRAYS_AT_ONCE
    have = available_memory()
    if need > have:
        width = "d" if "d" in options else "n_features"
        raise LinclsInputError(
            f"dataset.n × dataset.{width}",
            f"{rows + numbers[2]} rows × {columns} columns of float64 need about {byte_size(need)} "
            f"while generating; this machine has {byte_size(have)} available",
        )
