"""``lincls check``: the referee finds a wrong bound's violation with a replayable instance, and
none of the perceptron's own bounds."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest
from conftest import compose_config

from lincls.bounds import REGISTRY, holds
from lincls.evaluation import measure
from lincls.experiments import check


@pytest.fixture
def wrong_novikoff():
    """Novikoff with R in place of R²: R/γ², below the truth wherever R > 1."""
    novikoff = next(s for s in REGISTRY if s.name == "novikoff")
    spec = replace(
        novikoff, name="novikoff_wrong", best=None,
        value=lambda f: f.radius / f.certificate.margin**2,
    )  # fmt: skip
    REGISTRY.append(spec)
    yield spec.name
    REGISTRY.remove(spec)


@pytest.mark.slow
def test_check_finds_a_wrong_bound_and_prints_a_replayable_instance(
    wrong_novikoff, tmp_path, capsys
):
    started = time.perf_counter()
    code = check.main(["perceptron", wrong_novikoff, "learner.bias=none", "--instances", "10",
                       "--seconds", "4", "--out", str(tmp_path)])  # fmt: skip
    assert time.perf_counter() - started < 60
    assert code == 1
    printed = capsys.readouterr().out
    assert "VIOLATED:" in printed and "novikoff_wrong" in printed
    replay = re.search(r"replay:\s+lincls run (.*)", printed).group(1).split()
    assert (tmp_path / "violation-novikoff_wrong.csv").is_file()
    config = compose_config(replay)
    config["certificates"]["cache_dir"] = str(tmp_path / "cache")
    outcome = measure(config)
    assert not holds(outcome.metrics["mistakes"], outcome.metrics["bound.novikoff_wrong"])
    assert holds(outcome.metrics["mistakes"], outcome.metrics["bound.novikoff"])


@pytest.mark.slow
def test_check_finds_no_violation_of_the_perceptrons_bounds(capsys):
    """With the default options every bound of the perceptron is evaluated, each with the bias
    its theorem needs (Novikoff's homogeneous bound was never evaluated at the default bias)."""
    code = check.main(["perceptron", "--instances", "30", "--seconds", "3"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "VIOLATED" not in printed and "not reached" not in printed
    assert "with 3 sets of learner options and 5 searches" in printed
    for bound in ("novikoff", "novikoff_bias", "novikoff_2r", "freund_schapire",
                  "mohri_rostamizadeh"):  # fmt: skip
        assert re.search(rf"^\s+{bound}\s+largest mistakes / bound\s+[0-9.]+", printed, re.M)
    ratio = float(re.search(r"novikoff_bias\s+largest mistakes / bound\s+([0-9.]+)", printed)[1])
    assert 0.999 <= ratio <= 1.0


@pytest.mark.slow
def test_check_with_default_options_catches_a_wrong_homogeneous_bound(wrong_novikoff, capsys):
    """Novikoff with R for R² applies only to the perceptron without a bias: the defaults (bias
    feature) now also run it so, and catch it within 60 s."""
    started = time.perf_counter()
    code = check.main(["perceptron", "--instances", "20", "--seconds", "2"])
    assert time.perf_counter() - started < 60
    printed = capsys.readouterr().out
    assert code == 1
    violation = re.search(r"^novikoff_wrong: .* on (.*)$", printed, re.M)
    assert violation and "learner.bias=none" in violation[1], printed
    assert "learner.bias=none" in re.search(r"replay:\s+lincls run (.*)", printed)[1]


def test_check_says_which_bounds_the_given_options_rule_out_and_exits_3(capsys):
    """An option given explicitly is kept: bias=feature reaches neither Novikoff's homogeneous
    bound nor the R² bias rule's, and the check says so (exit 3, not a pass)."""
    code = check.main(["perceptron", "learner.bias=feature", "--instances", "2",
                       "--seconds", "0.3"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 3
    unreached = re.findall(r"^  not reached: (\w+) was evaluated on no run \(learner options: "
                           r"learner.bias=feature\)$", printed, re.M)  # fmt: skip
    assert unreached == ["novikoff", "novikoff_2r"]


def test_check_refuses_an_unknown_bound_in_one_line(capsys):
    assert check.main(["perceptron", "no_such_bound"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: bound: one of ")


def _plan_args(bound: str) -> list[str]:
    from lincls.search.targets import PLANS

    plan = PLANS[bound]
    options = [f"learner.{k}={str(v).lower() if isinstance(v, bool) else v}"
               for k, v in plan.overrides]  # fmt: skip
    return [plan.learner, bound, *options]


def _searched_bounds() -> list[str]:
    from lincls.search.targets import PLANS

    return sorted(PLANS)


@pytest.mark.slow
@pytest.mark.parametrize("bound", _searched_bounds())
def test_check_finds_no_violation_of_any_built_in_bound(bound, capsys, tmp_path):
    """Every built-in bound the searches cover, on the rule its plan names: random instances,
    the games and a short search, no violation."""
    code = check.main([*_plan_args(bound), "--instances", "8", "--seconds", "1",
                       "--out", str(tmp_path)])  # fmt: skip
    printed = capsys.readouterr().out
    assert "VIOLATED" not in printed, printed
    assert code == 0
    assert re.search(rf"^\s+{bound}\s+largest mistakes / bound", printed, re.M), printed


@pytest.fixture
def wrong_multiclass():
    """The multiclass perceptron's 2R²/γ² divided by 20 where there are three classes or more
    (right on two): only multiclass data can break it."""
    true = next(s for s in REGISTRY if s.name == "multiclass_perceptron")

    def value(facts):
        right = true.value(facts)
        return right / 20 if len(facts.learner.classes_) > 2 else right

    spec = replace(true, name="multiclass_wrong", best=None, value=value)
    REGISTRY.append(spec)
    yield spec.name
    REGISTRY.remove(spec)


def test_check_draws_multiclass_data_for_a_multiclass_learner_and_catches_its_wrong_bound(
    wrong_multiclass, capsys, tmp_path
):
    """Half of a multiclass learner's random instances are certified data of 3 to 6 classes
    (before, all were binary, where a multiclass bound is never tested past two classes)."""
    drawn = [c["dataset"] for c in check.random_configs({"name": "mira"}, 20, 0)]
    classes = [d["n_classes"] for d in drawn if d["name"] == "multiclass"]
    assert len(classes) == 10 and min(classes) >= 3 and max(classes) <= 6
    binary = [c["dataset"]["name"] for c in check.random_configs({"name": "perceptron"}, 20, 0)]
    assert "multiclass" not in binary
    code = check.main(["multiclass_perceptron", "--instances", "20", "--seconds", "0",
                       "--out", str(tmp_path)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert re.search(r"^multiclass_wrong: .* on random multiclass seed=\d+$", printed, re.M)
    assert "multiclass_perceptron " in printed and "VIOLATED" in printed
    # the replay reads the generator's U beside the CSV (the SVM's would not break this bound)
    replay = re.search(r"replay:\s+lincls run (.*)", printed).group(1).split()
    assert any(w.startswith("dataset.certificate=") for w in replay)
    config = compose_config(replay)
    config["certificates"]["cache_dir"] = str(tmp_path / "cache")
    outcome = measure(config)
    logged = float(re.search(r"^multiclass_wrong: \S+ mistakes > bound (\S+)", printed, re.M)[1])
    assert outcome.metrics["bound.multiclass_wrong"] == pytest.approx(logged, rel=1e-5)
    assert not holds(outcome.metrics["mistakes"], outcome.metrics["bound.multiclass_wrong"])


def test_a_multiclass_certificate_of_the_wrong_shape_is_one_line(tmp_path):
    from lincls.data.files import load_csv
    from lincls.errors import LinclsInputError

    data = tmp_path / "data.csv"
    data.write_text("a,b,label\n1,0,0\n0,1,1\n-1,-1,2\n")
    cert = tmp_path / "cert.json"
    cert.write_text('{"U": [[1, 0], [0, 1]]}')  # two rows for three classes
    with pytest.raises(LinclsInputError) as refused:
        load_csv(data, certificate=str(cert))
    assert str(refused.value) == (
        f"certificate: {cert}: U must be 3 rows (one a class) of 2 finite numbers"
    )
    cert.write_text('{"U": [[1, 0], [0, 1], [-0.7, -0.7]]}')
    loaded = load_csv(data, certificate=str(cert))
    assert loaded.U.shape == (3, 2) and loaded.margin == pytest.approx(1.0)  # min gap: row 1
