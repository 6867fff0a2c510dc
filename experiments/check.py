"""``lincls check LEARNER [BOUND]``: the referee. Random instances, the games and the searches
against one learner; the largest mistakes / bound per bound, and a reproducer for a violation.

    lincls check perceptron                      # every bound of the perceptron
    lincls check perceptron novikoff learner.bias=none --seconds 20

LEARNER is a built-in learner or one a plugin registered (``lincls.plugins``), BOUND any
registered bound, a plugin's too. Random instances draw data, order and passes as the every-option
property test does (certified separable or noisy data, 10⁻³ to 10³ in scale; for a multiclass
learner, half of them certified data of 3 to 6 classes, saved with their U); the games are the
orthogonal game (and the disjunction game for Winnow), and for a multiclass learner the
multiclass orthogonal game at three (classes, γ, R) settings instead; the searches are
``lincls.search``'s adversaries, one for each bound planned for the learner (``PLANS``: the
multiclass perceptron's and MIRA's bounds too, by the adaptive search's multiclass moves, each
sequence certified by its multiclass SVM's U) and each bound a plugin registered for it, or for
BOUND alone. Every run is the runner's own measurement, so a bound is
checked as a run logs it. A violation prints the instance as a CSV, with the separator it came
with as a JSON file (the generator's, a game's, a searched disjunction: the one a CSV replay would
otherwise not have), and the ``lincls run`` command that replays it with both. Exit 1 when a bound
is violated, 2 on bad input (one line naming the option), 3 when a bound registered for the
learner was evaluated on no run (it lists them). Each bound is checked with the learner options
its theorem needs (its plan in ``PLANS``: the perceptron with no bias for Novikoff's homogeneous
bound, each CW variant), the learner's given options otherwise: the random instances and games run
once for each distinct set of options, and a bound's search uses its own. An option given
explicitly is kept, so a bound it rules out is reported as not reached. Nothing is written
unless a bound is violated: no certificate cache (each instance is fitted afresh), and the
reproducers' folder (``--out``, else a new temporary folder) only made for the first one.

An expectation bound (kind ``test_error``: ``voted_fs99``, or a plugin's) is checked
statistically over ``--samples`` i.i.d. samples (``lincls.experiments.expectation``); its
verdict states its confidence, and its reproducer is the same check with the same seed.
"""

from __future__ import annotations

import argparse
import json
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

from lincls import plugins
from lincls.bounds import REGISTRY, holds, plugin_bounds
from lincls.config.run import SEED_MAX, RunConfig, check_writable
from lincls.errors import LinclsInputError, check_number
from lincls.evaluation import RunOutcome, fit_and_evaluate, plan_of, prepare
from lincls.experiments.expectation import check_expectations, expectation_bounds
from lincls.learners._kinds import takes_multiclass
from lincls.registry import build_learner, learners
from lincls.search import Target, replay_overrides, to_csv
from lincls.search.game import certificate_record, multiclass_certificate_record
from lincls.search.multiclass import check_searchable
from lincls.search.targets import PLANS, option_text, search

WINNOWS = ("winnow", "balanced_winnow")


def _learner_config(name: str, overrides: Sequence[str]) -> dict:
    """The learner's config from its name and ``learner.*`` overrides: a built-in learner or one a
    plugin registered (``lincls.plugins``, entry points loaded here); bad options refused."""
    known = learners()
    if name not in known:
        raise LinclsInputError("learner", f"must be one of {', '.join(sorted(known))}")
    config: dict = {"name": name}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("learner."):
            raise LinclsInputError("overrides", f"learner.<option>=<value>, got {item!r}")
        config[key[len("learner.") :]] = yaml.safe_load(value)
    build_learner(config, 1, 0)  # bad options are refused here, before any run
    return config


def _multiclass(name: str) -> bool:
    """Whether the learner takes more than two classes (its estimator's tags say so)."""
    return takes_multiclass(learners()[name]())


def random_configs(learner: dict, count: int, seed: int) -> Iterator[dict]:
    """Configs of random instances the learner takes (the property test's draws); for a
    multiclass learner, half of them certified multiclass data of 3 to 6 classes."""
    rng = np.random.default_rng(seed)
    multiclass = _multiclass(learner["name"])
    for k in range(count):
        n = int(rng.integers(4, 60))
        if multiclass and k % 2 == 1:
            classes = int(rng.integers(3, 7))
            radius = float(10.0 ** rng.uniform(-3, 3))
            data = {"name": "multiclass", "n": max(n, classes), "d": int(rng.integers(2, 8)),
                    "n_classes": classes, "radius": radius, "n_test": 0,
                    "margin": radius * float(rng.choice([0.02, 0.05, 0.1]))}  # fmt: skip
        elif learner["name"] in WINNOWS:
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


