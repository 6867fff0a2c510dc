"""Structured configs of the learners that keep a matrix over the features (full, or its
diagonal): the second-order perceptron, AROW, CW and SCW.

They live beside the ``__init__`` (which lists them in ``LEARNER_SCHEMAS`` and registers them
like every other schema) only to keep that module under the house limit of 450 lines; importing
its ``BiasedConfig`` here would make the two import each other, so ``MatrixConfig`` repeats its
four options.
"""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING


@dataclass
class MatrixConfig:
    """``lincls.config.BiasedConfig``'s options, and whether the matrix is only its diagonal."""

    name: str = MISSING
    stop_when_converged: bool = True
    shuffle: bool = False
    bias: str = "feature"
    diagonal: bool = False


@dataclass
class SecondOrderPerceptronConfig(MatrixConfig):
    name: str = "second_order_perceptron"
    a: float = 1.0


@dataclass
class ArowConfig(MatrixConfig):
    name: str = "arow"
    r: float = 1.0


@dataclass
class ConfidenceWeightedConfig(MatrixConfig):
    name: str = "confidence_weighted"
    variant: str = "scw1"
    eta: float = 0.9
    C: float = 1.0
