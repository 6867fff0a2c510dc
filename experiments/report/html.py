"""The report as one self-contained HTML page, and report.md as it reads among MLflow artifacts.

``report.html`` carries its plots inline (PNG data URIs), so it renders whole in the MLflow UI's
artifact viewer and anywhere it is copied, and links the runs table as the file beside it
(``runs.csv``, a relative link: the report's directory, or the artifacts ``report/`` of the
sweep's parent run). MLflow's viewer shows the page in a sandboxed frame that may neither open
nor download another file (a link there leads nowhere, a data: download is refused): there the
page names the artifact instead of linking it (``VIEWER_SCRIPT``). The markdown itself comes
from ``render``; this module only converts it (Python-Markdown with its tables extension) and
rewrites the links.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from urllib.parse import quote

import markdown

from lincls.experiments.report.render import RUNS_FILE

HTML_FILE = "report.html"
# In MLflow's artifact viewer (the page is a blob: in a sandboxed frame) each link to a file
# beside the report becomes the artifact's name, to open from the artifact tree.
VIEWER_SCRIPT = """<script>
if (location.protocol === "blob:") {
  document.querySelectorAll("a[data-artifact]").forEach(function (a) {
    var note = document.createElement("span");
    note.textContent = a.textContent + " (the artifact " + a.dataset.artifact
      + ", beside this report in the run's artifact tree)";
    a.replaceWith(note);
  });
}
</script>"""
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td { text-align: right; } td:first-child, td:nth-child(2) { text-align: left; }
th { background: #f3f3f3; } img { max-width: 100%; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _data_uri(path: Path, kind: str) -> str:
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def render_html(text: str, out_dir: Path, title: str) -> str:
    """``report.md``'s text as a standalone HTML page, its PNGs inline from ``out_dir``."""

    def inline(match: re.Match) -> str:
        bang, label, target = match.groups()
        path = out_dir / target
        if "/" in target or ":" in target or not path.is_file():
            return match.group(0)
        if bang:
            return f"{bang}[{label}]({_data_uri(path, 'image/png')})"
        return match.group(0)

    body = markdown.markdown(_LINK.sub(inline, text), extensions=["tables"])
    linked = f'<a href="{RUNS_FILE}">'
    body = body.replace(linked, f'{linked[:-1]} data-artifact="report/{RUNS_FILE}">')
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n{VIEWER_SCRIPT}\n</body></html>\n"
    )


def artifact_markdown(text: str, run_id: str, artifact_dir: str = "report") -> str:
    """``report.md`` for the MLflow UI: each local file link points at the run's artifact."""

    def linked(match: re.Match) -> str:
        bang, label, target = match.groups()
        if "/" in target or ":" in target:
            return match.group(0)
        url = f"get-artifact?path={quote(f'{artifact_dir}/{target}', safe='')}&run_uuid={run_id}"
        return f"{bang}[{label}]({url})"

    return _LINK.sub(linked, text)
