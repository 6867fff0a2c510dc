"""Datasets: certified synthetic generators and loaders of real data."""

from lincls.data.boolean import make_disjunction
from lincls.data.dataset import Dataset, fingerprint
from lincls.data.far_points import make_far_points
from lincls.data.files import column_names, load_csv, load_playtennis, load_svmlight
from lincls.data.multiclass import make_multiclass
from lincls.data.sklearn_sets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_sklearn_set,
    load_wine,
)
from lincls.data.synthetic import make_noisy, make_orthonormal, make_plane, make_separable

__all__ = [
    "Dataset",
    "column_names",
    "fingerprint",
    "load_breast_cancer",
    "load_csv",
    "load_digits",
    "load_iris",
    "load_playtennis",
    "load_sklearn_set",
    "load_svmlight",
    "load_wine",
    "make_disjunction",
    "make_far_points",
    "make_multiclass",
    "make_noisy",
    "make_orthonormal",
    "make_plane",
    "make_separable",
]
