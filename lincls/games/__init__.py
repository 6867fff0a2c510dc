"""Games played against a learner: the data exist only once an adversary has played them.

One module per adversary: ``perceptron``, seed 000 §3.2's game, player A constructing each
example against the learner's live weights (``dataset=perceptron_game``); ``disjunction``,
Littlestone's and the additive adversary on monotone disjunctions
(``dataset=disjunction_game``); ``orthogonal``, ⌊(R/γ)²⌋ mistakes forced on any online
learner by fresh coordinates (``dataset=orthogonal_game``); ``multiclass``, its multiclass
analogue, ⌊(R/γ)²·K/(K−1)⌋ mistakes forced on any online multiclass learner of K classes
(``dataset=multiclass_orthogonal_game``). ``_play`` holds what they share:
asking the learner, through a copy and its own one-example step, whether it would err, and
presenting the example.
"""

from lincls.games._play import Game
from lincls.games.disjunction import (
    DisjunctionGame,
    DisjunctionRecord,
    make_disjunction_game,
    play_disjunction,
)
from lincls.games.multiclass import (
    MulticlassOrthogonalGame,
    make_multiclass_orthogonal_game,
    play_multiclass_orthogonal,
)
from lincls.games.orthogonal import OrthogonalGame, make_orthogonal_game, play_orthogonal
from lincls.games.perceptron import PerceptronGame, make_perceptron_game, play, tight_mistakes

__all__ = [
    "DisjunctionGame",
    "DisjunctionRecord",
    "Game",
    "MulticlassOrthogonalGame",
    "OrthogonalGame",
    "PerceptronGame",
    "make_disjunction_game",
    "make_multiclass_orthogonal_game",
    "make_orthogonal_game",
    "make_perceptron_game",
    "play",
    "play_disjunction",
    "play_multiclass_orthogonal",
    "play_orthogonal",
    "tight_mistakes",
]
