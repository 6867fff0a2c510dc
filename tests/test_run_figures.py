"""A run's figure: the SVG drawn of a run's curves (from its record, when the UI asks for it), and
the report's pass over runs whose description shows none (one query to find them, one
transaction to set their tags; a file drawn only for a run written before runs kept records)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import compose_config
from mlflow.tracking import MlflowClient

from lincls import runner
from lincls.experiments import report
from lincls.experiments.report import figures as report_figures
from lincls.figures import (
    FIGURE_FILE,
    draw_run_figure,
    figure_markdown,
    log_ticks,
    nice_ticks,
    number,
    shows_figure,
    with_figure,
)
from lincls.tracking import record
from lincls.tracking.tags import NOTE_TAG

SVG = "{http://www.w3.org/2000/svg}"
CURVES = {
    "cumulative_mistakes": [(1, 1.0), (3, 2.0), (14, 4.0), (42, 7.0), (100, 14.0), (200, 14.0)],
    "cumulative_mistakes_bound": [(1, 64.46), (200, 64.46)],
    "lemma.progress": [(k, 2.2 * k) for k in range(1, 15)],
    "lemma.norm": [(k, 0.4 * k) for k in range(1, 15)],
    "lemma.mistakes": [(1, 1.0), (14, 14.0)],
}


def texts(svg: str) -> list[str]:
    return [e.text for e in ElementTree.fromstring(svg).iter(f"{SVG}text")]


def test_numbers_are_integers_when_counts_else_four_digits():
    assert [number(v) for v in (7.0, 12819.0, 7.999999999999998, 0.21718, 12819.4, 1e-7)] == [
        "7", "12,819", "8", "0.2172", "12,819", "1e-07",
    ]  # fmt: skip


def test_ticks_are_round_and_whole_for_counts():
    assert nice_ticks(0, 14.9, 3) == [0, 5, 10]
    assert nice_ticks(1, 200) == [50, 100, 150, 200]
    assert nice_ticks(0, 2.1, 3) == [0, 1, 2]  # never a fractional count
    assert nice_ticks(0, 1.3, 3, integer=False) == [0, 0.5, 1.0]
    assert log_ticks(1, 10_000) == [1, 10, 100, 1000, 10_000]
    assert log_ticks(1, 1e9) == [1, 100, 1e4, 1e6, 1e8]  # at most six


def test_the_figure_names_mistakes_bound_and_ratio_beside_the_plot():
    svg = draw_run_figure(CURVES, "freund_schapire")
    root = ElementTree.fromstring(svg)
    assert root.get("width") == "640" and root.get("height") == "196"
    shown = texts(svg)
    assert "mistakes 14" in shown and "bound freund_schapire = 64.46" in shown
    assert "mistakes / bound = 0.2172" in shown
    assert "x: examples presented (log scale)" in shown  # 1 to 200: more than a decade
    assert {"1", "10", "100"} <= set(shown)  # the log axis's ticks, whole numbers
    # the legend stands right of the plots: no legend text starts inside a plot
    legend = [e for e in root.iter(f"{SVG}text") if e.text and e.text.startswith("mistakes ")]
    assert all(float(e.get("x")) > 420 for e in legend)
    # the mistakes' plot and its tick labels fit the ~90 px a folded description shows
    plot = next(e for e in root.iter(f"{SVG}rect") if e.get("y"))
    labels = [float(e.get("y")) for e in root.iter(f"{SVG}text") if e.text in ("1", "10", "100")]
    assert float(plot.get("y")) + float(plot.get("height")) < min(labels) < 90
    # the step curve turns only where the count changes: 5 rises, then the flat end
    step = next(e.get("d") for e in root.iter(f"{SVG}path"))
    assert step.count("V") == 4 and step.endswith("H420.0")
    assert len(svg.encode()) < 6_000


def test_a_bound_far_above_the_mistakes_is_named_not_drawn():
    curves = {"cumulative_mistakes": [(1, 1.0), (100, 12.0)],
              "cumulative_mistakes_bound": [(1, 12819.0), (100, 12819.0)]}  # fmt: skip
    svg = draw_run_figure(curves, "cw")
    assert "bound cw = 12,819 (off the scale)" in texts(svg)
    assert 'stroke-dasharray="5 3"/>' not in svg.split("</text>", 1)[0]
    assert ElementTree.fromstring(svg).get("height") == "82"  # no lemma curves: one plot


def test_a_run_without_curves_still_has_a_figure_saying_so():
    assert "no mistake curve" in texts(draw_run_figure({}))
    assert "no a priori bound" in texts(draw_run_figure({"cumulative_mistakes": [(1, 0.0)]}))


def test_a_description_shows_one_figure_this_kind_or_an_earlier():
    note = with_figure("**perceptron** on separable.", "abc")
    assert note.startswith(figure_markdown("abc")) and note.endswith("separable.\n")
    assert with_figure(note, "abc") == note and shows_figure(note, "abc")
    earlier = figure_markdown("abc", "mistakes_and_bound.png") + "\n\ntext"
    assert shows_figure(earlier, "abc") and with_figure(earlier, "abc") == earlier
    assert not shows_figure(note, "abd") and not shows_figure(None, "abc")


def _written_before_records(uri: str, config: dict) -> str:
    """A run as runs were written before they kept records: every metric, its curves as metric
    history, every tag, and a description without a figure (runs before that drew none)."""
    from lincls import tracking
    from lincls.evaluation import measure

    outcome = measure(config)
    runner._describe(config, outcome)
    client, experiment_id = tracking.open_experiment(uri)
    tags = tracking.tags.run_tags(config)
    run_id = tracking.start_run(client, experiment_id, None, tags)
    tracking.finish_run(client, run_id, tracking.flatten(config), outcome.metrics,
                        outcome.curves, outcome.tags)  # fmt: skip
    return run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory, _migrated_store):
    """Four runs of one study: two written as runs were before they kept records, one whose
    description lost its figure, one as runs are written."""
    tmp = tmp_path_factory.mktemp("figures")
    shutil.copyfile(_migrated_store, tmp / "mlflow.db")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    runs = []
    for seed in range(4):
        config = compose_config(
            [f"seed={seed}", "dataset.n=60", "dataset.d=3", "passes=2", f"tracking.uri={uri}"]
        )
        config["study"] = "pictures"
        if seed < 2:
            runs.append(_written_before_records(uri, config))
        else:
            runs.append(runner.execute(config).run_id)
    mlflow = MlflowClient(tracking_uri=uri)
    note = mlflow.get_run(runs[2]).data.tags[NOTE_TAG]
    mlflow.set_tag(runs[2], NOTE_TAG, note.split("\n\n", 1)[1])
    return {"uri": uri, "tmp": tmp, "runs": runs, "client": mlflow}


def test_the_report_draws_only_the_runs_without_a_figure_then_none(store, capsys):
    client = store["client"]
    args = ["pictures", "--tracking-uri", store["uri"], "--out", str(store["tmp"] / "out")]
    assert report.main(args) == 0
    assert "run figures drawn: 3, run colours set: 4" in capsys.readouterr().out
    histogram = "hyperplane/margin_histogram.json"
    for k, run_id in enumerate(store["runs"]):
        run = client.get_run(run_id)
        files = [a.path for a in client.list_artifacts(run_id) if a.path == FIGURE_FILE]
        recorded = sorted(record.recorded_artifacts(run.data.tags))
        # a run written before records gets its figure as a file; a recorded run's is drawn
        # from its record when the UI asks for it
        if k < 2:
            assert (files, recorded) == ([FIGURE_FILE], [])
            local = client.download_artifacts(run_id, FIGURE_FILE, str(store["tmp"]))
            assert "mistakes / bound = " in " ".join(texts(Path(local).read_text()))
        else:
            assert (files, recorded) == ([], [histogram, FIGURE_FILE])
        note = run.data.tags[NOTE_TAG]
        assert note.startswith(figure_markdown(run_id)) and note.count("![") == 1
        assert re.fullmatch(r"#[0-9a-f]{6}", run.data.tags["mlflow.runColor"])
    assert report.main(args) == 0  # nothing left to draw or colour
    assert "run figures drawn: 0, run colours set: 0" in capsys.readouterr().out


@pytest.mark.parametrize("whole_tables", [True, False])
def test_the_figure_state_read_with_the_runs_is_the_one_querys_and_pythons(
    store, monkeypatch, whole_tables
):
    """One run's description without its figure, another without a colour: the state read in
    the reader's pass over the tags (whole tables, or by id) is the one query's, and what Python
    reads of each run's tags; its columns are taken out of the runs."""
    from lincls.tracking import reader

    client = store["client"]
    plain, uncoloured, shown_run = store["runs"][1], store["runs"][0], store["runs"][2]
    before = {run_id: client.get_run(run_id).data.tags for run_id in store["runs"][:3]}
    client.set_tag(plain, NOTE_TAG, "a description without its figure")
    client.set_tag(shown_run, NOTE_TAG, with_figure("its description", shown_run))
    client.set_tag(shown_run, "mlflow.runColor", "#123456")
    if "mlflow.runColor" in before[uncoloured]:
        client.delete_tag(uncoloured, "mlflow.runColor")
    monkeypatch.setattr(reader, "WHOLE_TABLE_SHARE", 0.0 if whole_tables else 2.0)
    try:
        selection = report.select_runs(*report.open_store(store["uri"], "lincls"), "pictures",
                                       tag_sql=report_figures.FIGURE_TAGS)  # fmt: skip
        state = report_figures.figure_state(selection.runs)
        engine = reader.engine_for(store["uri"])
        try:
            queried = report_figures._sql_state(engine, store["runs"])
        finally:
            engine.dispose()
        tags = {run_id: client.get_run(run_id).data.tags for run_id in store["runs"]}
    finally:  # as the other tests left them
        for run_id, found in before.items():
            client.set_tag(run_id, NOTE_TAG, found[NOTE_TAG])
            if "mlflow.runColor" in found:
                client.set_tag(run_id, "mlflow.runColor", found["mlflow.runColor"])
            elif run_id == shown_run:
                client.delete_tag(run_id, "mlflow.runColor")
    shown = {r for r, t in tags.items() if shows_figure(t.get(NOTE_TAG), r)}
    colors = {r: t["mlflow.runColor"] for r, t in tags.items() if "mlflow.runColor" in t}
    assert queried == (shown, colors)
    ids = selection.runs["run_id"]
    assert set(ids[state[0]]) == shown and sorted(ids) == sorted(store["runs"])
    assert state[1].dropna().to_dict() == {k: colors[r] for k, r in ids.items() if r in colors}
    assert shown_run in shown and plain not in shown
    assert colors[shown_run] == "#123456" and uncoloured not in colors
    assert not {f"tags.{NOTE_TAG}", "tags.mlflow.runColor"} & set(selection.runs.columns)
