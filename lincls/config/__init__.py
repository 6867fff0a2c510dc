"""Structured configs: the typed schema behind every YAML file in ``conf/``.

Each learner and dataset option has a dataclass here, registered with Hydra's ConfigStore as
``<group>/<name>_schema``; its YAML file names the schema in its defaults list, so an override of
the wrong type or an unknown key fails at composition. Ranges are checked by the learners and
generators themselves, with one-line errors.

Its modules hold the schemas that do not fit here (``matrix``, ``budget``, ``games``, ``studies``)
and the checks of a composed config (``checks``, ``composition``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING, SI

from lincls import plugins
from lincls.config.budget import BudgetPerceptronConfig, ForgetronConfig, ProjectronConfig
from lincls.config.games import GAME_SCHEMAS
from lincls.config.matrix import ArowConfig, ConfidenceWeightedConfig, SecondOrderPerceptronConfig

# --- learners -------------------------------------------------------------------------------
# The online learners' schemas extend the options they share; a schema's own fields come after
# its bases' (key order does not matter to a config). ``max_passes`` and ``random_state`` are the
# run's (``passes``, ``seed``), not a learner option.


@dataclass
class OnlineConfig:
    """The pass options of every online learner."""

    name: str = MISSING
    stop_when_converged: bool = True
    shuffle: bool = False


@dataclass
class BiasedConfig(OnlineConfig):
    """An online learner with a bias rule."""

    bias: str = "feature"


@dataclass
class DampedBiasConfig(BiasedConfig):
    """A binary online learner whose bias step ``intercept_decay`` scales."""

    intercept_decay: float = 1.0


@dataclass
class StepConfig(DampedBiasConfig):
    """A binary online learner with a step (learning rate) ``lr``."""

    lr: float = 1.0


@dataclass
class ScheduledStepConfig(StepConfig):
    """A learner whose step α_t follows a schedule (``lincls.learners._schedules``)."""

    schedule: str = "constant"
    decay: float = 0.5


@dataclass
class MultiplicativeConfig(OnlineConfig):
    """Winnow's family: positive weights, promoted and demoted by the factor ``alpha``."""

    alpha: float = 2.0


@dataclass
class PerceptronConfig(StepConfig):
    name: str = "perceptron"


@dataclass
class AveragedPerceptronConfig(StepConfig):
    name: str = "averaged_perceptron"
    stop_when_converged: bool = False


@dataclass
class VotedPerceptronConfig(StepConfig):
    name: str = "voted_perceptron"
    prediction: str = "vote"
    max_vectors: int = 10_000
    stop_when_converged: bool = False


@dataclass
class MarginPerceptronConfig(StepConfig):
    name: str = "margin_perceptron"
    tau: float = 1.0


@dataclass
class LearningRatePerceptronConfig(ScheduledStepConfig):
    name: str = "learning_rate_perceptron"


@dataclass
class BatchPerceptronConfig(ScheduledStepConfig):
    name: str = "batch_perceptron"
    batch_size: int | None = None


@dataclass
class AdalineConfig(ScheduledStepConfig):
    name: str = "adaline"
    lr: float = 0.01
    stop_when_converged: bool = False


@dataclass
class PassiveAggressiveConfig(DampedBiasConfig):
    name: str = "passive_aggressive"
    variant: str = "pa1"
    C: float = 1.0


@dataclass
class KernelPerceptronConfig(BiasedConfig):
    name: str = "kernel_perceptron"
    kernel: str = "linear"
    degree: int = 2
    gamma: float = 1.0
    cache_size: float = 200.0


@dataclass
class MulticlassPerceptronConfig(BiasedConfig):
    name: str = "multiclass_perceptron"
    lr: float = 1.0


@dataclass
class MiraConfig(BiasedConfig):
    name: str = "mira"
    max_step: float = 1.0


@dataclass
class WinnowConfig(MultiplicativeConfig):
    name: str = "winnow"
    threshold: float | None = None
    variant: str = "winnow2"


@dataclass
class BalancedWinnowConfig(MultiplicativeConfig):
    name: str = "balanced_winnow"
    threshold: float = 0.0


