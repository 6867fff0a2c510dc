"""The Python API: what ``lincls run``, ``lincls run -m`` and ``lincls report`` do, from a
notebook. ``import lincls`` gives these names (``lincls.run`` …), loaded on first use.

- ``run(learner, dataset, *, store=None, **keys)``: one config → a ``RunResult``;
- ``sweep(grid, *, learner, dataset, study=None, store=None, jobs=1, **keys)``: a grid through
  the sweeper (the CLI's progress lines on stderr) → its ``Study``;
- ``studies(store=None)``: the studies in a store, as a frame;
- ``study(name_or_parent_run_id, store=None)``: one study's runs, curves and the report's figures.

``store`` is a tracking URI or a path to a ``.db`` file (SQLite); None is the default store
(``MLFLOW_TRACKING_URI``, else ``$LINCLS_HOME/mlflow.db``, else ``./results/mlflow.db``).
"""

from lincls.api.result import RunResult, run
from lincls.api.study import Study, studies, study
from lincls.api.sweep import SweepError, sweep
from lincls.paths import store_uri

__all__ = ["RunResult", "Study", "SweepError", "run", "store_uri", "studies", "study", "sweep"]
