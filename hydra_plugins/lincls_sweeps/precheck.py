"""A sweep's configs checked, every value, before its first job (and before its store is opened).

Each job's config is composed as the launcher composes it and checked as a run checks its own
(``lincls.evaluation.prepare``: the learner, the data, the plan, what would not fit in memory),
so that a bad value is refused in one line naming its config, instead of running the good
configs and storing a FAILED run for the bad one (whose resume command then failed the same way
again). What is checked once serves many jobs: jobs that differ only in ``seed`` differ in no
value but the seed's own, which is checked from its override; the data of one dataset config
(its seed aside) are built once for the consecutive jobs that share it. Only bad input refuses
the sweep: any other error is left to its job, which records it as before.

A config that differs from the last one checked whole only in learner values is checked as that
config with its own learner section (``_Frame``), and past ``SPLIT_RESTS`` distinct configs a
forked process checks every other block of them (``_Checker.split``). Measured: a million
learning rates of one dataset checked in ~27 s on two cores (~0.18 ms a config before, one by
one), the first progress line of their sweep at ~30 s (``make bench firstline``).
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from hydra_plugins.lincls_sweeps.composer import JobComposer
from hydra_plugins.lincls_sweeps.grid import Jobs
from hydra_plugins.lincls_sweeps.overrides import integer_value, split_group_overrides


def check_jobs(
    loader: Any,
    config: DictConfig,
    jobs: Sequence[Sequence[str]],
    lines: Iterable[str] | None = None,
    quiet: Callable[[], None] | None = None,
) -> None:
    """Raise ``LinclsInputError`` for the first job (override list) of ``jobs`` with a bad value:
    its field and problem, then which config it is (number, overrides) and that none ran.

    Each distinct ``seed`` line is checked once, and the rest of a job once per distinct rest:
    for a sweep's ``grid.Jobs`` the rests are enumerated from its grids (``firsts``), so a
    million seeds cost a million line checks, not a million jobs. Only when something is bad
    are the jobs walked, to name the first bad one as a walk in order would. ``lines``: every
    line of the jobs, when known. ``quiet``: waits until this process's other threads are
    done, before it forks a process to share the check (``_Checker.split``).
    """
    saved = HydraConfig.instance().cfg
    try:
        if isinstance(jobs, Jobs):
            checker = _Checker(loader, config, lambda: jobs.firsts(SEED))
            if jobs.count_firsts(SEED) >= SPLIT_RESTS:
                if quiet is not None:
                    quiet()
                found = checker.split(2)
            else:
                found = checker.run()
        else:
            found = _Checker(loader, config, lambda: jobs).run()
    finally:
        HydraConfig.instance().cfg = saved
    bad_rest = None if found is None else found[1:]
    if lines is None:
        lines = jobs.lines() if isinstance(jobs, Jobs) else {line for job in jobs for line in job}
    bad_seeds = _bad_seeds(loader, lines)
    if bad_rest is not None or bad_seeds:
        _refuse_first(loader, jobs, bad_rest, bad_seeds)


SEED = "seed"
SPLIT_RESTS = 20_000  # distinct rests from which a second process checks half (~80 µs each)
BLOCK = 64  # consecutive rests one process checks: they often share their data


class _Checker:
    """The walk over a sweep's distinct rests (``rests()`` enumerates them, in order), checking
    each; ``run`` walks them all, ``split`` shares them with a forked process."""

    def __init__(self, loader: Any, config: DictConfig, rests: Callable[[], Iterable]) -> None:
        self.loader, self.config, self.rests = loader, config, rests

    def run(self, part: int = 0, parts: int = 1, stop: mmap.mmap | None = None) -> Found:
        """(number, rest, error) of the first bad rest, in order, among the blocks of
        ``BLOCK`` rests numbered ``part`` modulo ``parts``; None if none. ``stop``: the number
        of a bad rest found so far by any process (a rest after it needs no check)."""
        from lincls.config.composition import input_error

        composer = JobComposer(self.loader, self.config)
        data: dict[str, Any] = {}  # the last dataset built, by its settings
        booleans: dict[tuple[int, str], bool] = {}  # which keys of a composition are true/false
        checked: set[tuple[str, ...]] = set()
        kinds: dict[str, tuple[bool, bool, bool]] = {}
        frame: _Frame | None = None  # the last rest checked whole, and what its jobs share
        for job in self.rests():
            rest = self._rest(job, kinds)
            if rest in checked:
                continue
            number = len(checked)
            checked.add(rest)  # once, whatever it raises
            if (number // BLOCK) % parts != part:
                continue
            if stop is not None:
                if number > _read(stop):
                    return None
                _WORD.pack_into(stop, _WORD.size * (1 + part), number + 1)  # alive, and where
            groups, values = split_group_overrides(self.loader, job)
            learner = [o for o in values if o.key_or_group.startswith(LEARNER)]
            shared = tuple(line for line in rest if not kinds[line.partition("=")[0]][2])
            try:
                if not (frame and frame.rest == shared and learner and frame.check(learner)):
                    frame = None  # a failed check leaves none to share
                    checked_whole = _check_rest(composer, job, groups, values, data, booleans)
                    frame = _Frame(shared, booleans, *checked_whole)
            except Exception as exc:
                error = input_error(exc)
                if error is not None:  # else not bad input: the job runs and records it
                    if stop is not None and number < _read(stop):
                        _WORD.pack_into(stop, 0, number)
                    return number, rest, error
        return None

    def _rest(self, job: Sequence[str], kinds: dict[str, tuple[bool, ...]]) -> tuple[str, ...]:
        """``_rest`` of ``job``, from what each line's key is (``kinds``: whether it picks a
        config group, whether it is the seed, whether it sets a learner's value; the same for
        every value of the key), without parsing its values: every process walks every rest,
        and checks only its own."""
        groups, values = [], []
        for line in job:
            key = line.partition("=")[0]
            kind = kinds.get(key)
            if kind is None:
                picks, sets = split_group_overrides(self.loader, [line])
                name = (*picks, *sets)[0].key_or_group
                kind = kinds[key] = (
                    bool(picks),
                    name == SEED,
                    bool(sets) and name.startswith(LEARNER),
                )
            if not kind[1]:
                (groups if kind[0] else values).append(line)
        return (*groups, *values)

    def split(self, parts: int) -> Found:
        """``run``, the rests shared between this process and ``parts - 1`` forked ones (each
        its blocks), when this machine has the cores; what a process fails to answer (it died)
        is walked here after."""
        if parts < 2 or len(os.sched_getaffinity(0)) < 2:
            return self.run()
        # shared with the forked processes: the first bad rest found, then each one's progress
        stop = mmap.mmap(-1, _WORD.size * (1 + parts))
        _WORD.pack_into(stop, 0, 2**63 - 1)
        children = [_fork(lambda k=k: self.run(k, parts, stop)) for k in range(1, parts)]
        try:
            answers = [self.run(0, parts, stop)]
        except BaseException:  # interrupted, or failed: the others' walks are not waited for
            for pid, pipe in children:
                _end(pid, pipe)
            raise
        answers += [
            _answer(pid, pipe, lambda k=k: _WORD.unpack_from(stop, _WORD.size * (1 + k))[0])
            for k, (pid, pipe) in enumerate(children, 1)
        ]
        for part, answer in enumerate(answers):
            if answer is _DIED:  # its blocks are walked here, up to any bad rest found
                answers[part] = self.run(part, parts, stop)
        found = [answer for answer in answers if answer is not None]
        return min(found, key=lambda answer: answer[0]) if found else None


LEARNER = "learner."


class _Frame:
    """A rest checked whole (``_check_rest``) and what the rests that differ from it only in
    learner values share with it: every value but the learner's, and the data.

    Such a rest's config is this one's with its learner section made from the composition
    (``PlainBase.section``: only when no interpolation outside the learner reads its values),
    so its check is the run's check of that config (``prepare``) without composing, copying and
    checking the rest again: a sweep of a million learning rates checks each at ~half the cost.
    """

    def __init__(self, rest, booleans: dict, run_config, base, task_cfg, data) -> None:
        self.rest, self.booleans = rest, booleans
        self.run_config, self.base, self.task_cfg, self.data = run_config, base, task_cfg, data

    def check(self, learner: list[Any]) -> bool:
        """Check the config that is this one with the ``learner`` value overrides; False when
        only a whole check can (the composition is not plain, or a value is read outside)."""
        from lincls.config.checks import check_booleans
        from lincls.config.run import Section
        from lincls.evaluation import prepare

        section = None if self.base is None else self.base.section("learner", learner)
        if section is None:
            return False
        task_cfg, known = self.task_cfg, self.booleans
        check_booleans(task_cfg, [o for o in learner if _is_boolean(task_cfg, o, known)])
        prepare(replace(self.run_config, learner=Section(section["learner"])), self.data)
        return True


Found = tuple[int, tuple[str, ...], Any] | None
_WORD = struct.Struct("q")
_DIED = object()
STALL = 120.0  # seconds a forked process may check no rest before its blocks are checked here


def _read(stop: mmap.mmap) -> int:
    return _WORD.unpack_from(stop, 0)[0]


def _fork(walk: Callable[[], Found]) -> tuple[int, int]:
    """(pid, the pipe its answer comes on) of a forked process that runs ``walk`` and sends
    its answer: (number, rest, field, problem) or None, pickled."""
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        return pid, read
    code = 1
    try:  # the child: whatever happens, it leaves by os._exit, running none of the parent's exits
        os.close(read)
        found = walk()
        answer = None if found is None else (*found[:2], found[2].field, found[2].problem)
        with os.fdopen(write, "wb") as out:
            out.write(pickle.dumps(answer))
        code = 0
    finally:
        os._exit(code)


def _answer(pid: int, pipe: int, progress: Callable[[], int]) -> Found | object:
    """The answer of the forked process ``pid`` (``_fork``), waited for; ``_DIED`` when it
    gave none, or ``progress`` (its rests so far) stood still for ``STALL`` seconds: a process
    that hangs (a lock it inherited, say) is stopped, and never hangs the sweep."""
    from lincls.errors import LinclsInputError

    try:
        sent = _received(pipe, progress)
        if sent is None:
            _end(pid, None)
            return _DIED
        _, status = os.waitpid(pid, 0)
    except BaseException:
        _end(pid, None)
        raise
    if status != 0 or not sent:
        return _DIED
    found = pickle.loads(sent)
    if found is None:
        return None
    number, rest, field, problem = found
    return number, rest, LinclsInputError(field, problem)


def _received(pipe: int, progress: Callable[[], int]) -> bytes | None:
    """Everything sent on ``pipe`` until it closes; None when ``progress`` stood still for
    ``STALL`` seconds first (the pipe is closed either way)."""
    chunks, last, since = [], progress(), time.monotonic()
    with os.fdopen(pipe, "rb", buffering=0) as answer:
        while True:
            if select.select([answer], [], [], 1.0)[0]:
                chunk = answer.read(1 << 16)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
            elif progress() != last:
                last, since = progress(), time.monotonic()
            elif time.monotonic() - since > STALL:
                return None


def _end(pid: int, pipe: int | None) -> None:
    """Stop the forked process ``pid`` and close its pipe."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    if pipe is not None:
        os.close(pipe)


