"""``orders.permutations=k``, LIBOL's protocol under the name issue 26 gives it, is ``orders=k``:
the same numbers, the same params and config hash once the run's config is written down."""

from __future__ import annotations

import pytest

from lincls import evaluation
from lincls.errors import LinclsInputError
from lincls.orders import canonical_orders, permutations
from lincls.tracking import flatten
from lincls.tracking.tags import config_hash
from tests.conftest import compose_config, run_cli

COMMON = ["order=shuffled", "dataset=noisy", "dataset.n=120", "dataset.d=5", "passes=2"]


def test_permutations_gives_the_old_options_numbers_exactly(tmp_path):
    cache = f"certificates.cache_dir={tmp_path}"
    new = compose_config([*COMMON, cache, "orders.permutations=7"])
    old = compose_config([*COMMON, cache, "orders=7"])
    assert new["orders"] == {"permutations": 7} and old["orders"] == 7
    a, b = evaluation.measure(new), evaluation.measure(old)
    numbers = {k: v for k, v in a.metrics.items() if k != "fit_seconds"}
    assert numbers == {k: v for k, v in b.metrics.items() if k != "fit_seconds"}
    assert a.metrics["orders"] == 7.0 and a.metrics["mistakes_std"] > 0
    assert a.tags == b.tags and a.curves == b.curves
    # written down, the two spellings are one config: one param, one hash (a resume skips it)
    assert canonical_orders(new) == old
    assert flatten(canonical_orders(new))["orders"] == "7"
    assert config_hash(canonical_orders(new)) == config_hash(old)
    # the default composes as one ordering, as orders: 1 did
    default = compose_config([])
    assert default["orders"] == {"permutations": 1}
    assert config_hash(canonical_orders(default)) == config_hash({**default, "orders": 1})


RANGE = r"must be an integer in \[1, inf\), got "


@pytest.mark.parametrize(
    ("value", "field", "problem"),
    [
        ({"permutations": 0}, "orders.permutations", RANGE + "0"),
        ({"permutations": 2.5}, "orders.permutations", RANGE + "2.5"),
        ({"permutations": "x"}, "orders.permutations", RANGE + "'x'"),
        ({"k": 3}, "orders.k", "is not an option of orders; its option: permutations"),
        (0, "orders", RANGE + "0"),
    ],
)
def test_bad_values_are_one_line_naming_the_field_and_its_range(value, field, problem):
    with pytest.raises(LinclsInputError, match=rf"^{field}: {problem}") as caught:
        permutations(value)
    assert caught.value.field == field
    config = {**compose_config([]), "orders": value}
    with pytest.raises(LinclsInputError, match=rf"^{field}: "):
        evaluation.prepare(canonical_orders(config))  # left as written, refused by the run
    assert permutations({"permutations": 20}) == permutations(20) == 20


def test_the_command_line_refuses_a_bad_count_in_one_line(tmp_path):
    done = run_cli(
        ["orders.permutations=0", f"tracking.uri=sqlite:///{tmp_path}/m.db"], cwd=tmp_path
    )
    assert done.returncode == 2
    line = "error: orders.permutations: must be an integer in [1, inf), got 0"
    assert done.stderr.strip() == line
