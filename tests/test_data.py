"""Certified synthetic data: margin and radius hold for every example and are attained."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lincls.data import load_csv, make_orthonormal, make_separable
from lincls.errors import LinclsInputError


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(2, 80),
    d=st.integers(1, 15),
    radius=st.floats(0.01, 100.0),
    margin_fraction=st.floats(0.001, 1.0),
    offset_fraction=st.floats(-1.0, 1.0),
    seed=st.integers(0, 2**31 - 1),
)
def test_certified_margin_and_radius(n, d, radius, margin_fraction, offset_fraction, seed):
    margin = radius * margin_fraction
    offset = (radius - margin) * offset_fraction
    data = make_separable(n, d, margin, radius, offset=offset, seed=seed, n_test=50)
    margins = data.y * (data.X @ data.u + data.b)
    norms = np.linalg.norm(data.X, axis=1)
    assert np.linalg.norm(data.u) == pytest.approx(1.0, rel=1e-14)
    assert margins.min() == pytest.approx(margin, rel=1e-12)  # attained
    assert norms.max() == pytest.approx(radius, rel=1e-12)  # attained
    assert np.all(margins >= margin * (1 - 1e-12)) and np.all(norms <= radius * (1 + 1e-12))
    assert data.margin == pytest.approx(margin, rel=1e-12) and data.radius == pytest.approx(
        norms.max(), rel=1e-14
    )
    test_margins = data.y_test * (data.X_test @ data.u + data.b)
    assert np.all(test_margins >= margin * (1 - 1e-12))
    assert np.all(np.linalg.norm(data.X_test, axis=1) <= radius * (1 + 1e-12))
    assert abs((data.y > 0).sum() - (data.y < 0).sum()) <= 1  # balanced


def test_same_seed_same_bytes_other_seed_other_data():
    a = make_separable(50, 4, 0.1, 1.0, seed=3)
    b = make_separable(50, 4, 0.1, 1.0, seed=3)
    c = make_separable(50, 4, 0.1, 1.0, seed=4)
    assert a.X.tobytes() == b.X.tobytes() and a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint


def test_orthonormal_geometry():
    data = make_orthonormal(d=10, radius=2.0)
    assert np.array_equal(data.X, 2.0 * np.eye(10))
    assert data.margin == pytest.approx(2.0 / np.sqrt(10), rel=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": 0.0}, "margin: must be a number in (0, inf), got 0.0"),
        ({"margin": -0.1}, "margin: must be a number in (0, inf)"),
        ({"radius": 0.0}, "radius: must be a number in (0, inf)"),
        ({"margin": 2.0}, "margin: must be ≤ radius = 1, got 2"),
        ({"offset": 0.95}, "offset: |offset| must be ≤ radius − margin = 0.9"),
        ({"n": 0}, "n: must be an integer in [1, inf), got 0"),
        ({"d": 0}, "d: must be an integer in [1, inf), got 0"),
        ({"n": 2.5}, "n: must be an integer"),
    ],
)
def test_bad_arguments_give_one_line_errors(kwargs, message):
    args = {"n": 10, "d": 3, "margin": 0.1, "radius": 1.0, **kwargs}
    with pytest.raises(LinclsInputError) as info:
        make_separable(**args)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_csv_loader(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,2,yes\n3,4,no\n5,6,yes\n7,8,no\n")
    data = load_csv(path, label_column="label")
    assert data.X.tolist() == [[1, 2], [3, 4], [5, 6], [7, 8]]
    assert data.y.tolist() == ["yes", "no", "yes", "no"]
    split = load_csv(path, test_fraction=0.5, seed=1)
    assert split.X.shape[0] == 2 and split.X_test.shape[0] == 2


def test_csv_loader_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b,label\n1,2,1\n3,x,0\n")
    with pytest.raises(LinclsInputError, match=r"bad.csv line 3, column 'b': 'x' is not a finite"):
        load_csv(path)
    with pytest.raises(LinclsInputError, match="no such file"):
        load_csv(tmp_path / "missing.csv")
    with pytest.raises(LinclsInputError, match="label_column: 'y' is not a column"):
        load_csv(path, label_column="y")
