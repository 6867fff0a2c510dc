"""``lincls check LEARNER [BOUND]``: the referee. Random instances, the games and the searches
against one learner; the largest mistakes / bound per bound, and a reproducer for a violation.

    lincls check perceptron                      # every bound of the perceptron
    lincls check perceptron novikoff learner.bias=none --seconds 20

Random instances draw data, order and passes as the every-option property test does (certified
separable or noisy data, 10⁻³ to 10³ in scale); the games are the orthogonal game (and the
disjunction game for Winnow); the searches are ``lincls.search``'s adversaries. Every run is the
runner's own measurement, so a bound is checked as a run logs it. A violation prints the instance
as a CSV and the ``lincls run`` command that replays it. Exit 1 when a bound is violated, 2 on
bad input (one line naming the option). Nothing is written unless a bound is violated: no
certificate cache (each instance is fitted afresh), and the reproducers' folder (``--out``, else
a new temporary folder) only made for the first one.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from lincls.bounds import REGISTRY, holds
from lincls.config.run import SEED_MAX, RunConfig, check_writable
from lincls.errors import LinclsInputError, check_number
from lincls.evaluation import RunOutcome, fit_and_evaluate, plan_of, prepare
from lincls.registry import LEARNERS, build_learner
from lincls.search import Target, replay_overrides, to_csv
from lincls.search.targets import PLANS, search

WINNOWS = ("winnow", "balanced_winnow")


def _learner_config(name: str, overrides: Sequence[str]) -> dict:
    if name not in LEARNERS:
        raise LinclsInputError("learner", f"must be one of {', '.join(sorted(LEARNERS))}")
    config: dict = {"name": name}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("learner."):
            raise LinclsInputError("overrides", f"learner.<option>=<value>, got {item!r}")
        config[key[len("learner.") :]] = yaml.safe_load(value)
    build_learner(config, 1, 0)  # bad options are refused here, before any run
    return config


def random_configs(learner: dict, count: int, seed: int) -> Iterator[dict]:
    """Configs of random instances the learner takes (the property test's draws)."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = int(rng.integers(4, 60))
        if learner["name"] in WINNOWS:
            data = {"name": "disjunction", "n_features": int(rng.integers(4, 30)),
                    "k": int(rng.integers(1, 4)), "n": n, "n_test": 0}  # fmt: skip
        else:
            radius = float(10.0 ** rng.uniform(-3, 3))
            margin = radius * float(rng.choice([0.02, 0.05, 0.1, 0.3]))
            offset = 0.0 if rng.random() < 0.3 else float(rng.uniform(-1, 1)) * (radius - margin)
            data = {"name": "separable", "n": n, "d": int(rng.integers(1, 6)), "margin": margin,
                    "radius": radius, "offset": offset, "n_test": 0}  # fmt: skip
            if rng.random() < 0.3:
                data.update(name="noisy", flip=0.1, deficit=0.0, overlap=0)
        yield {
            "learner": learner, "dataset": {**data, "seed": seed + k},
            "passes": int(rng.integers(1, 6)), "seed": seed + k,
            "order": str(rng.choice(["fixed", "shuffled"])), "orders": 1,
            "certificates": {"svm": True}, "tracking": {},
        }  # fmt: skip


def game_configs(learner: dict) -> Iterator[dict]:
    """The games' configs for the learner: the orthogonal game, Littlestone's for Winnow."""
    base = {"learner": learner, "passes": 3, "seed": 0, "order": "fixed", "orders": 1,
            "certificates": {"svm": True}, "tracking": {}}  # fmt: skip
    if learner["name"] in WINNOWS:
        for n, k in ((64, 1), (256, 4)):
            yield {**base, "dataset": {"name": "disjunction_game", "n_attributes": n, "k": k}}
        return
    for margin, radius in ((0.1, 1.0), (0.35, 1.0), (3.0, 10.0)):
        game = {"name": "orthogonal_game", "d": 100, "margin": margin, "radius": radius}
        yield {**base, "dataset": game}


class Referee:
    """The largest ratio per bound and the first violation of each, over every run shown."""

    def __init__(self, bounds: Sequence[str] | None, out: Path | None) -> None:
        self.bounds, self.out = bounds, out
        self.largest: dict[str, tuple[float, str]] = {}
        self.violations: dict[str, str] = {}

    def folder(self) -> Path:
        """The reproducers' folder, made now (a new temporary one unless ``out`` was given)."""
        if self.out is None:
            self.out = Path(tempfile.mkdtemp(prefix="lincls-check-"))
        self.out.mkdir(parents=True, exist_ok=True)
        return self.out

    def wanted(self, name: str) -> bool:
        return self.bounds is None or name in self.bounds

    def record(self, where: str, metrics: dict, X, y, command: list[str]) -> None:
        mistakes = metrics.get("mistakes")
        for key, value in metrics.items():
            name = key[len("bound.") :]
            if not key.startswith("bound.") or name.startswith("tightest") or not self.wanted(name):
                continue
            ratio = metrics.get(f"bound_ratio.{name}")
            if ratio is not None and ratio > self.largest.get(name, (-1.0, ""))[0]:
                self.largest[name] = (float(ratio), where)
            self.largest.setdefault(name, (-math.inf, "vacuous on every run"))
            if not holds(mistakes, value) and name not in self.violations:
                path = self.folder() / f"violation-{name}.csv"
                path.write_text(to_csv(np.asarray(X, dtype=np.float64), np.asarray(y)))
                line = " ".join(["lincls run", *[c.replace("{path}", str(path)) for c in command]])
                self.violations[name] = (
                    f"{name}: {mistakes:g} mistakes > bound {value:.6g} on {where}\n"
                    f"  instance: {path}\n  replay:   {line}"
                )


def _measured(config: dict) -> RunOutcome | None:
    try:
        typed = RunConfig.from_container(config)  # this entry's configs, typed here
        learner, dataset = prepare(typed)
    except LinclsInputError:  # a draw the learner refuses is no instance
        return None
    # no certificate cache: a check's instances are its own, and it leaves no folder behind
    return fit_and_evaluate(learner, dataset, replace(plan_of(typed), cache_dir=None))


def _number(text: str) -> int | float | str:
    """An option's value as the number it spells (``check_number`` refuses anything else)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _options(args: argparse.Namespace) -> None:
    """Refuse an option out of its range, naming it (``LinclsInputError``); nothing is made."""
    check_number("--instances", args.instances, low=0, integer=True)
    check_number("--seconds", args.seconds, low=0)
    last = SEED_MAX - max(int(args.instances) - 1, 0)
    why = f"instance k takes seed + k (k < {args.instances}), and a seed is at most {SEED_MAX}"
    check_number("--seed", args.seed, low=0, high=last, integer=True, why=why)
    if args.out is not None:
        check_writable("--out", args.out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the referee; the exit code (0: no violation, 1: a violation, 2: bad input)."""
    parser = argparse.ArgumentParser(prog="lincls check", description=__doc__.split("\n\n")[0])
    parser.add_argument("learner")
    parser.add_argument("rest", nargs="*", help="[BOUND] [learner.<option>=<value> …]")
    parser.add_argument("--instances", type=_number, default=60, help="random instances")
    parser.add_argument("--seconds", type=_number, default=10.0, help="per search")
    parser.add_argument("--seed", type=_number, default=0)
    parser.add_argument("--out", help="where reproducers go (default: a new temporary folder)")
    args = parser.parse_args(argv)
    bound = [a for a in args.rest if "=" not in a]
    names = {s.name for s in REGISTRY}
    try:
        _options(args)
        if len(bound) > 1 or (bound and bound[0] not in names):
            raise LinclsInputError("bound", f"one of {', '.join(sorted(names))}")
        learner = _learner_config(args.learner, [a for a in args.rest if "=" in a])
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    referee = Referee(bound or None, None if args.out is None else Path(args.out))
    overrides = [f"learner={learner['name']}"] + [
        f"learner.{k}={v}" for k, v in learner.items() if k != "name"
    ]
    warnings.simplefilter("ignore", RuntimeWarning)  # rules without a bound may overflow
    started = time.perf_counter()
    runs = [("random", c) for c in random_configs(learner, args.instances, args.seed)]
    runs += [("game", c) for c in game_configs(learner)]
    for kind, config in runs:
        outcome = _measured(config)
        if outcome is None:
            continue
        data = config["dataset"]
        where = f"{kind} {data['name']} seed={config['seed']}"
        command = [*overrides, "dataset=csv", "dataset.path={path}", "dataset.test_fraction=0",
                   f"passes={config['passes']}", f"order={config['order']}",
                   f"seed={config['seed']}"]  # fmt: skip
        ds = outcome.dataset
        referee.record(where, outcome.metrics, ds.X, ds.y, command)
    mine = {n for n in names if n in PLANS and PLANS[n].learner == learner["name"]}
    searched = bound or sorted(mine)
    for name in searched:
        plan = PLANS.get(name)
        target = Target(build_learner(learner, plan.passes if plan else 3, 0), name,
                        plan.passes if plan else 3, tuple(overrides[1:]),
                        plan.max_radius if plan else None)  # fmt: skip
        found = search(target, args.seconds, args.seed)
        command = replay_overrides(target, "{path}")
        where = f"{found.method} search ({found.seconds:.1f} s, {found.evaluations} runs)"
        referee.record(where, found.scored.metrics, found.X, found.y, command)
    saved = f"; reproducers in {referee.out}" if referee.violations else ""
    print(f"lincls check {learner['name']}: {len(runs)} instances and {len(searched)} searches "
          f"in {time.perf_counter() - started:.0f} s{saved}")  # fmt: skip
    for name, (ratio, where) in sorted(referee.largest.items()):
        shown = "vacuous" if ratio == -math.inf else f"{ratio:.4f}"
        print(f"  {name:<22} largest mistakes / bound {shown:>8}  on {where}")
    if referee.violations:
        print("VIOLATED:")
        print("\n".join(referee.violations.values()))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
