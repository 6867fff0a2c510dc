"""Every logged bound holds under every learner option that changes the update: 0 violations.

The other property tests draw data; this one draws the learners' options too (bias rules,
intercept decays, learning rates and their schedules, margins, aggressiveness, norms, kernels,
caps), the order and the passes, and runs each config through the runner's own measurement
(``lincls.evaluation.measure``), so the bounds checked are the ones a run logs, on the rule it
ran. A bound that covered a rule it was not proved for (``novikoff_2r`` at a decayed bias step
was one) is a violation here. Half the configs scale their data by 10^U(−9, 9) (a disjunction's
boolean rows too): a step that cancels at a small or large ‖x‖ (CW's root rounded α to 0 below
‖x‖ ≈ 10⁻⁷) leaves the rule a bound is about, and a bound computed with a determinant of
I + G/a read 0 for rows of norm 10⁻⁹. Learners registered through ``lincls.plugins`` (an installed
package's entry points) are drawn too, with their bounds: a wrong plugin bound is a violation here.
"""

from __future__ import annotations

import numpy as np
import pytest

from lincls import plugins
from lincls.bounds import holds
from lincls.data import Dataset
from lincls.evaluation import fit_and_evaluate, measure, plan_of, prepare

INSTANCES = 3_200
SEEDS = 4  # the instances are drawn in this many independent blocks (one test each)


def plugin_learners() -> dict:
    """The learners registered through ``lincls.plugins`` (entry points loaded): drawn too, each
    option from the values its registration lists, on the binary data below."""
    plugins.load_plugins()
    return dict(sorted(plugins.LEARNERS.items()))


def _plugin_options(rng: np.random.Generator, entry) -> dict:
    drawn = {key: values[int(rng.integers(len(values)))] for key, values in entry.options.items()}
    return {"name": entry.name, **drawn}


