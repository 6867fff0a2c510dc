"""Mistake bounds: one function per theorem (docstring: statement and source), and the registry.

Every bound is computed on the vectors the learner actually sees: a learner with a bias sees the
augmented vectors (x, c), c the constant feature its bias rule amounts to, so its bound is the
theorem applied to (x, c) and to the augmented separator (u, b/c). Compare a mistake count with a
bound with ``holds`` (relative tolerance 1e-9: tight cases compute 3 as 2.9999999999999987).
"""

from lincls.bounds import (
    alma,
    arow,
    budget_perceptron,
    confidence_weighted,
    data_dependent,
    deficit,
    forgetron,
    kernel,
    margin,
    multiclass,
    passive_aggressive,
    perceptron,
    projectron,
    romma,
    second_order,
    winnow,
)
from lincls.bounds._registry import (
    A_POSTERIORI,
    A_PRIORI,
    FAMILIES,
    REGISTRY,
    RELATIVE_TOLERANCE,
    TEST_ERROR,
    BoundSpec,
    BoundValue,
    Evaluation,
    RunFacts,
    evaluate,
    family_of,
    holds,
    trivial_bound,
)
from lincls.bounds.alma import alma_bound
from lincls.bounds.arow import arow_bound
from lincls.bounds.budget_perceptron import rbp_expected_bound
from lincls.bounds.confidence_weighted import cw_bound, scw1_bound, scw2_bound
from lincls.bounds.data_dependent import mohri_rostamizadeh
from lincls.bounds.deficit import freund_schapire, freund_schapire_grid, voted_test_error
from lincls.bounds.forgetron import forgetron_bound
from lincls.bounds.kernel import kernel_novikoff
from lincls.bounds.margin import margin_perceptron_bound
from lincls.bounds.multiclass import mira_bound, multiclass_perceptron_bound
from lincls.bounds.passive_aggressive import pa1_bound, pa2_bound, pa_bound
from lincls.bounds.perceptron import novikoff, novikoff_2r, novikoff_bias
from lincls.bounds.projectron import projectron_bound, projectron_plus_bound
from lincls.bounds.romma import romma_bound
from lincls.bounds.second_order import second_order_bound
from lincls.bounds.winnow import winnow1_bound, winnow2_bound

__all__ = [
    "A_POSTERIORI",
    "A_PRIORI",
    "FAMILIES",
    "REGISTRY",
    "RELATIVE_TOLERANCE",
    "TEST_ERROR",
    "BoundSpec",
    "BoundValue",
    "Evaluation",
    "RunFacts",
    "alma",
    "alma_bound",
    "arow",
    "arow_bound",
    "budget_perceptron",
    "confidence_weighted",
    "cw_bound",
    "data_dependent",
    "deficit",
    "evaluate",
    "family_of",
    "forgetron",
    "forgetron_bound",
    "freund_schapire",
    "freund_schapire_grid",
    "holds",
    "kernel",
    "kernel_novikoff",
    "margin",
    "margin_perceptron_bound",
    "mira_bound",
    "mohri_rostamizadeh",
    "multiclass",
    "multiclass_perceptron_bound",
    "novikoff",
    "novikoff_2r",
    "novikoff_bias",
    "pa1_bound",
    "pa2_bound",
    "pa_bound",
    "passive_aggressive",
    "perceptron",
    "projectron",
    "projectron_bound",
    "projectron_plus_bound",
    "rbp_expected_bound",
    "romma",
    "romma_bound",
    "scw1_bound",
    "scw2_bound",
    "second_order",
    "second_order_bound",
    "trivial_bound",
    "voted_test_error",
    "winnow",
    "winnow1_bound",
    "winnow2_bound",
]
