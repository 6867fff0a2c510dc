"""lincls: linear classifiers of the perceptron family, their mistake bounds, and sweeps.

From Python: ``lincls.run``, ``lincls.sweep``, ``lincls.studies`` and ``lincls.study``
(``lincls.api``), loaded on first use, so ``import lincls`` stays cheap.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("lincls")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

API = ("run", "sweep", "studies", "study")
__all__ = ["__version__", *API]


def __getattr__(name: str) -> Any:
    """``lincls.run`` and the rest of the API, imported when first asked for (they load the
    runner, MLflow's reader and the report, seconds of imports a plain ``import lincls`` skips)."""
    if name in API:
        from lincls import api

        return getattr(api, name)
    raise AttributeError(f"module 'lincls' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API})
