"""Every YAML file in conf/ composes against its schema, and the schema rejects bad types."""

from __future__ import annotations

import pytest
from conftest import CONF, compose_config
from hydra.errors import ConfigCompositionException

from lincls import registry

GROUP_OPTIONS = [
    (group, path.stem)
    for group in ("learner", "dataset")
    for path in sorted((CONF / group).glob("*.yaml"))
]


@pytest.mark.parametrize(("group", "option"), GROUP_OPTIONS)
def test_every_option_composes_and_is_registered(group, option):
    config = compose_config([f"{group}={option}"])
    assert config[group]["name"] == option
    names = registry.LEARNERS if group == "learner" else registry.DATASETS
    assert option in names
    if group == "dataset" and "seed" in config["dataset"]:
        assert config["dataset"]["seed"] == config["seed"]  # the dataset follows the run's seed


def test_every_option_has_a_schema():
    from lincls.config import DATASET_SCHEMAS, LEARNER_SCHEMAS

    assert {o for g, o in GROUP_OPTIONS if g == "learner"} == set(LEARNER_SCHEMAS)
    assert {o for g, o in GROUP_OPTIONS if g == "dataset"} == set(DATASET_SCHEMAS)


@pytest.mark.parametrize(
    "override", ["learner.lr=abc", "dataset.n=1.5", "passes=many", "learner.no_such_key=1"]
)
def test_schema_rejects_wrong_types_and_unknown_keys(override):
    with pytest.raises(ConfigCompositionException):
        compose_config([override])
