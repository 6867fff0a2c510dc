"""A sweep job's config as plain containers, made from its composition's without OmegaConf.

The jobs of one composition (one choice of config groups) differ only in value overrides
(``learner.lr=0.5``, ``seed=7``). Copying the composition's OmegaConf config, applying a job's
overrides and resolving it cost ~8 ms a job, a third of a cheap run. Here the composition's
task config is resolved once (``PlainBase``); a job's config is a copy of those plain
containers with each override's value converted as OmegaConf converts an assignment to that
node (its ``validate_and_convert``), and each leaf that is exactly ``${key}`` of an overridden
key (``dataset.seed: ${seed}``) set again, converted as OmegaConf converts an interpolation's
result for that leaf.

A job this cannot make exactly gets None, and its config is composed as before: an override
that adds or deletes a key, sets a container or a list item, holds an interpolation, a key no
leaf has, a value its node refuses (so the error is OmegaConf's own), a key that an
interpolation reads other than as a whole ``${key}``. (A mandatory value, ``???``, left unset is
``'???'`` in both, as ``lincls.config.checks.resolved`` leaves it.)
``tests/test_plain_configs.py`` holds every job of many grids over every config group option to
the composed config, equal value for value and type for type.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from hydra.core.override_parser.types import Override, OverrideType, ValueType
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.nodes import AnyNode, ValueNode

_WHOLE_REFERENCE = re.compile(r"\$\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_ANY_REFERENCE = re.compile(r"\$\{\s*([A-Za-z_][\w.]*)\s*\}")
_PRIMITIVES = (int, float, str, bool, type(None))


def _leaves(config: DictConfig, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, node) of every node under ``config``; a list's items are not walked."""
    for key in config.keys():
        node = config._get_node(key)
        path = f"{prefix}{key}"
        yield path, node
        if isinstance(node, DictConfig) and not node._is_none() and not node._is_missing():
            if not node._is_interpolation():
                yield from _leaves(node, path + ".")


def _copy(value: Any) -> Any:
    """A copy of plain containers (their leaves are immutable)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class PlainBase:
    """One composition's task config, resolved once, and what a job's overrides may change.

    Raises whatever resolving the composition raises (the caller then composes its jobs)."""

    def __init__(self, task_cfg: DictConfig) -> None:
        self.task = task_cfg
        self.config = OmegaConf.to_container(task_cfg, resolve=True, throw_on_missing=False)
        self.nodes: dict[str, ValueNode] = {}  # a leaf's node, for its type's conversion
        self.dependents: dict[str, list[str]] = {}  # key → the leaves that are exactly ${key}
        self.opaque: set[str] = set()  # keys read by interpolations of any other shape
        self.usable = True
        references: dict[str, str] = {}
        for path, node in _leaves(task_cfg):
            if isinstance(node, ValueNode):
                self.nodes[path] = node
            if not node._is_interpolation():
                if isinstance(node, ListConfig) and "${" in _yaml(node):
                    self.usable = False  # an interpolation in a list: not followed here
                continue
            text = str(node._value())
            whole = _WHOLE_REFERENCE.fullmatch(text)
            if whole is not None and isinstance(node, ValueNode):
                references[path] = whole.group(1)
                continue
            if "${." in text or "_parent_" in text or "_root_" in text:
                self.usable = False  # relative references: not followed here
            self.opaque.update(_ANY_REFERENCE.findall(text))
        for path, target in references.items():
            if target in references or target not in self.nodes:
                self.opaque.add(target)  # a chain, or a container: not followed here
                self.opaque.add(references.get(target, target))
            else:
                self.dependents.setdefault(target, []).append(path)

    def job(self, values: Sequence[Override]) -> dict | None:
        """The plain config of a job whose value overrides are ``values`` (None: compose it)."""
        changed = self._changed(values)
        if changed is None:
            return None
        config = _copy(self.config)
        return config if self._apply(config, changed) else None

    def section(self, name: str, values: Sequence[Override]) -> dict | None:
        """``{name: …}``: the ``name`` section of ``job(values)``, when every value override
        is one of its keys and no interpolation outside it reads one (else None). Two jobs of
        this composition whose overrides differ only in such values differ only there."""
        changed = self._changed(values)
        inside = name + "."
        if changed is None or not all(
            key.startswith(inside)
            and all(leaf.startswith(inside) for leaf in self.dependents.get(key, ()))
            for key in changed
        ):
            return None
        section = {name: _copy(self.config[name])}
        return section if self._apply(section, changed) else None

    def _changed(self, values: Sequence[Override]) -> dict[str, Any] | None:
        """Each value override's key and value, converted as its node converts it; None when
        one is of a kind only composing makes exactly."""
        if not self.usable:
            return None
        changed: dict[str, Any] = {}
        for override in values:
            key = override.key_or_group
            if (
                override.type is not OverrideType.CHANGE
                or override.value_type is not ValueType.ELEMENT
                or override.package is not None
                or key not in self.nodes
                or key in self.opaque
            ):
                return None
            value = override.value()
            if not isinstance(value, _PRIMITIVES) or (isinstance(value, str) and "${" in value):
                return None
            try:
                changed[key] = self.nodes[key].validate_and_convert(value)
            except Exception:  # OmegaConf's own error is raised where the job is composed
                return None
        return changed

    def _apply(self, config: dict, changed: dict[str, Any]) -> bool:
        """Set the ``changed`` values in ``config``, and the leaves that are exactly one of
        them; False when a leaf's conversion fails (the job is composed, and says why)."""
        for key, value in changed.items():
            _set(config, key, value)
        for key, value in changed.items():
            for leaf in self.dependents.get(key, ()):
                if leaf in changed:
                    continue
                node = self.nodes[leaf]
                try:
                    _set(config, leaf, value if isinstance(node, AnyNode)
                         else node.validate_and_convert(value))  # fmt: skip
                except Exception:
                    return False
        return True


def _yaml(node: ListConfig) -> str:
    return "" if node._is_none() or node._is_missing() else OmegaConf.to_yaml(node)


def _set(config: dict, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        config = config[part]
    config[last] = value