def _options(rng: np.random.Generator) -> dict:
    """A learner with options drawn from every range that changes its update rule."""
    choice = rng.choice
    registered = plugin_learners()
    decay = float(choice([1.0, 1.0, 0.01, 0.0001, 3.0]))
    lr = float(choice([0.1, 1.0, 7.0]))
    step = {"lr": lr, "intercept_decay": decay, "bias": str(choice(["feature", "r2", "none"]))}
    name = str(
        choice(
            [
                "perceptron",
                "perceptron",
                "averaged_perceptron",
                "voted_perceptron",
                "learning_rate_perceptron",
                "margin_perceptron",
                "passive_aggressive",
                "alma",
                "kernel_perceptron",
                "winnow",
                "balanced_winnow",
                "multiclass_perceptron",
                "mira",
                "romma",
                "second_order_perceptron",
                "arow",
                "confidence_weighted",
                "projectron",
                *registered,  # none: the draws are those without plugins
            ]
        )
    )
    if name in registered:
        return _plugin_options(rng, registered[name])
    if name in ("perceptron", "averaged_perceptron", "voted_perceptron"):
        return {"name": name, **step}
    if name == "learning_rate_perceptron":
        schedule = str(choice(["constant", "constant", "inverse", "inverse_sqrt", "pass_decay"]))
        return {"name": name, **step, "schedule": schedule, "decay": float(choice([0.5, 0.9]))}
    if name == "margin_perceptron":
        return {"name": name, **step, "tau": float(choice([0.0, 0.1, 1.0, 5.0]))}
    if name == "passive_aggressive":
        return {
            "name": name,
            "variant": str(choice(["pa", "pa1", "pa2"])),
            "C": float(choice([0.01, 0.3, 1.0, 10.0])),
            "bias": str(choice(["feature", "none", "sklearn"])),
            "intercept_decay": decay,
        }
    if name == "alma":
        return {
            "name": name,
            "p": float(choice([2.0, 2.0, 3.0, 6.0])),
            "alpha": float(choice([0.3, 0.9, 1.0])),
            "B": None if rng.random() < 0.6 else float(choice([0.5, 2.0])),
            "C": float(choice([2**0.5, 0.5, 3.0])),
            "normalize": bool(rng.random() < 0.7),
            "bias": str(choice(["none", "feature"])),
        }
    if name == "kernel_perceptron":
        return {
            "name": name,
            "kernel": str(choice(["linear", "poly", "rbf"])),
            "degree": int(choice([1, 2, 3])),
            "gamma": float(choice([0.1, 1.0, 5.0])),
            "bias": str(choice(["feature", "r2", "none"])),
        }
    if name == "winnow":
        return {
            "name": name,
            "alpha": float(choice([1.5, 2.0, 4.0])),
            "threshold": None if rng.random() < 0.6 else float(choice([1.0, 5.0, 50.0])),
            "variant": str(choice(["winnow1", "winnow2"])),
        }
    if name == "balanced_winnow":
        return {
            "name": name,
            "alpha": float(choice([1.5, 2.0, 4.0])),
            "threshold": float(choice([0.0, 0.5, 2.0])),
        }
    second = {"bias": str(choice(["feature", "none"])), "diagonal": bool(rng.random() < 0.3)}
    if name == "romma":
        return {"name": name, "aggressive": bool(rng.random() < 0.5), "bias": second["bias"]}
    if name == "second_order_perceptron":
        return {"name": name, "a": float(choice([0.1, 1.0, 10.0])), **second}
    if name == "arow":
        return {"name": name, "r": float(choice([0.1, 1.0, 10.0])), **second}
    if name == "confidence_weighted":
        return {
            "name": name,
            "variant": str(choice(["cw", "scw1", "scw2"])),
            "eta": float(choice([0.6, 0.9, 0.99])),
            "C": float(choice([0.1, 1.0])),
            **second,
        }
    if name == "projectron":
        plus = bool(rng.random() < 0.5)
        return {
            "name": name,
            "plus": plus,
            "eta": float(choice([1e-4, 0.01, 0.1, 1.0] + ([] if plus else [0.0]))),
            "kernel": str(choice(["linear", "linear", "poly", "rbf"])),
            "bias": str(choice(["feature", "r2", "none"])),
            # Projectron++'s margin step: DOGMA's or Theorem 4's (no effect without plus)
            "margin_rule": str(choice(["dogma", "paper"])),
        }
    if name == "multiclass_perceptron":
        return {"name": name, "lr": lr, "bias": str(choice(["feature", "none"]))}
    return {
        "name": name,
        "max_step": float(choice([0.1, 1.0, np.inf])),
        "bias": str(choice(["feature", "none"])),
    }


def _dataset(rng: np.random.Generator, learner: str) -> dict:
    """Data the learner takes: certified separable or noisy (with offsets), boolean, or
    multiclass, small enough that thousands of runs take a minute."""
    n = int(rng.integers(4, 60))
    if learner in plugin_learners() and rng.random() < 0.3:
        # the orthogonal game forces ⌊(R/γ)²⌋ mistakes on any online learner: a plugin's bound
        # below that is caught here, where random data would seldom come near it
        radius = float(rng.choice([0.1, 1.0, 10.0]))
        margin = radius * float(rng.choice([0.1, 0.2, 0.3, 0.5]))
        return {"name": "orthogonal_game", "d": 110, "margin": margin, "radius": radius}
    if learner in ("winnow", "balanced_winnow"):
        return {
            "name": "disjunction",
            "n_features": int(rng.integers(4, 30)),
            "k": int(rng.integers(1, 4)),
            "n": n,
            "n_test": 10,
        }
    if learner in ("multiclass_perceptron", "mira"):
        return {
            "name": "multiclass",
            "n": n,
            "d": int(rng.integers(2, 6)),
            "n_classes": int(rng.integers(2, 5)),
            "margin": float(rng.choice([0.02, 0.1])),
            "radius": float(rng.choice([1.0, 5.0])),
            "n_test": 10,
        }
    radius = float(rng.choice([0.1, 1.0, 10.0]))
    margin = radius * float(rng.choice([0.02, 0.05, 0.1, 0.3]))
    offset = 0.0 if rng.random() < 0.3 else float(rng.uniform(-1, 1)) * (radius - margin)
    data = {
        "n": n,
        "d": int(rng.integers(1, 6)),
        "margin": margin,
        "radius": radius,
        "offset": offset,
        "n_test": 10,
    }
    if rng.random() < 0.3:
        overlap = int(rng.integers(0, 3))
        deficit = 0.0 if overlap == 0 else 0.1 * margin * float(rng.choice([0.5, 1.0]))
        return {
            "name": "noisy",
            **data,
            "flip": float(rng.choice([0.05, 0.2])),
            "deficit": deficit,
            "overlap": overlap,
        }
    return {"name": "separable", **data}


