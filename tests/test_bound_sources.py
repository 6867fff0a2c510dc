"""Every bound says what it is (``lincls.bounds.Source``): the registry refuses a bound without it,
each registered bound carries one, a run tags it (``bound_source.<name>``) and the report shows it.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import compose_config

from lincls import bounds
from lincls.bounds import (
    DERIVED,
    NOT_COVERED,
    NOT_READ,
    PUBLISHED,
    REGISTRY,
    STATUSES,
    BoundSpec,
    Source,
    source_of,
)
from lincls.evaluation import measure
from lincls.experiments.report.tables import bound_source

PAPERS_READ = {"pa": 2, "pa1": 4, "pa2": 5}  # Crammer et al. 2006 (JMLR 7): theorem numbers


def _check(facts):
    return None


def _value(facts):
    return 1.0


def test_a_spec_without_a_source_is_refused():
    with pytest.raises(TypeError, match="source"):
        BoundSpec("mine", _check, _value)
    with pytest.raises(TypeError, match="source must be a Source"):
        BoundSpec("mine", _check, _value, source="published: somebody")
    spec = BoundSpec("mine", _check, _value, source=Source(DERIVED, "proved in my docstring"))
    assert str(spec.source) == "derived: proved in my docstring"


@pytest.mark.parametrize(
    ("status", "citation", "message"),
    [
        ("proved", "somewhere", "status is one of"),
        (None, "somewhere", "status is one of"),
        (PUBLISHED, "", "one non-empty line"),
        (PUBLISHED, "   ", "one non-empty line"),
        (PUBLISHED, "two\nlines", "one non-empty line"),
        (PUBLISHED, "a | b", "without '|'"),
        (PUBLISHED, "x" * 241, "at most 240 characters"),
    ],
)
def test_a_source_is_a_known_status_and_one_short_line(status, citation, message):
    with pytest.raises(ValueError, match=message):
        Source(status, citation)


def test_every_registered_bound_has_a_source_and_only_papers_read_are_published():
    bounds.plugin_bounds()
    names = [spec.name for spec in REGISTRY]
    assert len(names) == len(set(names)) == 26
    assert all(isinstance(s.source, Source) and s.source.status in STATUSES for s in REGISTRY)
    published = {s.name for s in REGISTRY if s.source.status == PUBLISHED}
    # the theorems whose statements ../shared/REFERENCE.md records as read, and no other
    assert published == {"pa", "pa1", "pa2", "projectron_plus_paper"}
    for name, theorem in PAPERS_READ.items():
        citation = source_of(name).citation
        assert citation.startswith("Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006, JMLR 7")
        assert f"Thm {theorem} " in citation
    assert "Thm 4" in source_of("projectron_plus_paper").citation
    assert "JMLR 10" in source_of("projectron_plus_paper").citation
    statuses = {s.name: s.source.status for s in REGISTRY}
    assert {n for n, s in statuses.items() if s == NOT_READ} == {
        "alma", "arow", "forgetron", "freund_schapire", "mohri_rostamizadeh"
    }  # fmt: skip
    assert {n for n, s in statuses.items() if s == NOT_COVERED} == {"voted_fs99"}
    for name in (n for n, s in statuses.items() if s == NOT_READ):  # each says why not
        assert "not read (its public copies at hand show only the abstract" in (
            source_of(name).citation
        ), name
    assert statuses["projectron"] == statuses["projectron_plus"] == DERIVED
    assert "Thm 3" in source_of("projectron").citation
    assert "does not cover" in source_of("projectron_plus").citation
    # lincls's cw is the ICML 2008 variance rule; the NIPS 2008 paper is SCW-I's uncapped rule
    assert "2008 (ICML)'s variance rule" in source_of("cw").citation
    assert "NIPS" not in source_of("cw").citation and "NIPS" in source_of("scw1").citation
    assert source_of("no_such_bound") is None


def test_a_plugin_bound_without_a_status_is_not_read():
    plugin = SimpleNamespace(theorem="Theorem 7 of my paper\nits proof ...", source="pkg:mine")
    source = bounds._plugin_source(plugin)
    assert source == Source(NOT_READ, "plugin (pkg:mine): Theorem 7 of my paper")
    plugin.status = PUBLISHED
    assert bounds._plugin_source(plugin).status == PUBLISHED


def test_a_run_tags_each_bound_it_logs_with_its_source():
    config = compose_config(
        ["learner=passive_aggressive", "learner.variant=pa1", "dataset=separable",
         "dataset.n=40", "dataset.d=3", "passes=3"]
    )  # fmt: skip
    outcome = measure(config)
    logged = {k.split(".", 1)[1] for k in outcome.metrics if k.count(".") == 1
              and k.startswith("bound.") and not k.startswith("bound.tightest")}  # fmt: skip
    assert "pa1" in logged
    sources = {k.split(".", 1)[1]: v for k, v in outcome.tags.items()
               if k.startswith("bound_source.")}  # fmt: skip
    assert set(sources) == logged
    assert sources["pa1"] == (
        "published: Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006, JMLR 7, Thm 4 "
        "(read in the JMLR text)"
    )


def test_the_report_names_each_bounds_source():
    assert bound_source("pa2") == str(source_of("pa2"))
    assert bound_source("tightest") == bound_source("tightest_a_posteriori") == "–"
    assert bound_source("gone") == "not registered in this lincls"


def test_the_two_projectron_plus_rules_are_two_report_rows():
    from lincls.tracking.tags import learner_label

    paper = compose_config(["learner=projectron", "learner.plus=true", "learner.margin_rule=paper"])
    dogma = compose_config(["learner=projectron", "learner.plus=true"])
    plain = compose_config(["learner=projectron"])
    assert learner_label(paper["learner"]).endswith("plus=True, margin_rule=paper)")
    assert learner_label(dogma["learner"]).endswith("plus=True, margin_rule=dogma)")
    assert "margin_rule" not in learner_label(plain["learner"])  # no margin step to choose
