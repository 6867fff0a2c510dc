"""``lincls.run`` in a loop: one Hydra composition per choice of config groups, and every call
the config, config hash, numbers and error a fresh composition gives (``lincls.config.composer``).

The reference composes each call anew, as ``lincls.run`` did before it kept compositions: the
configs registered, the lines parsed and checked, Hydra's ``compose`` in a context of its own.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from hydra import compose, initialize_config_module
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from omegaconf import OmegaConf

import lincls
from lincls import bounds, plugins, registry
from lincls.api import compose as api_compose
from lincls.api.result import TIGHTEST, bounds_frame
from lincls.config import register_configs
from lincls.config.checks import check_booleans, parse_overrides
from lincls.config.composition import check_group_choices, input_error
from lincls.config.run import RunConfig
from lincls.errors import LinclsInputError
from lincls.evaluation import measure, prepare
from lincls.orders import canonical_orders
from lincls.tracking.tags import config_hash

EXAMPLE = ROOT / "examples" / "lincls-example"


def fresh_config(lines: list[str]) -> dict:
    """The run config of override ``lines``, composed anew (bad input: its LinclsInputError)."""
    register_configs()
    try:
        parsed = parse_overrides(lines)
        check_group_choices(parsed, "experiment", api_compose.experiments())
        with initialize_config_module(config_module="lincls.conf", version_base="1.3"):
            cfg = compose(config_name="config", overrides=lines)
        check_booleans(cfg, parsed)
    except LinclsInputError:
        raise
    except Exception as exc:
        error = input_error(exc)
        if error is None:
            raise
        raise error from None
    return canonical_orders(OmegaConf.to_container(cfg, resolve=True))


@pytest.fixture
def new_composer(monkeypatch, tmp_path):
    """This process's composer made anew (no composition kept), nothing written to the cwd."""
    monkeypatch.setattr(api_compose, "_COMPOSER", [], raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


@pytest.fixture
def hydra_compositions(monkeypatch):
    """The override lines Hydra composes configs of, one entry a composition, in order."""
    made: list[list[str]] = []
    load = ConfigLoaderImpl.load_configuration

    def spy(self, config_name, overrides, *args, **kwargs):
        made.append(list(overrides))
        return load(self, config_name, overrides, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", spy)
    return made


def same_metrics(ours: dict, theirs: dict) -> bool:
    """Equal metrics, a NaN equal to a NaN; the fit's wall time aside."""
    return ours.keys() == theirs.keys() and all(
        ours[k] == theirs[k] or (math.isnan(ours[k]) and math.isnan(theirs[k]))
        for k in ours
        if k != "fit_seconds"
    )


SMALL = {"n": 60, "n_test": 20}
# Calls that switch config groups back and forth, with bad input between good calls:
# (arguments of lincls.run, the field a bad one is refused for or None).
CALLS = [
    ({"dataset": SMALL, "seed": 1}, None),
    ({"learner": "winnow", "dataset": "disjunction"}, None),
    ({"dataset": SMALL, "seed": 2}, None),
    ({"learner": {"foo": 1}, "dataset": SMALL}, "learner.foo"),
    ({"learner": {"name": "passive_aggressive", "C": 0.5}, "dataset": {**SMALL, "margin": 0.2}},
     None),
    ({"dataset": {"n": "abc"}}, "dataset.n"),
    ({"learner": "winnow", "dataset": "disjunction", "passes": 3}, None),
    ({"certificates": {"svm": 2}, "dataset": SMALL}, "certificates.svm"),
    ({"dataset": SMALL, "seed": 1, "order": "shuffled", "orders": {"permutations": 2}}, None),
    ({"dataset": SMALL, "overrides": ["dataset.n=2.5"]}, "dataset.n"),
    ({"dataset": SMALL, "experiment": "margin_sweep", "seed": 3}, None),
    ({"dataset": SMALL, "overrides": ["seed=1,2"]}, "seed"),
    ({"dataset": SMALL, "overrides": ["learner=margin_perceptron", "learner.tau=0.5"]}, None),
    ({"dataset": SMALL, "overrides": ["+foo=1"]}, None),
    # adds and deletes, in Hydra's order among the values
    ({"dataset": SMALL, "overrides": ["~study"]}, "overrides"),
    ({"dataset": SMALL, "overrides": ["passes=3", "~passes"]}, "passes"),
    ({"dataset": SMALL, "overrides": ["++passes=4"]}, None),
    ({"dataset": SMALL, "overrides": ["~passes", "passes=3"]}, "passes"),
    ({"dataset": SMALL, "overrides": ["+foo=1", "foo=2"]}, None),
    ({"dataset": SMALL, "overrides": ["foo=2", "+foo=1"]}, "foo"),
    ({"dataset": SMALL, "overrides": ["learner={lr: 0.5}", "seed=4"]}, None),
    ({"dataset": SMALL, "overrides": ["hydra.job.name=x", "seed=5"]}, None),
    ({"learner": "nosuch"}, "learner"),
    ({"dataset": SMALL, "seed": 1}, None),
    ({"learner": "winnow", "dataset": "disjunction"}, None),
]  # fmt: skip


def test_a_loop_of_runs_gives_what_fresh_compositions_give(new_composer):
    configs = {}
    for arguments, bad in CALLS:
        keywords = {k: v for k, v in arguments.items() if k not in ("learner", "dataset",
                                                                    "overrides")}  # fmt: skip
        lines = api_compose.run_overrides(arguments.get("learner", "perceptron"),
                                          arguments.get("dataset", "separable"), keywords,
                                          arguments.get("overrides", ()))  # fmt: skip
        if bad is not None:
            with pytest.raises(LinclsInputError) as theirs:  # refused composed, or checked
                prepare(RunConfig.from_container(fresh_config(lines)))
            with pytest.raises(LinclsInputError) as ours:
                lincls.run(**arguments)
            assert ours.value.field == theirs.value.field == bad, arguments
            assert str(ours.value) == str(theirs.value), arguments
            continue
        result = lincls.run(**arguments)
        config = fresh_config(lines)
        assert result.config == config, arguments
        assert RunConfig.from_container(result.config) == RunConfig.from_container(config)
        assert config_hash(result.config) == config_hash(config), arguments
        config["certificates"]["cache_dir"] = None  # as lincls.run measures without a store
        assert same_metrics(result.metrics, measure(config).metrics), arguments
        configs[" ".join(lines)] = result.config
    # the values went where they were given, whichever way they were composed
    small = "learner=perceptron dataset.n=60 dataset.n_test=20"
    assert configs["dataset.n=60 dataset.n_test=20 learner={lr: 0.5} seed=4"]["learner"] == {
        "name": "perceptron", "stop_when_converged": True, "shuffle": False, "bias": "feature",
        "intercept_decay": 1.0, "lr": 0.5,
    }  # fmt: skip
    assert configs[f"{small} +foo=1 foo=2"]["foo"] == 2
    assert configs[f"{small} ++passes=4"]["passes"] == 4
    assert configs[f"{small} experiment=margin_sweep seed=3"]["passes"] == 20  # the study's
    assert configs[f"{small} hydra.job.name=x seed=5"]["dataset"]["seed"] == 5
    assert configs["learner=winnow dataset=disjunction passes=3"]["learner"]["name"] == "winnow"


def test_each_choice_of_config_groups_is_composed_once(new_composer, hydra_compositions):
    seen = []
    for seed in (1, 2, 3):
        seen.append(lincls.run(dataset=SMALL, seed=seed).config["seed"])
    for passes in (2, 3):
        seen.append(lincls.run("winnow", "disjunction", passes=passes).config["passes"])
    seen.append(lincls.run(dataset={**SMALL, "margin": 0.2}, seed=4).config["dataset"]["margin"])
    with pytest.raises(LinclsInputError, match=r"^dataset\.n: must be an integer, got 'abc'$"):
        lincls.run(dataset={"n": "abc"})
    seen.append(lincls.run(dataset=SMALL, seed=5).config["dataset"]["seed"])
    assert seen == [1, 2, 3, 2, 3, 0.2, 5]
    # the perceptron's choice (no dataset line: the default's), the winnow's, then the bad
    # value composed whole, for Hydra's error
    assert hydra_compositions == [
        ["learner=perceptron"],
        ["learner=winnow", "dataset=disjunction"],
        ["learner=perceptron", "dataset.n='abc'"],
    ]
    assert api_compose.composer().compositions == 3


def test_a_learner_registered_or_unregistered_since_is_composed_anew(new_composer):
    sys.path.insert(0, str(EXAMPLE))
    try:
        from lincls_example import NormalizedPerceptron, NormalizedPerceptronConfig

        name = "normalized_perceptron"
        lincls.run(dataset=SMALL)  # a composition kept before the store changes
        plugins.register_learner(name, NormalizedPerceptron, NormalizedPerceptronConfig)
        assert lincls.run(name, SMALL).config["learner"]["lr"] == 1.0
        plugins.register_learner(
            name, NormalizedPerceptron, NormalizedPerceptronConfig, defaults={"lr": 0.25}
        )
        assert lincls.run(name, SMALL).config["learner"]["lr"] == 0.25
        assert fresh_config([f"learner={name}", "dataset.n=60"])["learner"]["lr"] == 0.25
        plugins.unregister(name)
        with pytest.raises(LinclsInputError) as raised:
            lincls.run(name, SMALL)
        assert raised.value.field == "learner" and f"got '{name}'" in raised.value.problem
    finally:
        plugins.unregister("normalized_perceptron")
        registry.learners()
        bounds.plugin_bounds()
        sys.path.remove(str(EXAMPLE))


def reference_bounds_frame(metrics: dict, tags: dict) -> pd.DataFrame:
    """The bounds frame built from rows, then sorted and indexed by pandas."""
    vacuous = {n for n in tags.get("bounds.vacuous", "").split(", ") if n}
    rows = [
        {"bound": name, "value": float(value),
         "ratio": float(metrics.get(f"bound_ratio.{name}", math.nan)),
         "family": bounds.family_of(name), "vacuous": name in vacuous,
         "certificate": tags.get(f"bound.{name}.certificate")}
        for key, value in metrics.items()
        if key.startswith("bound.") and (name := key[len("bound."):]) not in TIGHTEST
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["bound", "value", "ratio", "family", "vacuous",
                                        "certificate"])  # fmt: skip
    frame = frame.assign(_later=frame["family"] != "a_priori")
    frame = frame.sort_values(["_later", "vacuous", "value"], kind="stable")
    return frame.drop(columns="_later").set_index("bound")


def test_the_bounds_frame_is_the_one_pandas_sorts():
    rng = np.random.default_rng(7)
    names = [s.name for s in bounds.REGISTRY]
    families = {bounds.family_of(n) for n in names}
    assert families == {"a_priori", "a_posteriori"}
    for trial in range(200):
        chosen = list(rng.choice(names, size=int(rng.integers(0, 9)), replace=False))
        values = rng.choice([1.0, 2.0, 2.0, math.inf, math.nan, 0.0, 5.5], size=len(chosen))
        metrics = {"mistakes": 3.0, "bound.tightest": 1.0}
        tags = {"bounds.vacuous": ", ".join(n for n in chosen if rng.random() < 0.3)}
        for name, value in zip(chosen, values, strict=True):
            metrics[f"bound.{name}"] = float(value)
            if rng.random() < 0.7:
                metrics[f"bound_ratio.{name}"] = float(rng.random())
            if rng.random() < 0.6 + 0.4 * (trial % 2):
                tags[f"bound.{name}.certificate"] = str(rng.choice(["best", "svm", "generator"]))
        ours, theirs = bounds_frame(metrics, tags), reference_bounds_frame(metrics, tags)
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
        assert list(ours.dtypes) == list(theirs.dtypes) and ours.index.dtype == theirs.index.dtype