def _bad_seeds(loader: Any, lines: Iterable[str]) -> dict[str, Any]:
    """The ``seed=`` value lines among ``lines`` that are out of range, with their error."""
    from lincls.config.run import SEED_MAX
    from lincls.errors import LinclsInputError, check_number

    bad = {}
    for line in lines:
        if not line.startswith(SEED + "="):  # a plain value line of seed starts so
            continue
        value = integer_value(line)  # a seed sweep's million lines: no Override made
        if value is None:
            plain = split_group_overrides(loader, [line])[1]
            if not plain:
                continue
            value = plain[0].value()
        try:
            check_number(SEED, value, low=0, high=SEED_MAX, integer=True)
        except LinclsInputError as exc:
            bad[line] = exc
    return bad


def _refuse_first(loader: Any, jobs: Sequence[Sequence[str]], bad_rest, bad_seeds) -> None:
    """Raise the error of the first job, in order, whose seed or rest is bad."""
    from lincls.errors import LinclsInputError

    for number, job in enumerate(jobs, 1):
        error = next((bad_seeds[line] for line in job if line in bad_seeds), None)
        if error is None and bad_rest is not None and _rest(loader, job) == bad_rest[0]:
            error = bad_rest[1]
        if error is not None:
            where = f"config {number} of {len(jobs)}: {' '.join(job)}"
            raise LinclsInputError(error.field, f"{error.problem} ({where}; no config was run)")


