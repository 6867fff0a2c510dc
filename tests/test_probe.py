"""A probe of bad input across the commands a user types, as a new user's mistakes come: each is
one line naming the field, exit 2, no traceback, and nothing made in the user's lincls home (no
store, no folder). Five were not clean before: an empty range (``seed=range(0,-3)``) ended in a
22-line IndexError, ``-m`` with ``--cfg`` in Hydra's ValueError traceback, a radius past 1e150
in an OverflowError, ``interval(…)`` in Hydra's HydraException and an interpolation that does
not resolve (``${oops}``) in OmegaConf's. (A key added with ``+note=…`` is no mistake: the run
logs it as a param.)"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

CASES = {
    "run -m seed=range(0,-3)": "seed",
    "run -m seed=0,1 --cfg hydra": "--multirun",
    "run -m seed=range(0,3) learner.lr=range(5,2)": "learner.lr",
    "run dataset.n=abc": "dataset.n",
    "run passes=1.5": "passes",
    "run dataset.d=1e400": "dataset.d",
    "run learner.lr=nan": "learner.lr",
    "run learner.bias=maybe": "learner.bias",
    "run certificates.svm=maybe": "certificates.svm",
    "run dataset.noise=2": "dataset.noise",
    "run dataset.radius=1e200": "dataset.radius",
    "run -m seed=0,1 dataset=noisy dataset.radius=1e155": "dataset.radius",
    "run dataset=iris dataset.classes=[0,7]": "dataset.classes",
    "run dataset.n=1000000000000": "dataset.n × dataset.d",
    "run tracking.experiment=''": "tracking.experiment",
    "run -m learner=perceptron,nope": "learner",
    "run -m learner.lr=interval(0,1)": "learner.lr",
    "run dataset.n=${oops}": "dataset.n",
    "run -m seed=0,1 dataset.n=${oops}": "dataset.n",
    "run -m seed=range(0,3) dataset.d=0": "dataset.d",
    "report nosuchstudy": "--store",
    "ui --port abc": "--port",
    "check nope": "learner",
    "check perceptron --instances abc": "--instances",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_naming_its_field_and_makes_nothing(case, tmp_path):
    home = tmp_path / "home"  # not made: lincls must not make it for a refused command
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    done = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.cli", *shlex.split(case)], cwd=tmp_path,
        env={**env, "LINCLS_HOME": str(home)}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith(f"error: {CASES[case]}: "), lines[0]
    assert not list(tmp_path.iterdir())  # no home, no results folder in the working directory
