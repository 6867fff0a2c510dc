"""The study report (``lincls report``) on a finished bound-verification sweep.

The sweep is real runs (``lincls.runner.execute``) in a real SQLite store; ``record_sweep`` adds
the parent run and the child tags a multirun leaves. Every number the report prints is
recomputed here from ``search_runs``, not from the report's own table.
"""

from __future__ import annotations

import copy
import functools
import importlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT, as_read, compose_config
from hydra import compose, initialize_config_dir
from matplotlib.image import imread
from mlflow.entities import RunTag
from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf

from lincls import runner
from lincls.bounds import holds, source_of
from lincls.errors import LinclsInputError
from lincls.experiments import report
from lincls.tracking import record

STUDY = "bv_test"
GAMMAS = (0.05, 0.1, 0.2)
RADII = (1.0, 10.0)
ORTHONORMAL_D = (4, 16, 64)
PLOTS = set(report.PLOT_FILES)


@functools.cache
def _composed(groups: tuple[str, ...]):
    """``conf/config.yaml`` with the config-group choices ``groups``, not yet resolved."""
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(groups))


def compose_fast(overrides: list[str]) -> dict:
    """What ``compose_config(overrides)`` gives, composing each set of group choices once.

    Value overrides (``key=value``) are set on a copy of the composed tree, so the schema still
    checks their types and interpolations such as ``dataset.seed: ${seed}`` still follow.
    """
    groups = tuple(
        o
        for o in overrides
        if "." not in o.split("=")[0] and o.split("=")[0] in ("learner", "dataset")
    )
    cfg = copy.deepcopy(_composed(groups))
    for override in overrides:
        if override not in groups:
            key, value = override.split("=", 1)
            OmegaConf.update(cfg, key, yaml.safe_load(value), merge=False)
    return OmegaConf.to_container(cfg, resolve=True)


