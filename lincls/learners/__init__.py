"""The learners: scikit-learn estimators, each in its own module with its numba kernel.

A learner of your own (a plugin, ``lincls.plugins``) subclasses ``OnlineBinaryClassifier``,
here, and may start its weights with ``initial_weights``; both are public from this package (the
module they live in, ``lincls.learners._base``, is not).
"""

from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners.adaline import Adaline
from lincls.learners.alma import ALMA
from lincls.learners.averaged import AveragedPerceptron
from lincls.learners.balanced_winnow import BalancedWinnow
from lincls.learners.batch_perceptron import BatchPerceptron
from lincls.learners.kernel import KernelPerceptron
from lincls.learners.learning_rate import LearningRatePerceptron
from lincls.learners.least_squares import LeastSquaresClassifier
from lincls.learners.margin import MarginPerceptron
from lincls.learners.maxent import MaxEnt
from lincls.learners.mira import MIRA
from lincls.learners.multiclass import MulticlassPerceptron
from lincls.learners.naive_bayes import NaiveBayesLinear
from lincls.learners.passive_aggressive import PassiveAggressive
from lincls.learners.perceptron import Perceptron
from lincls.learners.voted import VotedPerceptron
from lincls.learners.winnow import Winnow

__all__ = [
    "ALMA",
    "MIRA",
    "Adaline",
    "AveragedPerceptron",
    "BalancedWinnow",
    "BatchPerceptron",
    "KernelPerceptron",
    "LearningRatePerceptron",
    "LeastSquaresClassifier",
    "MarginPerceptron",
    "MaxEnt",
    "MulticlassPerceptron",
    "NaiveBayesLinear",
    "OnlineBinaryClassifier",
    "PassiveAggressive",
    "Perceptron",
    "VotedPerceptron",
    "Winnow",
    "initial_weights",
]
