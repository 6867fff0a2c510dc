"""The lincls launcher's jobs are the jobs Hydra would make: the same task config, the same
``HydraConfig`` fields and output dir, whether a job is derived from its composition (the fast
path) or composed whole (a ``hydra`` node that interpolates a task value)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import sweep_master
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf, open_dict, read_write

from hydra_plugins.lincls_sweeps.composer import JobComposer, task_config

JOBS = [
    ["learner=perceptron", "seed=3", "+note=${hydra:job.id}"],
    ["learner=averaged_perceptron", "seed=3", "+note=${hydra:job.id}"],
    ["learner=perceptron", "seed=4", "dataset.n=50", "+note=${hydra:job.id}"],
    ["learner=perceptron", "seed=5", "+note=${hydra:job.id}"],
]
FIELDS = ("overrides.task", "job.num", "job.id", "job.override_dirname", "runtime.output_dir")


def _hydras_job(loader, master, overrides: list[str], idx: int):
    """What Hydra's basic launcher and ``run_job`` make of a job: (task config, fields, dir)."""
    config = loader.load_sweep_config(master, list(overrides))
    with open_dict(config):
        config.hydra.job.id = f"{config.hydra.job.name}_{idx}"
        config.hydra.job.num = idx
    HydraConfig.instance().set_config(config)
    job_dir = Path(str(config.hydra.sweep.dir)) / str(config.hydra.sweep.subdir)
    with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
        config.hydra.runtime.output_dir = str(job_dir.resolve())
    HydraConfig.instance().set_config(config)
    return _seen(task_config(config)), job_dir.resolve()


def _seen(task) -> tuple[dict, dict]:
    """The task config resolved, and the job's fields as the task reads them (HydraConfig)."""
    hydra = HydraConfig.get()
    fields = {f: OmegaConf.to_container(OmegaConf.create({"v": OmegaConf.select(hydra, f)}))["v"]
              for f in FIELDS}  # fmt: skip
    return OmegaConf.to_container(task, resolve=True), fields


@pytest.mark.parametrize(("subdir", "fast"), [(None, True), ("${seed}_${hydra.job.num}", False)])
def test_a_jobs_config_fields_and_dir_are_hydras(tmp_path, subdir, fast):
    overrides = [f"hydra.sweep.dir={tmp_path}"]
    if subdir:
        overrides.append(f"hydra.sweep.subdir={subdir}")
    with sweep_master(overrides) as (hydra, master):
        composer = JobComposer(hydra.config_loader, master)
        for idx, job in enumerate(JOBS * 2):  # compositions reused, alternating
            task, job_dir = composer.job(job, idx)
            ours = _seen(task)
            theirs, their_dir = _hydras_job(hydra.config_loader, master, job, idx)
            assert ours == theirs and job_dir == their_dir
            config, fields = ours
            assert fields["job.num"] == idx and fields["overrides.task"] == job
            assert config["note"] == fields["job.id"] == f"{HydraConfig.get().job.name}_{idx}"
            assert config["seed"] == int(job[1].split("=")[1])
            expected = f"{config['seed']}_{idx}" if subdir else str(idx)
            assert job_dir == tmp_path / expected
        assert all((b.task is not None) == fast for b in composer._bases.values())
        assert len(composer._bases) == 2  # one composition per learner


def test_a_value_the_schema_refuses_is_refused_as_hydra_refuses_it(tmp_path):
    with sweep_master([f"hydra.sweep.dir={tmp_path}"]) as (hydra, master):
        composer = JobComposer(hydra.config_loader, master)
        job = ["learner=perceptron", "passes=many"]
        with pytest.raises(Exception) as ours:
            composer.job(job, 0)
        with pytest.raises(Exception) as theirs:
            hydra.config_loader.load_sweep_config(master, job)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
        assert "passes" in str(ours.value) and "many" in str(ours.value)
