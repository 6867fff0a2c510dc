"""The adaptive search on monotone disjunctions: Winnow's worst case, from its weights.

The target is the disjunction of the first r of n boolean attributes, certified by the unit u with
entries 1/√r on them and b = −½/√r (the shape ``lincls.bounds.winnow`` reads as an r-literal
disjunction). Winnow's bound counts promotions (a false negative) and demotions (a false positive,
each removing at least (1 − 1/α)θ of the total weight, which a promotion raises by less than
(α − 1)θ), so the adversary makes both as cheap as it can: a positive example turns on one
relevant attribute and irrelevant ones while the active weight stays below θ (a promotion that
adds as much weight as one can), a negative example turns on irrelevant attributes until the
active weight just reaches θ (a demotion that removes as little as one can). Candidates fill in
order of weight or at random; every one is a mistake by the learner's own step, and every
sequence is scored by the run's code with the certificate (``lincls.search.instance.score``).
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np

from lincls.games._play import errs, present, start
from lincls.search.instance import Found, Scored, Target, out_of_time, score

SIZES = ((16, 1), (64, 1), (64, 2))  # (n attributes, r relevant) searched


def _fill(order: np.ndarray, w: np.ndarray, theta: float, start_sum: float, reach: bool):
    """Attributes of ``order`` taken while the active weight stays < θ (``reach`` False), or
    until it reaches θ (``reach`` True); None when a negative cannot reach θ."""
    chosen, total = [], start_sum
    for j in order:
        if not reach and total + w[j] >= theta:
            continue
        chosen.append(int(j))
        total += w[j]
        if reach and total >= theta:
            return chosen
    return None if reach else chosen


def candidates(learner, n: int, r: int, rng: np.random.Generator, width: int):
    """Up to ``width`` (x, label) the learner errs on: promotions and demotions (docstring)."""
    w = np.asarray(learner.coef_, dtype=np.float64).reshape(-1)
    theta = float(learner.threshold_)
    irrelevant = np.arange(r, n)
    made = []
    for k in range(width):
        x = np.zeros(n)
        ordered = irrelevant[np.argsort(-w[irrelevant] if k % 2 else w[irrelevant])]
        order = ordered if k < 2 else rng.permutation(irrelevant)
        if k % 2 == 0:  # a positive: one relevant attribute (the lightest, or at random)
            i = int(np.argmin(w[:r])) if k < 2 else int(rng.integers(r))
            if w[i] >= theta:
                continue
            x[i] = 1.0
            x[_fill(order, w, theta, w[i], reach=False)] = 1.0
            made.append((x, 1))
        else:
            chosen = _fill(order, w, theta, 0.0, reach=True)
            if chosen is None:
                continue
            x[chosen] = 1.0
            made.append((x, -1))
    return [(x, label) for x, label in made if errs(learner, x, label)]


def boolean_search(
    target: Target,
    rounds: int = 80,
    beam: int = 2,
    width: int = 4,
    sizes: tuple[tuple[int, int], ...] = SIZES,
    seconds: float | None = 30.0,
    seed: int = 0,
) -> Found:
    """The disjunction adversary against ``target`` (a Winnow learner) at each (n, r) of
    ``sizes``, within about ``seconds`` (None: every round): the best sequence seen, certified by
    its disjunction."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    best: Found | None = None
    evaluations = 0
    for k, (n, r) in enumerate(sizes):
        deadline = None if seconds is None else started + seconds * (k + 1) / len(sizes)
        u = np.zeros(n)
        u[:r] = 1.0 / math.sqrt(r)
        b = -0.5 / math.sqrt(r)
        learner = copy.deepcopy(target.learner)
        learner.set_params(max_passes=target.passes)
        start(learner, np.eye(2, n))
        states = [(learner, np.zeros((0, n)), np.zeros(0, dtype=np.int64))]
        for _ in range(rounds):
            children = []
            for state_learner, X, y in states:
                for x, label in candidates(state_learner, n, r, rng, width):
                    child = copy.deepcopy(state_learner)
                    present(child, x, label)
                    X2, y2 = np.vstack([X, x[np.newaxis, :]]), np.append(y, label)
                    scored = score(target, X2, y2, u, b)
                    evaluations += 1
                    children.append((scored.key, child, X2, y2))
                    if best is None or scored.key > best.scored.key:
                        best = Found(target, "boolean", X2, y2, scored, 0.0, 0, u, b)
            if not children or out_of_time(deadline, (seconds or 0.0) / len(sizes), best):
                break
            children.sort(key=lambda c: c[0], reverse=True)
            states = [c[1:] for c in children[:beam]]
    if best is None:
        best = Found(target, "boolean", np.zeros((0, 1)), np.zeros(0, np.int64),
                     Scored(0.0, None, None), 0.0, 0)  # fmt: skip
    best.seconds = time.perf_counter() - started
    best.evaluations = evaluations
    return best
