"""Certificates for any data: the SVM's γ is the largest, non-separable data get a soft SVM, and
each dataset's SVM is fitted once for a whole sweep, across processes."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from conftest import compose_config
from hypothesis import given, settings
from hypothesis import strategies as st

from lincls import bounds, evaluation
from lincls.data import make_noisy, make_plane, make_separable
from lincls.geometry import cache
from lincls.geometry.certificates import CertificateCache, separating_direction, svm_certificates


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 120),
    d=st.integers(1, 10),
    margin=st.floats(0.01, 0.5),
    offset_fraction=st.floats(-1, 1),
    homogeneous=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_svm_margin_is_at_least_the_generators(n, d, margin, offset_fraction, homogeneous, seed):
    offset = 0.0 if homogeneous else offset_fraction * (1.0 - margin)
    data = make_separable(n, d, margin, 1.0, offset=offset, seed=seed, n_test=0)
    y = np.where(data.y > 0, 1.0, -1.0)
    (cert,), separable = svm_certificates(data.X, y, homogeneous=homogeneous, fingerprint="t")
    assert separable and cert.separates
    assert cert.source == ("svm_homogeneous" if homogeneous else "svm")
    # the maximum margin, measured on the data; when the generator's separator is itself the
    # maximum one (few points), the solver's tolerance can leave the SVM ~1e-9 short of it
    assert cert.margin >= data.margin * (1 - 1e-6)
    assert np.linalg.norm(cert.u) == pytest.approx(1.0, rel=1e-12)
    assert cert.margins.min() == cert.margin
    if homogeneous:
        assert cert.b == 0.0


def test_non_separable_data_get_a_soft_margin_comparator():
    xor = make_plane("xor", n=200, seed=1)
    y = np.where(xor.y > 0, 1.0, -1.0)
    assert separating_direction(xor.X, y, homogeneous=False) is None
    (cert,), separable = svm_certificates(xor.X, y, homogeneous=False, fingerprint="x")
    assert not separable and cert.source == "soft_svm" and not cert.separates
    noisy = make_noisy(200, 3, 0.1, 1.0, flip=0.1, seed=2)
    y = np.where(noisy.y > 0, 1.0, -1.0)
    (cert,), separable = svm_certificates(noisy.X, y, homogeneous=False, fingerprint="n")
    assert not separable and cert.source == "soft_svm"


def test_cache_computes_once_and_survives_a_new_cache_object(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return np.array([1.0, 2.0]), 0.5

    first = CertificateCache(tmp_path).get("k", compute)
    again = CertificateCache(tmp_path).get("k", compute)
    assert len(calls) == 1 and np.array_equal(first[0], again[0]) and again[1] == 0.5
    assert CertificateCache(tmp_path).get("none", lambda: None) is None
    assert CertificateCache(tmp_path).get("none", compute) is None  # "none exists" is stored
    assert CertificateCache(tmp_path).fits() == ["k", "none"]
    assert not list(tmp_path.glob("*.tmp"))


LEARNERS = ["perceptron", "averaged_perceptron", "voted_perceptron", "margin_perceptron"]


def _sweep_config(cache, learner):
    return compose_config(
        [f"learner={learner}", "order=shuffled", "orders=5", "dataset.n=200",
         f"certificates.cache_dir={cache}"]
    )  # fmt: skip


def test_a_sweep_of_four_learners_by_five_orders_fits_one_svm(tmp_path):
    fingerprints = set()
    for learner in LEARNERS:
        outcome = evaluation.measure(_sweep_config(tmp_path, learner))
        fingerprints.add(outcome.tags["dataset.fingerprint"])
        assert outcome.metrics["orders"] == 5.0
        assert outcome.tags["certificate.svm"] == "separates"
        assert outcome.metrics["certificate.svm.margin"] >= outcome.metrics["margin"]
    assert len(fingerprints) == 1
    _one_fit_per_problem(CertificateCache(tmp_path).fits())


def _one_fit_per_problem(fits):
    # one SVM for every learner and order; each best-comparator problem (per bias feature and
    # presentation counts: orders that stop after other numbers of passes differ) solved once
    assert [key for key in fits if "-best-" not in key] == [fits[0]] and fits[0].endswith("-svm")
    assert len(fits) == len(set(fits))
    assert any("-best-hard-" in key for key in fits)
    assert any("-best-deficit-" in key for key in fits)


def _measure(args):
    cache, learner = args
    return evaluation.measure(_sweep_config(cache, learner)).metrics["certificate.svm.margin"]


def test_worker_processes_share_one_svm_fit(tmp_path):
    with ProcessPoolExecutor(max_workers=2) as pool:
        margins = list(pool.map(_measure, [(tmp_path, name) for name in LEARNERS]))
    assert len(set(margins)) == 1
    _one_fit_per_problem(CertificateCache(tmp_path).fits())


@pytest.mark.parametrize(
    ("dataset", "separable"),
    [
        (["dataset=iris", "dataset.classes=[0,1]"], True),
        (["dataset=iris", "dataset.classes=[1,2]", "dataset.test_fraction=0"], False),
        (["dataset=breast_cancer", "dataset.standardize=true"], True),
    ],
)
def test_real_data_report_separability_and_the_matching_bound(tmp_path, dataset, separable):
    outcome = evaluation.measure(compose_config([*dataset, f"certificates.cache_dir={tmp_path}"]))
    m, tags = outcome.metrics, outcome.tags
    assert m["separable"] == float(separable)
    assert "bound.freund_schapire" in m and tags["bound_violated"] == "false"
    if separable:
        assert tags["certificate.svm"] == "separates" and m["certificate.svm.margin"] > 0
        # the max margin of (x, 1) itself: never above the input-space SVM carried over to it
        assert tags["bound.novikoff_bias.certificate"] == "best"
        assert m["bound_param.novikoff_bias.gap"] <= 1e-6
        data = outcome.dataset
        y = np.where(data.y == outcome.learner.classes_[1], 1.0, -1.0)
        (svm,), _ = svm_certificates(data.X, y, homogeneous=False, fingerprint="test")
        svm_value = bounds.novikoff_bias(data.radius, svm.margin, svm.b, 1.0)
        assert m["mistakes"] <= m["bound.novikoff_bias"] <= svm_value * (1 + 1e-9)
    else:
        assert tags["certificate.soft_svm"] == "does not separate"
        assert "bound.novikoff_bias" not in m
        assert m["certificate.soft_svm.deficit"] > 0


def test_the_cache_is_one_file_whatever_it_holds(tmp_path):
    """A key a dataset made a file and a lock file each (8 files, ~12.5 KB a default run's
    dataset); the cache is now one SQLite file (with its log) and one lock file."""
    cache = CertificateCache(tmp_path)
    for k in range(200):
        cache.get_arrays(f"data{k}-svm", lambda k=k: {"w": np.full(3, float(k))})
    assert {p.name for p in tmp_path.iterdir()} <= {
        "certificates.db", "certificates.db-wal", "certificates.db-shm", "certificates.lock"
    }  # fmt: skip
    assert CertificateCache(tmp_path).get_arrays("data7-svm", lambda: None)["w"][0] == 7.0
    assert CertificateCache(tmp_path).fits() == [f"data{k}-svm" for k in range(200)]


def test_a_damaged_entry_is_computed_again_and_replaced(tmp_path):
    import sqlite3

    CertificateCache(tmp_path).get("k", lambda: (np.array([1.0]), 0.5))
    with sqlite3.connect(tmp_path / "certificates.db") as db:
        db.execute("UPDATE entries SET value = ? WHERE key = 'k'", (b"PK\x03\x04 not a zip",))
    # this process remembers what it read (below); a process that did not reads the damage
    assert CertificateCache(tmp_path).get("k", lambda: None)[1] == 0.5
    cache.forget()
    again = CertificateCache(tmp_path).get("k", lambda: (np.array([2.0]), 0.25))
    assert again[0][0] == 2.0 and again[1] == 0.25
    cache.forget()
    assert CertificateCache(tmp_path).get("k", lambda: None)[1] == 0.25  # replaced, read back
    assert CertificateCache(tmp_path).fits() == ["k", "k"]


@pytest.mark.parametrize(
    "value",
    [None, {"w": np.array([1.5, -2.0]), "b": np.float64(0.25)},
     {"flag": np.array(True), "none": np.zeros(0),
      "m": np.arange(6, dtype=np.int32).reshape(2, 3).T}],
)  # fmt: skip
def test_an_entry_is_its_arrays_bytes_after_a_short_header(value):
    blob = cache._encoded(value)
    assert blob.startswith(cache.MAGIC) and len(blob) < 200
    back = cache._decoded(blob)
    if value is None:
        assert back is None
        return
    assert list(back) == list(value)
    for name, array in value.items():
        array = np.asarray(array)
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        assert np.array_equal(back[name], array) and back[name].flags.writeable
    with pytest.raises(ValueError):
        cache._decoded(blob[:-1])  # cut short: computed again (the damaged entry's test)


def test_an_older_caches_npz_entries_are_read_back(tmp_path):
    import io
    import sqlite3

    CertificateCache(tmp_path).get("k", lambda: (np.array([9.0]), 0.0))
    older = io.BytesIO()
    np.savez(older, exists=np.bool_(True), w=np.array([3.0, 4.0]), b=np.float64(0.5))
    with sqlite3.connect(tmp_path / "certificates.db") as db:
        db.execute("UPDATE entries SET value = ? WHERE key = 'k'", (older.getvalue(),))
    cache.forget()
    w, b = CertificateCache(tmp_path).get("k", lambda: None)
    assert w.tolist() == [3.0, 4.0] and b == 0.5
    assert CertificateCache(tmp_path).fits() == ["k"]  # read, not computed again


def test_an_entry_read_is_remembered_read_only_and_its_file_made_anew_is_read(tmp_path):
    """A sweep's runs of one dataset read its entries once a process; the arrays cannot be
    changed by a reader; a cache file made anew (same folder) is another cache."""
    import shutil
    import sqlite3

    first = CertificateCache(tmp_path / "c").get("k", lambda: (np.array([1.0, 2.0]), 0.5))
    with sqlite3.connect(tmp_path / "c" / "certificates.db") as db:
        db.execute("DELETE FROM entries")
    again = CertificateCache(tmp_path / "c").get("k", lambda: (np.array([9.0]), 0.0))
    assert list(again[0]) == [1.0, 2.0] and again[1] == 0.5  # remembered, not read
    with pytest.raises(ValueError, match="read-only"):
        first[0][0] = 5.0
    shutil.rmtree(tmp_path / "c")
    made = CertificateCache(tmp_path / "c").get("k", lambda: (np.array([9.0]), 0.0))
    assert list(made[0]) == [9.0] and CertificateCache(tmp_path / "c").fits() == ["k"]


def test_a_cache_file_that_is_no_database_is_set_aside_and_made_anew(tmp_path):
    (tmp_path / "certificates.db").write_bytes(b"garbage " * 1000)
    found = CertificateCache(tmp_path).get("k", lambda: (np.array([3.0]), 0.0))
    assert found[0][0] == 3.0 and CertificateCache(tmp_path).fits() == ["k"]
    assert (tmp_path / "certificates.db.damaged").read_bytes().startswith(b"garbage")


def test_a_cache_folder_removed_and_made_again_is_opened_anew(tmp_path):
    import shutil

    folder = tmp_path / "cache"
    CertificateCache(folder).get("k", lambda: (np.array([1.0]), 0.0))
    shutil.rmtree(folder)
    found = CertificateCache(folder).get("k", lambda: (np.array([4.0]), 0.0))
    assert found[0][0] == 4.0 and (folder / "certificates.db").is_file()
    assert CertificateCache(folder).fits() == ["k"]
