"""Checks of a composed config against the overrides that made it.

OmegaConf turns what a true/false option is given into a bool as best it can: ``2``, ``'yes'``,
``'on'`` and ``'1'`` become true, ``0`` and ``'off'`` false, and the run goes on with a value
nobody wrote. ``check_booleans`` refuses any such override before a run exists: a true/false
option takes ``true`` or ``false`` (Hydra's override grammar reads them in any case).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from omegaconf import BooleanNode, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from lincls.errors import LinclsInputError


def resolved(cfg: DictConfig) -> dict:
    """``cfg`` as plain containers, every ``${…}`` resolved; an interpolation that does not
    resolve (``dataset.n=${oops}``) is ``LinclsInputError`` naming its key, where OmegaConf's
    error reached the user as a traceback."""
    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LinclsInputError(key, f"does not resolve: {reason}") from None


def node_at(cfg: DictConfig, key: str) -> Any:
    """The node at the dotted ``key`` of ``cfg`` (None where there is none)."""
    node: Any = cfg
    for part in key.split("."):
        if not isinstance(node, DictConfig):
            return None
        try:
            node = node._get_node(part)
        except Exception:  # a key the config does not have: composition said so already
            return None
        if node is None:
            return None
    return node


def check_booleans(cfg: DictConfig, overrides: Iterable[Any]) -> None:
    """Raise ``LinclsInputError`` for an override (Hydra's parsed ``Override``) that gives a
    true/false option of ``cfg`` anything but true or false."""
    for override in overrides:
        if override.is_delete() or override.is_sweep_override():
            continue
        key = override.key_or_group
        if not isinstance(node_at(cfg, key), BooleanNode):
            continue
        value = override.value()
        if value is not None and not isinstance(value, bool):
            raise LinclsInputError(key, f"must be true or false, got {value!r}")


def parse_overrides(lines: Sequence[str]) -> list[Any]:
    """Command-line override lines as Hydra parses them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(lines))
