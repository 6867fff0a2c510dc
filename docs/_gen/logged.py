"""The metrics, curves and tags a run logs, measured by running small configs (no MLflow:
``lincls.evaluation.measure``, then the runner's description and tags; the page is kept in
docs/reference/ by ``pages.py`` beside this file), and, as a MkDocs hook, the benchmark tables
of ``results/bench.md`` put into the performance page at build time.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "results" / "bench.md"
BENCH_MARK = "<!-- bench.md -->"
# (what the config shows, its overrides): small runs that between them log every kind of value
PROBES = [
    ("perceptron, separable", ["dataset.n=100"]),
    ("perceptron, noisy", ["dataset=noisy", "dataset.n=100"]),
    (
        "PA-I, 2 shuffled orders",
        ["learner=passive_aggressive", "dataset.n=100", "order=shuffled", "orders.permutations=2"],
    ),
    ("batch perceptron", ["learner=batch_perceptron", "learner.batch_size=10", "dataset.n=100"]),
    ("maxent", ["learner=maxent", "dataset.n=100"]),
    (
        "multiclass perceptron",
        ["learner=multiclass_perceptron", "dataset=multiclass", "dataset.n=100"],
    ),
    ("voted perceptron, 1 pass", ["learner=voted_perceptron", "dataset.n=100", "passes=1"]),
    ("second-order perceptron", ["learner=second_order_perceptron", "dataset.n=100"]),
    ("projectron", ["learner=projectron", "dataset.n=100"]),
    ("perceptron, playtennis", ["dataset=playtennis"]),
]


def pattern(name: str, bounds: list[str], sources: list[str]) -> str:
    """A logged name with its bound's name as ``<theorem>`` and a certificate's as ``<source>``."""
    parts = name.split(".")
    out = []
    for part in parts:
        if part in bounds:
            out.append("<theorem>")
        elif part in sources and out and out[-1] == "certificate":
            out.append("<source>")
        else:
            out.append(part)
    return ".".join(out)


def measured() -> dict[str, dict[str, set[str]]]:
    """Per kind (metric, curve, tag, param, artifact), each logged name pattern → the probes
    that log it."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    import lincls.registry  # noqa: F401  (adds the studies' schemas)
    from lincls import bounds, evaluation, runner
    from lincls.config import register_configs
    from lincls.config.run import RunConfig
    from lincls.tracking.tags import COMMIT_TAG, run_tags

    register_configs()
    names = [spec.name for spec in bounds.REGISTRY]
    found: dict[str, dict[str, set[str]]] = {
        k: {} for k in ("metric", "curve", "tag", "param", "artifact")
    }
    with (
        tempfile.TemporaryDirectory() as cache,
        initialize_config_module("lincls.conf", version_base="1.3"),
    ):
        for label, overrides in PROBES:
            cfg = compose("config", overrides=[*overrides, f"certificates.cache_dir={cache}"])
            config = RunConfig.from_container(OmegaConf.to_container(cfg, resolve=True))
            outcome = evaluation.measure(config)
            runner._describe(config, outcome)  # the description and the view's rounded tags
            # the commit tag a run in a git checkout gets, wherever the page is made
            made = {**run_tags(config), COMMIT_TAG: "…"}
            CREATION_TAGS.update(made)
            tags = {**made, **outcome.tags}
            sources = [k.split(".")[1] for k in tags if k.startswith("certificate.")]
            for kind, keys in (
                ("metric", outcome.metrics),
                ("curve", outcome.curves),
                ("tag", tags),
                ("param", outcome.params),
                ("artifact", outcome.artifacts),
            ):
                for key in keys:
                    found[kind].setdefault(pattern(key, names, sources), set()).add(label)
    return found


def stored_as(kind: str, name: str) -> str:
    """Where a run keeps a logged name: an MLflow row, its record (``lincls.tracking.record``) or
    a file."""
    from lincls.tracking.record import RECORD_FILES, STORED_METRICS, STORED_TAGS

    if kind == "metric":
        return "metric" if name in STORED_METRICS else "record"
    if kind == "tag":
        return "tag" if name in STORED_TAGS or name in CREATION_TAGS else "record"
    if kind == "curve":
        return "record"
    if kind == "artifact":
        return "record" if name in RECORD_FILES else "file"
    return "param"


CREATION_TAGS: set[str] = set()  # the tags a run is made with (``run_tags``): rows


def logged_page() -> str:
    from lincls.tracking import tags as tags_module
    from lincls.tracking.describe import CURVE_STEPS

    found = measured()
    every = {label for label, _ in PROBES}
    out = [
        "# What a run logs",
        "",
        "Measured by `make reference`: it runs these small configs through lincls's own "
        "evaluation and description (no store) and lists every name they log. `<theorem>` "
        "stands for a bound's name (see [bounds](bounds.md)), `<source>` for a certificate's "
        "(`generator`, `svm`, `soft_svm`; `best` for a best comparator). What the names mean: "
        "[the run's record](../explanation/certificates.md#what-a-run-logs).",
        "",
        "The configs:",
        "",
        *[f"- {label}: `{' '.join(overrides)}`" for label, overrides in PROBES],
        "",
        "Besides these, a run's params are its resolved config, dotted (`learner.lr`, "
        "`dataset.margin`, …), and its data are its MLflow dataset input.",
        "",
        "*stored* says where a run keeps each: an MLflow metric, tag or param (a row), its "
        "record (the tag `lincls.record`, which every reader opens into the same columns and "
        "curves: [where a run keeps them](../explanation/certificates.md#where-a-run-keeps-them)) "
        "or a file among its artifacts.",
        "",
    ]
    titles = {
        "metric": "Metrics",
        "curve": "Curves (each point a step: what the step counts)",
        "tag": "Tags",
        "param": "Params added by the data",
        "artifact": "Artifacts",
    }
    for kind, title in titles.items():
        out += [f"## {title}", "", "| name | logged by | stored |", "|---|---|---|"]
        for name in sorted(found[kind]):
            who = found[kind][name]
            shown = "every config" if who == every else ", ".join(sorted(who))
            steps = CURVE_STEPS.get(name) if kind == "curve" else None
            step = f" (step: {steps})" if steps else ""
            out.append(f"| `{name}`{step} | {shown} | {stored_as(kind, name)} |")
        out.append("")
    constants = sorted(
        (value, key)
        for key, value in vars(tags_module).items()
        if key.endswith("_TAG") and isinstance(value, str)
    )
    out += [
        "## Tag names defined in `lincls.tracking.tags`",
        "",
        "Some are set only on a sweep's runs (its parent id, the overrides and the values it "
        "varies) or on the sweep's parent run (`lincls.role=sweep`).",
        "",
        *[f"- `{value}` (`{key}`)" for value, key in constants],
        "",
    ]
    return "\n".join(out)


def bench_tables() -> str:
    """``results/bench.md`` without its title, or a note that it has not been made here."""
    if not BENCH.is_file():
        return (
            '!!! note "No results/bench.md here"\n    `make bench` writes it (it is not kept in '
            "git: its numbers are this machine's); the docs built after it show its tables."
        )
    text = BENCH.read_text()
    return re.sub(r"^# .*\n", "", text, count=1).replace("\n## ", "\n### ")


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Put results/bench.md's tables where the performance page marks them."""
    if BENCH_MARK in markdown:
        return markdown.replace(BENCH_MARK, bench_tables())
    return markdown
