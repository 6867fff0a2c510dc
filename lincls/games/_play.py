"""What every adversary of ``lincls.games`` does with the learner: start it, ask it, show it.

An adversary that picks the label after the learner's prediction must know what the learner
would count as a mistake. The conventions differ (the perceptron family errs on a zero
activation, Winnow predicts positive on a tie, a learner with a bias adds its own offset), so
the adversary does not re-implement any of them: ``errs`` presents the example to a copy of the
learner, through the learner's own one-example step, and reads whether the copy's mistake count
grew. ``present`` then gives the example to the learner itself. Each example is one call of the
learner's one-pass kernel on a single row, as ``partial_fit`` makes it, so mistakes,
updates and the online record are the learner's own; ``finish`` re-labels the record's rows by
the order of presentation.
"""

from __future__ import annotations

import copy

import numpy as np

from lincls.data import Dataset
from lincls.errors import LinclsInputError
from lincls.learners._kinds import is_online_binary

# The most values (examples × columns) a game holds at once: 381 MiB of float64. A game's data
# exist only as it is played, so its size is checked from its settings before it starts.
MAX_CELLS = 50_000_000
CAP = f"{MAX_CELLS:,} values ({MAX_CELLS * 8 // 2**20} MiB of float64)"


class Game:
    """A game to play against a learner: ``play`` makes the data as it fits the learner.

    A subclass is a frozen dataclass of its settings with ``name`` and ``params`` (what a run
    logs as ``dataset.*``) and ``columns`` (the width of its examples); ``play(learner,
    passes)`` returns the presented sequence as a certified dataset and the presentations of
    each row.
    """

    name: str
    params: dict

    @property
    def columns(self) -> int:  # pragma: no cover
        """The number of features of the game's examples."""
        raise NotImplementedError

    def play(self, learner, passes: int) -> tuple[Dataset, np.ndarray]:  # pragma: no cover
        raise NotImplementedError

    def check_size(self, passes: int) -> None:
        """Refuse settings whose play would hold more than ``MAX_CELLS`` values over ``passes``
        passes (``LinclsInputError`` naming ``dataset.<field>``); the settings alone are checked
        when the game is made."""

    def check(self, learner, passes: int) -> None:
        """Refuse, before a run exists, what ``play`` would refuse: a learner the game cannot
        play, a game too large to hold, a learner whose storage for examples of ``columns``
        features would not fit (a support set's budget). Fields are named in full."""
        try:
            check_online(learner, self.name.replace("_", " "))
        except LinclsInputError as exc:
            field = exc.field if exc.field == "learner" else f"learner.{exc.field}"
            raise LinclsInputError(field, exc.problem) from None
        self.check_size(int(passes))
        validate = getattr(learner, "_validate_X_y", None)
        if validate is None:
            return
        try:
            validate(np.zeros((2, self.columns)), np.array([-1, 1]), reset=True)
        except LinclsInputError as exc:
            owner = "learner" if exc.field.split(".")[0] in learner.get_params() else "dataset"
            raise LinclsInputError(f"{owner}.{exc.field}", exc.problem) from None


def check_online(learner, game: str) -> None:
    """Refuse a learner the games cannot play: not binary online, or a mini-batch one."""
    if not is_online_binary(learner):
        raise LinclsInputError(
            "learner", f"the {game} needs a binary online learner, not {type(learner).__name__}"
        )
    if getattr(learner, "batch_size", 1) != 1:  # a mini-batch learner steps on M examples
        raise LinclsInputError(
            "batch_size", f"the {game} presents one example at a time, so it needs "
            f"batch_size = 1, got {learner.batch_size!r}")  # fmt: skip


def start(learner, template: np.ndarray) -> None:
    """Initialise ``learner`` as ``fit`` would on data like ``template`` (its rows set what the
    learner measures at the start, e.g. R of ``bias="r2"`` and Winnow's boolean input), with an
    empty record, ready for ``present``."""
    learner._check_params()
    template, _ = learner._validate_X_y(
        np.ascontiguousarray(template, dtype=np.float64), np.array([-1, 1]), reset=True
    )
    learner.classes_ = np.array([-1, 1])
    learner._init_weights(template, None, None)
    learner._reset_record()
    learner._finish_record()


def present(learner, x: np.ndarray, label: float) -> bool:
    """Show (x, label) to ``learner`` through its one-example step; whether it was a mistake.

    ``partial_fit`` on the one row, without its input checks (3 ms a call, ~100 times the
    step itself): the games make finite float64 rows, non-negative for a learner that needs it,
    and keep Winnow's record of boolean input as its check would.
    """
    before = learner.mistakes_
    row = np.ascontiguousarray(x, dtype=np.float64)[np.newaxis, :]
    if hasattr(learner, "boolean_input_"):
        learner.boolean_input_ = learner.boolean_input_ and bool(((row == 0) | (row == 1)).all())
    learner._resume_record()
    learner._one_pass(row, np.array([float(label)]), np.zeros(1, dtype=np.int64))
    learner._finish_record()
    return learner.mistakes_ > before


def errs(learner, x: np.ndarray, label: float) -> bool:
    """Whether ``learner`` would count (x, label) as a mistake (asked of a copy of it)."""
    return present(copy.deepcopy(learner), x, label)


def wrong_label(learner, x: np.ndarray, first: float) -> float:
    """A label the learner errs on for ``x``: ``first`` if it errs on it, else the other one.

    A binary learner predicts one of the two labels, so it errs on the other; a learner that
    errs on neither would not be a classifier, and is refused.
    """
    if errs(learner, x, first):
        return first
    if errs(learner, x, -first):
        return -first
    raise LinclsInputError(
        "learner", f"{type(learner).__name__} errs on neither label of an example"
    )  # pragma: no cover


def replay(learner, X: np.ndarray, y: np.ndarray, passes: int) -> None:
    """Up to ``passes`` more passes over the played sequence (X, y), now fixed data: one call of
    the learner's one-pass kernel a pass, stopping as ``fit`` does after a pass without an
    update when the learner stops on convergence."""
    if passes < 1 or X.shape[0] == 0:
        return
    learner._resume_record()
    X, y = learner._validate_fit_input(X, y, reset=False)
    labels = learner._kernel_labels(y)
    order = np.arange(X.shape[0], dtype=np.int64)
    for _ in range(passes):
        updates = learner._one_pass(X, labels, order)
        if getattr(learner, "stop_when_converged", False) and updates == 0:
            break
    learner._finish_record()


def finish(learner, rounds: int) -> None:
    """The record of a game of ``rounds`` examples a pass: rows and passes by presentation."""
    steps = learner.mistake_steps_
    learner.mistake_indices_ = steps % max(rounds, 1)
    passes_run = max(-(-int(learner.n_steps_) // max(rounds, 1)), 1)
    learner.mistakes_per_pass_ = np.bincount(steps // max(rounds, 1), minlength=passes_run)
    learner.n_passes_ = int(learner.mistakes_per_pass_.shape[0])
