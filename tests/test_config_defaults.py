"""Every option of conf/ runs with its own defaults: a learner's YAML values become the estimator's
parameters, a dataset's YAML values give data of the stated shape, and each run keeps its bounds."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import yaml
from conftest import CONF, compose_config

from lincls import evaluation
from lincls.games import Game

# the dataset each learner is run on (binary learners: the default, separable)
PARTNER = {
    "winnow": "disjunction",
    "balanced_winnow": "disjunction",
    "multiclass_perceptron": "multiclass",
    "mira": "multiclass",
    "naive_bayes_linear": "disjunction",
    "maxent": "multiclass",
}
# learners that no theorem covers with their defaults: their runs say why in bounds.none
NO_BOUND = {
    "balanced_winnow",
    "least_squares",
    "adaline",
    "batch_perceptron",
    "confidence_weighted",
    "budget_perceptron",  # its theorem bounds expected mistakes
    "forgetron",  # its theorem is for the linear kernel without a bias; the default has one
}
# learners whose one bound is vacuous with their defaults: logged, never a run's tightest
VACUOUS = {"projectron": "projectron"}  # √η = 0.32 exceeds the default margin 0.1
SMALL = {
    "separable": ["dataset.n=200", "dataset.n_test=50"],
    "disjunction": ["dataset.n=200", "dataset.n_test=50"],
    "multiclass": ["dataset.n=200", "dataset.n_test=50"],
}


def yaml_values(group: str, option: str) -> dict:
    values = yaml.safe_load((CONF / group / f"{option}.yaml").read_text())
    return {k: v for k, v in values.items() if k != "defaults"}


@pytest.mark.parametrize("option", sorted(path.stem for path in (CONF / "learner").glob("*.yaml")))
def test_every_learner_option_runs_with_its_defaults(option):
    dataset = PARTNER.get(option, "separable")
    config = compose_config(
        [f"learner={option}", f"dataset={dataset}", *SMALL[dataset], "certificates.svm=false"]
    )
    outcome = evaluation.measure(config)
    params = outcome.learner.get_params()
    for key, value in yaml_values("learner", option).items():
        assert params[key] == value, (key, params[key], value)
    m, tags = outcome.metrics, outcome.tags
    if not hasattr(outcome.learner, "mistakes_"):  # one solve: no online record, no bound
        assert "max_passes" not in params and "mistakes" not in m and "bound.tightest" not in m
        assert tags["bounds.none"]
        assert 0.5 < m["train_accuracy"] <= 1 and 0.5 < m["test_accuracy"] <= 1
        return
    assert params["max_passes"] == config["passes"] == 10
    assert params["random_state"] == config["seed"] == 0
    assert 1 <= m["passes_run"] <= 10 and m["mistakes"] >= 1
    assert tags["bound_violated"] == "false"
    if option in NO_BOUND:
        assert "bound.tightest" not in m and tags["bounds.none"]
    elif option in VACUOUS:
        name = VACUOUS[option]
        assert tags["bounds.vacuous"] == name and m["mistakes"] <= m[f"bound.{name}"]
    else:  # an a posteriori bound alone (the second-order perceptron's) is tightest of its own
        tightest = "bound.tightest" if "bound.tightest" in m else "bound.tightest_a_posteriori"
        assert m["mistakes"] <= m[tightest], tags[tightest]


def _files(tmp_path) -> dict[str, list[str]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1, 0)
    csv = tmp_path / "d.csv"
    csv.write_text(
        "a,b,c,label\n" + "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, y, strict=True))
    )
    svm = tmp_path / "d.svm"
    svm.write_text(
        "".join(f"{2 * t - 1} 1:{a} 2:{b} 3:{c}\n" for (a, b, c), t in zip(X, y, strict=True))
    )
    return {"csv": [f"dataset.path={csv}"], "svmlight": [f"dataset.path={svm}"]}


# (training rows, features) of each dataset option with its YAML defaults
SHAPES = {
    "separable": (1000, 20),
    "noisy": (1000, 20),
    "orthonormal": (50, 50),
    "plane": (200, 2),
    "disjunction": (1000, 100),
    "multiclass": (1000, 20),
    "breast_cancer": (427, 30),  # 569 rows, a quarter held out
    "digits": (270, 64),  # the 360 zeros and ones
    "iris": (75, 4),  # classes 0 and 1: 100 rows
    "wine": (98, 13),  # classes 0 and 1: 130 rows
    "csv": (30, 3),  # the 40-row file below
    "playtennis": (17, 4),  # the seed's 3 days and 14 of ours: Outlook one-hot, Temp
    "svmlight": (30, 3),
    "far_points": (100, 2),
    "perceptron_game": (50, 2),  # the plane's game at γ/R = 0.1: (1 − γ²)/(2γ²) + 1 mistakes
    "orthogonal_game": (100, 100),  # ⌊(R/γ)²⌋ = 100 fresh coordinates, every one a mistake
    "multiclass_orthogonal_game": (150, 150),  # ⌊(R/γ)²·K/(K−1)⌋ = 150 at K = 3
    "disjunction_game": (8, 64),  # 6 rounds of Littlestone's search, then 2 more mistakes
    "mnist_5k": (4286, 784),  # 5,000 digits, MNIST's test share (1/7) held out
    "phishing": (938, 9),  # river's 1,250 pages, a quarter held out
    "search": (20, 20),  # the adaptive search's 20 rounds in 20 dimensions, every round run
}


@pytest.mark.parametrize("option", sorted(path.stem for path in (CONF / "dataset").glob("*.yaml")))
def test_every_dataset_option_builds_with_its_defaults(option, tmp_path):
    import lincls.search  # noqa: F401  (registers dataset=search, as every entry point does)

    multiclass = option in ("multiclass", "mnist_5k", "multiclass_orthogonal_game")
    learner = "multiclass_perceptron" if multiclass else "perceptron"
    overrides = [f"dataset={option}", f"learner={learner}", "certificates.svm=false"]
    config = compose_config([*overrides, *_files(tmp_path).get(option, [])])
    learner_obj, dataset = evaluation.prepare(config)
    if isinstance(dataset, Game):  # its data exist once it is played
        outcome = evaluation.fit_and_evaluate(learner_obj, dataset)
        dataset = outcome.dataset
    assert dataset.X.shape == SHAPES[option]
    assert dataset.X_test.shape[1] == SHAPES[option][1]
    outcome = evaluation.fit_and_evaluate(learner_obj, dataset)
    assert outcome.tags["dataset.fingerprint"] == dataset.fingerprint
    assert outcome.tags["bound_violated"] == "false"
    X = dataset.X.toarray() if sp.issparse(dataset.X) else dataset.X
    assert outcome.metrics["radius"] == pytest.approx(np.linalg.norm(X, axis=1).max(), rel=1e-12)


@pytest.mark.parametrize("option", sorted(path.stem for path in (CONF / "learner").glob("*.yaml")))
def test_a_runs_accuracies_are_scikit_learns_score(option):
    """The accuracies a run logs (``measures.accuracy``, without scikit-learn's input checks)
    are ``learner.score`` to the bit, on the training and the test data."""
    from lincls.evaluation.measures import accuracy

    dataset = PARTNER.get(option, "separable")
    config = compose_config(
        [f"learner={option}", f"dataset={dataset}", *SMALL[dataset], "certificates.svm=false"]
    )
    outcome = evaluation.measure(config)
    learner, data = outcome.learner, outcome.dataset
    for X, y in ((data.X, data.y), (data.X_test, data.y_test)):
        assert accuracy(learner, X, y) == learner.score(X, y)
    assert outcome.metrics["train_accuracy"] == learner.score(data.X, data.y)
    assert outcome.metrics["test_accuracy"] == learner.score(data.X_test, data.y_test)
