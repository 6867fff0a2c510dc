"""Searches for the worst case of a (learner, bound) pair: sequences in the theorem's class that
maximise mistakes / bound, scored by the code a run uses.

``instance``: the pair searched (``Target``), a sequence's score, the instance found and its CSV;
``adaptive``: an adversary that makes each example from the learner's state, with a beam;
``boolean``: the adaptive adversary on monotone disjunctions (Winnow); ``game``: ``dataset=search``,
a run on the instance a search finds (registered in ``lincls.registry.DATASETS`` here, since the
registry sits below the searches).

A black box (CMA-ES over a fixed-length sequence's coordinates, scored the same way) was measured
against the adaptive searches at 20 s on SOP, AROW, CW, SCW-I, ALMA and Winnow2: it found lower
ratios on each (0.78 against 0.99 on SOP, 0.52 against 0.99 on AROW) in more time, so it is not
kept.
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