# The multiclass orthogonal game's (K, γ, R, d): N = 150, 10 and 16 rounds. At R = 10 the bias
# feature's R'² = R² + 1 is within 1% of R², so the game's mistakes / (2R'²/γ²) are near
# K/(2(K−1)) = 3/4 (a bound off by its factor 2 is broken there); three and four classes, as with
# two a learner without a bias gets one class of labels (the game refuses it).
MULTICLASS_GAMES = ((3, 0.1, 1.0, 150), (4, 0.35, 1.0, 20), (3, 3.0, 10.0, 20))


def game_configs(learner: dict) -> Iterator[dict]:
    """The games' configs for the learner: the orthogonal game, Littlestone's for Winnow, the
    multiclass orthogonal game for a multiclass learner."""
    base = {"learner": learner, "passes": 3, "seed": 0, "order": "fixed", "orders": 1,
            "certificates": {"svm": True}, "tracking": {}}  # fmt: skip
    if _multiclass(learner["name"]):
        # the game's U certifies its data (a bound without a best comparator, a plugin's, is
        # evaluated at it), so no SVM is solved; the best comparators are still found
        for k, margin, radius, d in MULTICLASS_GAMES:
            game = {"name": "multiclass_orthogonal_game", "d": d, "n_classes": k,
                    "margin": margin, "radius": radius}  # fmt: skip
            yield {**base, "certificates": {"svm": False}, "dataset": game}
        return
    if learner["name"] in WINNOWS:
        for n, k in ((64, 1), (256, 4)):
            yield {**base, "dataset": {"name": "disjunction_game", "n_attributes": n, "k": k}}
        return
    for margin, radius in ((0.1, 1.0), (0.35, 1.0), (3.0, 10.0)):
        game = {"name": "orthogonal_game", "d": 100, "margin": margin, "radius": radius}
        yield {**base, "dataset": game}


def searched_bounds(learner: dict) -> list[str]:
    """The bounds ``lincls check LEARNER`` searches unless one is named: each built-in bound
    planned for the learner (``PLANS``) and each bound a plugin registered for its estimator."""
    estimator = learners()[learner["name"]]
    mine = {n for n, plan in PLANS.items() if plan.learner == learner["name"]}
    for spec in plugin_bounds():
        registered = plugins.BOUNDS.get(spec.name)
        if registered is not None and registered.learner is estimator:
            mine.add(spec.name)
    return sorted(mine)


def adversary_of(learner: dict) -> str:
    """The search for the learner's bounds: the disjunction adversary for a learner whose
    planned bounds get it (Winnow), the adaptive one for any other (a plugin's learner too)."""
    boolean = {plan.learner for plan in PLANS.values() if plan.adversary == "boolean"}
    return "boolean" if learner["name"] in boolean else "adaptive"


def target_of(name: str, learner: dict, overrides: Sequence[str]) -> Target:
    """The search's target for bound ``name`` on the learner as given (``overrides`` its
    ``learner=…`` and ``learner.*`` options): its plan's passes and radius cap, else 3 passes."""
    plan = PLANS.get(name)
    passes = plan.passes if plan else 3
    return Target(build_learner(learner, passes, 0), name, passes, tuple(overrides[1:]),
                  plan.max_radius if plan else None)  # fmt: skip


def certificate_of(u, b, U=None) -> dict | None:
    """The JSON record of the certificate data came with: (u, b), a multiclass U, or None."""
    if u is not None:
        return certificate_record(u, b)
    return None if U is None else multiclass_certificate_record(U)


def learner_for(bound: str, learner: dict, given: set[str]) -> dict:
    """The learner config ``bound`` is checked with: ``learner`` with the options its plan needs
    (``PLANS``), unless the user gave one of them another value (then ``learner`` as given, which
    may not reach the bound); ``learner`` itself for a bound without a plan for it."""
    plan = PLANS.get(bound)
    if plan is None or plan.learner != learner["name"]:
        return learner
    effective = build_learner(learner, 1, 0).get_params()  # the options as the learner has them
    needed = {k: v for k, v in plan.overrides if option_text(effective.get(k)) != option_text(v)}
    if any(k in given for k in needed):
        return learner
    return {**learner, **needed}


def overrides_of(learner: dict) -> list[str]:
    """``learner=NAME`` and a ``learner.KEY=VALUE`` for each of its options, as typed."""
    return [f"learner={learner['name']}"] + [
        f"learner.{k}={option_text(v)}" for k, v in learner.items() if k != "name"
    ]


