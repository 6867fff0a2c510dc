"""A sweep job's plain config (``hydra_plugins.lincls_sweeps.plain``) is the composed config,
resolved: value for value and type for type, over every learner, dataset and experiment, with
random value overrides of every kind of leaf; where it cannot be made exactly it is None (and the
job is composed)."""

from __future__ import annotations

import random

import pytest
from conftest import CONF, sweep_master
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf
from omegaconf.nodes import BooleanNode, EnumNode, FloatNode, IntegerNode, StringNode

import lincls.experiments.run  # noqa: F401  (every schema stored, as in a sweep's process)
from hydra_plugins.lincls_sweeps.composer import JobComposer, task_config


@pytest.fixture(scope="module")
def composer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    with sweep_master([f"hydra.sweep.dir={folder}"]) as (hydra, master):
        yield JobComposer(hydra.config_loader, master)
    GlobalHydra.instance().clear()


def _composed(composer: JobComposer, job: list[str]):
    """The job's task config as Hydra composes it, resolved; or the exception it raises."""
    try:
        config = composer.loader.load_sweep_config(composer.master, list(job))
        return OmegaConf.to_container(task_config(config), resolve=True)
    except Exception as exc:
        return exc


def _same(a, b) -> bool:
    """Equal value for value, and type for type (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (a != a and b != b)  # nan


def _value_line(rng: random.Random, node) -> str:
    """A value for ``node``: mostly of its type, sometimes another (refused or converted)."""
    kind = rng.random()
    if kind < 0.15:
        return rng.choice(["'text'", "abc", "null", "true", "1e400", "-3", "2.5", "[1,2]",
                           "${seed}", "'${seed}x'"])  # fmt: skip
    if isinstance(node, BooleanNode):
        return rng.choice(["true", "false", "True"])
    if isinstance(node, IntegerNode):
        return str(rng.choice([0, 1, 7, 100, 12345, -2]))
    if isinstance(node, FloatNode):
        return rng.choice(["0.5", "1", "1e-3", "3.25", "inf", "0"])
    if isinstance(node, EnumNode | StringNode):
        return rng.choice(["fixed", "shuffled", "'a b'", "x"])
    return rng.choice(["1", "0.25", "'s'", "true", "null"])


def _groups() -> list[str]:
    found = [f"learner={p.stem}" for p in sorted((CONF / "learner").glob("*.yaml"))]
    found += [f"dataset={p.stem}" for p in sorted((CONF / "dataset").glob("*.yaml"))]
    return found + [f"experiment={p.stem}" for p in sorted((CONF / "experiment").glob("*.yaml"))]


@pytest.mark.parametrize("group", _groups())
def test_plain_configs_equal_the_composed_ones(composer, group):
    """Every option alone, then random value overrides of its leaves (and of the seed)."""
    rng = random.Random(f"20261129 {group}")
    composed = _composed(composer, [group])
    base = composer.plain([group, "seed=3"])
    if isinstance(composed, Exception):
        assert base is None
        return
    assert base is not None
    assert _same(base[0], _composed(composer, [group, "seed=3"])), group
    nodes = composer._bases[(group,)].plain.nodes
    paths = sorted(nodes)
    for _ in range(JOBS_PER_OPTION):
        keys = rng.sample(paths, k=min(len(paths), rng.choice([1, 2, 3])))
        if rng.random() < 0.5:
            keys.append("seed")
        job = [group] + [f"{k}={_value_line(rng, nodes[k])}" for k in dict.fromkeys(keys)]
        ours = composer.plain(job)
        if ours is None:
            MADE[False] += 1
            continue
        MADE[True] += 1
        theirs = _composed(composer, job)
        assert not isinstance(theirs, Exception), (job, theirs)
        assert _same(ours[0], theirs), job


JOBS_PER_OPTION = 3
MADE = {True: 0, False: 0}  # jobs made plainly, jobs left to be composed


def test_most_random_jobs_are_made_plainly(composer):
    """Over the options' random jobs above (run in this process): both ways are taken."""
    for group in _groups()[::8]:
        test_plain_configs_equal_the_composed_ones(composer, group)
    assert MADE[True] > MADE[False] > 0, MADE


@pytest.mark.parametrize(
    "line",
    [
        "~dataset.seed",
        "learner.lr=${seed}",
        "passes=many",
        "seed=[1,2]",
        "dataset.nope=1",
        "learner.lr='${seed}'",
        "orders=null",
    ],
)
def test_what_it_cannot_make_exactly_is_composed(composer, line):
    assert composer.plain(["learner=perceptron", line]) is None


def test_an_interpolated_leaf_follows_its_key(composer):
    config, _ = composer.plain(["learner=perceptron", "seed=41", "learner.lr=2"])
    assert config["seed"] == config["dataset"]["seed"] == 41
    assert config["learner"]["lr"] == 2.0 and type(config["learner"]["lr"]) is float
    config, _ = composer.plain(["learner=perceptron", "seed=41", "dataset.seed=5"])
    assert (config["seed"], config["dataset"]["seed"]) == (41, 5)  # its own value kept


def _overrides(*lines: str):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(lines))


@pytest.mark.parametrize(
    ("options", "section"),
    [
        ({}, {"learner": {"lr": 5.0, "step": 1.0}}),
        ({"step": "${learner.lr}"}, {"learner": {"lr": 5.0, "step": 5.0}}),  # read inside: follows
        ({"retry": "${learner.lr}"}, None),  # read outside: the two jobs differ there too
        ({"name": "lr_${learner.lr}"}, None),  # read by a string outside
    ],
)
def test_a_section_is_made_only_when_its_values_are_read_within_it(options, section):
    """``PlainBase.section``: what the precheck's shortcut for learner values rests on."""
    from hydra_plugins.lincls_sweeps.plain import PlainBase

    learner = {"lr": 1.0, "step": options.get("step", 1.0)}
    tracking = {k: v for k, v in options.items() if k != "step"}
    base = PlainBase(OmegaConf.create({"learner": learner, "tracking": tracking}))
    assert base.section("learner", _overrides("learner.lr=5")) == section
    assert base.section("tracking", _overrides("learner.lr=5")) is None  # not its key
    if section is not None:  # the section is the job's own
        assert base.job(_overrides("learner.lr=5"))["learner"] == section["learner"]
