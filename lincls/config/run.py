"""The run config, typed: one frozen ``RunConfig``, built once where a run enters (the command
line, a sweep's job, the Python API) and handed down, its run-level values checked there.

The learner and dataset sections stay read-only mappings: their keys are those of the option they
name, checked where the option is built (``lincls.registry``). The run's own keys (passes, seed,
order, orders, certificates, tracking, study) are typed fields. ``raw`` is the container the
config was built from, ``orders`` in its one spelling: what a run logs as params and what its
config hash is computed from (``lincls.tracking.tags.config_hash``), as before it was typed.
"""

from __future__ import annotations

import copy
import errno
import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lincls.errors import LinclsInputError, check_choice, check_name, check_number

ORDERS = ("fixed", "shuffled", "adversarial")
SEED_MAX = 2**32 - 1  # numpy's RandomState, which the learners shuffle with, takes no larger
DEFAULT_RETRY_SECONDS = 30.0
DEFAULT_MAX_STORE_FAILURES = 3


class Section(Mapping[str, Any]):
    """A config section (the learner's or the dataset's options), read-only."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Section({self._items!r})"


@dataclass(frozen=True)
class CertificateSettings:
    """``certificates``: certify with SVMs (``svm``), evaluate each bound at its best comparator
    (``best``), cache the SVMs in ``cache_dir`` (None: beside the tracking store)."""

    svm: bool = True
    best: bool = True
    cache_dir: str | None = None


@dataclass(frozen=True)
class TrackingSettings:
    """``tracking``: where a run is logged and how long it waits for a store.

    ``experiment`` None is the default experiment; ``retry_seconds`` None is the store's default
    budget (``budget`` gives it either way)."""

    uri: str | None = None
    experiment: str | None = None
    run_name: str | None = None
    skip_finished: bool = True
    retry_seconds: float | None = None
    max_store_failures: int = DEFAULT_MAX_STORE_FAILURES

    @property
    def budget(self) -> float:
        """The seconds a run waits for a store that does not answer."""
        return DEFAULT_RETRY_SECONDS if self.retry_seconds is None else float(self.retry_seconds)


@dataclass(frozen=True)
class RunConfig:
    """One run's config, typed and checked (``from_container``); see the module's docstring."""

    learner: Section
    dataset: Section
    passes: int
    seed: int
    order: str = "fixed"
    orders: int = 1
    certificates: CertificateSettings = field(default_factory=CertificateSettings)
    tracking: TrackingSettings = field(default_factory=TrackingSettings)
    study: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_container(cls, container: Mapping[str, Any], owned: bool = False) -> RunConfig:
        """The typed config of a composed, resolved config (plain containers), every run-level
        value checked: bad input raises ``LinclsInputError`` naming the field (``passes``,
        ``seed``, ``order``, ``orders.permutations``, ``certificates.svm``, ``tracking.…``).
        ``owned``: ``container`` is a fresh composition the caller gives away, kept as it is
        (a sweep's check of a million configs copied each one for nothing)."""
        raw = canonical_orders(dict(container) if owned else copy.deepcopy(dict(container)))
        check_number("passes", raw.get("passes"), low=1, integer=True)
        check_number("seed", raw.get("seed"), low=0, high=SEED_MAX, integer=True)
        learner, dataset = _section(raw, "learner"), _section(raw, "dataset")
        order = raw.get("order", "fixed")
        check_choice("order", order, ORDERS)
        orders = permutations(raw.get("orders", 1))  # orders=k or orders.permutations=k
        settings = raw.get("certificates") or {}
        for key in ("svm", "best"):
            value = settings.get(key, True)
            if not isinstance(value, bool):
                raise LinclsInputError(
                    f"certificates.{key}", f"must be true or false, got {value!r}"
                )
        cache_dir = settings.get("cache_dir")
        if cache_dir is not None:  # None: beside the store, whose own check covers it
            check_writable("certificates.cache_dir", str(cache_dir))
        tracking = raw.get("tracking") or {}
        check_tracking(tracking)
        retry = tracking.get("retry_seconds")
        return cls(
            learner,
            dataset,
            int(raw["passes"]),
            int(raw["seed"]),
            str(order),
            orders,
            CertificateSettings(
                settings.get("svm", True),
                settings.get("best", True),
                None if cache_dir is None else str(cache_dir),
            ),
            TrackingSettings(
                tracking.get("uri"),
                tracking.get("experiment"),
                tracking.get("run_name"),
                bool(tracking.get("skip_finished", True)),
                None if retry is None else float(retry),
                int(tracking.get("max_store_failures", DEFAULT_MAX_STORE_FAILURES)),
            ),
            str(raw["study"]) if raw.get("study") else None,
            raw,
        )

    @classmethod
    def unchecked(cls, container: Mapping[str, Any]) -> RunConfig:
        """A config's fields as given, nothing checked nor converted (a missing key takes its
        default): to name, tag and log a config that was refused, as it was written."""
        raw = dict(container)

        def settings(kind: type, key: str) -> Any:
            given = raw.get(key)
            given = given if isinstance(given, Mapping) else {}
            return kind(**{f.name: given[f.name] for f in fields(kind) if f.name in given})

        return cls(
            Section(raw.get("learner") if isinstance(raw.get("learner"), Mapping) else None),
            Section(raw.get("dataset") if isinstance(raw.get("dataset"), Mapping) else None),
            raw.get("passes"),  # type: ignore[arg-type]  (as given: this config was refused)
            raw.get("seed"),  # type: ignore[arg-type]
            raw.get("order", "fixed"),
            raw.get("orders", 1),
            settings(CertificateSettings, "certificates"),
            settings(TrackingSettings, "tracking"),
            raw.get("study"),
            raw,
        )

    @classmethod
    def of(cls, config: RunConfig | Mapping[str, Any], checked: bool = True) -> RunConfig:
        """``config`` itself, or the typed config of a plain one (``from_container``; with
        ``checked`` false, ``unchecked``): what the functions that once took a dict accept."""
        if isinstance(config, RunConfig):
            return config
        return cls.from_container(config) if checked else cls.unchecked(config)


def _section(raw: Mapping[str, Any], key: str) -> Section:
    value = raw.get(key)
    if not isinstance(value, Mapping):
        raise LinclsInputError(key, f"must be a mapping of options with a name, got {value!r}")
    return Section(value)


def check_tracking(settings: Mapping[str, Any]) -> None:
    """Check the ``tracking`` keys that bound a store's failures (``LinclsInputError``)."""
    retry = settings.get("retry_seconds", DEFAULT_RETRY_SECONDS)
    check_number("tracking.retry_seconds", retry, low=0, high=3600)
    failures = settings.get("max_store_failures", DEFAULT_MAX_STORE_FAILURES)
    check_number("tracking.max_store_failures", failures, low=1, integer=True)
    if settings.get("experiment") is not None:  # "" would log to the default experiment
        check_name("tracking.experiment", settings["experiment"])


def permutations(value: Any) -> int:
    """The orderings a config's ``orders`` asks for: ``orders.permutations=k`` (LIBOL's protocol
    as issue 26 names it) or its short form ``orders=k``. Bad input is one line naming the field
    as it was written and the range it allows (an integer ≥ 1)."""
    if not isinstance(value, Mapping):
        check_number("orders", value, low=1, integer=True)
        return int(value)
    for key in value:
        if key != "permutations":
            raise LinclsInputError(
                f"orders.{key}", "is not an option of orders; its option: permutations"
            )
    count = value.get("permutations", 1)
    check_number("orders.permutations", count, low=1, integer=True)
    return int(count)


def canonical_orders(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with a valid ``orders: {permutations: k}`` written ``orders: k``: the two
    spellings are one config (the same params, config hash and run, so a study resumed under
    the other name skips what it finished). An invalid value is left as written, for the run to
    refuse naming ``orders.permutations``."""
    value = config.get("orders")
    if isinstance(value, Mapping):
        try:
            return {**config, "orders": permutations(value)}
        except LinclsInputError:
            pass
    return dict(config)


def check_writable(field: str, directory: str) -> None:
    """Raise ``LinclsInputError`` unless ``directory`` is a writable directory or can be made.
    Nothing is left behind: the nearest existing folder on its path must be a directory in which
    this user can make a folder, tried with one of a name of its own, removed at once (the
    permission bits pass anything for root, and a folder such as /proc takes none whatever they
    say). The cache makes the rest on its first write. Making ``directory`` itself to find out
    would race with another run checking the same path at once."""
    path = Path(directory).absolute()
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        reason = os.strerror(errno.ENOTDIR)
    elif not os.access(existing, os.W_OK | os.X_OK):
        reason = os.strerror(errno.EACCES)
    else:
        reason = _cannot_make_in(existing)
        if reason is None:
            return
    if existing == path:
        problem = "is not writable by this user" if path.is_dir() else "is not a directory"
        raise LinclsInputError(field, f"{directory} {problem}")
    raise LinclsInputError(field, f"cannot create {directory} ({reason})")


def _cannot_make_in(folder: Path) -> str | None:
    """Why no folder can be made in ``folder`` (its error's text), else None. A folder found
    fit once is not tried again by this process: a sweep's every run checks its cache folder."""
    if str(folder) in _CAN_MAKE_IN:
        return None
    probe = folder / f".lincls-probe-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        probe.mkdir()
    except OSError as exc:
        return exc.strerror or str(exc)
    probe.rmdir()
    _CAN_MAKE_IN.add(str(folder))
    return None


_CAN_MAKE_IN: set[str] = set()
