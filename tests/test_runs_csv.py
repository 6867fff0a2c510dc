"""runs.csv's numbers: Arrow's cast, mended into Python's layout, writes every float64 as numpy
(``astype(str)``, which ``DataFrame.to_csv`` writes) does, over every range of exponents."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lincls.experiments.report.render import float_texts, write_runs_csv


def _numbers() -> np.ndarray:
    rng = np.random.default_rng(7)
    signs = rng.choice([-1.0, 1.0], 200_000)
    powers = 10.0 ** np.arange(-323, 309)
    found = np.concatenate([
        rng.integers(0, 2**63, 200_000, dtype=np.uint64).view(np.float64),  # any bits
        rng.random(200_000),
        signs * 10.0 ** rng.uniform(-12, 22, 200_000),  # both layouts' edges
        np.concatenate([np.round(rng.random(20_000) * 10.0 ** rng.integers(-8, 18, 20_000), k)
                        for k in range(8)]),  # few digits: a cast's exponents at 1e10 to 1e16
        rng.integers(-(10**17), 10**17, 50_000).astype(np.float64),
        powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf), -powers,
        [0.0, -0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3],
    ])  # fmt: skip
    return found[~np.isnan(found)]


def test_every_float_is_written_as_numpy_writes_it():
    numbers = _numbers()
    assert float_texts(numbers).to_pylist() == numbers.astype(str).tolist()


def test_a_few_layouts_by_hand():
    numbers = np.array([1e-5, 1.5e-7, 1e10, 123.0, -0.0, 1e16, 0.0001, 2.5e-308, np.inf])
    assert float_texts(numbers).to_pylist() == [
        "1e-05", "1.5e-07", "10000000000.0", "123.0", "-0.0", "1e+16", "0.0001", "2.5e-308",
        "inf",
    ]  # fmt: skip


def test_runs_csv_of_such_numbers_is_the_file_pandas_writes(tmp_path):
    numbers = _numbers()[::37]
    holes = np.where(np.arange(len(numbers)) % 3, numbers, np.nan)
    ids = [f"r{k}" for k in range(len(numbers))]
    table = pd.DataFrame({"run_id": ids, "metrics.m": numbers, "metrics.n": holes})
    table.to_csv(tmp_path / "pandas.csv", index=False)
    write_runs_csv(table, tmp_path / "ours.csv")
    assert (tmp_path / "ours.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
