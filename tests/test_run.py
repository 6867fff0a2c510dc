"""End to end: Hydra config → data → fit → bounds → MLflow, through the real CLI and store."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import CONF, compose_config, run_cli, runs_of
from mlflow.tracking import MlflowClient

from lincls import evaluation, runner
from lincls.errors import LinclsInputError
from lincls.tracking import record

RUN_METRICS = {
    "mistakes",
    "updates",
    "bound.novikoff_bias",
    "bound_ratio.novikoff_bias",
    "bound.tightest",
    "bound_ratio.tightest",
    "margin",
    "radius",
    "passes_run",
    "converged",
    "train_accuracy",
    "test_accuracy",
    "fit_seconds",
}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A 2×2×2 multirun into a fresh SQLite store."""
    tmp = tmp_path_factory.mktemp("sweep")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    done = run_cli(
        [
            "-m",
            "learner.lr=0.5,2",
            "dataset.margin=0.1,0.2",
            "seed=0,1",
            "dataset.n=300",
            "dataset.d=10",
            f"tracking.uri={uri}",
            f"hydra.sweep.dir={tmp / 'hydra'}",
        ],
        cwd=tmp,
    )
    assert done.returncode == 0, done.stderr
    everything = runs_of(uri)
    parents = [r for r in everything if r.data.tags.get("lincls.role") == "sweep"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    children = [r for r in everything if r.data.tags.get("lincls.role") == "run"]
    assert len(everything) == len(children) + 1
    assert {r.data.tags["mlflow.parentRunId"] for r in children} == {parents[0].info.run_id}
    return uri, children


def test_multirun_leaves_eight_finished_runs_with_the_metrics(sweep):
    uri, runs = sweep
    assert len(runs) == 8
    assert {r.info.status for r in runs} == {"FINISHED"}
    combos = {
        (r.data.params["learner.lr"], r.data.params["dataset.margin"], r.data.params["seed"])
        for r in runs
    }
    assert len(combos) == 8
    client = MlflowClient(tracking_uri=uri)
    for run in runs:
        assert RUN_METRICS <= set(run.data.metrics), RUN_METRICS - set(run.data.metrics)
        m, tags = run.data.metrics, run.data.tags
        assert m["mistakes"] <= m["bound.novikoff_bias"]
        assert m["bound_ratio.tightest"] == pytest.approx(m["mistakes"] / m["bound.tightest"])
        assert m["margin"] == pytest.approx(float(run.data.params["dataset.margin"]), rel=1e-12)
        assert m["radius"] == pytest.approx(1.0, rel=1e-12)
        assert tags["bound_violated"] == "false"
        assert tags["lincls.version"] and len(tags["dataset.fingerprint"]) == 16
        assert len(tags["mlflow.source.git.commit"]) == 40
        curves = record.read(client.get_run(run.info.run_id).data.tags).curves  # its record's
        per_pass = curves["mistakes_per_pass"]
        assert [step for step, _ in per_pass] == list(range(1, int(m["passes_run"]) + 1))
        assert sum(value for _, value in per_pass) == m["mistakes"]
        cumulative = curves["cumulative_mistakes"]
        assert 0 < len(cumulative) <= 200
        values = [value for _, value in sorted(cumulative)]
        assert values == sorted(values) and values[-1] <= m["mistakes"]
        assert run.data.params["learner.bias"] == "feature" and run.data.params["passes"] == "10"


def test_learning_rate_does_not_change_the_mistakes(sweep):
    _, runs = sweep
    by_config = {}
    for run in runs:
        key = (run.data.params["dataset.margin"], run.data.params["seed"])
        by_config.setdefault(key, set()).add(run.data.metrics["mistakes"])
    assert all(len(mistakes) == 1 for mistakes in by_config.values())


def test_rerunning_a_logged_config_reproduces_its_metrics(sweep, tmp_path):
    _, runs = sweep
    original = runs[3]
    overrides = [
        f"{k}={v}" for k, v in original.data.params.items() if not k.startswith("tracking.")
    ]
    uri = f"sqlite:///{tmp_path / 'again.db'}"
    outcome = runner.execute(compose_config([*overrides, f"tracking.uri={uri}"]))
    (again,) = runs_of(uri)
    assert again.info.run_id == outcome.run_id
    drop = {"fit_seconds"}
    before = {k: v for k, v in original.data.metrics.items() if k not in drop}
    after = {k: v for k, v in again.data.metrics.items() if k not in drop}
    assert before == after
    assert original.data.tags["dataset.fingerprint"] == again.data.tags["dataset.fingerprint"]
    assert original.data.tags["lincls.config_hash"] == again.data.tags["lincls.config_hash"]


def _csv(path, rows):
    path.write_text("f1,f2,label\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    return str(path)


BAD_INPUTS = {
    "margin zero": (["dataset.margin=0"], "dataset.margin: must be a number in (0, inf)"),
    "margin negative": (["dataset.margin=-0.5"], "dataset.margin: must be a number in (0, inf)"),
    "radius zero": (["dataset.radius=0"], "dataset.radius: must be a number in (0, 1e+150]"),
    "radius negative": (["dataset.radius=-1"], "dataset.radius: must be a number in (0, 1e+150]"),
    "margin above radius": (["dataset.margin=2"], "dataset.margin: must be ≤ radius = 1"),
    "offset beyond radius": (
        ["dataset.offset=0.95"],
        "dataset.offset: |offset| must be ≤ radius − margin = 0.9 (the radius cannot hold it)",
    ),
    "n zero": (["dataset.n=0"], "dataset.n: must be an integer in [2, inf)"),
    "d zero": (["dataset.d=0"], "dataset.d: must be an integer in [1, inf)"),
    "passes zero": (["passes=0"], "passes: must be an integer in [1, inf)"),
    "seed too large": (
        ["seed=99999999999999999999"],
        "seed: must be an integer in [0, 4294967295], got 99999999999999999999",
    ),
    "lr zero": (["learner.lr=0"], "learner.lr: must be a number in (0, inf)"),
    "lr negative": (["learner.lr=-2"], "learner.lr: must be a number in (0, inf)"),
    "unknown bias": (["learner.bias=sometimes"], "learner.bias: must be one of 'feature', 'r2'"),
    "kernel degree zero": (
        ["learner=kernel_perceptron", "learner.degree=0"],
        "learner.degree: must be an integer in [1, inf), got 0",
    ),
    "rbf gamma zero": (
        ["learner=kernel_perceptron", "learner.kernel=rbf", "learner.gamma=0"],
        "learner.gamma: must be a number in (0, inf), got 0.0",
    ),
    "PA C zero": (["learner=passive_aggressive", "learner.C=0"], "learner.C: must be a number"),
    "MIRA cap zero": (
        ["learner=mira", "dataset=multiclass", "learner.max_step=0"],
        "learner.max_step: must be a number in (0, inf)",
    ),
    "tau negative": (["learner=margin_perceptron", "learner.tau=-1"], "learner.tau: must be"),
    "negative features for Winnow": (["learner=winnow"], "dataset.X: Negative values in data"),
    "NaN in X": ("nan", "dataset.path: "),
    "inf in X": ("inf", "dataset.path: "),
    "one class": ("one", "dataset.y: needs two classes, got one class"),
    "three classes": ("three", "dataset.y: Only binary classification is supported"),
}


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory):
    """Every bad input through the CLI (two at a time), each against its own fresh store."""
    tmp = tmp_path_factory.mktemp("bad")
    files = {
        "nan": _csv(tmp / "nan.csv", [(1, 2, 0), (3, "nan", 1), (0, 1, 0)]),
        "inf": _csv(tmp / "inf.csv", [(1, 2, 0), (3, 4, 1), ("inf", 1, 0)]),
        "one": _csv(tmp / "one.csv", [(1, 2, 1), (3, 4, 1), (5, 6, 1)]),
        "three": _csv(tmp / "three.csv", [(1, 2, 0), (3, 4, 1), (5, 6, 2)]),
    }

    def launch(item):
        name, (overrides, _) = item
        if isinstance(overrides, str):
            overrides = [
                "dataset=csv",
                f"dataset.path={files[overrides]}",
                "dataset.test_fraction=0",
            ]
        uri = f"sqlite:///{tmp / (name.replace(' ', '_') + '.db')}"
        return name, uri, run_cli([*overrides, f"tracking.uri={uri}"], cwd=tmp)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {name: (uri, done) for name, uri, done in pool.map(launch, BAD_INPUTS.items())}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_exits_nonzero_with_one_line_and_no_running_run(bad_runs, case):
    uri, done = bad_runs[case]
    expected = BAD_INPUTS[case][1]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {expected}"), lines[0]
    assert [r for r in runs_of(uri) if r.info.status == "RUNNING"] == []
    if case in ("NaN in X", "inf in X"):
        assert "line " in lines[0] and "is not a finite number" in lines[0]


def test_a_failure_after_the_run_started_is_marked_failed(store, monkeypatch):
    from lincls.learners import Perceptron

    def broken(self, X, y, order):
        raise RuntimeError("the kernel stopped")

    monkeypatch.setattr(Perceptron, "_run_pass", broken)
    config = compose_config([f"tracking.uri={store}"])
    with pytest.raises(RuntimeError, match="the kernel stopped"):
        runner.execute(config)
    (run,) = runs_of(store)
    assert run.info.status == "FAILED"
    assert run.data.tags["error"].startswith("RuntimeError: the kernel stopped")


def test_default_store_is_an_absolute_sqlite_uri(monkeypatch, tmp_path):
    from lincls import tracking

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    uri = tracking.resolve_tracking_uri(None)
    assert uri.startswith("sqlite:////") and uri.endswith("/results/mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere/m.db")
    assert tracking.resolve_tracking_uri(None) == "sqlite:////elsewhere/m.db"
    assert tracking.resolve_tracking_uri("sqlite:////given.db") == "sqlite:////given.db"


def test_tight_instance_through_the_runner_has_ratio_exactly_one(tmp_path):
    config = compose_config(
        ["dataset=orthonormal", "dataset.d=64", "dataset.radius=3", "learner.bias=none",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    m = evaluation.measure(config).metrics
    assert m["mistakes"] == 64.0
    assert m["bound_ratio.novikoff"] == 1.0 and m["bound_ratio.tightest"] == 1.0
    assert m["bound.novikoff"] == 64.0


def test_noisy_data_through_the_runner_log_freund_schapire_and_its_deficit(tmp_path):
    config = compose_config(
        ["dataset=noisy", "dataset.n=300", "order=shuffled", "orders=3",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    assert m["separable"] == 0.0 and tags["certificate.generator"] == "does not separate"
    assert "bound.novikoff_bias" not in m and tags["bound_violated"] == "false"
    assert m["mistakes_max"] <= m["bound.freund_schapire"]
    assert m["bound_param.freund_schapire.deficit"] > 0
    assert tags["bound.freund_schapire.certificate"] in ("generator", "soft_svm", "best")
    assert m["certificate.generator.deficit"] > 0 and m["certificate.generator.margin"] < 0


def test_svmlight_file_runs_sparse_through_the_runner(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    lines = [f"{label} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row))
             for label, row in zip(y, X, strict=True)]  # fmt: skip
    path = tmp_path / "d.svm"
    path.write_text("\n".join(lines) + "\n")
    config = compose_config(
        ["dataset=svmlight", f"dataset.path={path}", "dataset.test_fraction=0.2",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    outcome = evaluation.measure(config)
    assert outcome.metrics["separable"] == 1.0 and outcome.tags["bound_violated"] == "false"
    assert outcome.metrics["mistakes"] <= outcome.metrics["bound.novikoff_bias"]


BAD_PREPARED = {
    "svmlight missing": (["dataset=svmlight", "dataset.path=/nonexistent/x.svm"],
                         "dataset.path: no such file: /nonexistent/x.svm"),
    "noisy n too small": (["dataset=noisy", "dataset.n=8"],
                          "dataset.n: must be ≥ 12 to flip 0 and overlap 10, got 8"),
    "noisy deficit too large": (["dataset=noisy", "dataset.deficit=50"],
                                "dataset.deficit: must be ≤ √overlap·(radius − |offset| + margin)"),
    "three classes for a binary learner": (
        ["dataset=wine", "dataset.classes=null"],
        "dataset.y: Only binary classification is supported",
    ),
    "plane kind": (["dataset=plane", "dataset.kind=spiral"], "dataset.kind: must be one of"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_PREPARED))
def test_bad_input_of_new_datasets_is_one_line_naming_the_field(case):
    overrides, message = BAD_PREPARED[case]
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(overrides))
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_malformed_svmlight_names_file_and_line(tmp_path):
    path = tmp_path / "broken.svm"
    path.write_text("+1 1:0.5 2:1\n-1 1:0.25 2:oops\n")
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["dataset=svmlight", f"dataset.path={path}"]))
    assert str(info.value).startswith(f"dataset.path: {path} line 2: '2:oops' is not index:value")


def test_no_lincls_config_sets_hydra_mode_so_a_plain_run_is_a_single_run():
    # lincls.experiments.run.mode_known skips Hydra's reading of hydra.mode for such arguments
    from hydra import compose, initialize_config_dir

    from lincls.experiments.run import single_run

    experiments = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
    assert len(experiments) >= 10
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for overrides in [[], *([f"experiment={e}"] for e in experiments)]:
            config = compose("config", overrides=overrides, return_hydra_config=True)
            assert config.hydra.mode is None, overrides
    assert single_run(["learner=perceptron", "experiment=bound_verification"])
    for argv in (["-m", "seed=0,1"], ["--multirun"], ["hydra.mode=MULTIRUN"],
                 ["+hydra.mode=RUN"], ["--config-dir", "elsewhere"], ["--cfg", "job"],
                 ["--info"], ["-cn", "other"]):  # fmt: skip
        assert not single_run(argv), argv


def test_a_run_is_a_multirun_when_an_override_says_so(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    sweep = f"hydra.sweep.dir={tmp_path / 'sweep'}"
    done = run_cli(["hydra.mode=MULTIRUN", "seed=0,1", "dataset.n=100", "dataset.d=5",
                    f"tracking.uri={uri}", sweep], tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    runs = [r for r in runs_of(uri) if r.data.tags.get("lincls.role") == "run"]
    assert sorted(r.data.params["seed"] for r in runs) == ["0", "1"]


def test_a_runs_folder_is_its_own_down_to_the_microsecond():
    """Two ``lincls run`` started in one second in one folder shared Hydra's run folder: one
    refused as bad input took the folder away while the other opened its log there (a
    traceback). The run folder is stamped to the microsecond, as a sweep's is."""
    import re

    from omegaconf import OmegaConf

    with open(CONF / "config.yaml") as handle:
        hydra = OmegaConf.load(handle)["hydra"]
    for kind in ("run", "sweep"):
        pattern = OmegaConf.to_container(hydra[kind])["dir"]
        assert re.search(r"\$\{now:%Y-%m-%d_%H-%M-%S-%f\}$", pattern), (kind, pattern)