@dataclass
class AlmaConfig(OnlineConfig):
    name: str = "alma"
    p: float = 2.0
    alpha: float = 0.9
    B: float | None = None
    C: float = 1.4142135623730951  # √2, the paper's
    normalize: bool = True
    bias: str = "none"


@dataclass
class NaiveBayesLinearConfig:
    name: str = "naive_bayes_linear"
    alpha: float = 1.0
    binarize: float | None = 0.0


@dataclass
class MaxEntConfig:
    name: str = "maxent"
    solver: str = "lbfgs"
    max_iter: int = 1000
    tol: float = 1e-4
    C: float | None = None


@dataclass
class LeastSquaresConfig:
    name: str = "least_squares"
    fit_intercept: bool = True
    solver: str = "auto"
    tol: float = 1e-12
    max_iter: int | None = None


@dataclass
class RommaConfig(BiasedConfig):
    name: str = "romma"
    aggressive: bool = False


# --- datasets -------------------------------------------------------------------------------


@dataclass
class DatasetConfig:
    """Every dataset option: its name, and the run's seed for whatever it draws."""

    name: str = MISSING
    seed: int = SI("${seed}")


@dataclass
class SeparableConfig(DatasetConfig):
    name: str = "separable"
    n: int = 1000
    d: int = 20
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.0
    n_test: int = 1000


@dataclass
class OrthonormalConfig(DatasetConfig):
    name: str = "orthonormal"
    d: int = 50
    radius: float = 1.0


@dataclass
class DisjunctionConfig(DatasetConfig):
    name: str = "disjunction"
    n_features: int = 100
    k: int = 3
    n: int = 1000
    density: float | None = None
    n_test: int = 1000


@dataclass
class MulticlassConfig(DatasetConfig):
    name: str = "multiclass"
    n: int = 1000
    d: int = 20
    n_classes: int = 3
    margin: float = 0.05
    radius: float = 1.0
    n_test: int = 1000


@dataclass
class CsvConfig(DatasetConfig):
    """A CSV file; text columns (and those in ``categorical``) are one-hot encoded."""

    name: str = "csv"
    path: str = MISSING
    label_column: str = "label"
    test_fraction: float = 0.25
    categorical: list[str] = field(default_factory=list)
    certificate: str | None = None  # a JSON {"u": [...], "b": ...} or {"U": [[...], ...]}


@dataclass
class PlayTennisConfig(DatasetConfig):
    """The shipped PlayTennis table (``lincls/data/playtennis.csv``), read as a CSV."""

    name: str = "playtennis"
    test_fraction: float = 0.0


@dataclass
class NoisyConfig(SeparableConfig):
    """``separable``'s data, then labels flipped and examples moved inside the margin."""

    name: str = "noisy"
    flip: float = 0.05
    deficit: float = 1.0
    overlap: int = 10


@dataclass
class PlaneConfig(DatasetConfig):
    name: str = "plane"
    kind: str = "separable"
    n: int = 200
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.0
    flip: float = 0.1
    n_test: int = 200


@dataclass
class FarPointsConfig(DatasetConfig):
    name: str = "far_points"
    n: int = 100
    d: int = 2
    margin: float = 0.1
    near: float = 1.0
    radius: float = 10.0
    far: float = 0.2
    n_test: int = 100


@dataclass
class SklearnSetConfig(DatasetConfig):
    classes: list[int] | None = None
    positive: int | None = None
    standardize: bool = True
    test_fraction: float = 0.25


@dataclass
class ClassPairConfig(SklearnSetConfig):
    """A multiclass scikit-learn set, by default reduced to its classes 0 and 1."""

    classes: list[int] | None = field(default_factory=lambda: [0, 1])


@dataclass
class BreastCancerConfig(SklearnSetConfig):
    name: str = "breast_cancer"


@dataclass
class DigitsConfig(ClassPairConfig):
    name: str = "digits"


@dataclass
class IrisConfig(ClassPairConfig):
    name: str = "iris"


@dataclass
class WineConfig(ClassPairConfig):
    name: str = "wine"


