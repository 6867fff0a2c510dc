"""The lincls entry point: ``python -m experiments.run [overrides]``, or ``-m`` for a sweep.

One job = make data → fit → bounds → one batched MLflow write. Bad input prints one line naming
the field and what is allowed, and exits non-zero.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from lincls.config import register_configs
from lincls.errors import LinclsInputError
from lincls.runner import execute
from lincls.store import StoreError
from lincls.sweeps import current_sweep, run_job

register_configs()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float | dict | None:
    """Run one config; return its mistakes (the value a Hydra sweeper would minimise)."""
    config = OmegaConf.to_container(cfg, resolve=True)
    hydra_config = HydraConfig.get()
    multirun = hydra_config.mode == RunMode.MULTIRUN
    # the sweep's record is in its directory too, relative to where it was launched (runtime.cwd)
    sweep_dir = Path(hydra_config.runtime.cwd, hydra_config.sweep.dir)
    sweep = current_sweep(sweep_dir) if multirun else None
    if sweep is not None:  # a job of a lincls sweep: a child of its parent run, never raises
        outcome = run_job(config, list(HydraConfig.get().overrides.task), sweep)
        return outcome
    try:
        outcome = execute(config)
    except (LinclsInputError, StoreError) as exc:
        if multirun:
            raise
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2 if isinstance(exc, LinclsInputError) else 1)
    metrics = outcome.metrics
    summary = ", ".join(
        f"{k}={metrics[k]:g}"
        for k in ("mistakes", "bound.tightest", "train_accuracy", "test_accuracy")
        if k in metrics
    )
    print(f"run {outcome.run_id}: {summary}")
    return metrics.get("mistakes")


if __name__ == "__main__":
    main()
