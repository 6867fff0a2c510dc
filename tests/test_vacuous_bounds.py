"""A vacuous bound is never "met exactly", never the tightest, and the families are ranked apart.

Under the perceptron game and the adversarial order every presentation is a mistake, so
Freund–Schapire at v = 0 (the number of presentations) would read ratio 1 on every run. It is
tagged vacuous instead, logs no ratio, and the report's tightest a priori ratio of the d = 2
game is Novikoff's: half of (R/γ)², 0.48 to 0.54 without a bias.
"""

from __future__ import annotations

import pytest
from conftest import as_read
from mlflow.tracking import MlflowClient
from test_report import record_sweep, table_rows

from lincls.experiments import report
from lincls.tracking.headline import Headline

GAMMAS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3)
STUDY = "vacuous_test"


@pytest.fixture(scope="module")
def game_study(tmp_path_factory, _migrated_store):
    tmp = tmp_path_factory.mktemp("vacuous")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    (tmp / "mlflow.db").write_bytes(_migrated_store.read_bytes())
    configs = [
        ["learner=perceptron", f"learner.bias={bias}", "dataset=perceptron_game",
         "dataset.d=2", f"dataset.margin={gamma}", "passes=20", "certificates.svm=false"]
        for bias in ("none", "feature")
        for gamma in GAMMAS
    ] + [
        ["learner=perceptron", "learner.bias=none", "dataset=separable", "dataset.n=60",
         "dataset.d=3", f"dataset.margin={gamma}", "order=adversarial", "passes=20"]
        for gamma in (0.1, 0.2)
    ]  # fmt: skip
    parent, _ = record_sweep(uri, tmp, STUDY, configs)
    out = tmp / "report"
    assert report.main([STUDY, "--tracking-uri", uri, "--out", str(out)]) == 0
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("lincls").experiment_id
    runs = client.search_runs([experiment], f"tags.`mlflow.parentRunId` = '{parent}'")
    return {"runs": [as_read(run) for run in runs], "text": (out / "report.md").read_text()}


def test_freund_schapire_is_vacuous_on_every_game_and_adversarial_run(game_study):
    runs = game_study["runs"]
    assert len(runs) == 14
    for run in runs:
        m, tags = run.data.metrics, run.data.tags
        assert m["mistakes"] == m["presented"]  # every presentation a mistake
        assert tags["bounds.vacuous"] == "freund_schapire"
        assert m["bound.freund_schapire"] == pytest.approx(m["presented"], rel=1e-9)
        assert "bound_ratio.freund_schapire" not in m
        assert tags["bound.tightest"] in ("novikoff", "novikoff_bias")
        assert tags["bound.tightest_a_posteriori"] == "mohri_rostamizadeh"
        assert m["bound_ratio.tightest"] < 1.0


def test_the_report_shows_the_games_a_priori_tightest_ratio_at_half_of_novikoff(game_study):
    rows = table_rows(game_study["text"], "| learner | bound |")
    by_key = {(r[0], r[1]): r for r in rows}
    tightest = by_key[("perceptron (bias=none)", "tightest")]
    assert tightest[2] == "a priori" and tightest[3] == "8" and tightest[4] == "0"
    game = [
        r.data.metrics["bound_ratio.tightest"]
        for r in game_study["runs"]
        if r.data.tags["dataset"] == "perceptron_game" and r.data.params["learner.bias"] == "none"
    ]
    assert len(game) == 6 and 0.48 <= min(game) and max(game) <= 0.54 + 1e-9
    fs = by_key[("perceptron (bias=none)", "freund_schapire")]
    assert fs[3] == fs[4] == "8" and fs[6] == fs[7] == "–"  # 8 runs, all vacuous, no ratio
    assert "Vacuous bound values in all: **14**." in game_study["text"]
    line = next(x for x in game_study["text"].splitlines() if x.startswith("- `perceptron_game"))
    assert "every run meets its bound" not in line
    low, high = (float(v) for v in line.split("ratio ")[1].split(" to "))
    assert (low, high) == pytest.approx((0.24, 0.54), abs=1e-9)  # with a bias: a quarter


def test_the_parent_headline_names_the_tightest_of_each_family():
    entries = [
        {"status": "finished", "label": "perceptron (bias=none)", "ratio": r, "posterior_ratio": p}
        for r, p in ((0.5, 0.71), (0.48, 0.72), (0.54, 0.78))
    ]
    headline = Headline.of(entries)
    metrics = headline.metrics()
    assert metrics["tightest_ratio.max/perceptron bias none"] == 0.54
    assert metrics["tightest_a_posteriori_ratio.median/perceptron bias none"] == 0.72
    text = headline.description("s", "FINISHED")
    assert (
        "Tightest a priori bound's ratio" in text and "Tightest a posteriori bound's ratio" in text
    )
