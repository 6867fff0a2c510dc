"""The typed run config: its config hash pinned (sweeps skip finished configs by it)."""

from __future__ import annotations

import pytest
from conftest import compose_config

from lincls.orders import canonical_orders
from lincls.tracking.tags import config_hash

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
