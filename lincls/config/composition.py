"""Hydra's composition errors as one line that names the config field and what it allows.

Hydra prints a wrong type, an unknown key or an unknown config group option as a block of up to
43 lines (its message, OmegaConf's full key and object type, the search path) and exits 1.
``input_error`` turns each into the ``LinclsInputError`` every other bad input raises:

    passes=1.5          → passes: must be an integer, got 1.5
    learner.foo=1       → learner.foo: is not a key of learner; its keys: bias, …
    learner=nosuch      → learner: must be one of adaline, alma, …, got 'nosuch'

``check_group_choices`` refuses an unknown option of an ``optional`` group (``experiment``),
which Hydra skips without a word, and a schema chosen as an option (``learner=perceptron_schema``:
Hydra would compose it, its defaults unfilled); ``check_no_schema`` does the latter for a sweep's
expanded jobs.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lincls.errors import LinclsInputError

# What a schema's field type allows, as the message says it.
_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
# OmegaConf's message of a value its node cannot hold: "Value 'x' of type 'str' could not be …"
_NOT_CONVERTED = re.compile(r"^Value '(?P<value>.*)' (of type|is not a valid)")
SCHEMA_SUFFIX = "_schema"  # a structured config behind a YAML option (``config.register_configs``)
SWEEPER_PARAMS = "hydra.sweeper.params"  # the sweep's grid (``hydra_plugins.lincls_sweeps``)
_AMBIGUOUS = re.compile(r"^Ambiguous value for argument '(?P<key>[^=']+)=(?P<value>[^']*)'")


def input_error(exc: BaseException) -> LinclsInputError | None:
    """The one-line ``LinclsInputError`` for a Hydra composition error (or a bad-input error
    Hydra wrapped, e.g. from a plugin's constructor); None for any other exception."""
    from hydra.errors import (
        ConfigCompositionException,
        MissingConfigException,
        OverrideParseException,
    )
    from omegaconf.errors import OmegaConfBaseException

    seen: BaseException | None = exc
    while seen is not None:  # a plugin's check, wrapped by Hydra's instantiate (raise … from)
        if isinstance(seen, LinclsInputError):
            return seen
        seen = seen.__cause__
    if isinstance(exc, MissingConfigException):
        return _missing_config(exc)
    if isinstance(exc, OverrideParseException):
        key = str(exc.override or "").partition("=")[0].lstrip("+~") or "overrides"
        return LinclsInputError(
            key, f"{_first_line(exc.message)} in {exc.override!r} (Hydra's override syntax)"
        )
    if isinstance(exc, ConfigCompositionException):
        cause = exc.__cause__
        if isinstance(cause, OmegaConfBaseException) and getattr(cause, "full_key", None):
            return _node_error(cause)
        ambiguous = _AMBIGUOUS.match(str(exc))
        if ambiguous is not None:
            key, value = ambiguous.group("key"), ambiguous.group("value")
            return LinclsInputError(
                key.lstrip("+~"),
                f"{value!r} is several values: sweep them with -m, or give a list as [{value}] "
                f"or a string as '{value}'",
            )
        return LinclsInputError("overrides", _first_line(str(exc)))
    return None


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0].strip() if lines else ""


def _missing_config(exc: Any) -> LinclsInputError:
    """A config group option that does not exist: name the group and its options."""
    missing = str(exc.missing_cfg_file or "")
    group, _, name = missing.rpartition("/")
    if not group or exc.options is None:
        return LinclsInputError("config", _first_line(str(exc)))
    options = [o for o in exc.options if not o.endswith(SCHEMA_SUFFIX)]  # behind the YAMLs
    return LinclsInputError(group.replace("/", "."), _not_an_option(group, options, name))


def _not_an_option(group: str, options: Sequence[str], value: str) -> str:
    """What a group allows, said of ``value``: its options, or that it has none to choose."""
    if not options:
        return f"has no options to choose, got {value!r}; set its keys instead ({group}.<key>=…)"
    return f"must be one of {', '.join(options)}, got {value!r}"


