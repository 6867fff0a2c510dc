"""Searches for the worst case of a (learner, bound) pair: sequences in the theorem's class that
maximise mistakes / bound, scored by the code a run uses.

``instance``: the pair searched (``Target``), a sequence's score, the instance found and its CSV;
``adaptive``: an adversary that makes each example from the learner's state, with a beam;
``boolean``: the adaptive adversary on monotone disjunctions (Winnow);
``blackbox``: CMA-ES over a fixed-length sequence's coordinates; ``game``: ``dataset=search``, a
run on the instance a search finds (registered in ``lincls.registry.DATASETS`` here, since the
registry sits below the searches).
"""

from lincls.registry import DATASETS
from lincls.search.adaptive import adaptive_search
from lincls.search.game import make_search_game
from lincls.search.instance import (
    Found,
    Scored,
    Target,
    dataset_of,
    replay_overrides,
    score,
    to_csv,
)

DATASETS.setdefault("search", make_search_game)

__all__ = [
    "Found",
    "Scored",
    "Target",
    "adaptive_search",
    "dataset_of",
    "replay_overrides",
    "score",
    "to_csv",
]
