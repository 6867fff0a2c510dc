"""Structured configs of the reproduction studies' learners and data (Freund & Schapire 1999).

They live beside the ``__init__`` (which lists them in ``LEARNER_SCHEMAS`` and
``DATASET_SCHEMAS``) only to keep that module under the house limit of 450 lines: this module
adds them to those tables when imported, which ``lincls.registry`` does, so every config that
names them composes once the registry is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore
from omegaconf import SI

from lincls.config import DATASET_SCHEMAS, LEARNER_SCHEMAS
from lincls.config.games import SearchConfig


@dataclass
class KernelVotedPerceptronConfig:
    name: str = "kernel_voted_perceptron"
    prediction: str = "vote"
    kernel: str = "poly"
    degree: int = 1
    gamma: float = 1.0
    epochs: int = 10


@dataclass
class MaxMarginSVCConfig:
    name: str = "svm"
    kernel: str = "poly"
    degree: int = 1
    gamma: float = 1.0
    C: float = 1e6


@dataclass
class Mnist5kConfig:
    name: str = "mnist_5k"
    seed: int = SI("${seed}")
    test_fraction: float = 10_000 / 70_000
    scale: str = "unit"
    n_samples: int | None = None


STUDY_LEARNERS = {"kernel_voted_perceptron": KernelVotedPerceptronConfig, "svm": MaxMarginSVCConfig}
STUDY_DATASETS = {"mnist_5k": Mnist5kConfig, "search": SearchConfig}  # search: its options
LEARNER_SCHEMAS.update(STUDY_LEARNERS)
DATASET_SCHEMAS.update(STUDY_DATASETS)
# stored now too: ``register_configs`` may have run before this module was imported
for _group, _schemas in (("learner", STUDY_LEARNERS), ("dataset", STUDY_DATASETS)):
    for _name, _schema in _schemas.items():
        ConfigStore.instance().store(group=_group, name=f"{_name}_schema", node=_schema)
