"""A config composed once per choice of config groups, each later composition a copy of it.

Hydra composes a config from its defaults list on every ``compose`` call: it reads and merges
every file the defaults list names and builds each structured schema anew (0.06–0.4 s on a
2-core machine, with its load). What a composition depends on besides the files
is its choice of config groups (``learner=winnow``, ``experiment=…``): Hydra composes from the
defaults list those choices make, then applies every other override to the result
(``ConfigLoaderImpl._apply_overrides_to_config``), in order. ``Composer`` does the same in two
steps: Hydra composes each choice of groups once, and a call with that choice gets a copy of it
(a pickle round-trip, ~0.5 ms) with the call's value overrides applied by Hydra's own function.

Overrides are told apart as Hydra's defaults list tells them (``Overrides``): a group's option
(a key that is a config group, its value not a dict) is a choice; anything else is a value
override. A call that this split could change is composed whole by Hydra, as before: a sweep
(``a=1,2``, which Hydra refuses in a single run) or a ``hydra`` line (``hydra.searchpath`` changes
where configs come from). A call whose copy fails to compose (a bad value, an unknown key) is
composed whole as well, so its error is the one Hydra raises.

The compositions are kept while Hydra's ConfigStore holds the same nodes: a learner registered
or unregistered since (``lincls.plugins``) composes anew. The YAML files are read once, as a
sweep reads them.
"""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from hydra import compose, initialize_config_module
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf import DictConfig

# Group choices kept: a notebook's loop over every learner and dataset of lincls is ~500.
MAX_BASES = 1024
MAX_LINES = 4096  # override lines kept parsed (Hydra's grammar: ~0.5 ms a line)


def _store_nodes() -> list[Any]:
    """Every node of Hydra's ConfigStore (and the store itself), in its order: what a
    composition reads besides the files. A node stored again is a new object."""
    store = ConfigStore.instance()
    nodes: list[Any] = [store]
    folders = [store.repo]
    while folders:
        for name, node in folders.pop().items():
            if isinstance(node, dict):
                folders.append(node)
                nodes.append(name)
            else:
                nodes.append(node)
    return nodes


class Composer:
    """Compose ``config_name`` of ``config_module`` as Hydra's ``compose`` returns it (without
    its ``hydra`` node), one Hydra composition per choice of config groups."""

    def __init__(self, config_module: str, config_name: str = "config") -> None:
        self.config_module = config_module
        self.config_name = config_name
        self.compositions = 0  # Hydra compositions made (what a cache hit saves)
        self._bases: OrderedDict[tuple[str, ...], bytes | DictConfig] = OrderedDict()
        self._groups: dict[str, bool] = {}  # key → whether it is a config group
        self._nodes: list[Any] = []
        self._repository: Any = None
        self._parser = OverridesParser.create()
        self._parsed: OrderedDict[str, Override] = OrderedDict()

    def parse(self, lines: Sequence[str]) -> list[Override]:
        """``lines`` as Hydra parses them (its error for the first bad one); a line parsed
        before is not parsed again (its ``Override`` is only read, here and by Hydra)."""
        parsed = []
        for line in lines:
            if line in self._parsed:
                self._parsed.move_to_end(line)
            else:
                (self._parsed[line],) = self._parser.parse_overrides([line])
                if len(self._parsed) > MAX_LINES:
                    self._parsed.popitem(last=False)
            parsed.append(self._parsed[line])
        return parsed

    def fresh(self, lines: Sequence[str]) -> DictConfig:
        """The config Hydra composes for override ``lines`` (its errors raised as it raises
        them), in a Hydra context of its own: the caller's Hydra state is put back after."""
        self.compositions += 1
        with initialize_config_module(config_module=self.config_module, version_base="1.3"):
            return compose(config_name=self.config_name, overrides=list(lines))

    def _sources(self) -> Any:
        """The config sources (the first call enters Hydra's context once: it finds Hydra's
        plugins, which store their configs, before any composition is kept)."""
        if self._repository is None:
            with initialize_config_module(self.config_module, version_base="1.3"):
                self._repository = GlobalHydra.instance().hydra.config_loader.repository
        return self._repository

    def _is_group(self, key: str) -> bool:
        """Whether ``key`` is a config group of the config's sources (Hydra's own question)."""
        if key not in self._groups:
            self._groups[key] = bool(self._sources().group_exists(key))
        return self._groups[key]

    def compose(self, lines: Sequence[str], parsed: Sequence[Override]) -> DictConfig:
        """The config ``fresh(lines)`` gives; ``parsed``: ``lines`` as Hydra parses them."""
        self._sources()
        self._drop_if_store_changed()
        split = self._split(parsed)
        if split is None:
            return self.fresh(lines)
        groups, values = split
        try:
            config = self._copy(self._base(groups))
            ConfigLoaderImpl._apply_overrides_to_config(values, config)
        except Exception:  # composed whole, for Hydra's own error (or its config)
            return self.fresh(lines)
        if self._drop_if_store_changed():  # stored into while composing: not what was split
            return self.fresh(lines)
        return config

    def _split(self, parsed: Sequence[Override]) -> tuple[tuple[str, ...], list[Override]] | None:
        """(the group choices' lines, the value overrides), as Hydra's defaults list splits
        them; None for a call to compose whole."""
        groups: list[str] = []
        values: list[Override] = []
        for override in parsed:
            key = override.key_or_group
            if override.is_sweep_override() or key == "hydra" or override.is_hydra_override():
                return None
            if self._is_group(key) and not isinstance(override.value(), dict):
                groups.append(override.input_line)
            else:
                values.append(override)
        return tuple(groups), values

    def _base(self, groups: tuple[str, ...]) -> bytes | DictConfig:
        """The composition of the group choices ``groups``, pickled (as made: never resolved,
        so no resolver's cached value goes into a copy)."""
        if groups in self._bases:
            self._bases.move_to_end(groups)
            return self._bases[groups]
        config = self.fresh(groups)
        try:
            base: bytes | DictConfig = pickle.dumps(config)
        except Exception:  # a schema pickle cannot name (a class made in a function): copied
            base = config
        self._bases[groups] = base
        if len(self._bases) > MAX_BASES:
            self._bases.popitem(last=False)
        return base

    @staticmethod
    def _copy(base: bytes | DictConfig) -> DictConfig:
        return pickle.loads(base) if isinstance(base, bytes) else copy.deepcopy(base)

    def _drop_if_store_changed(self) -> bool:
        """Forget the compositions when ConfigStore's nodes are not those they were made of
        (True: forgotten)."""
        nodes = _store_nodes()
        same = len(nodes) == len(self._nodes) and all(
            a is b or (isinstance(a, str) and a == b)  # a folder's name, or the same node
            for a, b in zip(nodes, self._nodes, strict=True)
        )
        if not same:
            self._bases.clear()
            self._groups.clear()
            self._nodes = nodes
        return not same
