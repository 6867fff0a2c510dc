"""The words on vacuous bounds state the rule the code applies (``bounds.trivial_bound``): a
theorem about the presented sequence is vacuous at or above the examples presented, one about
every sequence of the data's margin and radius at or above passes × rows."""

from __future__ import annotations

from lincls.bounds import REGISTRY, trivial_bound
from lincls.experiments.report.render import (
    EVERY_SEQUENCE_THEOREMS,
    SEQUENCE_THEOREMS,
    VACUITY_RULE,
)
from lincls.tracking.describe import describe_run


def test_the_report_names_each_theorem_under_the_rule_the_registry_gives_it():
    sequence = {s.name for s in REGISTRY if s.sequence and s.kind == "mistakes"}
    every = {s.name for s in REGISTRY if not s.sequence and s.kind == "mistakes"}
    assert {n for names in SEQUENCE_THEOREMS.values() for n in names} == sequence
    assert {n for names in EVERY_SEQUENCE_THEOREMS.values() for n in names} == every
    assert "at or above the examples the run presented" in VACUITY_RULE
    assert "at or above the most examples the run could present (passes × rows)" in VACUITY_RULE


def test_the_rule_the_words_describe():
    class Run:  # 3 passes of 10 rows were allowed; the learner converged after 12 examples
        n_steps_, max_passes = 12, 3

    assert trivial_bound(Run(), 10, sequence=True) == 12.0
    assert trivial_bound(Run(), 10, sequence=False) == 30.0


def test_a_run_description_states_both_rules():
    note = describe_run({"learner": {"name": "perceptron"}, "dataset": {"name": "separable"}},
                        {}, {"bounds.vacuous": "freund_schapire, novikoff"})  # fmt: skip
    line = next(line for line in note.splitlines() if line.startswith("Vacuous here"))
    assert "the examples presented" in line and "passes × rows" in line
    assert line.endswith("): freund_schapire, novikoff.")
