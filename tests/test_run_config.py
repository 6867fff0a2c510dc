"""The typed run config: built from the composed container, its run values checked, its config
hash pinned (sweeps skip finished configs by it)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from conftest import compose_config

from lincls import tracking
from lincls.config.run import CertificateSettings, RunConfig
from lincls.errors import LinclsInputError
from lincls.orders import canonical_orders
from lincls.tracking.tags import HASH_TAG, config_hash, run_name, run_tags

# Hashes computed before the config became typed: a change would make every resumed sweep run
# its finished configs again. ``orders=3`` and ``orders.permutations=3`` are one config.
PINNED = [
    ([], "3b4c4e6cd3778c99"),
    (["learner=winnow", "dataset=disjunction"], "ac0099bdfe71aa7e"),
    (["orders.permutations=3", "order=shuffled", "seed=7"], "51fe8fb65edc8fd3"),
    (["orders=3", "order=shuffled", "seed=7"], "51fe8fb65edc8fd3"),
    (
        ["learner=alma", "certificates.svm=false", "passes=3", "tracking.uri=sqlite:///x.db"],
        "07c10c42d41438b1",
    ),
    (["experiment=bound_verification"], "d145fdb22202c79e"),
]


@pytest.mark.parametrize(("overrides", "expected"), PINNED)
def test_the_config_hash_of_a_composed_config_is_pinned(overrides, expected):
    assert config_hash(canonical_orders(compose_config(overrides))) == expected


@pytest.mark.parametrize(("overrides", "expected"), PINNED)
def test_a_typed_config_hashes_as_its_container(overrides, expected):
    # from_container writes orders in its one spelling itself
    assert config_hash(RunConfig.from_container(compose_config(overrides))) == expected


def test_the_typed_config_reads_the_run_keys_and_keeps_the_container():
    container = canonical_orders(
        compose_config(["orders.permutations=3", "seed=7", "certificates.svm=false"])
    )
    config = RunConfig.from_container(container)
    assert (config.passes, config.seed, config.order, config.orders) == (10, 7, "fixed", 3)
    assert config.certificates == CertificateSettings(svm=False, best=True, cache_dir=None)
    assert config.tracking.experiment == "lincls" and config.tracking.budget == 30.0
    assert config.learner["name"] == "perceptron" and config.dataset["name"] == "separable"
    assert config.raw == container and config.raw is not container
    assert tracking.flatten(config.raw) == tracking.flatten(container)
    assert run_tags(config)[HASH_TAG] == run_tags(container)[HASH_TAG]
    assert run_name(config) == run_name(container)


def test_the_typed_config_is_frozen_and_pickles():
    config = RunConfig.from_container(compose_config())
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 1
    with pytest.raises(TypeError):
        config.learner["lr"] = 2.0
    again = pickle.loads(pickle.dumps(config))
    assert again == config and dict(again.learner) == dict(config.learner)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (["passes=0"], "passes"),
        (["seed=-1"], "seed"),
        (["order=backwards"], "order"),
        (["orders=0"], "orders"),
        (["orders.permutations=0"], "orders.permutations"),
        (["tracking.retry_seconds=-1"], "tracking.retry_seconds"),
        (["tracking.max_store_failures=0"], "tracking.max_store_failures"),
        (["tracking.experiment=' '"], "tracking.experiment"),
    ],
)
def test_bad_run_values_are_refused_naming_their_field(overrides, field):
    with pytest.raises(LinclsInputError) as refused:
        RunConfig.from_container(canonical_orders(compose_config(overrides)))
    assert refused.value.field == field


def test_a_true_false_option_given_anything_else_is_refused():
    container = {**compose_config(), "certificates": {"svm": "yes", "best": True}}
    with pytest.raises(LinclsInputError, match=r"certificates\.svm: must be true or false"):
        RunConfig.from_container(container)


def test_a_refused_config_is_read_as_written():
    container = compose_config(["seed=-1"])
    config = RunConfig.unchecked(container)
    assert config.seed == -1 and config.raw == container
    assert " s-1 " in run_name(config)  # named as given
    assert RunConfig.of(config) is config
