"""Datasets: certified synthetic generators and loaders of real data."""

from lincls.data.boolean import make_disjunction
from lincls.data.dataset import Dataset, fingerprint
from lincls.data.files import load_csv
from lincls.data.multiclass import make_multiclass
from lincls.data.synthetic import make_orthonormal, make_separable

__all__ = [
    "Dataset",
    "fingerprint",
    "load_csv",
    "make_disjunction",
    "make_multiclass",
    "make_orthonormal",
    "make_separable",
]
