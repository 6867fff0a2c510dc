"""Every named study in conf/experiment/ expands to a grid whose every config is valid."""

from __future__ import annotations

import pytest
from conftest import CONF, sweep_master
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import HydraContext, RunMode
from omegaconf import OmegaConf, open_dict

import lincls.search  # noqa: F401  (registers dataset=search, which the frontier study runs)
from hydra_plugins.lincls_sweeps.composer import JobComposer
from hydra_plugins.lincls_sweeps.sweeper import LinclsSweeper
from lincls import evaluation
from lincls.tracking.tags import config_hash

STUDIES = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
EXPECTED_JOBS = {  # the size of each grid, so a change to a study is a visible change
    "bound_verification": 2 * (3 * 4 * 2 * 2 + 3 * 2 + 2 * 2 + 2 * 6 + 4 + 3 * 2 + 2 * 2),
    "margin_sweep": 6 * 2 * 3,
    "radius_sweep": 5 * 2 * 3,
    "lr_sweep": 3 * (2 * 4 + 4 * 3 + 2 * 4),
    "passes_sweep": 3 * 2 * 5 * 2,
    "noisy": 3 * 4 * 3 * 2,
    "real_data": 3 * 2 * (1 + 3 * 2),
    "multiclass": 2 * 2 * (2 * 3 + 1),
    "second_order": 12 * 5,  # learner options × datasets, 20 random orders each
    "fs99": 2 * 6 * 2,  # two image scalings × degrees 1–6 × (perceptrons, SVM)
    "kwa97": 2 * 7 * (3 + 2),  # 2 learners × 7 N × (3 random seeds + 2 adversaries)
    # a search per bound the searches cover (Winnow's over α × θ: 4 each), and the games over
    # each theorem's options: CW 8, SCW-I 12, SCW-II 18, ALMA 3, the Forgetron 6, R² bias 1,
    # Projectron++ 4; the multiclass bounds' 2 searches and their game (2 learners × 2 class
    # counts × 2 bias rules)
    "frontier": 80 + 2 + 8,
    # 20 margins × 10 radii × 50 seeds × 10 learners × 10 passes (`make bench` sweep1m)
    "million": 1_000_000,
}
# a study too large to compose whole here: every k-th of its configs (k prime, so each key's
# values are all reached), and its last
SAMPLED = {"million": 997}


def study_jobs(study: str) -> tuple[list[list[str]], JobComposer]:
    """The job override lists of a study, and a composer of their configs."""
    with sweep_master([f"experiment={study}"]) as (hydra, master):
        sweep = master.hydra.sweeper
        sweeper = LinclsSweeper(
            params=OmegaConf.to_container(sweep.params) if sweep.params else None,
            grids=OmegaConf.to_container(sweep.grids) if sweep.grids else None,
        )
        sweeper.hydra_context = HydraContext(config_loader=hydra.config_loader, callbacks=None)
        sweeper.config = master
        jobs = sweeper.jobs([f"experiment={study}"])
        return jobs, JobComposer(hydra.config_loader, master)


def test_every_study_is_listed():
    assert set(STUDIES) == set(EXPECTED_JOBS)


@pytest.mark.parametrize("study", STUDIES)
def test_a_study_expands_to_its_grid_of_valid_configs(study, tmp_path):
    jobs, composer = study_jobs(study)
    assert len(jobs) == EXPECTED_JOBS[study]
    assert len({tuple(sorted(j)) for j in jobs}) == len(jobs)  # each config once
    step = SAMPLED.get(study, 1)
    chosen = sorted({*range(0, len(jobs), step), len(jobs) - 1})
    hashes = set()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for k in chosen:
            job = jobs[k]
            cfg = composer.compose(job, k)
            with open_dict(cfg):
                del cfg["hydra"]
            config = OmegaConf.to_container(cfg, resolve=True)
            assert config["study"] == study
            assert config["tracking"]["skip_finished"] is True
            evaluation.prepare(config)  # every value in range, the data builds, the learner fits it
            hashes.add(config_hash(config))
    assert len(hashes) == len(chosen)


@pytest.mark.parametrize(
    ("launcher", "target"),
    [
        ("lincls", "hydra_plugins.lincls_sweeps.launcher.LinclsLauncher"),
        ("basic", "hydra._internal.core_plugins.basic_launcher.BasicLauncher"),
        ("joblib", "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"),
        ("submitit_local", "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"),
        ("submitit_slurm", "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"),
    ],
)
def test_every_documented_launcher_composes_with_the_lincls_sweeper(launcher, target):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        master = GlobalHydra.instance().hydra.compose_config(
            "config", [f"hydra/launcher={launcher}"], run_mode=RunMode.MULTIRUN,
            with_log_configuration=False,
        )  # fmt: skip
    assert master.hydra.launcher._target_ == target
    assert master.hydra.sweeper._target_ == "hydra_plugins.lincls_sweeps.sweeper.LinclsSweeper"