@dataclass
class PhishingConfig(DatasetConfig):
    """river's Phishing set, read from river's wheel (``lincls.data.phishing``)."""

    name: str = "phishing"
    standardize: bool = True
    test_fraction: float = 0.25


@dataclass
class SvmlightConfig(DatasetConfig):
    name: str = "svmlight"
    path: str = MISSING
    n_features: int | None = None
    dense: bool = False
    test_fraction: float = 0.25


@dataclass
class TrackingConfig:
    uri: str | None = None
    experiment: str = "lincls"
    run_name: str | None = None
    skip_finished: bool = True  # a sweep skips a config its study has FINISHED
    retry_seconds: float = 30.0  # how long one run waits for a store that does not answer
    max_store_failures: int = 3  # runs in a row the store fails before a sweep stops


@dataclass
class CertificatesConfig:
    svm: bool = True
    cache_dir: str | None = None
    best: bool = True


@dataclass
class RunSchema:
    learner: Any = MISSING
    dataset: Any = MISSING
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    certificates: CertificatesConfig = field(default_factory=CertificatesConfig)
    passes: int = 10
    seed: int = 0
    order: str = "fixed"
    # the orderings per config: ``orders.permutations=k``, or ``orders=k`` (the same config);
    # Any, so that either spelling composes (``lincls.orders.permutations`` checks the value)
    orders: Any = field(default_factory=lambda: {"permutations": 1})
    study: str | None = None


LEARNER_SCHEMAS: dict[str, type] = {
    "perceptron": PerceptronConfig,
    "averaged_perceptron": AveragedPerceptronConfig,
    "voted_perceptron": VotedPerceptronConfig,
    "margin_perceptron": MarginPerceptronConfig,
    "learning_rate_perceptron": LearningRatePerceptronConfig,
    "passive_aggressive": PassiveAggressiveConfig,
    "kernel_perceptron": KernelPerceptronConfig,
    "winnow": WinnowConfig,
    "balanced_winnow": BalancedWinnowConfig,
    "multiclass_perceptron": MulticlassPerceptronConfig,
    "mira": MiraConfig,
    "alma": AlmaConfig,
    "naive_bayes_linear": NaiveBayesLinearConfig,
    "maxent": MaxEntConfig,
    "least_squares": LeastSquaresConfig,
    "adaline": AdalineConfig,
    "batch_perceptron": BatchPerceptronConfig,
    "romma": RommaConfig,
    "second_order_perceptron": SecondOrderPerceptronConfig,
    "arow": ArowConfig,
    "confidence_weighted": ConfidenceWeightedConfig,
    "budget_perceptron": BudgetPerceptronConfig,
    "projectron": ProjectronConfig,
    "forgetron": ForgetronConfig,
}
DATASET_SCHEMAS: dict[str, type] = {
    "separable": SeparableConfig,
    "orthonormal": OrthonormalConfig,
    "disjunction": DisjunctionConfig,
    "csv": CsvConfig,
    "playtennis": PlayTennisConfig,
    "multiclass": MulticlassConfig,
    "noisy": NoisyConfig,
    "plane": PlaneConfig,
    "breast_cancer": BreastCancerConfig,
    "digits": DigitsConfig,
    "iris": IrisConfig,
    "wine": WineConfig,
    "svmlight": SvmlightConfig,
    "far_points": FarPointsConfig,
    **GAME_SCHEMAS,
    "phishing": PhishingConfig,
}


def register_configs() -> None:
    """Put every schema in Hydra's ConfigStore (idempotent), and the learners of plugins."""
    # imported here: the typed run config (lincls.config.run) is read without Hydra
    from hydra.core.config_store import ConfigStore

    plugins.load_plugins()  # their learners store their own options (lincls.plugins)
    store = ConfigStore.instance()
    store.store(name="run_schema", node=RunSchema)
    store.store(group="tracking", name="tracking_schema", node=TrackingConfig)
    for name, schema in LEARNER_SCHEMAS.items():
        store.store(group="learner", name=f"{name}_schema", node=schema)
    for name, schema in DATASET_SCHEMAS.items():
        store.store(group="dataset", name=f"{name}_schema", node=schema)
