"""Issue 33's table of bad input, row by row: each is one line naming its field and what it
allows, a non-zero exit, and nothing left behind: no store (not even its file), no run, no
Hydra run or sweep directory. A sweep with one bad value is refused before its first job."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli

from lincls.errors import LinclsInputError

GAME_CAP = "50,000,000 values (381 MiB of float64)"
SUPPORT = (
    "a support vector of 20 features (with its norm, coefficient and kernel value) takes 184.0 B"
)
# (name, arguments, field, what the line says after "error: <field>: "; " … " stands for a part
# that depends on the machine's free memory or on the test's directory)
RUNS = [
    ("permutations", ["orders.permutations=10000000"], "orders.permutations",
     "must be an integer in [1, … ], got 10000000: an ordering of 1000 rows × 20 columns (its "
     "learner, presentations, record) takes 27.6 KiB, 10000000 of them 263.2 GiB, and this "
     "machine has … of memory available"),
    ("permutations shuffled", ["orders.permutations=10000000", "order=shuffled"],
     "orders.permutations", "must be an integer in [1, … ], got 10000000: an ordering of 1000 rows"
     " × 20 columns (its learner, presentations, record) takes 27.6 KiB, 10000000 of them 263.2 "
     "GiB, and this machine has … of memory available"),
    ("disjunction game attributes", ["dataset=disjunction_game", "dataset.n_attributes=100000000",
     "dataset.k=1"], "dataset.n_attributes",
     "must be an integer in [1, 2097151], got 100000000: the littlestone adversary holds at least "
     f"29 rows of N = 100000000 values with k = 1 and extend, and rows × N must stay within "
     f"{GAME_CAP}"),
    ("perceptron game margin", ["dataset=perceptron_game", "dataset.margin=1e-9"],
     "dataset.margin", "must be a number in (0.000632456, 1], got 1e-09: the game plays "
     "⌊(R/γ)²⌋ + 1 = 999,999,999,999,999,745 rounds a pass at radius = 1, and passes × rounds × "
     f"d must stay within {GAME_CAP}, with passes = 10 and d = 2"),
    ("boolean given 2", ["learner=romma", "learner.aggressive=2"], "learner.aggressive",
     "must be true or false, got 2"),
    ("boolean given yes", ["certificates.best=yes"], "certificates.best",
     "must be true or false, got 'yes'"),
    ("forgetron budget", ["learner=forgetron", "learner.budget=1000000000000"], "learner.budget",
     f"must be an integer in [1, … ], got 1000000000000: {SUPPORT}, 1000000000001 of them 167.3 "
     "TiB, and this machine has … of memory available"),
    ("budget perceptron budget", ["learner=budget_perceptron",
     "learner.budget=99999999999999999999"], "learner.budget",
     f"must be an integer in [1, … ], got 99999999999999999999: {SUPPORT}, 99999999999999999999 "
     "of them 16342482.9 PiB, and this machine has … of memory available"),
    ("sweep, bad learner value", ["-m", "learner=arow", "learner.r=1,-1"], "learner.r",
     "must be a number in (0, inf), got -1.0 (config 2 of 2: learner=arow learner.r=-1 "
     "tracking.uri= … ; no config was run)"),
    ("sweep, bad budget", ["-m", "learner=forgetron", "learner.budget=10,0"], "learner.budget",
     "must be an integer in [1, inf), got 0 (config 2 of 2: learner=forgetron learner.budget=0 "
     "tracking.uri= … ; no config was run)"),
    ("sweep, boolean given 2", ["-m", "learner=romma", "learner.aggressive=true,2"],
     "learner.aggressive", "must be true or false, got 2 (config 2 of 2: learner=romma "
     "learner.aggressive=2 tracking.uri= … ; no config was run)"),
    ("sweep, huge game", ["-m", "dataset=perceptron_game", "dataset.margin=0.1,1e-9"],
     "dataset.margin", "must be a number in (0.000632456, 1], got 1e-09: … (config 2 of 2: "
     "dataset=perceptron_game dataset.margin=1e-09 tracking.uri= … ; no config was run)"),
    ("sweep, bad seed", ["-m", "seed=0,1,-1"], "seed",
     "must be an integer in [0, 4294967295], got -1 (config 3 of 3: seed=-1 tracking.uri= … ; no "
     "config was run)"),
    ("sweep of a pool", ["-m", "hydra.launcher.n_jobs=2", "learner=arow", "learner.r=1,2,-1"],
     "learner.r", "must be a number in (0, inf), got -1.0 (config 3 of 3: learner=arow "
     "learner.r=-1 tracking.uri= … ; no config was run)"),
]  # fmt: skip


def _line(done, field: str) -> str:
    """The one line of a refused command (and its exit status 2)."""
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert done.stdout.strip() == "", done.stdout[-2000:]
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    return lines[0]


def _says(line: str, says: str) -> None:
    """``line`` is ``says``, its " … " parts standing for anything."""
    pattern = ".+".join(re.escape(part) for part in says.split(" … "))
    assert re.fullmatch(pattern, line), (line, says)


def _memory_numbers(line: str, each: float, extra: int) -> None:
    """The largest value the line allows is what fits in the memory it says is available."""
    high = int(re.search(r"in \[1, (\d+)\]", line).group(1))
    have, unit = re.search(r"machine has ([\d.]+) (GiB|MiB|TiB) of memory", line).groups()
    scale = {"MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    low_have, high_have = (float(have) - 0.05) * scale, (float(have) + 0.05) * scale
    assert (high + extra) * each <= high_have and (high + extra + 1) * each > low_have, line


@pytest.mark.parametrize("name, arguments, field, says", RUNS, ids=[r[0] for r in RUNS])
def test_each_row_is_one_line_and_leaves_nothing(name, arguments, field, says, tmp_path):
    db = tmp_path / "store" / "mlflow.db"
    done = run_cli([*arguments, f"tracking.uri=sqlite:///{db}"], cwd=tmp_path, timeout=240)
    line = _line(done, field)
    _says(line, f"error: {field}: {says}")
    if "support vector" in says:
        _memory_numbers(line, 184, 1 if "forgetron" in arguments[0] else 0)
    if "an ordering of" in says:
        _memory_numbers(line, 24 * 1000 + 8 * 20 + 4096, 0)
    assert os.listdir(tmp_path) == []  # no store, no results/hydra/runs/…, no sweep directory


def test_a_refused_run_in_a_directory_of_its_own_leaves_that_directory_as_it_was(tmp_path):
    """hydra.run.dir given and already holding a file: the .hydra/ files and the empty log go,
    the directory and what was in it stay."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("kept")
    done = run_cli(["learner=romma", "learner.aggressive=2", f"hydra.run.dir={out}",
                    f"tracking.uri=sqlite:///{tmp_path / 'm.db'}"], cwd=tmp_path)  # fmt: skip
    _line(done, "learner.aggressive")
    assert os.listdir(tmp_path) == ["mine"] and os.listdir(out) == ["notes.txt"]


