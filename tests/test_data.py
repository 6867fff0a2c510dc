"""Certified synthetic data: margin and radius hold for every example and are attained."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lincls.data import (
    Dataset,
    load_csv,
    load_sklearn_set,
    load_svmlight,
    make_noisy,
    make_orthonormal,
    make_plane,
    make_separable,
)
from lincls.errors import LinclsInputError
from lincls.geometry import certify


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


def test_certificate_is_measured_on_the_data_not_copied():
    data = make_separable(100, 4, 0.2, 2.0, offset=0.5, seed=1, n_test=0)
    y = np.where(data.y > 0, 1.0, -1.0)
    # a separator of any scale: (3u, 3b) is normalized to the unit u and the same b
    cert = certify(data.X, y, 3 * data.u, 3 * data.b, "generator")
    assert np.linalg.norm(cert.u) == pytest.approx(1.0, rel=1e-15)
    assert cert.b == pytest.approx(0.5, rel=1e-15)
    assert cert.margin == pytest.approx(0.2, rel=1e-12)
    assert cert.radius == pytest.approx(2.0, rel=1e-12)
    # move example 5 to margin 0.05 along u: the certificate and the record report 0.05,
    # not the 0.2 the generator was asked for
    X = data.X.copy()
    X[5] -= (cert.margins[5] - 0.05) * y[5] * data.u
    moved = certify(X, y, data.u, data.b, "generator")
    assert moved.margin == pytest.approx(0.05, rel=1e-12) and moved.margins.argmin() == 5
    record = Dataset.certified(name="moved", X=X, y=y, X_test=X[:0], y_test=y[:0], u=data.u,
                               b=data.b, params={})  # fmt: skip
    assert record.margin == pytest.approx(0.05, rel=1e-12)
    assert record.radius == pytest.approx(np.linalg.norm(X, axis=1).max(), rel=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": 0.0}, "margin: must be a number in (0, inf), got 0.0"),
        ({"margin": -0.1}, "margin: must be a number in (0, inf)"),
        ({"radius": 0.0}, "radius: must be a number in (0, 1e+150]"),
        ({"margin": 2.0}, "margin: must be ≤ radius = 1, got 2"),
        ({"offset": 0.95}, "offset: |offset| must be ≤ radius − margin = 0.9"),
        ({"n": 1}, "n: must be an integer in [2, inf), got 1"),
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


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a,b,label\n1,2,1\n3,4,\n5,6,0\n", 3),  # an empty label cell
        ("a,b,label\n1,2,1\n3,4,  \n5,6,0\n", 3),  # blanks only
        ("a,b,label\n1,2\n3,4,1\n5,6,0\n", 2),  # a short row
    ],
)
def test_csv_row_without_a_label_names_file_and_line(tmp_path, text, line):
    # Not a class of its own: with labels {1, ""} a binary learner would train on it silently.
    path = tmp_path / "unlabelled.csv"
    path.write_text(text)
    with pytest.raises(LinclsInputError) as info:
        load_csv(path)
    assert str(info.value) == f"path: {path} line {line}, column 'label': the label is missing"


def test_csv_empty_file_or_header_only_is_one_line_error(tmp_path):
    empty, header = tmp_path / "empty.csv", tmp_path / "header.csv"
    empty.write_text("")
    header.write_text("a,b,label\n")
    with pytest.raises(LinclsInputError) as info:
        load_csv(empty)
    assert str(info.value).startswith(f"path: {empty}: not a readable CSV")
    with pytest.raises(LinclsInputError) as info:
        load_csv(header)
    assert str(info.value) == f"path: {header}: has a header but no rows"


# --- noisy, plane, scikit-learn sets, svmlight -------------------------------------------------


def test_noisy_overlap_has_the_set_deficit_and_flips_the_set_rate():
    from lincls.geometry import hinge_deficit

    data = make_noisy(300, 6, 0.1, 1.0, offset=0.2, flip=0.0, deficit=1.5, overlap=9, seed=4)
    margins = data.y * (data.X @ data.u + data.b)
    assert hinge_deficit(margins, 0.1) == pytest.approx(1.5, rel=1e-12)
    assert (margins < 0.1 - 1e-12).sum() == 9
    assert np.linalg.norm(data.X, axis=1).max() == pytest.approx(1.0, rel=1e-12)
    clean = make_separable(300, 6, 0.1, 1.0, offset=0.2, seed=4)
    flipped = make_noisy(300, 6, 0.1, 1.0, offset=0.2, flip=0.1, deficit=0.0, seed=4)
    assert (flipped.y != clean.y).sum() == 30 and np.array_equal(flipped.X, clean.X)
    assert flipped.margin < 0 and np.array_equal(flipped.y_test, clean.y_test)


def test_plane_sets_are_two_dimensional():
    for kind in ("separable", "noisy", "xor"):
        data = make_plane(kind, n=100, seed=2)
        assert data.X.shape == (100, 2) and data.params["kind"] == kind
    xor = make_plane("xor", n=100, seed=2)
    assert xor.u is None and np.all(np.abs(xor.X).min(axis=1) >= 0.1)
    assert np.array_equal(xor.y, np.where(xor.X[:, 0] * xor.X[:, 1] > 0, 1.0, -1.0))


def test_sklearn_sets_two_classes_one_against_rest_and_standardized():
    iris = load_sklearn_set("iris", classes=[0, 2], test_fraction=0.0)
    assert iris.X.shape == (100, 4) and sorted(set(iris.y.tolist())) == [0, 2]
    rest = load_sklearn_set("wine", positive=1, test_fraction=0.0)
    assert rest.X.shape[0] == 178 and sorted(set(rest.y.tolist())) == [-1, 1]
    assert (rest.y == 1).sum() == 71
    scaled = load_sklearn_set("breast_cancer", standardize=True, test_fraction=0.25, seed=1)
    assert np.allclose(scaled.X.mean(axis=0), 0.0, atol=1e-12)
    assert np.allclose(scaled.X.std(axis=0), 1.0, rtol=1e-12)
    digits = load_sklearn_set("digits", classes=[3, 8])
    assert digits.X.shape[1] == 64


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"classes": [0, 7]}, "classes: must be ≥ 2 distinct classes of [0, 1, 2], got [0, 7]"),
        ({"classes": [1]}, "classes: must be ≥ 2 distinct classes"),
        ({"positive": 5}, "positive: must be one of [0, 1, 2], got 5"),
        ({"classes": [0, 1], "positive": 0}, "positive: give classes or positive, not both"),
        ({"standardize": "yes"}, "standardize: must be true or false"),
    ],
)
def test_sklearn_set_bad_options(kwargs, message):
    with pytest.raises(LinclsInputError) as info:
        load_sklearn_set("iris", **kwargs)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_svmlight_loader_reads_csr_and_names_file_and_line(tmp_path):
    good = tmp_path / "d.svm"
    good.write_text("+1 1:0.5 3:2\n-1 2:1.5 # a comment\n\n+1 1:1 2:1 3:1\n")
    data = load_svmlight(good)
    assert sp.issparse(data.X) and data.X.shape == (3, 3)
    assert data.X.toarray().tolist() == [[0.5, 0, 2], [0, 1.5, 0], [1, 1, 1]]
    assert data.y.tolist() == [1, -1, 1]
    assert isinstance(load_svmlight(good, dense=True).X, np.ndarray)
    bad = tmp_path / "bad.svm"
    bad.write_text("+1 1:0.5\n-1 2:x\n")
    with pytest.raises(
        LinclsInputError, match=r"^path: .*bad.svm line 2: '2:x' is not index:value"
    ):
        load_svmlight(bad)
    bad.write_text("+1 1:0.5\n\nyes 1:2\n")
    with pytest.raises(LinclsInputError, match=r"bad.svm line 3: label 'yes' is not a number"):
        load_svmlight(bad)
    bad.write_text("+1 3:0.5 2:1\n")
    with pytest.raises(LinclsInputError, match=r"line 1: '2:1' is not index:value with increasing"):
        load_svmlight(bad)
    with pytest.raises(LinclsInputError, match=r"^path: no such file: .*missing.svm"):
        load_svmlight(tmp_path / "missing.svm")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"deficit": 100.0, "overlap": 4},
            "deficit: must be ≤ √overlap·(radius − |offset| + margin)",
        ),
        ({"flip": 0.6}, "flip: must be a number in [0, 0.5]"),
        ({"n": 5, "deficit": 1.0, "overlap": 4}, "n: must be ≥ 6 to flip 0 and overlap 4"),
        ({"deficit": 1.0, "overlap": 0}, "overlap: must be ≥ 1 when deficit > 0"),
    ],
)
def test_noisy_bad_arguments(kwargs, message):
    args = {"n": 50, "d": 3, "margin": 0.1, "radius": 1.0, **kwargs}
    with pytest.raises(LinclsInputError) as info:
        make_noisy(**args)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
