"""The named study ``second_order``: its grid composes, and a tiny version of it runs through the
report, whose mean ± std table (LIBOL's layout) has the learners as rows, the datasets as
columns, and cells that are the runs' own orderings' mean ± std."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hydra import initialize_config_dir
from omegaconf import OmegaConf, open_dict

from lincls.experiments.report import open_store, select_runs, write_report
from lincls.orders import canonical_orders, fit_in_order
from lincls.registry import build_dataset, build_learner
from lincls.runner import execute
from tests.conftest import CONF
from tests.test_studies import study_jobs

LEARNERS = {  # the study's learner options, by the label its runs carry
    "alma (bias=none)",
    "arow (bias=feature, diagonal=False)",
    "averaged_perceptron (bias=feature)",
    "confidence_weighted (bias=feature, variant=cw, diagonal=False)",
    "confidence_weighted (bias=feature, variant=scw1, diagonal=False)",
    "confidence_weighted (bias=feature, variant=scw2, diagonal=False)",
    "passive_aggressive (bias=feature, variant=pa1)",
    "perceptron (bias=feature)",
    "romma (bias=feature, aggressive=False)",
    "romma (bias=feature, aggressive=True)",
    "second_order_perceptron (bias=feature, diagonal=False)",
    "second_order_perceptron (bias=feature, diagonal=True)",
}
DATASETS = {"separable", "noisy", "breast_cancer", "digits", "phishing"}


def configs(extra: list[str], keep=lambda job: True, small: bool = False) -> list[dict]:
    """The study's configs (``extra`` overrides added to each job that ``keep`` keeps; ``small``:
    150 synthetic examples), resolved and with ``orders`` written as the Hydra app writes it."""
    jobs, composer = study_jobs("second_order")
    out = []
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for k, job in enumerate(j for j in jobs if keep(j)):
            synthetic = any(o in job for o in ("dataset=separable", "dataset=noisy"))
            shrink = ["dataset.n=150", "dataset.n_test=20"] if synthetic and small else []
            cfg = composer.compose([*job, *extra, *shrink], k)
            with open_dict(cfg):
                del cfg["hydra"]
            out.append(canonical_orders(OmegaConf.to_container(cfg, resolve=True)))
    return out


def test_the_study_is_libols_protocol_on_every_learner_and_dataset():
    from lincls.tracking.tags import learner_label

    jobs, _ = study_jobs("second_order")
    assert len(jobs) == 12 * 5
    assert {o.split("=")[1] for job in jobs for o in job if o.startswith("dataset=")} == DATASETS
    # every learner option, on one dataset (test_studies composes and checks all 60 configs)
    studied = configs([], keep=lambda job: "dataset=separable" in job)
    assert {learner_label(c["learner"]) for c in studied} == LEARNERS
    for c in studied:  # one pass, 20 seeded random orders, as LIBOL
        assert (c["orders"], c["order"], c["passes"]) == (20, "shuffled", 1)
        assert c["study"] == "second_order"


TINY = ("learner=perceptron", "learner=second_order_perceptron")


def test_a_tiny_study_reports_mean_and_std_by_learner_and_dataset(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    extra = ["orders.permutations=3", f"tracking.uri={uri}", f"certificates.cache_dir={tmp_path}"]

    def keep(job):
        return any(t in job for t in TINY) and any(
            d in job for d in ("dataset=separable", "dataset=breast_cancer")
        )

    runs = configs(extra, keep, small=True)
    assert len(runs) == 3 * 2  # the perceptron, the SOP full and diagonal
    outcomes = [execute(c) for c in runs]
    client, experiment_id = open_store(uri, "lincls")
    selection = select_runs(client, experiment_id, "second_order")
    write_report(client, selection, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    section = text.split("## Mistakes over random orders (mean ± std, LIBOL's layout)")[1]
    table = section.split("\n\n")[2].splitlines()
    assert table[0] == "| learner | breast_cancer | separable |"
    rows = {cells[0]: cells[1:] for cells in (re.split(r" \| ", t.strip("| ")) for t in table[2:])}
    assert set(rows) == {
        "perceptron (bias=feature)",
        "second_order_perceptron (bias=feature, diagonal=False)",
        "second_order_perceptron (bias=feature, diagonal=True)",
    }
    assert all(
        re.fullmatch(r"\d+\.\d ± \d+\.\d", cell) for cells in rows.values() for cell in cells
    )
    # one cell against a direct computation: the SOP on breast cancer, refitted in the run's
    # three orderings
    k = next(
        i for i, c in enumerate(runs)
        if c["learner"]["name"] == "second_order_perceptron" and not c["learner"]["diagonal"]
        and c["dataset"]["name"] == "breast_cancer"
    )  # fmt: skip
    config, outcome = runs[k], outcomes[k]
    data = build_dataset(config["dataset"])
    mistakes = []
    for ordering in range(3):
        learner = build_learner(config["learner"], config["passes"], config["seed"])
        fit_in_order(learner, data.X, data.y, "shuffled", ordering, config["seed"])
        mistakes.append(learner.mistakes_)
    mean, std = float(np.mean(mistakes)), float(np.std(mistakes))
    assert outcome.metrics["mistakes"] == pytest.approx(mean, abs=1e-12)
    assert outcome.metrics["mistakes_std"] == pytest.approx(std, abs=1e-12)
    assert rows["second_order_perceptron (bias=feature, diagonal=False)"][0] == (
        f"{mean:.1f} ± {std:.1f}"
    )
    # and the ratio tables: the SOP's own a posteriori bound, mean ± std over the orderings
    assert "### Ratio to `second_order`" in section
