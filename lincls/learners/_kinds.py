"""What kind of learner an estimator is, as the runs, games, searches and ``lincls check`` ask.

One answer for every caller, a plugin's learner included (duck-typed, as scikit-learn's tags are):

- it *takes more than two classes*: its estimator's tags say ``multi_class``;
- it is an *online binary learner*: it has a one-example pass (``_one_pass``) and takes two
  classes; the games, the searches and the adversarial order play it one example at a time;
- it is an *online multiclass learner* (Kesler's construction): a one-example pass, more than two
  classes, and a step τ of its own (``_kesler_step``); the multiclass game and searches play it.
"""

from __future__ import annotations


def takes_multiclass(learner) -> bool:
    """Whether ``learner`` takes more than two classes (its estimator's tags say so)."""
    return bool(learner.__sklearn_tags__().classifier_tags.multi_class)


def is_online_binary(learner) -> bool:
    """Whether ``learner`` is an online binary learner (module docstring)."""
    return hasattr(learner, "_one_pass") and not takes_multiclass(learner)


def is_online_multiclass(learner) -> bool:
    """Whether ``learner`` is an online multiclass learner of Kesler's construction."""
    return (
        hasattr(learner, "_one_pass")
        and hasattr(learner, "_kesler_step")
        and takes_multiclass(learner)
    )
