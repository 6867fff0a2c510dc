"""``certificates.best``: best comparators with the SVM certificates off, and their own switch."""

from __future__ import annotations

import pytest
from conftest import compose_config, run_cli

from lincls.errors import LinclsInputError
from lincls.evaluation import RunPlan, measure, plan_of

COMMON = ["dataset.n=200", "dataset.d=5", "dataset.n_test=0"]


def _run(overrides: list[str], cache):
    """One measured run, its solutions cached in a directory of its own (no shared solve)."""
    return measure(compose_config([*COMMON, *overrides, f"certificates.cache_dir={cache}"]))


def test_without_the_svm_each_bound_still_has_its_best_comparator(tmp_path):
    with_svm = _run([], tmp_path / "a")
    without = _run(["certificates.svm=false"], tmp_path / "b")
    assert "certificate.svm.margin" in with_svm.metrics
    assert not any(k.startswith("certificate.svm") for k in without.metrics)
    for name in ("novikoff_bias", "freund_schapire"):
        assert with_svm.tags[f"bound.{name}.certificate"] == "best"
        assert without.tags[f"bound.{name}.certificate"] == "best"
        assert without.metrics[f"bound.{name}"] == with_svm.metrics[f"bound.{name}"]
    # best=false: the generator's certificate alone, a larger Novikoff bound (200 = 2/0.1²)
    off = _run(["certificates.svm=false", "certificates.best=false"], tmp_path / "c")
    assert off.tags["bound.novikoff_bias.certificate"] == "generator"
    assert off.metrics["bound.novikoff_bias"] == pytest.approx(200.0, rel=1e-9)
    assert off.metrics["bound.novikoff_bias"] > without.metrics["bound.novikoff_bias"]


def test_the_rbf_kernel_perceptron_gets_its_bound_without_the_svm(tmp_path):
    rbf = ["learner=kernel_perceptron", "learner.kernel=rbf", "certificates.svm=false"]
    found = _run(rbf, tmp_path / "a")
    assert found.tags["bound.kernel_novikoff.certificate"] == "best"
    assert found.metrics["mistakes"] <= found.metrics["bound.kernel_novikoff"]
    off = _run([*rbf, "certificates.best=false"], tmp_path / "b")  # no certificate lifts to RBF
    assert "bound.kernel_novikoff" not in off.metrics


def test_the_switch_is_checked_and_defaults_to_true(tmp_path):
    config = compose_config(COMMON)
    assert config["certificates"]["best"] is True and plan_of(config).best is True
    assert RunPlan().best is True
    config["certificates"]["best"] = "yes"
    with pytest.raises(LinclsInputError) as info:
        plan_of(config)
    assert str(info.value) == "certificates.best: must be true or false, got 'yes'"


def test_a_bad_switch_on_the_command_line_is_one_line_and_no_store(tmp_path):
    done = run_cli(["certificates.best=maybe", f"tracking.uri=sqlite:///{tmp_path / 'm.db'}"],
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: certificates.best: must be true or false, got 'maybe'"
    ]
    assert not (tmp_path / "m.db").exists()
