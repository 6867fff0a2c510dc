"""What a run records: one write after its creation (a few MLflow metrics and tags, and its
record), each certificate's γ, R and D, the voted perceptron's test-error bound beside (never
among) the mistake bounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import compose_config, runs_of
from mlflow.tracking import MlflowClient

from lincls import bounds, evaluation, runner
from lincls.evaluation import measures
from lincls.figures import FIGURE_FILE, draw_run_figure
from lincls.geometry import certify, hinge_deficit
from lincls.tracking import record
from lincls.tracking.record import STORED_METRICS, STORED_TAGS
from lincls.tracking.sqlite_runs import SqliteRuns

WRITES = ("log_batch", "log_metric", "log_param", "log_dict", "log_text", "set_tag")


def test_a_run_is_written_with_one_transaction_after_its_creation(store, monkeypatch, tmp_path):
    calls: dict[str, int] = dict.fromkeys(WRITES, 0)
    transactions = []
    real_transaction = SqliteRuns.transaction

    def counted_transaction(self):
        transactions.append(self.path)
        return real_transaction(self)

    monkeypatch.setattr(SqliteRuns, "transaction", counted_transaction)
    for name in WRITES:
        real = getattr(MlflowClient, name)

        def counted(self, *args, _name=name, _real=real, **kwargs):
            calls[_name] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(MlflowClient, name, counted)
    config = compose_config(
        ["dataset.n=300", "dataset.d=5", "passes=20", "certificates.svm=false",
         f"tracking.uri={store}"]
    )  # fmt: skip
    outcome = runner.execute(config)
    # a SQLite store's run is its rows: created in one transaction, written and closed in one
    assert calls == dict.fromkeys(WRITES, 0) and len(transactions) == 2
    (read,) = runs_of(store)
    run = MlflowClient(tracking_uri=store).get_run(read.info.run_id)  # as stored
    assert run.info.status == "FINISHED"
    # its text artifacts (the learned hyperplane's margin histogram) and its curves are in its
    # record, its figure is drawn from it: no file, no folder
    assert list(outcome.artifacts) == ["hyperplane/margin_histogram.json"]
    assert not Path(run.info.artifact_uri.removeprefix("file://")).parent.exists()
    assert set(run.data.metrics) == set(STORED_METRICS)
    kept = {k: v for k, v in outcome.tags.items() if k in STORED_TAGS}
    assert {k: v for k, v in run.data.tags.items() if k in STORED_TAGS} == kept
    recorded = record.read(run.data.tags)
    assert recorded.metrics == {k: v for k, v in outcome.metrics.items() if k not in STORED_METRICS}
    # each tag once: a row (those made with the run, and the view's) or in the record
    assert {**run.data.tags, **recorded.tags}.items() >= outcome.tags.items()
    assert not recorded.tags.keys() & run.data.tags.keys() and "order" in recorded.tags
    assert recorded.curves == outcome.curves and recorded.files == outcome.artifacts
    # as read, every metric and each curve's latest point, as when they were rows
    assert set(read.data.metrics) == set(outcome.metrics) | set(outcome.curves)
    assert run.data.params["learner.lr"] == "1.0" and run.data.params["dataset.n"] == "300"
    assert run.data.tags["bound_violated"] == outcome.tags["bound_violated"] == "false"
    # everything arrived through that one write: the stored metrics, one point each; no curve
    client = MlflowClient(tracking_uri=store)
    for name in STORED_METRICS:
        (point,) = client.get_metric_history(run.info.run_id, name)
        assert (point.step, point.value) == (0, outcome.metrics[name])
    assert client.get_metric_history(run.info.run_id, "cumulative_mistakes") == []
    # the figure the UI draws from the record is the one the run's curves draw
    figure = record.recorded_artifacts(run.data.tags)[FIGURE_FILE]
    assert figure == draw_run_figure(outcome.curves, outcome.tags["bound.tightest"])


def test_a_curve_keeps_only_the_ends_of_its_flat_runs():
    steps = np.array([1, 2, 3, 5, 8, 13, 21, 34, 55])
    values = np.array([1, 2, 2, 2, 3, 3, 4, 4, 4])
    kept = measures.drop_flat_interiors(steps, values)
    assert kept.tolist() == [0, 1, 3, 4, 5, 6, 8]
    # the polyline through the kept points is the one through all of them
    assert np.interp(steps, steps[kept], values[kept]).tolist() == values.tolist()
    assert measures.drop_flat_interiors(steps[:2], values[:2]).tolist() == [0, 1]
    assert measures.drop_flat_interiors(steps[:1], values[:1]).tolist() == [0]


def test_a_converged_runs_cumulative_mistakes_are_its_flat_runs_ends(tmp_path):
    config = compose_config(["dataset.n=1000", "dataset.d=20", "passes=10",
                             "certificates.svm=false",
                             f"certificates.cache_dir={tmp_path}"])  # fmt: skip
    outcome = evaluation.measure(config)
    curve = outcome.curves["cumulative_mistakes"]
    steps = measures.log_spaced_steps(int(outcome.metrics["passes_run"]) * 1000)
    assert curve[0][0] == 1 and curve[-1][0] == steps[-1]
    assert curve[-1][1] == outcome.metrics["mistakes"]
    full = np.interp(steps, [s for s, _ in curve], [v for _, v in curve])
    assert len(curve) < len(steps) // 2 and np.all(np.diff(full) >= 0)
    values = [v for _, v in curve]
    assert all(not (a == b == c) for a, b, c in zip(values, values[1:], values[2:], strict=False))


def test_certificate_metrics_on_separable_data(tmp_path):
    config = compose_config(["dataset.n=200", "dataset.d=5", "dataset.offset=0.3",
                             f"certificates.cache_dir={tmp_path}"])  # fmt: skip
    m = evaluation.measure(config).metrics
    assert m["separable"] == 1.0
    generator = {key: m[f"certificate.generator.{key}"] for key in
                 ("margin", "radius", "gamma", "deficit")}  # fmt: skip
    # the generator's certificate: γ = its margin (0.1 by construction), D = 0, R = 1
    assert generator["margin"] == m["margin"] == pytest.approx(0.1, rel=1e-12)
    assert generator["radius"] == m["radius"] == pytest.approx(1.0, rel=1e-12)
    assert generator["gamma"] == generator["margin"] and generator["deficit"] == 0.0
    # the maximum-margin SVM: the larger γ, measured on the same data
    assert m["certificate.svm.margin"] >= generator["margin"]
    assert m["certificate.svm.gamma"] == m["certificate.svm.margin"]
    assert m["certificate.svm.radius"] == m["radius"] and m["certificate.svm.deficit"] == 0.0


def test_certificate_metrics_on_noisy_data_are_the_deficit_at_the_chosen_gamma(tmp_path):
    config = compose_config(["dataset=noisy", "dataset.n=300", "dataset.d=5",
                             f"certificates.cache_dir={tmp_path}"])  # fmt: skip
    outcome = evaluation.measure(config)
    m, data = outcome.metrics, outcome.dataset
    cert = certify(data.X, np.where(data.y > 0, 1.0, -1.0), data.u, data.b, "generator")
    _, gamma, _ = bounds.freund_schapire_grid(cert.radius, cert.margins, np.ones(300))
    assert m["separable"] == 0.0 and m["certificate.generator.margin"] == cert.margin < 0
    assert m["certificate.generator.gamma"] == gamma
    assert m["certificate.generator.deficit"] == pytest.approx(
        hinge_deficit(cert.margins, gamma), rel=1e-12
    )
    # the set deficit of the overlap points (1.0 at γ = margin) and the 5% flips add up
    assert hinge_deficit(cert.margins, 0.1) > 1.0


def test_voted_test_error_bound_is_logged_apart_after_one_pass(tmp_path):
    common = ["learner=voted_perceptron", "dataset.n=300", "dataset.d=5", "dataset.n_test=400",
              f"certificates.cache_dir={tmp_path}"]  # fmt: skip
    outcome = evaluation.measure(compose_config([*common, "passes=1"]))
    m, tags = outcome.metrics, outcome.tags
    # Freund & Schapire (1999): E[error] ≤ (2/(m + 1))·((R + D)/γ)², m = 300 training examples
    bound = m["test_error_bound.voted_fs99"]
    assert bound == pytest.approx(2 * m["bound.freund_schapire"] / 301, rel=1e-12)
    assert m["test_error_bound_ratio.voted_fs99"] == pytest.approx(
        (1 - m["test_accuracy"]) / bound, rel=1e-12
    )
    source = tags["bound.freund_schapire.certificate"]
    assert tags["test_error_bound.voted_fs99.certificate"] == source
    assert "bound.voted_fs99" not in m and tags["bound.tightest"] != "voted_fs99"
    # after two passes the theorem does not apply: skipped, with the reason
    again = evaluation.measure(compose_config([*common, "passes=2"]))
    assert not any(key.startswith("test_error_bound") for key in again.metrics)
    assert "voted_fs99: the theorem covers one pass" in again.tags["bounds.skipped"]
