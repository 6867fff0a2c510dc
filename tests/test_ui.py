"""What a researcher sees without configuring anything: the experiment opens on its runs, names
tell runs apart, descriptions say what ran and how it came out, and the console stays short."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, runs_of
from mlflow.tracking import MlflowClient

from lincls import tracking
from lincls.figures import FIGURE_FILE
from lincls.tracking import progress, record, tags, view
from lincls.tracking.describe import describe_run, rounded, rounded_ratio

TINY = ["dataset.n=40", "dataset.d=2", "dataset.n_test=10", "certificates.svm=false", "passes=2"]
GRID = ["learner.bias=none,feature", "dataset.margin=0.05,0.1", "dataset.radius=1,2", "seed=0,1"]


def _split(runs):
    parents = [r for r in runs if r.data.tags.get("lincls.role") == "sweep"]
    return parents, [r for r in runs if r.data.tags.get("lincls.role") == "run"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ui")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    args = ["-m", *GRID, "learner.lr=1,2", *TINY, f"tracking.uri={uri}",
            f"hydra.sweep.dir={tmp / 'sweep'}"]  # fmt: skip
    done = run_cli(args, cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return uri, done


def test_the_experiment_opens_on_model_training_runs_and_says_how_to_read_them(sweep):
    uri, _ = sweep
    experiment = MlflowClient(tracking_uri=uri).get_experiment_by_name("lincls")
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    assert "bound_ratio.<theorem>` = mistakes / bound" in experiment.tags["mlflow.note.content"]


def test_every_child_has_a_distinct_name_a_label_a_dataset_input_and_no_null_param(sweep):
    uri, _ = sweep
    parents, children = _split(runs_of(uri))
    assert len(parents) == 1 and len(children) == 32
    names = Counter(r.info.run_name for r in children)
    assert len(names) == 32, names.most_common(3)  # one name per distinct config
    assert {r.data.tags["lincls.config_hash"] for r in children}.__len__() == 32
    for run in children:  # as read: its rows and its record's values
        params, t = run.data.params, run.data.tags
        assert "null" not in params.values() and "None" not in params.values()
        bias = params["learner.bias"]
        assert t["learner_label"] == f"perceptron (bias={bias})"
        name = run.info.run_name
        seed = params["seed"]
        # learner, γ and R first (MLflow's UI cuts a long name at its end), then seed, dataset
        margin, radius = params["dataset.margin"], float(params["dataset.radius"])
        assert name.startswith(f"perceptron[{bias}] γ={margin} R={radius:g} s{seed} separable lr=")
        assert name.endswith(f"lr={float(params['learner.lr']):g}")
        (data,) = run.inputs.dataset_inputs
        assert data.dataset.digest == t["dataset.fingerprint"]
        assert data.dataset.name == "separable 40×2"
        assert t["mlflow.source.git.commit"] == tracking.git_commit()
        # the view's columns: the metrics rounded, as tags; the metrics keep every digit
        m = run.data.metrics
        assert t["ratio"] == f"{m['bound_ratio.tightest']:.4g}"
        assert t["mistakes"] == str(int(m["mistakes"]))
        assert t["bound"] == rounded(m["bound.tightest"])
        assert (t["γ"], t["R"]) == (f"{m['margin']:.4g}", f"{m['radius']:.4g}")
        note = t["mlflow.note.content"]
        assert note.split("\n\n", 1)[1].startswith(f"**perceptron (bias={bias})** on **separable**")
        assert f"ratio mistakes/bound = **{t['ratio']}**" in note
        assert f"Tightest a priori bound: **{t['bound.tightest']}**" in note
    # rounded in the tags, every digit in the metrics
    assert max(len(repr(r.data.metrics["bound_ratio.tightest"])) for r in children) >= 17


def test_a_curve_has_its_bound_beside_it_in_the_record_the_figure_is_drawn_from(sweep):
    uri, _ = sweep
    _, children = _split(runs_of(uri))
    run = MlflowClient(tracking_uri=uri).get_run(children[0].info.run_id)  # as stored
    curves = record.read(run.data.tags).curves
    bound, mistakes = curves["cumulative_mistakes_bound"], curves["cumulative_mistakes"]
    assert {v for _, v in bound} == {run.data.metrics["bound.tightest"]}
    assert [s for s, _ in bound] == [mistakes[0][0], mistakes[-1][0]]
    # the run's description opens with that figure, and names no chart of MLflow's
    figure = record.recorded_artifacts(run.data.tags)[FIGURE_FILE]
    assert f"bound {run.data.tags['bound.tightest']} = " in figure
    assert "Charts" not in run.data.tags["mlflow.note.content"]


def test_the_parent_has_its_headline_as_description_and_metrics(sweep):
    uri, done = sweep
    parents, children = _split(runs_of(uri))
    (parent,) = parents
    m = parent.data.metrics
    assert m["sweep.runs"] == 32 and m["sweep.failed"] == 0 and m["sweep.violations"] == 0
    ratios = [r.data.metrics["bound_ratio.tightest"] for r in children
              if r.data.tags["learner_label"] == "perceptron (bias=none)"]  # fmt: skip
    assert m["tightest_ratio.max/perceptron bias none"] == max(ratios)
    note = parent.data.tags["mlflow.note.content"]
    assert "32 runs finished, **0 failed**" in note and "**0 bound violations**" in note
    assert "| perceptron (bias=none) | 16 |" in note
    assert done.stderr.splitlines()[-1].startswith("[lincls] sweep adhoc-")
    assert ": 32 jobs: 32 finished" in done.stderr.splitlines()[-1]


def test_a_200_job_sweep_without_a_terminal_prints_at_most_30_progress_lines(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["-m", "seed=range(0,200)", *TINY, "passes=1", f"tracking.uri={uri}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}"]  # fmt: skip
    done = run_cli(args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [x for x in done.stderr.splitlines() if x.startswith("[lincls] ")]
    progress_lines = [x for x in lines if " done, " in x]
    assert 1 <= len(progress_lines) <= 30, len(progress_lines)
    assert lines[-1].startswith("[lincls] sweep adhoc-seed-")
    assert ": 200 jobs: 200 finished, 0 failed" in lines[-1]
    assert len(_split(runs_of(uri))[1]) == 200


def test_under_a_terminal_the_bar_redraws_in_place(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["-m", "seed=range(0,30)", *TINY, "passes=1", f"tracking.uri={uri}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}"]  # fmt: skip
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "lincls.experiments.run", *args], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert child.wait(timeout=300) == 0
    os.close(leader)
    text = b"".join(chunks).decode(errors="replace")
    bar = text[text.index("[lincls]:") :]
    assert bar.count("\r") >= 5  # redrawn in place, not a line per job
    assert "30/30" in bar and "run/s" in bar
    assert "[lincls] 1/30 done" not in text  # no per-job lines on a terminal


def test_progress_lines_are_throttled_to_five_percent_steps():
    class Sink:
        def __init__(self):
            self.lines = []

        def write(self, text):
            self.lines += [x for x in text.splitlines() if x]

        def flush(self):
            pass

    sink = Sink()
    view = progress.View(stream=sink, last_line=float("inf"))  # no time-based lines
    for done in range(1, 1001):
        view.show(progress.Counts(total=1000, started=0.0, done=done))
    assert len(sink.lines) == 19  # 5 %, 10 %, … 95 %; the summary line says 100 %


def test_a_progress_files_counts_follow_what_was_appended(tmp_path):
    path = str(tmp_path / "progress.log")
    for status in ["finished", "failed", "finished", "skipped", "failed"]:
        progress.append(path, {"status": status})
    counts = progress.Counts.of_file(path, total=9, started=0.0)
    assert (counts.done, counts.failed, counts.skipped) == (5, 2, 1)
    with open(path, "a") as handle:
        handle.write('{"status": "fai')  # a line still being written is not counted yet
    assert progress.Counts.of_file(path, 9, 0.0).done == 5
    with open(path, "a") as handle:
        handle.write('led"}\n')
    assert progress.Counts.of_file(path, 9, 0.0).failed == 3
    with open(path, "w") as handle:  # a new sweep in the same place
        handle.write('{"status": "skipped"}\n')
    counts = progress.Counts.of_file(path, 9, 0.0)
    assert (counts.done, counts.failed, counts.skipped) == (1, 0, 1)


def test_run_names_and_labels_are_compact_and_show_the_rule():
    config = {"learner": {"name": "passive_aggressive", "variant": "pa1", "bias": "feature",
                          "C": 1.0},
              "dataset": {"name": "separable", "margin": 0.025, "radius": 4.0}, "order": "fixed",
              "seed": 3}  # fmt: skip
    assert tags.learner_label(config["learner"]) == "passive_aggressive (bias=feature, variant=pa1)"
    assert tags.run_name(config, "learner.C=1.0 seed=3 dataset.radius=4") == (
        "passive_aggressive[feature,pa1] γ=0.025 R=4 s3 separable C=1.0"
    )
    # an order other than the default is named, after what the dataset is
    assert tags.run_name({**config, "order": "adversarial"}, "seed=3") == (
        "passive_aggressive[feature,pa1] γ=0.025 R=4 s3 separable adversarial"
    )
    # a dataset without a margin or radius: the seed follows the learner
    real = {**config, "dataset": {"name": "breast_cancer"}, "seed": 0}
    assert tags.run_name(real, "seed=0") == "passive_aggressive[feature,pa1] s0 breast_cancer"


def test_numbers_read_as_what_they_mean_and_the_view_s_tags_round_the_metrics():
    assert [rounded(v) for v in (8.0, 12345.0, 7.999999999999998, 0.9999999999999999)] == [
        "8", "12,345", "8", "1"]  # fmt: skip
    assert [rounded(v) for v in (0.10326923573286366, 38.73370391107745, 123456.7)] == [
        "0.1033", "38.73", "123,457"]  # fmt: skip
    assert [rounded(v) for v in (2.85e-16, 5000, "fixed")] == ["2.85e-16", "5,000", "fixed"]
    # a ratio further than rounding (1e-9) from 1 never reads 1: a broken bound, one not met
    assert [rounded_ratio(v) for v in (1.0, 1.0 + 1e-12, 1.0000000012, 0.99996, 0.25938)] == [
        "1", "1", "1.000000001", "0.99996", "0.2594"]  # fmt: skip
    metrics = {"bound_ratio.tightest": 0.10326923573286366, "mistakes": 4.0,
               "bound.tightest": 38.73370391107745, "margin": 0.19999999999999998,
               "radius": 0.9999999999999999, "bound_slack.progress": 0.3469066711348695,
               "bound_slack.angle": 1.0000000000000002, "bound_slack.norm": 0.2411791855477086,
               "passes_run": 2.0}  # fmt: skip
    assert view.shown_tags(metrics) == {
        "ratio": "0.1033", "mistakes": "4", "bound": "38.73", "γ": "0.2", "R": "1",
        "slack.progress": "0.3469", "slack.angle": "1", "slack.norm": "0.2412"}  # fmt: skip
    assert view.shown_tags({"mistakes": 7.333333333333333}) == {"mistakes": "7.333"}  # a mean
    note = describe_run(
        {"learner": {"name": "perceptron"}, "dataset": {"name": "separable", "n": 20000},
         "seed": 1, "passes": 1},
        {**metrics, "mistakes": 12345.0, "bound.tightest": 98765.4321,
         "bound_ratio.tightest": 0.12499301},
        {"bound.tightest": "novikoff"},
    )  # fmt: skip
    assert "(n=20,000)" in note and "12,345 mistakes in 2 passes" in note
    assert "(certified margin γ = 0.2, radius R = 1)" in note
    assert "**novikoff** = 98,765, ratio mistakes/bound = **0.125**" in note
    assert "progress 0.3469 · angle 1 · norm 0.2412: held back by **norm**" in note


def test_the_ui_app_sets_model_training_and_a_closed_assistant_as_defaults_once():
    from lincls.experiments.ui_app import SCRIPT, with_default_workflow

    page = b"<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>"
    served = with_default_workflow(page)
    assert served.startswith(b"<!doctype html><html><head><script>")
    assert served.count(b"<script>") == 1 and with_default_workflow(served) == served
    # each default is stored only where the browser has none (what a researcher set is kept)
    defaults = json.loads(SCRIPT[SCRIPT.index("var d=") + 6 : SCRIPT.index(";for(")])
    assert defaults == {"mlflow.workflowType_v1": '"machine_learning"',
                        "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true"}  # fmt: skip
    assert "if(window.localStorage.getItem(k)===null)" in SCRIPT
    assert with_default_workflow(b"not a page") == b"not a page"


def test_the_keys_the_ui_page_sets_are_the_ones_mlflow_s_ui_reads():
    import mlflow

    # the UI's useLocalStorage stores under f"{key}_v{version}", the value as JSON
    bundle = "".join(
        path.read_text(errors="replace")
        for path in (Path(mlflow.__file__).parent / "server/js/build/static/js").glob("main.*.js")
    )
    assert 'key:"mlflow.workflowType",version:1' in bundle
    # the Assistant panel opens on a first visit unless this flag says it did already
    assert 'key:"mlflow.assistant.fab.autoOpenedOnFirstLoad",version:1' in bundle
    assert 'FIRST_10_RUNS="FIRST_10_RUNS"' in bundle  # the view's selection of charted runs


MLFLOW_LAUNCH = """
import json, os, sys
import mlflow.server as server
from mlflow.cli import cli
seen = {}
class Started:
    pid = 0
    def wait(self): pass
    def poll(self): return 0
