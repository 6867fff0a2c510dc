"""The examples of README.md and docs/*.md: their fenced blocks, run and checked.

The convention the pages follow (docs/index.md says it to writers too):

- A ``console`` block is a shell session: a line ``$ command`` (continued by a trailing
  backslash) runs in bash, the lines after it are what it prints (stdout and stderr together).
  In a shown line ``…`` stands for any text (a run id, a time, a path); a line that is ``…`` alone
  stands for any number of lines. A command that shows no output must exit 0.
- A ``python`` block runs in one interpreter per page, in page order (the names of one block are
  there in the next). A ``text`` block right after it is what it prints, matched the same way.
- Every page runs in a temporary directory of its own with ``LINCLS_HOME`` at ``results/`` there
  (the store is where it would be for a user, ``./results``) and ``.venv/bin`` first on ``PATH``.
- A block that cannot run here follows a line ``<!-- example: skip (why) -->``; the tests count
  them, so each new one is a decision.
- A ``bash``, ``sh`` or ``shell`` block, or one that names no language, is refused: shell
  examples are ``console`` blocks with prompts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
SKIP = re.compile(r"^<!-- example: skip \((.+)\) -->$")
FENCE = re.compile(r"^(\s*)```(\S*)")
ELLIPSIS = "…"
COMMAND_TIMEOUT = 600
RUNNABLE = {"console", "python"}
REFUSED = {"", "bash", "sh", "shell", "zsh"}


@dataclass
class Block:
    """One fenced block of a page: where it starts, its language and text, why it is skipped
    (None: it runs) and, for a python block, the output block that follows it (None: none)."""

    page: Path
    line: int
    lang: str
    text: str
    skip: str | None = None
    output: str | None = None
    end: int = 0  # the line after its closing fence (after its output block's, if it has one)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/ (its generators' folder left out)."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_gen" not in p.parts)
    return [ROOT / "README.md", *docs]


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` in order, a python block's output block folded into it."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang = match.group(1), match.group(2)
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        previous = next((x.strip() for x in reversed(lines[:start]) if x.strip()), "")
        skip = SKIP.match(previous)
        block = Block(page, start + 1, lang, "\n".join(body), skip.group(1) if skip else None)
        last = found[-1] if found else None
        between = lines[last.end : start] if last is not None else []
        if (
            lang == "text"
            and last is not None
            and last.lang == "python"
            and not any(x.strip() for x in between)
        ):
            last.output = block.text
            last.end = i
            continue
        block.end = i
        found.append(block)
    return found


def pattern(shown: str) -> re.Pattern:
    """The lines a block shows as a regular expression over the lines a command printed."""
    parts = []
    for line in shown.rstrip("\n").splitlines():
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.rstrip().split(ELLIPSIS)) + r"\n")
    return re.compile("".join(parts))


def matches(shown: str, printed: str) -> bool:
    """Whether what a command printed is what the block shows (``…`` as any text)."""
    lines = [x.rstrip() for x in printed.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    text = "".join(x + "\n" for x in lines)
    return pattern(shown).fullmatch(text) is not None


def commands(text: str) -> list[tuple[str, str]]:
    """A console block's (command, what it shows) pairs."""
    found: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            command = [lines[i][2:]]
            while command[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                command.append(lines[i])
            found.append(("\n".join(command), []))
        elif found:
            found[-1][1].append(lines[i])
        i += 1
    return [(command, "\n".join(shown)) for command, shown in found]


def environment(workdir: Path) -> dict[str, str]:
    """What an example runs with: the venv first on PATH, the store under workdir/results."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "LINCLS_"))}
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        LINCLS_HOME=str(workdir / "results"),
        PYTHONUNBUFFERED="1",
        COLUMNS="100",
    )
    return env


DRIVER = """
import contextlib, io, json, sys, traceback
namespace = {"__name__": "__main__"}
for line in sys.stdin:
    code = json.loads(line)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<example>", "exec"), namespace)
        error = None
    except BaseException:
        error = traceback.format_exc()
    sys.__stdout__.write(json.dumps({"out": out.getvalue(), "error": error}) + "\\n")
    sys.__stdout__.flush()
"""


class Python:
    """One interpreter for a page's python blocks, run in order in one namespace."""

    def __init__(self, workdir: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-c", DRIVER], cwd=workdir, env=environment(workdir),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip

    def run(self, code: str) -> tuple[str, str | None]:
        """(what the code printed, its traceback or None)."""
        self.process.stdin.write(json.dumps(code) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline() or '{"out": "", "error": "died"}')
        return answer["out"], answer["error"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def run_page(page: Path, workdir: Path) -> list[str]:
    """Run every block of ``page`` that is not skipped; the problems found, one line each."""
    problems = []
    python: Python | None = None
    try:
        for block in blocks(page):
            if block.skip is not None or block.lang not in RUNNABLE:
                continue
            if block.lang == "console":
                for command, shown in commands(block.text):
                    done = subprocess.run(
                        ["bash", "-c", command], cwd=workdir, env=environment(workdir),
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        timeout=COMMAND_TIMEOUT, check=False,
                    )  # fmt: skip
                    if not matches(shown, done.stdout) or (not shown and done.returncode):
                        problems.append(
                            f"{block.where}: $ {command}\n--- shown:\n{shown}\n"
                            f"--- printed (exit {done.returncode}):\n{done.stdout}"
                        )
            else:
                python = python or Python(workdir)
                out, error = python.run(block.text)
                if error:
                    problems.append(f"{block.where}: raised\n{error}")
                elif block.output is not None and not matches(block.output, out):
                    problems.append(
                        f"{block.where}\n--- shown:\n{block.output}\n--- printed:\n{out}"
                    )
    finally:
        if python is not None:
            python.close()
    return problems
