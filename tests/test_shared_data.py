"""What the runs of one dataset share in a process: a sealed dataset keeps its fingerprint, its
classes and its certificates once (``Dataset.seal``/``shared``), and no change in place can make
them stale; the curves' log-spaced steps are made once per length."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lincls.data import dataset as dataset_module
from lincls.data import make_separable
from lincls.evaluation import measures
from lincls.geometry import certificates
from lincls.learners import Perceptron


def _data():
    return make_separable(n=40, d=3, margin=0.1, radius=1.0, n_test=10, seed=3)


def test_a_sealed_dataset_makes_its_fingerprint_once(monkeypatch):
    calls = []
    real = dataset_module.fingerprint
    monkeypatch.setattr(dataset_module, "fingerprint", lambda X, y: calls.append(1) or real(X, y))
    data = _data()
    first = data.fingerprint
    assert data.fingerprint == first and len(calls) == 2  # not sealed: made each time
    sealed = data.seal()
    assert sealed is data
    assert [data.fingerprint for _ in range(5)] == [first] * 5
    assert len(calls) == 3
    assert first == real(data.X, data.y) and len(first) == 16


def test_a_sealed_dataset_refuses_a_change_in_place():
    data = _data().seal()
    for array in (data.X, data.y, data.X_test, data.y_test, data.u):
        assert not array.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        data.X[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        data.y[0] = -data.y[0]


def test_a_sparse_dataset_is_sealed_in_its_three_arrays():
    data = _data()
    X, X_test = sp.csr_matrix(data.X), sp.csr_matrix(data.X_test)
    sparse = type(data)(name="s", X=X, y=data.y.copy(), X_test=X_test, y_test=data.y_test.copy())
    sparse.seal()
    for matrix in (sparse.X, sparse.X_test):
        assert [a.flags.writeable for a in (matrix.data, matrix.indices, matrix.indptr)] == [
            False
        ] * 3
    assert sparse.fingerprint == dataset_module.fingerprint(sparse.X, sparse.y)


def test_the_certificates_of_a_sealed_dataset_are_made_once(monkeypatch, tmp_path):
    calls = []
    real = certificates.svm_certificates
    monkeypatch.setattr(certificates, "svm_certificates",
                        lambda *a, **k: calls.append(1) or real(*a, **k))  # fmt: skip
    data = _data()
    learner = Perceptron()
    alone, separable = certificates.certificates_of(data, learner, True, None)
    data.seal()
    once = [certificates.certificates_of(data, learner, True, None) for _ in range(3)]
    assert len(calls) == 2  # the unsealed call, then one for the three sealed ones
    for found, kept_separable in once:
        assert kept_separable == separable is True
        assert [c.source for c in found] == [c.source for c in alone] == ["generator", "svm"]
        assert [c.margin for c in found] == [c.margin for c in alone]
    once[0][0].clear()  # a caller's list is its own
    assert len(certificates.certificates_of(data, learner, True, None)[0]) == 2
    homogeneous = Perceptron(bias="none")
    certificates.certificates_of(data, homogeneous, True, None)
    assert len(calls) == 3  # another comparator family: made for it


def test_log_spaced_steps_are_made_once_and_read_only():
    measures.log_spaced_steps.cache_clear()
    steps = measures.log_spaced_steps(1000)
    assert measures.log_spaced_steps(1000) is steps
    assert not steps.flags.writeable
    assert steps[0] == 1 and steps[-1] == 1000 and steps.size == measures.CURVE_POINTS
    assert np.all(np.diff(steps) > 0)
    assert measures.log_spaced_steps(7).tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert measures.log_spaced_steps(0).size == 0