def record(command, extra_env=None, **_):
    seen["command"] = command
    seen["env"] = {**{k: v for k, v in os.environ.items() if "MLFLOW" in k}, **extra_env}
    return Started()
server._exec_cmd = record  # MLflow's launch up to its server process, which is recorded
cli.main(sys.argv[1:], standalone_mode=False)
print(json.dumps(seen))
"""


@pytest.mark.parametrize("root", [True, False], ids=["artifact root", "served artifacts"])
def test_lincls_ui_gives_the_server_the_environment_mlflow_server_gives_it(tmp_path, root):
    from importlib.metadata import entry_points

    from lincls.experiments.cli import UI_APP, ui_command, ui_environment

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    tracking.open_experiment(uri)
    artifacts = tracking.artifact_root(uri) if root else None
    arguments = ["server", "--app-name", "lincls", "--backend-store-uri", uri,
                 "--host", "127.0.0.1", "--port", "5009", "--workers", "2"]  # fmt: skip
    if root:
        arguments += ["--default-artifact-root", artifacts]
    clean = {k: v for k, v in os.environ.items() if "MLFLOW" not in k}
    done = subprocess.run(
        [sys.executable, "-c", MLFLOW_LAUNCH, *arguments], capture_output=True, text=True,
        cwd=tmp_path, timeout=120, env={**clean, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    mlflow_launch = json.loads(done.stdout.strip().splitlines()[-1])
    ours = ui_environment(uri, artifacts)
    theirs = mlflow_launch["env"]
    boot = "_MLFLOW_SERVER_BOOT_ID"  # a fresh id each launch
    assert len(ours.pop(boot)) == len(theirs.pop(boot)) == 32
    assert ours == theirs
    # the same app: MLflow's server names the entry point's factory
    (app,) = [e for e in entry_points(group="mlflow.app") if e.name == "lincls"]
    assert mlflow_launch["command"][-2:] == ["--factory", app.value]
    assert UI_APP == app.value + "()"
    command, env, store = ui_command(["--store", uri, "--port", "5009"])
    assert store == uri and env["_MLFLOW_SERVER_ARTIFACT_ROOT"] == tracking.artifact_root(uri)
    assert command[command.index("--bind") + 1] == "127.0.0.1:5009"
    assert command[command.index("--workers") + 1] == "2" and "--preload" in command
    assert command[-1] == UI_APP


def test_lincls_ui_on_a_foreign_sqlite_file_is_one_line_and_leaves_it_as_it_was(tmp_path, capsys):
    import sqlite3

    from lincls.experiments import cli

    foreign = tmp_path / "mine.db"
    with sqlite3.connect(foreign) as db:
        db.execute("create table foo(x)")
    before = foreign.read_bytes()
    assert cli.main(["ui", "--store", f"sqlite:///{foreign}", "--port", "5999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --store: ")
    assert "is not an MLflow store (its tables: foo)" in err
    assert foreign.read_bytes() == before


def test_the_view_is_a_saved_view_of_the_runs_alone_with_every_column_wide_enough():
    envelope = json.loads(tracking.view_state())
    assert envelope["name"] == "lincls" and isinstance(envelope["createdAt"], int)
    assert tracking.view_state() == tracking.view_state()  # one string: written once per change
    state = json.loads(envelope["state"])
    assert state == tracking.view_ui_state()
    assert state["searchFilter"].startswith("tags.`lincls.role` = 'run' AND tags.dataset != ")
    # sorted by a metric: MLflow's UI fetches the runs' parents only for the start-time order
    assert state["orderByKey"] == "metrics.`bound_ratio.tightest`"
    # the Chart tab draws the table's first 10 runs (the closest to their bound), not all
    assert state["runsHiddenMode"] == "FIRST_10_RUNS"
    assert [c["runsCountToCompare"] for c in state["compareRunCharts"]] == [10, 10]
    (section,) = state["compareRunSections"]
    assert (section["columns"], section["cardHeight"]) == (2, 400)  # the two charts in a row
    # what tells runs apart first: name (learner, γ, R first), ratio, learner, dataset
    assert state["columnOrder"][:5] == ["attributes.`Run Name`", "tags.`ratio`",
                                        "tags.`learner_label`", "tags.`dataset`",
                                        "tags.`mistakes`"]  # fmt: skip
    # the numbers shown are the rounded tags, never a metric's every digit
    assert not [c for c in state["columnOrder"] if c.startswith("metrics.")]
    assert {f"tags.`{t}`" for t in view.SHOWN} <= set(state["columnOrder"])
    # in a 1400 px window the table is 1,131 px wide (measured): the first four are in view
    pinned = 73 + state["columnWidths"]["attributes.`Run Name`"] + 150  # checkbox, name, Created
    first = sum(state["columnWidths"][c] for c in state["columnOrder"][1:4])
    assert pinned + first == 1093 <= 1131
    assert set(state["columnOrder"]) == set(state["columnWidths"])
    assert set(state["selectedColumns"]) == set(state["columnOrder"]) - {"attributes.`Run Name`"}
    for column, width in state["columnWidths"].items():
        header = column.split("`")[1]
        assert width >= 8 * len(header) + 30, column  # ~7 px a header character, the sort icon


def test_the_ui_page_gives_each_lincls_experiment_its_view_where_the_browser_has_none():
    from types import SimpleNamespace

    from lincls.experiments.ui_app import seed_script, table_key, views_of, with_default_workflow

    experiments = [
        SimpleNamespace(experiment_id="7", tags={tracking.VIEW_TAG: tracking.view_state()}),
        SimpleNamespace(experiment_id="8", tags={}),
        SimpleNamespace(experiment_id="9", tags={tracking.VIEW_TAG: "{not json"}),
    ]
    views = views_of(experiments)
    assert list(views) == ["7"] and json.loads(views["7"]) == tracking.view_ui_state()
    assert table_key("7") == 'MLflowLocalStorage-1.1-ExperimentPage-["7"]-ReactComponentState'
    script = seed_script(views)
    assert "getItem(k)===null" in script and "</" not in script[8:-9]
    page = with_default_workflow(b"<html><head></head><body></body></html>", views)
    assert page.count(b"<script>") == 2 and seed_script({}) == ""


def test_the_ui_s_runs_search_asks_a_page_of_a_thousand_runs():
    import io

    from lincls.experiments.ui_app import RUNS_SEARCH, larger_page, larger_pages

    assert json.loads(larger_page(b'{"max_results": 100, "filter": "x"}')) == {
        "max_results": 1000, "filter": "x"}  # fmt: skip
    assert larger_page(b'{"max_results": 5000}') == b'{"max_results": 5000}'
    assert larger_page(b"not json") == b"not json"
    seen = {}

    def app(environ, start_response):
        seen["body"] = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
        return []

    body = b'{"experiment_ids": ["1"], "max_results": 100}'
    environ = {"PATH_INFO": RUNS_SEARCH, "REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
               "wsgi.input": io.BytesIO(body)}  # fmt: skip
    larger_pages(app)(environ, None)
    assert json.loads(seen["body"])["max_results"] == 1000