def data_scale(seed: int) -> float:
    """The factor on a config's data: 1 for half the configs, else 10^U(−9, 9); drawn from its own
    generator, so the options and data drawn are the same at every scale."""
    rng = np.random.default_rng([seed, 33])
    return 1.0 if rng.random() < 0.5 else float(10.0 ** rng.uniform(-9, 9))


def _scaled(dataset: dict, scale: float) -> dict:
    """A generator's lengths times ``scale`` (a disjunction's rows are scaled after it draws)."""
    lengths = ("radius", "margin", "offset", "deficit")
    return {k: v * scale if k in lengths else v for k, v in dataset.items()}


def random_config(seed: int, cache_dir: str) -> dict:
    """One config of the property test: learner options, data and its scale, order, passes,
    orderings."""
    rng = np.random.default_rng(seed)
    learner = _options(rng)
    kernel = ("multiclass_perceptron", "mira", "kernel_perceptron", "projectron")
    linear = learner["name"] not in kernel
    orders = ["fixed", "shuffled"] + (["adversarial"] if linear else [])
    scale = data_scale(seed)
    config = {
        "learner": learner,
        "dataset": _scaled({**_dataset(rng, learner["name"]), "seed": seed}, scale),
        "data_scale": scale,
        "passes": int(rng.integers(1, 6)),
        "seed": seed,
        "order": str(rng.choice(orders)),
        "orders": int(rng.choice([1, 1, 2, 3])),
        "certificates": {"svm": bool(rng.random() < 0.7), "cache_dir": cache_dir},
        "tracking": {},
    }
    if config["dataset"]["name"] == "orthogonal_game":  # the game decides the order itself
        config.update(order="fixed", orders=1)
        learner.pop("shuffle", None)
    return config


def outcome_of(config: dict):
    """The runner's measurement of ``config``; a disjunction's rows times its ``data_scale``."""
    run = {k: v for k, v in config.items() if k != "data_scale"}
    scale = config.get("data_scale", 1.0)
    if scale == 1.0 or config["dataset"]["name"] != "disjunction":
        return measure(run)
    learner, data = prepare(run)
    data = Dataset.certified(
        name=data.name, X=data.X * scale, y=data.y, X_test=data.X_test * scale,
        y_test=data.y_test, u=data.u, b=data.b * scale, params={**data.params, "scale": scale},
        relevant=data.relevant,
    )  # fmt: skip
    return fit_and_evaluate(learner, data, plan_of(run))


def violations_of(config: dict) -> list[tuple]:
    """The logged bounds the run broke: the runner's flag, and every ratio above 1."""
    outcome = outcome_of(config)
    metrics, tags = outcome.metrics, outcome.tags
    broke = [
        (key, metrics["mistakes"], metrics[key.replace("bound_ratio.", "bound.")])
        for key, ratio in metrics.items()
        if key.startswith("bound_ratio.") and ratio > 1.0
    ]
    if tags.get("bound_violated") == "true":
        broke.append(("bound_violated", metrics["mistakes"], None))
    # a vacuous bound logs no ratio; it still holds (it is at or above the trivial count). With
    # several orderings its logged value is one ordering's, so only one ordering is checked here.
    vacuous = tags.get("bounds.vacuous", "") if "orders" not in metrics else ""
    for name in filter(None, vacuous.split(", ")):
        if not holds(metrics["mistakes"], metrics[f"bound.{name}"]):
            broke.append((f"vacuous {name}", metrics["mistakes"], metrics[f"bound.{name}"]))
    scale = config.get("data_scale", 1.0)
    return [(config["learner"], config["dataset"], scale, config["order"], *b) for b in broke]