def record_sweep(uri: str, tmp: Path, study: str, configs: list[list[str]]) -> tuple[str, list]:
    """Run ``configs`` (Hydra overrides) as one sweep of ``study``: a parent run tagged
    ``lincls.role=sweep``, children tagged with its id, role ``run`` and the study.

    Stands in for a multirun, which leaves the same runs and tags.
    """
    client, experiment_id = runner.tracking.open_experiment(uri)
    parent = client.create_run(
        experiment_id, run_name=study, tags={"lincls.role": "sweep", "lincls.study": study}
    ).info.run_id
    outcomes = []
    for overrides in configs:
        config = compose_fast(
            [*overrides, f"tracking.uri={uri}", f"certificates.cache_dir={tmp / 'certificates'}"]
        )
        config["study"] = study
        outcome = runner.execute(config)
        tags = {"mlflow.parentRunId": parent, "lincls.role": "run", "lincls.study": study}
        client.log_batch(outcome.run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        outcomes.append(outcome)
    client.set_terminated(parent, "FINISHED")
    time.sleep(0.01)  # the next sweep starts a later millisecond: "newest" is well defined
    return parent, outcomes


def test_fast_composition_is_hydra_composition():
    overrides = [
        "learner=passive_aggressive",
        "learner.bias=none",
        "dataset=separable",
        "dataset.margin=0.05",
        "dataset.radius=10",
        "seed=1",
        "order=adversarial",
    ]
    assert compose_fast(overrides) == compose_config(overrides)
    assert compose_fast(overrides)["dataset"]["seed"] == 1


def bound_verification_configs() -> list[list[str]]:
    """Two learners with bounds × γ × R × seeds × orders on separable data, the orthonormal
    instance at three d and two R, and two runs on the plane."""
    configs = []
    for learner in ("perceptron", "passive_aggressive"):
        for gamma in GAMMAS:
            for radius in RADII:
                for seed in (0, 1):
                    for order in ("fixed", "adversarial"):
                        configs.append(
                            [
                                f"learner={learner}",
                                "learner.bias=none",
                                "dataset=separable",
                                f"dataset.margin={gamma}",
                                f"dataset.radius={radius}",
                                "dataset.n=200",
                                "dataset.d=10",
                                "dataset.n_test=100",
                                f"seed={seed}",
                                f"order={order}",
                            ]
                        )
        for d in ORTHONORMAL_D:
            for radius in RADII:
                configs.append(
                    [
                        f"learner={learner}",
                        "learner.bias=none",
                        "dataset=orthonormal",
                        f"dataset.d={d}",
                        f"dataset.radius={radius}",
                    ]
                )
    for seed in (0, 1):
        configs.append(
            [
                "learner=perceptron",
                "dataset=plane",
                "dataset.offset=0.3",
                "dataset.n=100",
                "dataset.n_test=50",
                f"seed={seed}",
            ]
        )
    return configs


@pytest.fixture(scope="module")
def study(tmp_path_factory, _migrated_store):
    """The finished sweep, and its report written by study name and by parent run id."""
    tmp = tmp_path_factory.mktemp("report")
    shutil.copyfile(_migrated_store, tmp / "mlflow.db")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    parent, _ = record_sweep(uri, tmp, STUDY, bound_verification_configs())
    by_name, by_id = tmp / "by_name", tmp / "by_id"
    assert report.main([STUDY, "--tracking-uri", uri, "--out", str(by_name)]) == 0
    assert report.main([parent, "--tracking-uri", uri, "--out", str(by_id)]) == 0
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("lincls").experiment_id
    runs = client.search_runs(
        [experiment], f"tags.`mlflow.parentRunId` = '{parent}'", max_results=1000
    )
    runs = [as_read(run) for run in runs]  # a run's record's values among its own
    return {
        "uri": uri,
        "tmp": tmp,
        "parent": parent,
        "runs": runs,
        "out": by_name,
        "out_by_id": by_id,
        "text": (by_name / "report.md").read_text(),
    }


def table_rows(text: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header line starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def label(run) -> str:
    """The learner and the options that choose its rule, as its run is tagged."""
    rule = [f"{k}={run.data.params[f'learner.{k}']}" for k in ("bias", "variant")
            if f"learner.{k}" in run.data.params]  # fmt: skip
    assert run.data.tags["learner_label"] == f"{run.data.tags['learner']} ({', '.join(rule)})"
    return run.data.tags["learner_label"]


def test_the_sweep_is_what_the_report_covers(study):
    assert len(study["runs"]) == 62
    assert {r.info.status for r in study["runs"]} == {"FINISHED"}
    assert "- Runs: 62 FINISHED (one per config, the newest)\n" in study["text"]


def test_the_bound_table_matches_the_runs_recomputed(study):
    expected = {}
    for run in study["runs"]:
        m = run.data.metrics
        vacuous = run.data.tags.get("bounds.vacuous", "").split(", ")
        for key in m:
            if key.startswith("bound.") and key.count(".") == 1:
                bound = key.split(".")[1]
                expected.setdefault((label(run), bound), []).append(
                    (m["mistakes"], m[key], m.get(f"bound_ratio.{bound}"), bound in vacuous)
                )
    rows = table_rows(study["text"], "| learner | bound |")
    assert len(rows) == len(expected) > 0
    families = set()
    for learner, bound, family, runs, empty, broke, median, largest, source in rows:
        assert source == ("–" if bound.startswith("tightest") else str(source_of(bound)))
        values = expected[(learner, bound)]
        ratios = [r for _, _, r, _ in values if r is not None]
        assert int(runs) == len(values)
        assert int(empty) == sum(v for *_, v in values) == len(values) - len(ratios)
        assert int(broke) == sum(not holds(m, b) for m, b, _, _ in values) == 0
        if ratios:
            assert float(median) == pytest.approx(float(np.median(ratios)), rel=5e-6)
            assert float(largest) == pytest.approx(max(ratios), rel=5e-6)
        else:
            assert median == largest == "–"
        families.add((bound, family))
    assert ("mohri_rostamizadeh", "a posteriori") in families
    assert ("tightest_a_posteriori", "a posteriori") in families
    assert ("novikoff", "a priori") in families and ("tightest", "a priori") in families
    assert {(r[0], r[1]) for r in rows} >= {
        ("perceptron (bias=none)", "novikoff"),
        ("passive_aggressive (bias=none, variant=pa1)", "pa1"),
        ("perceptron (bias=feature)", "novikoff_bias"),
    }
    assert "Violations in all: **0**." in study["text"]
    assert "tagged `bound_violated=true`: 0" in study["text"]


def test_the_tight_family_shows_ratio_exactly_one(study):
    tight = [r for r in study["runs"] if r.data.tags["dataset"] == "orthonormal"]
    assert len(tight) == 12
    assert {r.data.metrics["bound_ratio.tightest"] for r in tight} == {1.0}
    assert {r.data.metrics["mistakes"] for r in tight} == {4.0, 16.0, 64.0}
    assert (
        "- `orthonormal`: 12 runs, tightest a priori bound ratio 1.0 to 1.0 "
        "(every run meets its bound: ratio 1 within 1e-9)"
    ) in study["text"]
    loose = [
        r.data.metrics["bound_ratio.tightest"]
        for r in study["runs"]
        if r.data.tags["dataset"] == "separable" and "bound_ratio.tightest" in r.data.metrics
    ]
    line = next(x for x in study["text"].splitlines() if x.startswith("- `separable`"))
    low, high = (float(v) for v in line.split("ratio ")[1].split(" to "))
    assert low == pytest.approx(min(loose), rel=5e-6)
    assert high == pytest.approx(max(loose), rel=5e-6)
    # Freund–Schapire at v = 0 is the number of presentations; the adversary presents only
    # mistakes, so there it would meet the bound exactly. It is vacuous there, never the tightest.
    assert high < 1.0
    adversarial = [r for r in study["runs"] if r.data.tags["order"] == "adversarial"]
    vacuous = [r for r in adversarial if "freund_schapire" in r.data.tags.get("bounds.vacuous", "")]
    assert vacuous and all("bound_ratio.freund_schapire" not in r.data.metrics for r in vacuous)
    assert all(r.data.tags.get("bound.tightest") != "freund_schapire" for r in vacuous)
    fixed = [
        r.data.metrics["bound_ratio.tightest"]
        for r in study["runs"]
        if r.data.tags["dataset"] == "separable"
        and r.data.tags["order"] == "fixed"
        and "bound_ratio.tightest" in r.data.metrics
    ]
    assert max(fixed) < 1.0


def recomputed_slopes(runs) -> dict[tuple[str, str, str], tuple[float, float]]:
    """log M on log γ and log R per learner × dataset × order, by least squares, from the runs."""
    groups: dict[tuple[str, str, str], list[tuple[float, float, float]]] = {}
    for run in runs:
        m = run.data.metrics
        key = (label(run), run.data.tags["dataset"], run.data.tags["order"])
        groups.setdefault(key, []).append((m["mistakes"], m["margin"], m["radius"]))
    slopes = {}
    for key, values in groups.items():
        mistakes, gamma, radius = np.log(np.array(values)).T
        # γ and R equal up to rounding (1e-9 in log) are the same value: nothing to fit
        if np.ptp(gamma) > 1e-9 and np.ptp(radius) > 1e-9:
            design = np.column_stack([np.ones_like(gamma), gamma, radius])
            coef = np.linalg.lstsq(design, mistakes, rcond=None)[0]
            slopes[key] = (coef[1], coef[2])
    return slopes


def test_slopes_match_theory_on_the_orthonormal_instance(study):
    fits = {
        (f.learner, f.dataset, f.order): f
        for f in report.fit_slopes(report.runs_frame(study["runs"]))
    }
    for learner in ("perceptron (bias=none)", "passive_aggressive (bias=none, variant=pa1)"):
        fit = fits[(learner, "orthonormal", "fixed")]
        # M = d = (R/γ)² exactly, with γ = R/√d measured in floating point: the fit is exact up
        # to rounding (a few ulps of log d), so 1e-9 is the tolerance.
        assert fit.runs == 6 and fit.identity
        assert fit.slope_gamma == pytest.approx(-2.0, abs=1e-9)
        assert fit.slope_radius == pytest.approx(2.0, abs=1e-9)
        assert fit.rms < 1e-9
    rows = table_rows(study["text"], "| learner | dataset | order |")
    shown = {(r[0], r[1], r[2]): r for r in rows}
    assert shown[("perceptron (bias=none)", "orthonormal", "fixed")][4:6] == ["-2.000", "+2.000"]
    assert shown[("perceptron (bias=none)", "orthonormal", "fixed")][7].startswith("identity")
    assert "identity" not in shown[("perceptron (bias=none)", "separable", "fixed")][7]
    # The plane runs share γ and R: there is nothing to fit, and the report says so.
    assert (
        "not fitted: γ and R are the same in every run"
        in shown[("perceptron (bias=feature)", "plane", "fixed")][7]
    )


def test_every_printed_slope_is_the_least_squares_fit_of_the_runs(study):
    expected = recomputed_slopes(study["runs"])
    rows = table_rows(study["text"], "| learner | dataset | order |")
    fitted = {(r[0], r[1], r[2]): (float(r[4]), float(r[5])) for r in rows if r[4] != "–"}
    assert set(fitted) == set(expected)
    assert len(fitted) == 6  # 2 learners × (separable fixed, separable adversarial, orthonormal)
    for key, (s_gamma, s_radius) in fitted.items():
        assert s_gamma == pytest.approx(expected[key][0], abs=5e-4)
        assert s_radius == pytest.approx(expected[key][1], abs=5e-4)
    # On separable data the order is friendly or the adversary runs out of points (n = 200):
    # the slopes are flatter than ±2, but more mistakes at smaller γ and at larger R.
    for learner in ("perceptron (bias=none)", "passive_aggressive (bias=none, variant=pa1)"):
        for order in ("fixed", "adversarial"):
            s_gamma, s_radius = expected[(learner, "separable", order)]
            assert -2.0 < s_gamma < -0.5
            assert 0.5 < s_radius < 2.0


def test_the_plots_are_non_empty_images(study):
    written = {p.name for p in study["out"].glob("*.png")}
    assert written == PLOTS
    for name in PLOTS:
        image = imread(study["out"] / name)
        assert image.ndim == 3 and image.shape[0] >= 300 and image.shape[1] >= 400
        assert image[..., :3].std() > 0.01  # not one colour
        assert "![" in study["text"] and f"]({name})" in study["text"]


def test_the_parent_run_lists_the_report_as_artifacts(study):
    client = MlflowClient(tracking_uri=study["uri"])
    listed = {Path(a.path).name: a for a in client.list_artifacts(study["parent"], "report")}
    assert set(listed) == PLOTS | {"report.md", "runs.csv", "report.html"}
    assert all(a.file_size > 0 for a in listed.values())
    local = client.download_artifacts(study["parent"], "report/report.md", str(study["tmp"]))
    # the same report, its links pointing at the run's artifacts so they open in the UI
    assert Path(local).read_text() == report.artifact_markdown(study["text"], study["parent"])
    assert (
        f"(get-artifact?path=report%2Fruns.csv&run_uuid={study['parent']})"
        in Path(local).read_text()
    )


def test_the_html_report_is_self_contained(study):
    page = (study["out"] / "report.html").read_text()
    assert page.count('<img alt="') == len(PLOTS) == page.count('src="data:image/png;base64,')
    # runs.csv is the file beside the page (in MLflow, the sibling artifact), not a data: download
    assert '<a href="runs.csv" data-artifact="report/runs.csv">' in page
    assert "data:text/csv" not in page and 'location.protocol === "blob:"' in page
    assert "<table>" in page and "<th>learner</th>" in page
    assert "](" not in page  # every markdown link was converted


def test_every_run_gets_its_figure_and_a_colour_no_other_run_has(study):
    from xml.etree import ElementTree

    from lincls.figures import FIGURE_FILE, WIDTH

    client = MlflowClient(tracking_uri=study["uri"])
    colors = []
    for run in study["runs"]:
        # no file: the UI draws it from the run's record (what its artifacts list shows)
        assert not [a for a in client.list_artifacts(run.info.run_id) if "mistakes_and" in a.path]
        tags = client.get_run(run.info.run_id).data.tags
        drawn = record.recorded_artifacts(tags)[FIGURE_FILE]
        svg = ElementTree.fromstring(drawn)
        assert svg.get("width") == str(WIDTH) and len(drawn.encode()) <= 10_000
        texts = [element.text for element in svg.iter("{http://www.w3.org/2000/svg}text")]
        assert f"mistakes {round(run.data.metrics['mistakes']):,}" in texts
        colors.append(tags["mlflow.runColor"])
        # the description opens with the figure, fetched from the server's artifact route
        link = f"get-artifact?path={FIGURE_FILE}&run_uuid={run.info.run_id})"
        note = tags["mlflow.note.content"]
        assert note.startswith("![") and note.split("\n", 1)[0].endswith(link)
        assert note.count(link) == 1 and note.split("\n", 1)[1].strip()  # the text follows
    assert len(set(colors)) == len(colors) == len(study["runs"])


def test_nothing_in_the_report_shows_a_path_of_the_machine(study):
    for name in ("runs.csv", "report.md", "report.html"):
        text = (study["out"] / name).read_text()
        assert str(study["tmp"]) not in text and "sqlite:///" not in text, name


def test_a_report_by_study_name_and_by_parent_id_agree(study):
    for name in ("report.md", "runs.csv"):
        assert (study["out"] / name).read_bytes() == (study["out_by_id"] / name).read_bytes()


def test_the_learner_labels_are_made_once_a_report(study, tmp_path, monkeypatch):
    """Every table and plot groups by the same labels (made once: ~1.4 s at a million runs),
    and the report is the one they each made for themselves."""
    tables = importlib.import_module("lincls.experiments.report.tables")
    made, labels = [], tables.learner_labels

    def counted(frame):
        made.append(frame.shape[0])
        return labels(frame)

    monkeypatch.setattr(tables, "learner_labels", counted)
    monkeypatch.setattr(report, "learner_labels", counted)
    assert report.main([STUDY, "--tracking-uri", study["uri"], "--out", str(tmp_path)]) == 0
    assert made == [62]
    assert (tmp_path / "report.md").read_text() == study["text"]


def test_runs_csv_holds_every_run_with_its_params_metrics_and_tags(study):
    import pandas as pd

    table = pd.read_csv(study["out"] / "runs.csv")
    assert sorted(table["run_id"]) == sorted(r.info.run_id for r in study["runs"])
    by_id = {r.info.run_id: r for r in study["runs"]}
    for row in table.to_dict("records"):
        run = by_id[row["run_id"]]
        assert row["metrics.mistakes"] == run.data.metrics["mistakes"]
        logged = run.data.metrics.get("bound_ratio.tightest")  # none where every bound is vacuous
        shown = row["metrics.bound_ratio.tightest"]
        assert shown == logged if logged is not None else np.isnan(shown)
        assert str(row["params.dataset.name"]) == run.data.params["dataset.name"]
        assert row["tags.lincls.config_hash"] == run.data.tags["lincls.config_hash"]
    for column in (
        "params.dataset.margin",
        "params.seed",
        "params.study",
        "metrics.margin",
        "metrics.radius",
        "metrics.bound_ratio.tightest",
        "tags.learner",
        "tags.dataset",
        "tags.order",
        "tags.lincls.config_hash",
    ):
        assert column in table.columns, column


@pytest.mark.parametrize("rows_at_a_time", [65_536, 3])
def test_runs_csv_is_the_file_pandas_writes(tmp_path, monkeypatch, rows_at_a_time):
    """The Arrow-joined runs.csv is ``to_csv``'s bytes: quoting (comma, quote, line end), NaN,
    ±0, ±inf, exponents, integers, an all-missing column, a column name that needs quotes; and a
    dtype it does not format (bool) is handed to pandas. Written at once, or a few rows at a
    time (a million runs' are)."""
    import importlib

    from lincls.experiments.report.render import write_runs_csv

    monkeypatch.setattr(importlib.import_module("lincls.experiments.report.render"), "CSV_ROWS",
                        rows_at_a_time)  # fmt: skip

    table = pd.DataFrame({
        "run_id": ["a,b", 'q"x', "l\nm", "r\rs", "", None, "t\tu", " sp", "ü,ñ", "plain"],
        "metrics.m": [0.0, -0.0, np.nan, np.inf, -np.inf, 1e16, 1e-5, 0.1, 1.7976931348623157e308,
                      3.0],
        "start_time": np.arange(10, dtype=np.int64) * 10**15 - 7,
        "tags.none": [None] * 10,
        "a,b": ["x"] * 10,
    })  # fmt: skip
    ours, theirs = tmp_path / "ours.csv", tmp_path / "pandas.csv"
    for frame in (table.assign(flag=True), table.iloc[:0], table):
        frame.to_csv(theirs, index=False)
        write_runs_csv(frame, ours)
        assert ours.read_bytes() == theirs.read_bytes()
    head = b'run_id,metrics.m,start_time,tags.none,"a,b"\n"a,b",0.0,-7,,x\n"q""x",-0.0,'
    assert ours.read_bytes().startswith(head)


@pytest.mark.parametrize("child_fails", [False, True])
def test_a_long_runs_csv_is_written_by_a_child_while_the_report_draws(
    tmp_path, monkeypatch, capfd, child_fails
):
    """Past ``CSV_ROWS`` rows a forked child writes runs.csv (Linux); the file is ``to_csv``'s
    bytes when waited for, and a child that fails leaves no traceback: the parent writes it."""
    import importlib
    import os

    render = importlib.import_module("lincls.experiments.report.render")
    monkeypatch.setattr(render, "CSV_ROWS", 4)
    table = pd.DataFrame({"run_id": [f"r{k}" for k in range(10)],
                          "metrics.m": np.linspace(0, 1, 10)})  # fmt: skip
    parent, writers = os.getpid(), []
    write = render.write_runs_csv

    def spied(frame, path):
        writers.append(os.getpid())
        if child_fails and os.getpid() != parent:
            raise RuntimeError("the child's disk is full")
        write(frame, path)

    monkeypatch.setattr(render, "write_runs_csv", spied)
    ours, theirs = tmp_path / "runs.csv", tmp_path / "pandas.csv"
    wait = render.start_runs_csv(table, ours)
    wait()
    table.to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()
    assert writers == ([parent] if child_fails else [])  # the child's own list is not ours
    assert "Traceback" not in capfd.readouterr().err


def test_plane_runs_log_weights_that_redraw_their_predictions(study):
    from lincls.registry import build_dataset

    plane = [r for r in study["runs"] if r.data.tags["dataset"] == "plane"]
    assert len(plane) == 2
    for run in plane:
        m = run.data.metrics
        assert {"weights.coef.0", "weights.coef.1", "weights.intercept"} <= set(m)
        assert "weights.coef.2" not in m
        assert m["weights.intercept"] != 0.0  # offset data: the bias moved
        data = build_dataset(report.dataset_config(report.runs_frame([run]).iloc[0]))
        assert data.fingerprint == run.data.tags["dataset.fingerprint"]
        w = np.array([m["weights.coef.0"], m["weights.coef.1"]])
        predicted = np.where(data.X @ w + m["weights.intercept"] > 0, 1, -1)
        positive = data.y == np.unique(data.y)[-1]
        accuracy = np.mean(predicted == np.where(positive, 1, -1))
        assert accuracy == m["train_accuracy"]
    # More than three features: no weights.
    assert not any(
        k.startswith("weights.")
        for r in study["runs"]
        if r.data.tags["dataset"] != "plane"
        for k in r.data.metrics
    )


def test_search_is_paged_through_every_run(study):
    client = MlflowClient(tracking_uri=study["uri"])
    experiment = client.get_experiment_by_name("lincls").experiment_id
    selection = report.select_runs(client, experiment, STUDY, page_size=7)
    assert selection.runs.shape[0] == 62
    assert selection.parents == [study["parent"]]


def test_a_resumed_study_keeps_each_config_once_and_reports_to_the_newest_sweep(study, tmp_path):
    uri = study["uri"]
    config = [
        "learner=perceptron",
        "dataset=separable",
        "dataset.n=100",
        "dataset.d=5",
        "dataset.n_test=20",
    ]
    first, outcomes = record_sweep(
        uri, study["tmp"], "resumed", [[*config, "seed=0"], [*config, "seed=1"]]
    )
    client = MlflowClient(tracking_uri=uri)
    killed = client.create_run(
        client.get_experiment_by_name("lincls").experiment_id,
        tags={"mlflow.parentRunId": first, "lincls.role": "run", "lincls.study": "resumed"},
    ).info.run_id
    client.set_terminated(killed, "KILLED")
    # The re-run: seed 2 had no FINISHED run; seed 1 again stands for a config finished twice.
    second, again = record_sweep(
        uri, study["tmp"], "resumed", [[*config, "seed=2"], [*config, "seed=1"]]
    )
    assert report.main(["resumed", "--tracking-uri", uri, "--out", str(tmp_path)]) == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "runs.csv")
    kept = {outcomes[0].run_id, again[0].run_id, again[1].run_id}
    assert set(table["run_id"]) == kept
    text = (tmp_path / "report.md").read_text()
    assert (
        "- Runs: 3 FINISHED (one per config, the newest); left out: 1 not FINISHED (KILLED), "
        "1 older run of the same config\n"
    ) in text
    assert f"`{second}`, `{first}`" in text
    names = {Path(a.path).name for a in client.list_artifacts(second, "report")}
    assert "report.md" in names and not client.list_artifacts(first, "report")
    # γ and R are the same in every run, and no run is on the plane: said, not drawn.
    assert "not fitted: γ and R are the same in every run" in text
    assert "Left out: no run on 2-D data logged its weights" in text
    assert not (tmp_path / "decision_boundaries.png").exists()
    # With no argument the report is of the latest sweep: the re-run's two runs.
    out = tmp_path / "latest"
    assert report.main(["--tracking-uri", uri, "--out", str(out)]) == 0
    latest = pd.read_csv(out / "runs.csv")
    assert set(latest["run_id"]) == {again[0].run_id, again[1].run_id}


def test_a_killed_child_of_a_sweep_is_left_out_and_counted(study, tmp_path):
    uri = study["uri"]
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("lincls").experiment_id
    parent, _ = record_sweep(
        uri,
        study["tmp"],
        "with_killed",
        [["learner=perceptron", "dataset=orthonormal", "dataset.d=9", "learner.bias=none"]],
    )
    killed = client.create_run(
        experiment,
        tags={"mlflow.parentRunId": parent, "lincls.role": "run", "lincls.study": "with_killed"},
    ).info.run_id
    client.set_terminated(killed, "KILLED")
    assert report.main([parent, "--tracking-uri", uri, "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert (
        "- Runs: 1 FINISHED (one per config, the newest); left out: 1 not FINISHED (KILLED)" in text
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_study"], "error: study: no study and no sweep run id 'no_such_study'"),
        (["0" * 32], "error: study: no study and no sweep run id '" + "0" * 32 + "'"),
        (["it's"], "error: study: must not contain quotes"),
        (["--experiment", "nope"], "error: experiment: no experiment named 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_a_nonzero_exit(study, tmp_path, capsys, args, message):
    code = report.main([*args, "--tracking-uri", study["uri"], "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_an_empty_or_missing_store_is_one_line_and_a_nonzero_exit(store, tmp_path, capsys):
    missing = f"sqlite:///{tmp_path / 'none' / 'mlflow.db'}"
    assert report.main(["--tracking-uri", missing]) == 2
    assert capsys.readouterr().err.startswith("error: --store: no MLflow store at ")
    assert not (tmp_path / "none").exists()
    runner.tracking.open_experiment(store)  # the experiment, with no run in it
    assert report.main(["--tracking-uri", store]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: study: no sweep in this experiment yet") and err.count("\n") == 1


def test_a_run_id_that_is_not_a_sweep_is_refused(study, capsys):
    child = study["runs"][0].info.run_id
    assert report.main([child, "--tracking-uri", study["uri"]]) == 2
    assert "no study and no sweep run id" in capsys.readouterr().err
    with pytest.raises(LinclsInputError, match=r"^study: "):
        client = MlflowClient(tracking_uri=study["uri"])
        report.select_runs(client, client.get_experiment_by_name("lincls").experiment_id, child)


def test_the_command_line_prints_where_the_report_is(study, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lincls.experiments.report",
            STUDY,
            "--tracking-uri",
            study["uri"],
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith(f"report: {tmp_path / 'report.md'} (62 runs of study '{STUDY}'")
    experiment_id = MlflowClient(tracking_uri=study["uri"]).get_experiment_by_name("lincls")
    page = f"#/experiments/{experiment_id.experiment_id}/runs?viewStateShareKey=lincls"
    assert second.startswith(f"MLflow UI: lincls ui --store {study['uri']}, then http://")
    assert f"/{page}&workflowType=machine_learning" in second
    assert (tmp_path / "report.md").read_text() == study["text"]


def test_study_runs_outside_any_sweep_are_reported_without_a_parent(study, tmp_path, capsys):
    client = MlflowClient(tracking_uri=study["uri"])
    config = compose_fast(
        [
            "learner=perceptron",
            "learner.bias=none",
            "dataset=orthonormal",
            "dataset.d=9",
            f"tracking.uri={study['uri']}",
            f"certificates.cache_dir={study['tmp'] / 'certificates'}",
        ]
    )
    outcome = runner.execute(config)
    client.log_batch(
        outcome.run_id, tags=[RunTag("lincls.study", "loose"), RunTag("lincls.role", "run")]
    )
    assert report.main(["loose", "--tracking-uri", study["uri"], "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert (
        f"report: {tmp_path / 'report.md'} (1 runs of study 'loose'; run figures drawn: 0, "
        "run colours set: 1)\n" in printed
    )
    text = (tmp_path / "report.md").read_text()
    assert "- Sweeps (parent runs, newest first): none (runs outside any sweep)\n" in text
    # d = 9: γ = 1/3 and (R/γ)² = 9 up to rounding: the count meets it, and the ratio reads 1
    metrics = as_read(client.get_run(outcome.run_id)).data.metrics
    assert metrics["mistakes"] == 9 and metrics["bound.tightest"] == pytest.approx(9.0, rel=1e-12)
    assert metrics["bound_ratio.tightest"] == 1.0
    assert (
        "- `orthonormal`: 1 runs, tightest a priori bound ratio 1.0 to 1.0 "
        "(every run meets its bound: ratio 1 within 1e-9)\n"
    ) in text


def test_the_slack_table_names_the_factor_that_holds_runs_back():
    frame = pd.DataFrame(
        {
            "tags.learner": ["perceptron"] * 4,
            "params.learner.bias": ["none"] * 4,
            "tags.dataset": ["perceptron_game", "perceptron_game", "perceptron_game", "separable"],
            "params.dataset.d": ["2", "2", "100", "20"],
            "metrics.bound_slack.progress": [1.0, 1.0, 1.0, 0.3],
            "metrics.bound_slack.angle": [0.99, 0.97, 1.0, 0.9],
            "metrics.bound_slack.norm": [0.5, 0.52, 1.0, 0.6],
        }
    )
    labels = report.tables.dataset_labels(frame)
    assert list(labels) == [
        "perceptron_game d=2", "perceptron_game d=2", "perceptron_game d=100", "separable"
    ]  # fmt: skip
    table = report.slack_table(frame).set_index("dataset")
    assert table.loc["perceptron_game d=2", "runs"] == 2
    assert table.loc["perceptron_game d=2", "norm"] == pytest.approx(0.51)
    assert table.loc["perceptron_game d=2", "held_back_by"] == "norm"
    assert table.loc["separable", "held_back_by"] == "progress"
    lines = importlib.import_module("lincls.experiments.report.render")._slack_lines(
        report.slack_table(frame)
    )
    assert "| perceptron | perceptron_game d=2 | 2 | 1.0 | 0.98 | 0.51 | norm |" in lines


def test_colours_repeat_when_a_study_has_more_runs_than_distinct_colours():
    """``color`` gives a few thousand distinct colours; a report of more runs than are left
    unused gives every run one all the same (the real 697,792-run study raised StopIteration)."""
    import pandas as pd

    from lincls.experiments.report.figures import color, run_colors

    existing = {f"old{k}": color(k) for k in range(20_000)}
    runs = pd.DataFrame({"run_id": [*existing, *(f"new{k}" for k in range(20_000))]})
    chosen = run_colors(runs, pd.Series([*existing.values(), *[None] * 20_000], dtype="str"))
    assert set(chosen) == {f"new{k}" for k in range(20_000)}  # only the runs without a colour
    unused = {color(k) for k in range(40_001)} - set(existing.values())
    firsts = [chosen[f"new{k}"] for k in range(len(unused))]
    assert set(firsts) == unused  # the colours no run had come first
    assert all(chosen[f"new{k}"].startswith("#") for k in range(20_000))
