"""Structured configs of the games (``lincls.games``): datasets made by playing a learner.

They live beside the ``__init__`` (which lists them in ``DATASET_SCHEMAS``) only to keep that
module under the house limit of 450 lines; like ``lincls.config.budget``, ``GameConfig`` repeats
the options every dataset has instead of importing them (the two modules would import each
other).
"""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING, SI


@dataclass
class GameConfig:
    """``lincls.config.DatasetConfig``'s options: the name, and the run's seed."""

    name: str = MISSING
    seed: int = SI("${seed}")


@dataclass
class PerceptronGameConfig(GameConfig):
    name: str = "perceptron_game"
    d: int = 2
    margin: float = 0.1
    radius: float = 1.0
    strategy: str = "auto"
    rounds: int | None = None


@dataclass
class OrthogonalGameConfig(GameConfig):
    name: str = "orthogonal_game"
    d: int = 100
    margin: float = 0.1
    radius: float = 1.0


@dataclass
class MulticlassOrthogonalGameConfig(GameConfig):
    name: str = "multiclass_orthogonal_game"
    d: int = 150
    n_classes: int = 3
    margin: float = 0.1
    radius: float = 1.0


@dataclass
class DisjunctionGameConfig(GameConfig):
    name: str = "disjunction_game"
    n_attributes: int = 64
    k: int = 1
    adversary: str = "littlestone"
    extend: bool = True


# The games' schemas by dataset name, listed in ``lincls.config.DATASET_SCHEMAS``.
GAME_SCHEMAS: dict[str, type] = {
    "perceptron_game": PerceptronGameConfig,
    "orthogonal_game": OrthogonalGameConfig,
    "multiclass_orthogonal_game": MulticlassOrthogonalGameConfig,
    "disjunction_game": DisjunctionGameConfig,
}


@dataclass
class SearchConfig(GameConfig):
    """A run on the worst case a search finds for its learner and ``bound``
    (``lincls.search.game``)."""

    name: str = "search"
    bound: str = "novikoff"
    method: str = "adaptive"