def _rest(loader: Any, job: Sequence[str]) -> tuple[str, ...]:
    """A job's lines but its seed's, group choices first: what its check depends on."""
    return _rest_of(*split_group_overrides(loader, job))


def _rest_of(groups: list[Any], values: list[Any]) -> tuple[str, ...]:
    """``_rest`` of a job split into its group choices and its values."""
    return tuple(o.input_line for o in (*groups, *values) if o.key_or_group != SEED)


def _is_boolean(task_cfg: DictConfig, override: Any, known: dict) -> bool:
    """Whether ``override`` sets a true/false option of ``task_cfg``, a composition's config
    that its jobs share: asked once per composition and key (``known``)."""
    from omegaconf import BooleanNode

    from lincls.config.checks import node_at

    key = (id(task_cfg), override.key_or_group)
    if key not in known:
        known[key] = isinstance(node_at(task_cfg, override.key_or_group), BooleanNode)
    return known[key]


def _check_rest(
    composer, job, groups: list[Any], values: list[Any], data: dict, booleans: dict
) -> tuple[Any, Any, DictConfig, Any]:
    """Check every value of ``job`` (its group choices and values) but its seed
    (``_bad_seeds``); its checked config, its composition's ``PlainBase`` (None: composed)
    and task config, and its data: what a ``_Frame`` keeps."""
    from lincls.config.checks import check_booleans, resolved
    from lincls.config.run import RunConfig
    from lincls.data import Dataset
    from lincls.errors import check_number
    from lincls.evaluation import prepare
    from lincls.registry import build_dataset

    base = composer.plain_base(groups)
    config = None if base is None else base.job(values)  # the job's values, ~0.1 ms
    if config is None:  # only composing the job makes it exactly
        base, task_cfg = None, composer.task(job, 0)
        check_booleans(task_cfg, groups + values)
        config = resolved(task_cfg)
    else:
        task_cfg = base.task  # the composition's nodes: the job's types, shared by its jobs
        check_booleans(task_cfg, [o for o in values if _is_boolean(task_cfg, o, booleans)])
    run_config = RunConfig.from_container(config, owned=True)  # composed for this check
    dataset = dict(run_config.dataset)
    if "seed" in dataset:  # the data below may have been built with another job's seed
        check_number("dataset.seed", dataset.pop("seed"), low=0, integer=True)
    settings = repr(dataset)  # exact for plain values (1, 1.0 and True differ)
    if settings not in data:
        data.clear()  # one dataset at a time: a sweep's data may be large
        built = build_dataset(run_config.dataset)
        data[settings] = built.seal() if isinstance(built, Dataset) else built  # not a game
    prepare(run_config, data[settings])
    return run_config, base, task_cfg, data[settings]
