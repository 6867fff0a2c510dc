"""The experiment's description in the MLflow UI (``mlflow.note.content``): what its runs log and
how to read them. Kept apart from ``lincls.tracking``, which writes it, so the text reads whole."""

EXPERIMENT_NOTE = """Runs of lincls: linear classifiers of the perceptron family against their
mistake bounds.

- A **sweep** is a parent run (named after its study); its description gives the headline (runs,
  failed, bound violations, per learner the median and largest tightest ratio of each family)
  and its artifacts hold the study report (`report/report.html`).
- A **run** (a child) fits one learner on one dataset. Its name reads
  `learner[bias rule] γ=… R=… s<seed> dataset`, then its order when not `fixed` and what its
  sweep varies; `learner_label` groups the same update rule.
- `mistakes` is the online mistake count; `bound.<theorem>` each mistake bound that applies, at its
  best certificate; **`bound_ratio.<theorem>` = mistakes / bound**, exactly 1 when the count
  meets the bound within a relative 1e-9 (the bound's rounding), above 1 only for a violation
  (tagged `bound_violated=true`). A bound at or above what any learner could make on the run is
  **vacuous** there: tag `bounds.vacuous`, no ratio, never the tightest.
- **A priori** bounds are functions of the data and a comparator; **a posteriori** ones
  (Mohri–Rostamizadeh) read the run's own mistakes. `bound_ratio.tightest` is the ratio to the
  run's smallest a priori bound, `bound_ratio.tightest_a_posteriori` to its smallest a
  posteriori one.
- The view `lincls` lists the runs but those on data built to meet its bound (the games and the
  orthonormal instance: their ratio is fixed by proof); delete its `tags.dataset != …` clauses
  to see them. The search box takes MLflow's filter grammar, comparisons joined by AND, never a
  bare word (MLflow answers HTTP 400): `tags.learner = 'perceptron'`,
  `tags.learner_label LIKE 'perceptron (%' AND tags.dataset = 'separable'`,
  `tags.dataset LIKE '%game'`, `` metrics.`bound_ratio.tightest` > 0.5 ``.
- `bound_slack.progress · angle · norm` = mistakes / Novikoff's bound, factor by factor of its
  proof: the smallest says what keeps a run from its bound.
"""