def test_a_run_that_is_not_refused_keeps_its_directory(tmp_path):
    done = run_cli(["dataset.n=50", "certificates.svm=false",
                    f"tracking.uri=sqlite:///{tmp_path / 'm.db'}"], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (run_dir,) = (tmp_path / "results" / "hydra" / "runs").iterdir()
    assert sorted(p.name for p in run_dir.iterdir()) == [".hydra", "run.log"]


@pytest.fixture
def one_run_store(tmp_path) -> str:
    """A store holding one finished run of study ``adhoc``."""
    uri = f"sqlite:///{tmp_path / 'runs.db'}"
    done = run_cli(["dataset.n=50", "certificates.svm=false", "certificates.best=false",
                    f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'run'}"],
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return uri


def _command(module: str, arguments: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *arguments], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=240,
    )  # fmt: skip


def test_the_reports_out_and_store_are_one_line_each(one_run_store, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")

    def listed() -> list[str]:  # the store's own files (its WAL) come and go as it is read
        return sorted(p for p in os.listdir(tmp_path) if not p.startswith("runs.db"))

    before = listed()
    cases = [
        (["adhoc", "--tracking-uri", one_run_store, "--out", str(text)], "--out",
         f"{text} is a file, not a directory"),
        (["adhoc", "--tracking-uri", one_run_store, "--out", "/proc/x"], "--out",
         "cannot make /proc/x (No such file or directory)"),
        (["--tracking-uri", f"sqlite:///{text}", "adhoc"], "--store",
         f"{text} is not a SQLite database, so not an MLflow store"),
        (["--tracking-uri", f"sqlite:///{tmp_path / 'none' / 'm.db'}", "adhoc"], "--store",
         f"no MLflow store at sqlite:///{tmp_path / 'none' / 'm.db'} (run a sweep first)"),
    ]  # fmt: skip
    for arguments, field, says in cases:
        done = _command("lincls.experiments.report", arguments, tmp_path)
        assert _line(done, field) == f"error: {field}: {says}"
    assert listed() == before
    assert text.read_text() == "not a database\n"


def test_lincls_ui_never_makes_a_missing_store(tmp_path):
    store = f"sqlite:///{tmp_path / 'missing' / 'none.db'}"
    done = _command("lincls.experiments.cli", ["ui", "--store", store, "--port", "5998"], tmp_path)
    assert _line(done, "--store") == (
        f"error: --store: no MLflow store at {store} (run a sweep first)"
    )
    assert os.listdir(tmp_path) == []


def test_the_reader_says_one_line_for_a_file_that_is_no_store_and_an_unknown_study(
    one_run_store, tmp_path
):
    from lincls.tracking import reader

    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    with pytest.raises(LinclsInputError) as caught:
        reader.runs(f"sqlite:///{text}")
    assert str(caught.value) == f"uri: {text} is not a SQLite database, so not an MLflow store"
    with pytest.raises(LinclsInputError) as caught:
        reader.runs(one_run_store, study="nosuch")
    assert (
        str(caught.value)
        == f"study: no run of study 'nosuch' in {one_run_store}; its studies: adhoc"
    )
    # a known study none of whose runs is chosen is an empty table, not an error
    assert reader.runs(one_run_store, study="adhoc", status="FAILED").empty
    assert len(reader.runs(one_run_store, study="adhoc")) == 1
