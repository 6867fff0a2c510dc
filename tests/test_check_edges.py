"""``lincls check``'s edges: an option out of its range is one line naming it, exit 2, before
anything is made; a check that finds no violation leaves no file or folder behind (no
certificate cache in the working directory, no empty temporary folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from conftest import ROOT

from lincls.experiments import cli


def _check(arguments: list[str], cwd, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    """``lincls check …`` in a subprocess run in ``cwd``, its temporary folders in ``cwd/tmp``."""
    temporary = cwd / "tmp"
    temporary.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temporary)}
    env.pop("LINCLS_HOME", None)
    command = [*prefix, sys.executable, "-m", "lincls.experiments.cli", "check", *arguments]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _check_here(arguments: list[str], cwd, monkeypatch, capsys) -> tuple[int, str, str]:
    """``lincls check …`` in this process, run in ``cwd``, its temporary folders in ``cwd/tmp``:
    (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    (cwd / "tmp").mkdir(exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(cwd / "tmp"))
    monkeypatch.delenv("LINCLS_HOME", raising=False)
    code = cli.main(["check", *arguments])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def _left(cwd) -> list[str]:
    """What a check left in ``cwd`` and in its temporary folder."""
    return sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*") if p.name != "tmp")


SEEDS = "instance k takes seed + k (k < 60), and a seed is at most 4294967295"
CASES = [
    (["--instances", "-1"], "error: --instances: must be an integer in [0, inf), got -1"),
    (["--instances", "2.5"], "error: --instances: must be an integer in [0, inf), got 2.5"),
    (["--seconds", "nan"], "error: --seconds: must be a number in [0, inf), got nan"),
    (["--seconds", "-5"], "error: --seconds: must be a number in [0, inf), got -5"),
    (["--seconds", "inf"], "error: --seconds: must be a number in [0, inf), got inf"),
    (["--seed", "-1"], f"error: --seed: must be an integer in [0, 4294967236], got -1: {SEEDS}"),
    (["--seed", "4294967295"],
     f"error: --seed: must be an integer in [0, 4294967236], got 4294967295: {SEEDS}"),
    (["--seed", "x"], f"error: --seed: must be an integer in [0, 4294967236], got 'x': {SEEDS}"),
]  # fmt: skip


@pytest.mark.parametrize("arguments, line", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_an_option_out_of_range_is_one_line_exit_2_and_nothing_made(
    arguments, line, tmp_path, monkeypatch, capsys
):
    done = _check_here(["perceptron", "novikoff", *arguments], tmp_path, monkeypatch, capsys)
    assert done == (2, "", line + "\n")
    assert _left(tmp_path) == []


def test_out_on_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "taken").write_text("mine\n")
    for out, line in (
        ("taken", "error: --out: taken is not a directory"),
        ("taken/x", "error: --out: cannot create taken/x (Not a directory)"),
    ):
        done = _check_here(["perceptron", "--out", out], tmp_path, monkeypatch, capsys)
        assert done == (2, "", line + "\n")
    assert _left(tmp_path) == ["taken"]


def test_out_in_a_read_only_folder_is_one_line(read_only_dir, tmp_path):
    locked, prefix = read_only_dir
    for out, line in (
        (locked, f"error: --out: {locked} is not writable by this user"),
        (locked / "x", f"error: --out: cannot create {locked / 'x'} (Permission denied)"),
    ):
        done = _check(["perceptron", "--out", str(out)], tmp_path, prefix)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")
    assert list(locked.iterdir()) == []


def test_a_check_without_a_violation_leaves_nothing(tmp_path):
    """Before: ./results/certificates/ (the SVMs' cache) and an empty lincls-check-* folder."""
    done = _check(["perceptron", "novikoff", "--instances", "3", "--seconds", "0"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("lincls check perceptron: 6 instances and 1 search in ")
    assert "reproducers" not in done.stdout
    assert _left(tmp_path) == []
    assert list((tmp_path / "tmp").iterdir()) == []
