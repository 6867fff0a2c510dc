"""Python values as the Hydra overrides ``lincls run`` takes, and the config they compose.

``learner``, ``dataset`` and every other keyword become override lines: a string names a config
group's option (``learner="winnow"``), a dict sets keys of a group (``dataset={"n": 200}``, with
``"name"`` for its option), anything else is a value (``passes=5``). Strings are quoted, so a value
is never read as another type; ``overrides`` are Hydra's own lines, passed as they are.
"""

from __future__ import annotations

import importlib.resources
import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lincls.config import register_configs
from lincls.config.checks import check_booleans
from lincls.config.composition import check_group_choices, input_error
from lincls.errors import LinclsInputError
from lincls.orders import canonical_orders

if TYPE_CHECKING:  # Hydra's modules, loaded when a config is first composed
    from lincls.config.composer import Composer

CONF_PACKAGE = "lincls.conf"
GROUPS = ("learner", "dataset", "experiment")  # config groups: their value names an option


def _scalar(value: Any) -> Any:
    """numpy's scalars as Python's (a grid from ``np.linspace`` is a list of numpy floats)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "shape", None) == () else value


def hydra_value(field: str, value: Any, group: bool = False) -> str:
    """``value`` written in Hydra's override grammar; ``group``: an option's name, unquoted."""
    value = _scalar(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return repr(number) if math.isfinite(number) else str(number)  # inf, -inf, nan
    if isinstance(value, str | Path):
        text = str(value)
        if group:
            return text
        if "'" not in text and not text.endswith("\\"):
            return f"'{text}'"
        if '"' not in text and not text.endswith("\\"):
            return f'"{text}"'
        raise LinclsInputError(field, f"a string with both kinds of quote is not allowed: {text!r}")
    if isinstance(value, list | tuple):
        return "[" + ",".join(hydra_value(field, v) for v in value) + "]"
    raise LinclsInputError(
        field,
        "must be a number, a string, True/False, None, a list, or a dict of a group's keys, "
        f"got {type(value).__name__}",
    )


def override_lines(key: str, value: Any) -> list[str]:
    """The override lines that set ``key`` to ``value`` (a dict: one line per key in it)."""
    if isinstance(value, Mapping):
        lines = []
        for inner, inner_value in value.items():
            if not isinstance(inner, str) or not inner:
                raise LinclsInputError(key, f"a dict's keys must be names, got {inner!r}")
            if inner == "name" and key in GROUPS:
                lines.append(f"{key}={hydra_value(key, inner_value, group=True)}")
            else:
                lines += override_lines(f"{key}.{inner}", inner_value)
        return lines
    if key == "tracking.uri":
        raise LinclsInputError(key, "give the store as store=<tracking URI or .db path>")
    return [f"{key}={hydra_value(key, value, group=key in GROUPS)}"]


def sweep_line(key: str, values: Any) -> str:
    """The override line that sweeps ``key`` over ``values`` (a list): ``key=a,b,c``."""
    if not isinstance(values, list | tuple) or not values:
        raise LinclsInputError(f"grid.{key}", f"must be a non-empty list of values, got {values!r}")
    if key == "tracking.uri":
        raise LinclsInputError(key, "one sweep writes to one store: give it as store=")
    return f"{key}=" + ",".join(hydra_value(key, v, group=key in GROUPS) for v in values)


def _set_groups(lines: Sequence[str]) -> set[str]:
    """The config groups whose option ``lines`` choose (Hydra refuses a group chosen twice)."""
    chosen = set()
    for line in lines:
        key = line.partition("=")[0].lstrip("+~")
        if key in GROUPS:
            chosen.add(key)
    return chosen


def run_overrides(
    learner: str | Mapping[str, Any],
    dataset: str | Mapping[str, Any],
    keywords: Mapping[str, Any],
    overrides: Sequence[str] = (),
) -> list[str]:
    """The override lines of the API's arguments, Hydra's own ``overrides`` last (they win).
    The learner's and dataset's option comes first, unless ``overrides`` chooses it."""
    if isinstance(overrides, str) or not all(isinstance(o, str) for o in overrides):
        raise LinclsInputError("overrides", f"must be a list of strings, got {overrides!r}")
    lines: list[str] = []
    given = _set_groups(overrides)
    for group, value in (("learner", learner), ("dataset", dataset)):
        if isinstance(value, Mapping):
            settings = dict(value)
            name = settings.pop("name", None)
            if name is not None and group not in given:
                lines.append(f"{group}={hydra_value(group, name, group=True)}")
            lines += override_lines(group, settings)
        elif group not in given:
            if not isinstance(value, str) or not value:
                raise LinclsInputError(group, f"must be an option's name or a dict, got {value!r}")
            lines.append(f"{group}={value}")
    for key, value in keywords.items():
        lines += override_lines(key, value)
    return lines + list(overrides)


def experiments() -> list[str]:
    """The named studies of ``conf/experiment/``."""
    folder = importlib.resources.files(CONF_PACKAGE) / "experiment"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


_COMPOSER: list[Composer] = []  # this process's Composer of lincls.conf, made on first use


def composer() -> Composer:
    """This process's ``Composer`` of ``lincls.conf``'s config, lincls's configs registered in
    Hydra's ConfigStore once (again only if the store was emptied since)."""
    from hydra.core.config_store import ConfigStore

    from lincls.config.composer import Composer

    if not _COMPOSER or "run_schema.yaml" not in ConfigStore.instance().repo:
        register_configs()
    if not _COMPOSER:
        _COMPOSER.append(Composer(CONF_PACKAGE, "config"))
    return _COMPOSER[0]


def compose_run(lines: Sequence[str]) -> dict[str, Any]:
    """The run config ``lincls run <lines>`` would run, composed and checked as it checks it
    (bad input: ``LinclsInputError`` naming the field), resolved to plain dicts. A choice of
    config groups is composed once per process (``lincls.config.composer``): the same config
    as composing it anew, ~100× faster (~3 ms a call against ~0.3 s)."""
    from omegaconf import OmegaConf

    compositions = composer()
    try:
        parsed = compositions.parse(lines)
        check_group_choices(parsed, "experiment", experiments())
        cfg = compositions.compose(lines, parsed)
        check_booleans(cfg, parsed)
    except LinclsInputError:
        raise
    except Exception as exc:
        error = input_error(exc)
        if error is None:
            raise
        raise error from None
    return canonical_orders(OmegaConf.to_container(cfg, resolve=True))
