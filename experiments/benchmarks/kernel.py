"""KernelPerceptron fit time against n: the dual form costs O(n·mistakes) kernel evaluations.

Each mistake adds one kernel row K(x_t, ·) (n evaluations of O(d)) to the activations of every
training example, so seconds/(n·mistakes) should stay about constant as n grows; the note shows
it. Data: certified separable data (d = 20, margin 0.05), one pass. The linear kernel is timed
side by side with the primal ``Perceptron`` on the same data (same mistakes): the price of the
dual form.
"""

from __future__ import annotations

from lincls.data import make_separable
from lincls.experiments.bench import Row, best_time
from lincls.learners import KernelPerceptron, Perceptron

KERNELS = (("linear", {}), ("poly", {"degree": 2}), ("rbf", {"gamma": 1.0}))


def run(quick: bool = False) -> list[Row]:
    """KernelPerceptron (linear, poly, RBF) fit on n = 1k, 5k, 20k (quick: 200, 500, 1k)."""
    sizes = (200, 500, 1000) if quick else (1000, 5000, 20_000)
    repeat = 1 if quick else 3
    rows = []
    for n in sizes:
        data = make_separable(n, 20, margin=0.05, radius=1.0, seed=0, n_test=0)
        for kernel, params in KERNELS:
            model = KernelPerceptron(kernel=kernel, max_passes=1, **params)
            seconds = best_time(lambda m=model, d=data: m.fit(d.X, d.y), repeat=repeat)
            mistakes = model.mistakes_
            peer = peer_name = None
            if kernel == "linear":
                primal = Perceptron(max_passes=1)
                peer = best_time(lambda p=primal, d=data: p.fit(d.X, d.y), repeat=repeat)
                assert primal.mistakes_ == mistakes
                peer_name = "primal Perceptron"
            per_pair = seconds / (n * max(mistakes, 1))
            rows.append(
                Row(
                    "kernel",
                    f"fit, {kernel} kernel, n = {n}, d = 20, 1 pass",
                    seconds,
                    peer,
                    peer_name or "",
                    note=f"{mistakes} mistakes; {per_pair * 1e9:.2f} ns per (example, mistake)",
                )
            )
    return rows
