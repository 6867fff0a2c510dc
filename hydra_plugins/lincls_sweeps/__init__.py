"""Hydra plugins of lincls: the ``lincls`` sweeper and the ``lincls`` launcher, and the cluster
launchers ``lincls_slurm`` and ``lincls_ray`` (``clusters``: a task per chunk of configs).

Hydra finds them by scanning the ``hydra_plugins`` namespace package; their configs are
``hydra/sweeper=lincls`` and ``hydra/launcher=lincls`` (the defaults in ``conf/config.yaml``),
``hydra/launcher=lincls_slurm`` and ``hydra/launcher=lincls_ray``.
"""

from hydra.core.config_store import ConfigStore

from hydra_plugins.lincls_sweeps.clusters import LinclsRayConf, LinclsSlurmConf
from hydra_plugins.lincls_sweeps.launcher import LinclsLauncherConf
from hydra_plugins.lincls_sweeps.sweeper import LinclsSweeperConf

ConfigStore.instance().store(
    group="hydra/sweeper", name="lincls", node=LinclsSweeperConf, provider="lincls"
)
ConfigStore.instance().store(
    group="hydra/launcher", name="lincls", node=LinclsLauncherConf, provider="lincls"
)
ConfigStore.instance().store(
    group="hydra/launcher", name="lincls_slurm", node=LinclsSlurmConf, provider="lincls"
)
ConfigStore.instance().store(
    group="hydra/launcher", name="lincls_ray", node=LinclsRayConf, provider="lincls"
)
