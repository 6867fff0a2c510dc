"""A sweep job's config as Hydra would compose it, from one composition per choice of config
groups (``JobComposer``), or as plain containers (``JobComposer.plain``: ``plain``)."""

from __future__ import annotations

import copy
import pickle
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from hydra_plugins.lincls_sweeps.overrides import split_group_overrides

if TYPE_CHECKING:
    from hydra_plugins.lincls_sweeps.plain import PlainBase

# Interpolations in the hydra node that do not depend on a job's task values.
_HYDRA_INTERPOLATION = re.compile(r"\$\{(?:hydra[.:]|now:|oc\.env:)[^${}]*\}")


@dataclass
class _Base:
    """One composition (a choice of config groups) and what its jobs are made from."""

    config: DictConfig  # as composed
    task: bytes | None = None  # its task part pickled, a copy for each job (None: not cheap)
    hydra: DictConfig | None = None  # what ``HydraConfig`` holds for its jobs
    plain: Any = None  # its task part resolved (``plain.PlainBase``), once asked for; False: none


class JobComposer:
    """Job configs from a master config: one composition per choice of config groups.

    A job of a composition then costs a copy of its task part (~0.2 ms) with the job's value
    overrides applied, as Hydra applies command-line overrides after composing
    (``ConfigLoaderImpl._apply_overrides_to_config``), and its few own ``hydra`` fields (overrides,
    number, id, override dirname, output dir) written into the ``HydraConfig`` of its
    composition. Copying the whole config and setting ``HydraConfig`` anew (twice, as the job's
    output dir is an interpolation of the job's own fields) cost ~10 ms a job. A ``hydra`` node
    that interpolates a task value (``hydra.sweep.subdir=${seed}``) differs between jobs in more
    than those fields: the jobs of such a composition are composed whole, as before.
    """

    def __init__(self, loader, master: DictConfig, save_job_config: bool = False) -> None:
        self.loader = loader
        self.master = master
        self.save_job_config = save_job_config
        self._bases: dict[tuple[str, ...], _Base] = {}
        self.task_name = str(master.hydra.job.name)  # a job's, as ``HydraConfig`` names it

    def _base(self, groups: list[Override]) -> _Base:
        key = tuple(o.input_line for o in groups)
        if key not in self._bases:
            config = self.loader.load_sweep_config(self.master, list(key))
            base = _Base(config)
            settings = OmegaConf.to_yaml(config.hydra, resolve=False)
            if settings.count("${") == len(_HYDRA_INTERPOLATION.findall(settings)):
                base.task = pickle.dumps(task_config(config))
                HydraConfig.instance().set_config(config)
                base.hydra = HydraConfig.instance().cfg
                base.hydra.hydra._set_parent(base.hydra)  # resolved in itself: the job's fields
            self._bases[key] = base
        return self._bases[key]

    def plain(self, overrides: Sequence[str]) -> tuple[dict, DictConfig] | None:
        """A job's task config as plain containers, resolved (as ``resolved`` of ``task`` gives
        it), without OmegaConf (``plain``), and its composition's task config (whose nodes'
        types are the job's); None when only composing it makes it exactly."""
        try:
            groups, values = split_group_overrides(self.loader, overrides)
        except Exception:  # its composition fails: composing the job says why
            return None
        base = self.plain_base(groups)
        config = None if base is None else base.job(values)
        return None if config is None else (config, base.task)

    def plain_base(self, groups: list[Override]) -> PlainBase | None:
        """The ``PlainBase`` of the composition of ``groups`` (a job's group choices); None
        when its jobs are composed (it fails, or does not resolve: composing says why)."""
        from hydra_plugins.lincls_sweeps.plain import PlainBase

        try:
            base = self._base(groups)
        except Exception:
            return None
        if base.plain is None:
            try:
                base.plain = PlainBase(task_config(base.config))
            except Exception:
                base.plain = False
        return base.plain or None

    def compose(self, overrides: Sequence[str], idx: int) -> DictConfig:
        """The config Hydra would compose for a job with ``overrides``, number ``idx``."""
        groups, values = split_group_overrides(self.loader, overrides)
        config = copy.deepcopy(self._base(groups).config)
        ConfigLoaderImpl._apply_overrides_to_config(values, config)
        _set_fields(config.hydra, self._job_fields(config, groups, values, overrides, idx))
        OmegaConf.copy_cache(from_config=self.master, to_config=config)
        return config

    def _job_fields(self, config, groups, values, overrides, idx: int) -> dict[str, Any]:
        task = [o for o in groups + values if not o.is_hydra_override()]
        names = config.hydra.job.config.override_dirname
        return {
            "overrides.task": list(overrides),
            "job.override_dirname": get_overrides_dirname(
                overrides=task,
                kv_sep=names.kv_sep,
                item_sep=names.item_sep,
                exclude_keys=names.exclude_keys,
            ),
            "job.num": idx,
            "job.id": f"{config.hydra.job.name}_{idx}",
        }

    def job(self, overrides: Sequence[str], idx: int) -> tuple[DictConfig, Path]:
        """The task config of a job (as Hydra's ``run_job`` hands it to the task) and its
        output dir, with ``HydraConfig`` set to the job's ``hydra`` node."""
        groups, values = split_group_overrides(self.loader, overrides)
        base = self._base(groups)
        if base.task is None:
            return self._composed_job(overrides, idx)
        task_cfg = pickle.loads(base.task)  # a deep copy, 5× faster than copy.deepcopy
        ConfigLoaderImpl._apply_overrides_to_config(values, task_cfg)
        OmegaConf.copy_cache(from_config=self.master, to_config=task_cfg)
        hydra = base.hydra.hydra
        _set_fields(hydra, self._job_fields(base.config, groups, values, overrides, idx))
        job_dir = (Path(str(hydra.sweep.dir)) / str(hydra.sweep.subdir)).resolve()
        _set_fields(hydra, {"runtime.output_dir": str(job_dir)})
        HydraConfig.instance().cfg = base.hydra
        return task_cfg, job_dir

    def task(self, overrides: Sequence[str], idx: int) -> DictConfig:
        """The task config of a job alone: ``job``'s, without writing the job's own ``hydra``
        fields and output dir (~2 ms of ``job``'s ~3): what checking its values needs."""
        groups, values = split_group_overrides(self.loader, overrides)
        base = self._base(groups)
        if base.task is None:
            return self._composed_job(overrides, idx)[0]
        task_cfg = pickle.loads(base.task)
        ConfigLoaderImpl._apply_overrides_to_config(values, task_cfg)
        OmegaConf.copy_cache(from_config=self.master, to_config=task_cfg)
        HydraConfig.instance().cfg = base.hydra
        return task_cfg

    def _composed_job(self, overrides: Sequence[str], idx: int) -> tuple[DictConfig, Path]:
        config = self.compose(overrides, idx)
        HydraConfig.instance().set_config(config)  # the job dir's interpolations need it set
        job_dir = (Path(str(config.hydra.sweep.dir)) / str(config.hydra.sweep.subdir)).resolve()
        with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
            config.hydra.runtime.output_dir = str(job_dir)
        HydraConfig.instance().set_config(config)
        return task_config(config), job_dir


def _set_fields(hydra: DictConfig, fields: dict[str, Any]) -> None:
    """Set ``hydra``'s fields (``section.key``) though it is read-only."""
    with read_write(hydra):
        for dotted, value in fields.items():
            section, key = dotted.split(".")
            node = hydra[section]
            with open_dict(node):
                node[key] = value


def task_config(config: DictConfig) -> DictConfig:
    """A job's config without its ``hydra`` node, made as Hydra's ``run_job`` makes it: a copy
    with the node deleted (a masked copy of the other keys would lose the root's schema, and with
    it the check of an overridden root value's type)."""
    task_cfg = copy.deepcopy(config)
    with read_write(task_cfg), open_dict(task_cfg):
        del task_cfg["hydra"]
    return task_cfg
