"""A sweep's configs checked, every value, before its first job (and before its store is opened).

Each job's config is composed as the launcher composes it and checked as a run checks its own
(``lincls.evaluation.prepare``: the learner, the data, the plan, what would not fit in memory),
so that a bad value is refused in one line naming its config, instead of running the good
configs and storing a FAILED run for the bad one (whose resume command then failed the same way
again). What is checked once serves many jobs: jobs that differ only in ``seed`` differ in no
value but the seed's own, which is checked from its override; the data of one dataset config
(its seed aside) are built once for the consecutive jobs that share it. Only bad input refuses
the sweep: any other error is left to its job, which records it as before. Measured: 0.2 s for
2,000 jobs over two learners and 1,000 seeds; 0.5 s for 300 jobs that all differ (~1.6 ms a
config, against ~20 ms a run).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.lincls_sweeps.launcher import JobComposer, split_group_overrides


def check_jobs(loader: Any, config: DictConfig, jobs: Sequence[Sequence[str]]) -> None:
    """Raise ``LinclsInputError`` for the first job (override list) of ``jobs`` with a bad value:
    its field and problem, then which config it is (number, overrides) and that none ran."""
    from lincls.config.composition import input_error
    from lincls.errors import LinclsInputError

    composer = JobComposer(loader, config)
    saved = HydraConfig.instance().cfg
    data: dict[str, Any] = {}  # the last dataset built, by its settings
    checked: set[tuple[str, ...]] = set()
    try:
        for number, job in enumerate(jobs, 1):
            try:
                _check_job(composer, loader, job, number - 1, checked, data)
            except Exception as exc:
                error = input_error(exc)
                if error is None:
                    continue  # not bad input: the job runs and records it
                where = f"config {number} of {len(jobs)}: {' '.join(job)}"
                raise LinclsInputError(
                    error.field, f"{error.problem} ({where}; no config was run)"
                ) from None
    finally:
        HydraConfig.instance().cfg = saved


def _check_job(composer, loader, job, idx: int, checked: set, data: dict) -> None:
    from lincls.config.checks import check_booleans
    from lincls.config.run import SEED_MAX, RunConfig
    from lincls.errors import check_number
    from lincls.evaluation import prepare
    from lincls.registry import build_dataset

    groups, values = split_group_overrides(loader, job)
    for override in values:
        if override.key_or_group == "seed":
            check_number("seed", override.value(), low=0, high=SEED_MAX, integer=True)
    key = tuple(o.input_line for o in groups + values if o.key_or_group != "seed")
    if key in checked:
        return
    checked.add(key)  # once, whatever it raises
    task_cfg = composer.task(job, idx)
    check_booleans(task_cfg, groups + values)
    run_config = RunConfig.from_container(OmegaConf.to_container(task_cfg, resolve=True))
    dataset = dict(run_config.dataset)
    if "seed" in dataset:  # the data below may have been built with another job's seed
        check_number("dataset.seed", dataset.pop("seed"), low=0, integer=True)
    settings = json.dumps(dataset, sort_keys=True, default=str)
    if settings not in data:
        data.clear()  # one dataset at a time: a sweep's data may be large
        data[settings] = build_dataset(run_config.dataset)
    prepare(run_config, data[settings])
