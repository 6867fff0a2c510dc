"""lincls: linear classifiers of the perceptron family, their mistake bounds, and sweeps."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lincls")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