def _field_type(schema: Any, key: str) -> Any:
    """The annotated type of ``schema``'s field ``key`` (None when unknown)."""
    if not dataclasses.is_dataclass(schema):
        return None
    try:
        return typing.get_type_hints(schema).get(key)
    except Exception:  # an annotation that does not evaluate here
        return None


def describe_type(kind: Any) -> str | None:
    """What a field of type ``kind`` holds, in words: ``int | None`` → "an integer or null"."""
    if kind in _KINDS:
        return _KINDS[kind]
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        parts = [describe_type(a) for a in args if a is not type(None)]
        if None in parts:
            return None
        return " or ".join(parts) + (" or null" if type(None) in args else "")
    if origin in (list, Sequence) and args:
        inner = describe_type(args[0])
        return None if inner is None else f"a list of {inner.split(' ', 1)[-1]}s"
    return None


def _keys(schema: Any) -> list[str]:
    return sorted(
        f.name
        for f in dataclasses.fields(schema)
        if f.name != "name" and not f.name.startswith("_")
    )


def _node_error(error: Any) -> LinclsInputError:
    """OmegaConf's error about one node (``full_key``): a wrong type, a null, an unknown key."""
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError

    field, schema = str(error.full_key), error.object_type
    parent = field.rpartition(".")[0] or "the config"
    if isinstance(error, ConfigAttributeError | ConfigKeyError):
        if parent == SWEEPER_PARAMS:  # a named study's grid; outside one it has no keys
            key = field.rpartition(".")[2]
            return LinclsInputError(
                field, f"is not a key of {parent}; sweep it on the command line (-m {key}=a,b), "
                f"or add it to the grid (+{field}=a,b)")  # fmt: skip
        if not dataclasses.is_dataclass(schema):
            return LinclsInputError(field, f"is not a key of {parent}")
        keys = ", ".join(_keys(schema))
        name = getattr(schema, "name", None)  # a learner's or dataset's schema: its name
        if isinstance(name, str) and name != "???":
            return LinclsInputError(
                field, f"is not an option of {parent} {name!r}; its options: {keys}"
            )
        return LinclsInputError(field, f"is not a key of {parent}; its keys: {keys}")
    kind = describe_type(_field_type(schema, str(error.key)))
    text = _first_line(getattr(error, "msg", "") or str(error))
    if kind is None:
        return LinclsInputError(field, text)
    if error.value is None and "is not Optional" in text:
        return LinclsInputError(field, f"must be {kind}, not null")
    given = _NOT_CONVERTED.match(text)
    value = error.value if error.value is not None or not given else given.group("value")
    return LinclsInputError(field, f"must be {kind}, got {value!r}")


def check_group_choices(overrides: Iterable[Any], group: str, options: Sequence[str]) -> None:
    """Refuse an option of ``group`` that is not one of ``options`` in parsed Hydra
    ``overrides`` (each value of a sweep too): Hydra skips a missing option of an ``optional``
    group, so ``experiment=nosuch`` would run the default config."""
    for override in overrides:
        if override.key_or_group != group or override.is_delete():
            continue
        try:
            values = (
                list(override.sweep_string_iterator())
                if override.is_sweep_override()
                else [override.value()]
            )
        except Exception:  # a range or interval sweep: no option names to check
            continue
        for value in values:
            if value is not None and str(value) not in options:
                raise LinclsInputError(group, _not_an_option(group, options, str(value)))


def check_no_schema(jobs: Iterable[Sequence[str]], options: Callable[[str], Sequence[str]]) -> None:
    """Refuse a ``group=<name>_schema`` choice in any job's override lines: Hydra's ConfigStore
    holds each option's schema under that name, composable but not an option (its defaults
    unfilled). ``options(group)`` lists what the group allows; ``_schema`` names are dropped."""
    for job in jobs:
        for item in job:
            key, _, value = item.partition("=")
            group = key.lstrip("+~")
            if value.endswith(SCHEMA_SUFFIX) and "." not in group and "@" not in group:
                allowed = [o for o in options(group) if not o.endswith(SCHEMA_SUFFIX)]
                raise LinclsInputError(group, _not_an_option(group, allowed, value))
