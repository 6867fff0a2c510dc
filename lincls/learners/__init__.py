"""The learners: scikit-learn estimators, each in its own module with its numba kernel."""

from lincls.learners.averaged import AveragedPerceptron
from lincls.learners.kernel import KernelPerceptron
from lincls.learners.learning_rate import LearningRatePerceptron
from lincls.learners.margin import MarginPerceptron
from lincls.learners.passive_aggressive import PassiveAggressive
from lincls.learners.perceptron import Perceptron
from lincls.learners.voted import VotedPerceptron
from lincls.learners.winnow import BalancedWinnow, Winnow

__all__ = [
    "AveragedPerceptron",
    "BalancedWinnow",
    "KernelPerceptron",
    "LearningRatePerceptron",
    "MarginPerceptron",
    "PassiveAggressive",
    "Perceptron",
    "VotedPerceptron",
    "Winnow",
]