def _key(learner: dict) -> tuple:
    return tuple(sorted((k, option_text(v)) for k, v in learner.items()))


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

    def record(
        self,
        where: str,
        metrics: dict,
        X,
        y,
        command: list[str],
        certificate: dict | None = None,
    ) -> None:
        """Take a run's bounds (``metrics``) on the data (X, y); for a bound it violates first,
        write the data, and the certificate the data came with if any, as its JSON record
        (``certificate_of``: the generator's (u, b) or multiclass U, a game's hidden separator, a
        searched disjunction: a CSV cannot carry it, and the SVM a CSV replay finds is no
        separator through the origin nor a disjunction, nor a multiclass generator's U), and the
        ``command`` (``{path}`` the CSV's place) that replays the run with them."""
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
                words = [c.replace("{path}", str(path)) for c in command]
                saved = f"  instance: {path}"
                if certificate is not None:
                    cert = path.with_suffix(".certificate.json")
                    cert.write_text(json.dumps(certificate))
                    words.append(f"dataset.certificate={cert}")
                    saved += f"\n  separator: {cert}"
                line = " ".join(["lincls run", *words])
                self.violations[name] = (
                    f"{name}: {mistakes:g} mistakes > bound {value:.6g} on {where}\n"
                    f"{saved}\n  replay:   {line}"
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
    check_number("--samples", args.samples, low=1, integer=True)
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
    parser.add_argument("--samples", type=_number, default=2000,
                        help="samples of an expectation bound's statistical check")  # fmt: skip
    parser.add_argument("--out", help="where reproducers go (default: a new temporary folder)")
    args = parser.parse_args(argv)
    bound = [a for a in args.rest if "=" not in a]
    plugin_bounds()  # the plugins' bounds join the registry (their entry points loaded)
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
    given_options = [a for a in args.rest if "=" in a]
    given = {a.partition("=")[0][len("learner.") :] for a in given_options}
    expected = expectation_bounds(bound)
    searched = [b for b in bound if b not in expected] if bound else searched_bounds(learner)
    options = {name: learner_for(name, learner, given) for name in searched}
    # the given options first, unless one bound is named: then only the options it needs
    variants = {_key(c): c for c in [*([] if bound else [learner]), *options.values()]}
    warnings.simplefilter("ignore", RuntimeWarning)  # rules without a bound may overflow
    started = time.perf_counter()
    runs = []
    for variant in variants.values():
        runs += [("random", c) for c in random_configs(variant, args.instances, args.seed)]
        runs += [("game", c) for c in game_configs(variant)]
    for kind, config in runs:
        outcome = _measured(config)
        if outcome is None:
            continue
        data = config["dataset"]
        used = config["learner"].items()
        changed = [f"{k}={option_text(v)}" for k, v in used if learner.get(k) != v]
        where = f"{kind} {data['name']} seed={config['seed']}" + "".join(
            f" learner.{c}" for c in changed
        )
        command = [*overrides_of(config["learner"]), "dataset=csv", "dataset.path={path}",
                   "dataset.test_fraction=0", f"passes={config['passes']}",
                   f"order={config['order']}", f"seed={config['seed']}"]  # fmt: skip
        ds = outcome.dataset
        referee.record(
            where, outcome.metrics, ds.X, ds.y, command, certificate_of(ds.u, ds.b, ds.U)
        )
    unsearched: list[str] = []
    for name in searched:
        target = target_of(name, options[name], overrides_of(options[name]))
        try:
            check_searchable(target.learner)
        except LinclsInputError as exc:
            unsearched.append(f"{name}: {exc.problem}")
            continue
        found = search(target, args.seconds, args.seed, adversary_of(learner))
        certificate = certificate_of(found.u, found.b, found.U)
        command = replay_overrides(target, "{path}")
        where = f"{found.method} search ({found.seconds:.1f} s, {found.evaluations} runs)"
        referee.record(where, found.scored.metrics, found.X, found.y, command, certificate)
    # an expectation bound: a statistical check over many samples (lincls.experiments.expectation)
    expectations = check_expectations(learner, expected, int(args.samples), int(args.seed))
    saved = f"; reproducers in {referee.out}" if referee.violations else ""
    count = len(searched) - len(unsearched)
    sets = f" with {len(variants)} sets of learner options" if len(variants) > 1 else ""
    searches = "search" if count == 1 else "searches"
    print(f"lincls check {learner['name']}: {len(runs)} instances{sets} and {count} {searches} "
          f"in {time.perf_counter() - started:.0f} s{saved}")  # fmt: skip
    for line in unsearched:
        print(f"  not searched: {line}")
    unreached = [name for name in searched if name not in referee.largest]
    for name in unreached:
        tried = " ".join(overrides_of(options[name])[1:]) or "its defaults"
        print(f"  not reached: {name} was evaluated on no run (learner options: {tried})")
    width = max([22, *map(len, referee.largest)])
    for name, (ratio, where) in sorted(referee.largest.items()):
        shown = "vacuous" if ratio == -math.inf else f"{ratio:.4f}"
        print(f"  {name:<{width}} largest mistakes / bound {shown:>8}  on {where}")
    for result in expectations:
        print(f"  {result.line()}")
        if result.violated:  # its reproducer: the same check, the same samples
            replay = " ".join(["lincls check", args.learner, result.name, *given_options,
                               f"--samples {args.samples}", f"--seed {args.seed}"])  # fmt: skip
            referee.violations[result.name] = f"{result.line()}\n  replay:   {replay}"
    if referee.violations:
        print("VIOLATED:")
        print("\n".join(referee.violations.values()))
        return 1
    return 3 if unreached else 0


if __name__ == "__main__":
    raise SystemExit(main())
