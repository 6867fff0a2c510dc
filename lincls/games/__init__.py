"""Games played against a learner: the data exist only once an adversary has played them.

One module per adversary. ``perceptron``: seed 000 §3.2's game, player A constructing each
example against the learner's live weights (``dataset=perceptron_game``).
"""

from lincls.games.perceptron import PerceptronGame, make_perceptron_game, play, tight_mistakes

__all__ = ["PerceptronGame", "make_perceptron_game", "play", "tight_mistakes"]
