"""Edges of a run that bad input or a broken piece reaches: a file's data judged before any run
exists (one line naming the file, the cell and the allowed range, exit 2, nothing stored), and
what cannot be judged before (a plugin bound that raises) contained in the run that meets it."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, run_cli, runs_of

import lincls
from lincls import bounds, plugins, registry
from lincls.data import files
from lincls.errors import LinclsInputError

WIDE = 200_000  # columns of a wide file: its header check was quadratic (hours at this width)


def _wide_csv(path, names: list[str], rows: int = 3) -> None:
    """A CSV of ``names`` as its header and ``rows`` rows of small numbers."""
    cells = ",".join(["1"] * len(names))
    path.write_text(",".join(names) + "\n" + "".join(cells + "\n" for _ in range(rows)))


@pytest.mark.timeout(120)
def test_a_200000_column_header_is_checked_in_one_pass(tmp_path):
    """The duplicate at the end of a 200,000-column header is named before pandas reads the
    rows; a header without one passes the check."""
    distinct = [f"x{k}" for k in range(WIDE)] + ["label"]
    _wide_csv(tmp_path / "wide.csv", distinct)
    files._check_unique_header(tmp_path / "wide.csv", "path")
    _wide_csv(tmp_path / "twice.csv", [*distinct, "x7"])
    with pytest.raises(LinclsInputError) as refused:
        files.load_csv(tmp_path / "twice.csv")
    assert str(refused.value) == (
        f"path: {tmp_path / 'twice.csv'} line 1: column names must be unique; 'x7' names columns "
        f"8 and {WIDE + 2}"
    )


def test_a_wide_file_is_read_as_numbers_at_once(tmp_path, monkeypatch):
    """Its numeric columns are the features as they are, read in one conversion: only a column
    of text (here one) takes the per-column path, which took ~3 minutes over 200,000 columns
    (20 rows; now ~1, pandas' own read of the text). 20,000 columns here: the count of per-column
    calls does not depend on the width."""
    wide = WIDE // 10
    first = [k % 7 - 3 for k in range(wide)]
    second = [0.5 * k for k in range(wide)]
    rows = [(first, "a", "1"), (second, "b", "1"), (first, "b", "-1")]
    header = ",".join([*(f"x{k}" for k in range(wide)), "kind", "label"])
    body = [",".join([*map(str, values), kind, label]) for values, kind, label in rows]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join([header, *body]) + "\n")
    calls = []
    per_column = files._feature_block
    monkeypatch.setattr(
        files, "_feature_block", lambda *args: calls.append(args[0].name) or per_column(*args)
    )
    data = files.load_csv(path)
    assert calls == ["kind"]
    assert data.X.shape == (3, wide + 2)
    assert data.X[:, :wide].tolist() == [first, second, first]
    assert data.X[:, wide:].tolist() == [[1, 0], [0, 1], [0, 1]]  # kind one-hot: a, b
    assert data.params["columns"][wide - 1] == {"column": f"x{wide - 1}"}
    assert data.params["columns"][wide:] == [{"column": "kind", "category": c} for c in "ab"]


def _only_line(done) -> str:
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


RULE = "a feature must be in [-1e100, 1e100], so that a run's sums of squares stay finite"


def test_a_csv_value_near_the_float_limit_is_one_line_and_nothing_stored(tmp_path):
    """Before: an OverflowError or a NaN histogram's ValueError in a FAILED run (and in a sweep
    the other configs ran)."""
    big = tmp_path / "big.csv"
    big.write_text("a,b,label\n1,2,1\n-3,1.5e308,-1\n2,2,1\n-1,-1,-1\n")
    fine = tmp_path / "fine.csv"
    fine.write_text("a,b,label\n1,2,1\n-3,-1e100,-1\n2,2,1\n-1,-1,-1\n")
    db = tmp_path / "store" / "mlflow.db"
    store = f"tracking.uri=sqlite:///{db}"
    done = run_cli(["dataset=csv", f"dataset.path={big}", store], cwd=tmp_path)
    says = f"error: dataset.path: {big} line 3, column 'b': 1.5e308 is out of range; {RULE}"
    assert _only_line(done) == says
    sweep = run_cli(["-m", "dataset=csv", f"dataset.path={fine},{big}", store], cwd=tmp_path)
    assert _only_line(sweep).startswith(says + " (config 2 of 2: ")
    assert _only_line(sweep).endswith("; no config was run)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv", "fine.csv"]


def test_an_svmlight_value_near_the_float_limit_is_one_line(tmp_path):
    path = tmp_path / "big.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:-2e200 2:1\n")
    with pytest.raises(LinclsInputError) as refused:
        files.load_svmlight(path)
    assert str(refused.value) == (
        f"path: {path} line 2: -2e200 in '1:-2e200' is out of range; {RULE}"
    )


# --- what cannot be judged before -----------------------------------------------------------

EXAMPLE = ROOT / "examples" / "lincls-example"
LEARNER = "normalized_perceptron"


def _boom(facts) -> float:
    raise ZeroDivisionError("the plugin's own division")


@pytest.fixture
def raising_bounds():
    """The example plugin's learner and bounds, with three bounds of it that raise: in their
    value, their check and their best comparator; unregistered afterwards."""
    sys.path.insert(0, str(EXAMPLE))
    import lincls_example

    lincls_example.register()
    learner = lincls_example.NormalizedPerceptron
    made = {
        "raises_in_value": {"value": _boom},
        "raises_in_check": {"value": lambda facts: 1e9, "check": _boom},
        "raises_in_best": {"value": lambda facts: 1e9, "best": _boom},
    }
    for name, functions in made.items():
        plugins.register_bound(plugins.Bound(name, learner, theorem="none: raises (a test)",
                                             rule="any", **functions))  # fmt: skip
    yield sorted(made)
    for name in [*made, LEARNER, "normalized_novikoff", "normalized_novikoff_halved"]:
        plugins.unregister(name)
    registry.learners()
    bounds.plugin_bounds()
    sys.path.remove(str(EXAMPLE))


def test_a_plugin_bound_that_raises_is_skipped_and_tagged_and_the_run_finishes(
    raising_bounds, tmp_path
):
    """Before: the exception ended every run of the learner, stored FAILED."""
    db = tmp_path / "mlflow.db"
    result = lincls.run(LEARNER, {"n": 60}, store=db, study="raising")
    (stored,) = runs_of(f"sqlite:///{db}")
    assert stored.info.status == "FINISHED" and stored.info.run_id == result.run_id
    metrics, tags = stored.data.metrics, stored.data.tags
    assert "bound.normalized_novikoff" in metrics  # the plugin's other bounds are evaluated
    skipped = dict(item.split(": ", 1) for item in tags["bounds.skipped"].split("; "))
    assert {name: skipped[name] for name in raising_bounds} == {
        "raises_in_best": "best raised ZeroDivisionError: the plugin's own division",
        "raises_in_check": "check raised ZeroDivisionError: the plugin's own division",
        "raises_in_value": "value raised ZeroDivisionError: the plugin's own division",
    }
    assert not any(f"bound.{name}" in metrics for name in raising_bounds)
