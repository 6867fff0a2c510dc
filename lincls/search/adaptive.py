"""The adaptive search: an adversary that, like the orthogonal game, makes each next example from
the learner's current state, with a beam over candidate directions.

Every round, each sequence in the beam is extended by a few candidate examples of norm R: a fresh
coordinate (the orthogonal game's move), a direction in the span of what was shown (signed by the
labels), and a direction the learner is least sure of (a random one with the learner's weight
vector projected out, so its activation is its tie). The label is one the learner errs on, asked
of a copy through its own one-example step (``lincls.games._play``). Every child is scored by the
run's own code on the whole sequence (``lincls.search.instance.score``: mistakes over the bound
of the certificates a run finds), and the ``beam`` best children go on. The best sequence seen,
any length, is the instance found. The radius R is searched too (``radii``): a bound with a
constant (a bias feature c, the margin perceptron's 2τ/η) is tightest where R dwarfs it.

Against a multiclass learner the same beam runs the moves of ``lincls.search.multiclass``: the
same three families on its weight matrix, a class it errs on as the label, and each sequence
scored with the multiclass hard-margin SVM's matrix as its certificate.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from lincls.games._play import present, start, wrong_label
from lincls.learners._kinds import takes_multiclass
from lincls.search import multiclass
from lincls.search.instance import Found, Scored, Target, out_of_time, score

FAMILIES = ("fresh", "span", "unsure")


@dataclass
class _State:
    learner: object
    X: np.ndarray
    y: np.ndarray
    used: int  # coordinates used so far: fresh ones are taken in order (the data are symmetric)
    scored: Scored
    U: np.ndarray | None = None  # a multiclass sequence's certificate


def _weights(learner) -> np.ndarray | None:
    coef = getattr(learner, "coef_", None)
    if coef is None:
        return None
    w = np.asarray(coef, dtype=np.float64).reshape(-1)
    return w if np.all(np.isfinite(w)) and np.any(w) else None


def _unit(v: np.ndarray) -> np.ndarray | None:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 and np.isfinite(norm) else None


def candidate(
    family: str, state: _State, d: int, radius: float, rng: np.random.Generator, positive: bool
) -> tuple[np.ndarray, int] | None:
    """A candidate example of ``family`` of norm ``radius``, and the coordinates it uses."""
    x = np.zeros(d)
    if family == "fresh" or state.X.shape[0] == 0:
        if state.used >= d:
            return None
        x[state.used] = radius if positive else radius * rng.choice([-1.0, 1.0])
        return x, state.used + 1
    shown = state.X * state.y[:, np.newaxis]
    if family == "span":
        v = _unit(rng.standard_normal(shown.shape[0]) @ shown)
        if positive and v is not None:
            v = _unit(np.abs(v))
    else:  # unsure: the learner's weight projected out of a random direction it has seen
        used = min(state.used + 1, d)
        z = np.zeros(d)
        z[:used] = np.abs(rng.standard_normal(used)) if positive else rng.standard_normal(used)
        w = _weights(state.learner)
        if w is not None and w.shape[0] == d and not positive:
            z = z - (z @ w) / (w @ w) * w
        v = _unit(z)
        return None if v is None else (radius * v, used)
    return None if v is None else (radius * v, state.used)


def _child(state: _State, x: np.ndarray, used: int, rng: np.random.Generator):
    learner = copy.deepcopy(state.learner)
    label = wrong_label(learner, x, float(rng.choice([-1.0, 1.0])))
    present(learner, x, label)
    X = np.vstack([state.X, x[np.newaxis, :]])
    y = np.append(state.y, int(label))
    return learner, X, y, used


def _grow(target: Target, state: _State, family: str, d: int, radius: float, rng, positive: bool):
    """One child of ``state`` by a candidate of ``family``, scored (None: no candidate)."""
    if not takes_multiclass(target.learner):
        made = candidate(family, state, d, radius, rng, positive)
        if made is None:
            return None
        learner, X, y, used = _child(state, *made, rng)
        return _State(learner, X, y, used, score(target, X, y))
    made = multiclass.candidate(family, state.X, state.used, state.learner, d, radius, rng)
    if made is None:
        return None
    learner, X, y = multiclass.child(state.learner, state.X, state.y, made[0], rng)
    scored, U = multiclass.score(target, X, y)
    return _State(learner, X, y, made[1], scored, U)


def adaptive_search(
    target: Target,
    rounds: int = 20,
    beam: int = 2,
    width: int = 4,
    radii: tuple[float, ...] = (1.0, 100.0),
    seconds: float | None = 30.0,
    seed: int = 0,
) -> Found:
    """The adaptive adversary against ``target`` (module docstring): up to ``rounds`` examples in
    d = ``rounds`` dimensions, ``width`` candidates per sequence and round, the ``beam`` best
    kept, at each radius of ``radii`` (capped at the theorem's ``max_radius``), within about
    ``seconds`` in all (None: every round, the same sequence at any load). Returns the best
    sequence seen."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    d = rounds
    positive = bool(target.learner.__sklearn_tags__().input_tags.positive_only)
    if target.max_radius is not None:
        radii = tuple(sorted({min(r, target.max_radius) for r in radii}))
    best: Found | None = None
    evaluations = 0
    for k, radius in enumerate(radii):
        deadline = None if seconds is None else started + seconds * (k + 1) / len(radii)
        learner = copy.deepcopy(target.learner)
        learner.set_params(max_passes=target.passes)
        template = np.zeros((2, d))
        template[0, 0] = radius  # what the learner measures at its start (R of bias="r2")
        if takes_multiclass(learner):
            multiclass.start(learner, d, radius)
        else:
            start(learner, template)
        empty = Scored(0.0, None, None)
        beam_states = [_State(learner, np.zeros((0, d)), np.zeros(0, dtype=np.int64), 0, empty)]
        for _ in range(rounds):
            children = []
            for state in beam_states:
                for j in range(width):
                    grown = _grow(target, state, FAMILIES[j % len(FAMILIES)], d, radius, rng,
                                  positive)  # fmt: skip
                    if grown is None:
                        continue
                    evaluations += 1
                    children.append(grown)
                    if best is None or grown.scored.key > best.scored.key:
                        best = Found(target, "adaptive", grown.X, grown.y, grown.scored, 0.0, 0,
                                     U=grown.U)  # fmt: skip
            if not children or out_of_time(deadline, (seconds or 0.0) / len(radii), best):
                break
            children.sort(key=lambda s: s.scored.key, reverse=True)
            beam_states = children[:beam]
    if best is None:  # no candidate at all (d = 0): the empty sequence
        best = Found(target, "adaptive", np.zeros((0, d)), np.zeros(0, np.int64), empty, 0.0, 0)
    best.seconds = time.perf_counter() - started
    best.evaluations = evaluations
    return best