# The reproducer: a decayed bias step under the R² rule broke (2R/γ)² by 4.6×.
FIXED = [
    {
        "learner": {"name": "perceptron", "bias": "r2", "intercept_decay": 0.0001},
        "dataset": {
            "name": "separable",
            "n": 1000,
            "d": 2,
            "margin": 0.1,
            "radius": 1.0,
            "offset": 0.8,
            "n_test": 100,
            "seed": 0,
        },
        "passes": 10,
        "seed": 0,
        "order": "fixed",
        "orders": 1,
    },
    {
        "learner": {"name": "perceptron", "bias": "r2", "intercept_decay": 0.01},
        "dataset": {
            "name": "separable",
            "n": 500,
            "d": 3,
            "margin": 0.05,
            "radius": 1.0,
            "offset": 0.9,
            "n_test": 100,
            "seed": 3,
        },
        "passes": 20,
        "seed": 3,
        "order": "adversarial",
        "orders": 1,
    },
]


@pytest.mark.parametrize("case", range(len(FIXED)))
def test_the_decayed_r2_rule_gets_no_2r_bound_and_breaks_none(case, tmp_path):
    config = {
        **FIXED[case],
        "certificates": {"svm": True, "cache_dir": str(tmp_path)},
        "tracking": {},
    }
    outcome = measure(config)
    assert "bound.novikoff_2r" not in outcome.metrics
    assert "intercept_decay ≠ 1" in outcome.tags["bounds.skipped"]
    assert "bound.novikoff_bias" in outcome.metrics  # the constant feature R√decay covers it
    assert violations_of(config) == []
    if case == 0:
        assert outcome.metrics["mistakes"] == 1817  # the reproducer, against 392.2 for (2R/γ)²


def test_the_undecayed_r2_rule_keeps_its_2r_bound(tmp_path):
    config = {
        **FIXED[0],
        "learner": {"name": "perceptron", "bias": "r2"},
        "certificates": {"svm": True, "cache_dir": str(tmp_path)},
        "tracking": {},
    }
    outcome = measure(config)
    assert outcome.metrics["bound.novikoff_2r"] <= (2 * 1.0 / 0.1) ** 2 * (1 + 1e-9)
    assert outcome.metrics["mistakes"] <= outcome.metrics["bound.novikoff_2r"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # rules without a bound may overflow
@pytest.mark.parametrize("block", range(SEEDS))
def test_no_logged_bound_is_broken_under_any_option(block, tmp_path):
    per_block = INSTANCES // SEEDS
    found: list = []
    valid = scaled = 0
    learners, rescaled = set(), set()
    for k in range(per_block):
        config = random_config(block * per_block + k, str(tmp_path))
        learners.add(config["learner"]["name"])
        try:
            found += violations_of(config)
        except Exception as exc:  # a config the learner refuses is not an instance
            if type(exc).__name__ != "LinclsInputError":
                raise
            continue
        valid += 1
        if config["data_scale"] != 1.0:
            scaled += 1
            rescaled.add(config["learner"]["name"])
    assert found == []
    assert valid >= per_block * 0.95  # the draws are valid configs, not refusals
    assert len(learners) == len(rescaled) == 17 + len(plugin_learners())
    assert scaled >= per_block * 0.4  # half the configs, 10⁻⁹ to 10⁹


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_diverging_rule_without_a_bound_logs_no_hyperplane_and_raises_nothing(tmp_path):
    # PA with scikit-learn's bias step scaled by 3 on the adversarial order: the weights overflow
    config = {
        "learner": {"name": "passive_aggressive", "variant": "pa", "C": 10.0, "bias": "sklearn",
                    "intercept_decay": 3.0},
        "dataset": {"name": "separable", "n": 44, "d": 5, "margin": 0.005, "radius": 0.1,
                    "offset": 0.02854296024065872, "n_test": 10, "seed": 2299},
        "passes": 3, "seed": 2299, "order": "adversarial", "orders": 1,
        "certificates": {"svm": True, "cache_dir": str(tmp_path)}, "tracking": {},
    }  # fmt: skip
    outcome = measure(config)
    assert outcome.tags["hyperplane.note"] == "the weights are not finite: no hyperplane"
    assert not any(k.startswith("hyperplane.") for k in outcome.metrics)
    assert violations_of(config) == []
