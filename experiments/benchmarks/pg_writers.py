"""The PostgreSQL store's ceiling (slow): sustained runs a second with 1, 2, 4, 8 and 16 writers at
once, and the bytes a run costs there.

PostgreSQL is the cluster tests' throwaway server (``tests/clusters/postgres.py``: 127.0.0.1, no
fsync). The runs are copies of a real sweep's (``report.build_store``'s templates: each its own
id, config hash and record). Each writer is a process of its own that writes for ``SECONDS``:

- **as rows** (``tracking.uri=postgresql://…``): a chunk of ``CHUNK`` runs a transaction, as a
  pool's worker or a cluster task writes one (``PostgresRuns.write_many``);
- **through ``mlflow server``** over the same database (its default workers): MLflow's client,
  three calls a run (create, log_batch, end), as a sweep writes to a server.

On this 2-core machine the writers and the server share the cores: past two writers the ceiling
measured is the machine's, and the server's own share of a run's cost is what a bigger store
machine would spread (the docs' scale-out page reads the rows that way).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row

WRITERS = (1, 2, 4, 8, 16)
SECONDS = 10.0
CHUNK = 64  # runs a transaction: a pool's chunk at most (``pool.MAX_CHUNK``)
ROOT = Path(__file__).resolve().parents[2]

# One writer: copies of the templates until its deadline; prints the runs it wrote.
WRITER = """
import json, pickle, sys, time
from lincls import tracking
from lincls.experiments.benchmarks.report import _copy, _finish_tags
from pathlib import Path
uri, templates, gate, seconds, chunk, offset = sys.argv[1], sys.argv[2], Path(sys.argv[3]), \\
    float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
templates = pickle.load(open(templates, "rb"))
client, experiment_id = tracking.open_experiment(uri)
(gate / f"ready.{offset}").touch()
while not (gate / "go").exists():
    time.sleep(0.05)
start = float((gate / "go").read_text())
time.sleep(max(0.0, start - time.time()))
written, k, deadline = 0, offset, start + seconds
while time.time() < deadline:
    batch = [_copy(templates[(k + j) % len(templates)], k + j) for j in range(chunk)]
    k += chunk
    if client.rows is not None:
        for copy in batch:
            copy.update(final_tags=_finish_tags(copy, copy["run_id"]), status="FINISHED",
                        metrics=tracking._points(copy.pop("values"), {}))
        client.rows.write_many(experiment_id, batch)
        written += len(batch)
        continue
    for copy in batch:
        if time.time() >= deadline:
            break
        run_id = tracking.start_run(client, experiment_id, copy["run_name"], copy["tags"])
        tracking.finish_run(client, run_id, copy["params"], copy["values"], {},
                            _finish_tags(copy, run_id))
        written += 1
print(json.dumps({"runs": written, "seconds": time.time() - start}))
"""


def _writers(uri: str, templates: Path, count: int, seconds: float, offset: int) -> float:
    """Runs a second that ``count`` writers sustained together into ``uri``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gate = Path(tempfile.mkdtemp(dir=templates.parent))
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, uri, str(templates), str(gate),
                          str(seconds), str(CHUNK), str(offset + w * 10_000_000)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for w in range(count)
    ]  # fmt: skip
    # they start together, once each has its imports done and its store open
    while len(list(gate.glob("ready.*"))) < count:
        if any(proc.poll() is not None for proc in procs):
            break
        time.sleep(0.1)
    (gate / "go").write_text(str(time.time() + 0.5))
    runs = 0
    for proc in procs:
        out, err = proc.communicate(timeout=seconds + 300)
        if proc.returncode != 0:
            raise RuntimeError(err[-2000:])
        runs += json.loads(out.strip().splitlines()[-1])["runs"]
    return runs / seconds


def _database_bytes(uri: str) -> tuple[int, int]:
    """(the database's bytes, its runs)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(uri)
    try:
        with engine.connect() as db:
            size = db.execute(sqlalchemy.text("SELECT pg_database_size(current_database())"))
            runs = db.execute(sqlalchemy.text("SELECT COUNT(*) FROM runs"))
            return int(size.scalar()), int(runs.scalar())
    finally:
        engine.dispose()


def _server(uri: str, port: int, log: Path) -> subprocess.Popen:
    """``mlflow server`` over ``uri`` on 127.0.0.1:``port``, answering."""
    import urllib.request

    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri, "--host",
         "127.0.0.1", "--port", str(port), "--default-artifact-root", str(log.parent / "art")],
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise RuntimeError(f"mlflow server did not answer:\n{log.read_text()[-2000:]}")


def run(quick: bool = False) -> list[Row]:
    """The pg_writers section: runs a second for each number of writers, each way."""
    import signal

    from lincls import tracking
    from lincls.experiments.benchmarks.report import CHEAP, LEARNERS
    from lincls.experiments.benchmarks.sweep import as_logged

    sys.path.insert(0, str(ROOT / "tests"))  # the cluster tests' PostgreSQL server
    from clusters import free_port
    from clusters.postgres import postgres_server

    writers = (1, 2) if quick else WRITERS
    seconds = 2.0 if quick else SECONDS
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sweep = [sys.executable, "-m", "lincls.experiments.run", "-m", f"learner={LEARNERS}",
                 "seed=range(0,10)", *CHEAP, f"tracking.uri=sqlite:///{root / 'seed.db'}",
                 f"hydra.sweep.dir={root / 'sweep'}",
                 f"certificates.cache_dir={root / 'c'}"]  # fmt: skip
        subprocess.run(sweep, cwd=root, check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
        from mlflow.tracking import MlflowClient

        client = MlflowClient(f"sqlite:///{root / 'seed.db'}")
        experiment = client.get_experiment_by_name("lincls")
        children = [r for r in client.search_runs([experiment.experiment_id], max_results=1000)
                    if r.data.tags.get("lincls.role") == "run"]  # fmt: skip
        templates = root / "templates.pkl"
        templates.write_bytes(pickle.dumps(as_logged(children)))
        with postgres_server() as uri:
            tracking.open_experiment(uri)  # MLflow's schema, the experiment
            empty, _ = _database_bytes(uri)
            offset = 0
            for count in writers:
                rate = _writers(uri, templates, count, seconds, offset)
                offset += 100_000_000
                size, runs = _database_bytes(uri)
                rows.append(Row("pg_writers", f"{count} writer(s) as rows, {CHUNK} a transaction",
                                1.0 / rate, None, "", None, None,
                                f"{rate:.0f} runs/s sustained over {seconds:.0f} s; the database "
                                f"{(size - empty) / runs / 1e3:.1f} KB a run ({runs} runs); load "
                                f"{os.getloadavg()[0]:.1f}"))  # fmt: skip
            port = free_port()
            server = _server(uri, port, root / "server.log")
            try:
                for count in writers:
                    rate = _writers(f"http://127.0.0.1:{port}", templates, count, seconds, offset)
                    offset += 100_000_000
                    rows.append(Row("pg_writers", f"{count} writer(s) through mlflow server",
                                    1.0 / rate, None, "", None, None,
                                    f"{rate:.0f} runs/s sustained over {seconds:.0f} s; load "
                                    f"{os.getloadavg()[0]:.1f}"))  # fmt: skip
            finally:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=30)
    return rows
