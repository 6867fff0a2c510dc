"""Structured configs of the kernel learners with a bounded support set: the Randomized Budget
Perceptron, the Projectron and Projectron++ (and the Forgetron).

They live beside the ``__init__`` (which lists them in ``LEARNER_SCHEMAS``) only to keep that
module under the house limit of 450 lines; like ``lincls.config.matrix``, ``SupportSetConfig``
repeats the shared options instead of importing them (the two modules would import each other).
"""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING


@dataclass
class SupportSetConfig:
    """``lincls.config.KernelPerceptronConfig``'s options but the cache."""

    name: str = MISSING
    stop_when_converged: bool = True
    shuffle: bool = False
    bias: str = "feature"
    kernel: str = "linear"
    degree: int = 2
    gamma: float = 1.0


@dataclass
class BudgetPerceptronConfig(SupportSetConfig):
    name: str = "budget_perceptron"
    budget: int = 100


@dataclass
class ProjectronConfig(SupportSetConfig):
    name: str = "projectron"
    eta: float = 0.1
    plus: bool = False
    margin_rule: str = "dogma"  # or "paper" (Theorem 4's margin step): lincls.learners.projectron


@dataclass
class ForgetronConfig(SupportSetConfig):
    name: str = "forgetron"
    budget: int = 100
