"""What the browser tests read off MLflow's pages: scripts run in the page, and the figure's
SVG read as numbers."""

from __future__ import annotations

import re

# The cells of the first rows a researcher reads first: each row's text in each column, and
# whether each is whole and in view (inside the window and the grid's unscrolled viewport).
FIRST_CELLS = """
var columns = arguments[0], rows = arguments[1], out = [];
var grid = document.querySelector('.ag-center-cols-viewport').getBoundingClientRect();
var body = document.querySelector('.ag-body-viewport').getBoundingClientRect();
for (var i = 0; i < rows; i++) {
  out.push(columns.map(function (column) {
    var cell = document.querySelector('.ag-row[row-index="' + i + '"] .ag-cell[col-id="'
                                      + column + '"]');
    if (!cell) return [null, false];
    var text = cell.querySelector('a') || cell.querySelector('.ag-cell-value') || cell;
    var c = cell.getBoundingClientRect(), t = text.getBoundingClientRect();
    var pinned = cell.closest('.ag-pinned-left-cols-container') !== null;
    var inView = c.right <= window.innerWidth && c.bottom <= body.bottom && c.top >= body.top
      && (pinned || (c.left >= grid.left - 1 && c.right <= grid.right + 1));
    var whole = text.scrollWidth <= text.clientWidth + 1 && t.right <= c.right + 1;
    return [text.textContent.trim(), inView && whole];
  }));
}
return out;
"""

# The figure on a run's page: how far its top is hidden, how many px of it are in view (clipped
# by the folded description, the page's scrolled areas and the window) and its drawn width.
FOLDED_FIGURE = """
var image = Array.from(document.images).find(i => i.src.includes(arguments[0]));
var r = image.getBoundingClientRect(), top = Math.max(r.top, 0);
var bottom = Math.min(r.bottom, window.innerHeight);
for (var e = image.parentElement; e; e = e.parentElement) {
  if (getComputedStyle(e).overflowY === 'visible') continue;
  var q = e.getBoundingClientRect();
  top = Math.max(top, q.top);
  bottom = Math.min(bottom, q.bottom);
}
return [top - r.top, Math.max(0, bottom - top), r.width];
"""


def curve_ys(svg: str, colours: list[str]) -> list[float]:
    """The y of every point of the SVG's lines and paths stroked in ``colours``."""
    ys = []
    for element in re.finditer(r"<(path|line)\b([^>]*)>", svg):
        attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', element.group(2)))
        if attributes.get("stroke") not in colours:
            continue
        if element.group(1) == "line":
            ys += [float(attributes["y1"]), float(attributes["y2"])]
            continue
        for command, numbers in re.findall(r"([MLHV])([^MLHV]*)", attributes["d"]):
            values = [float(v) for v in numbers.replace(",", " ").split()]
            ys += values if command == "V" else values[1::2] if command in "ML" else []
    return ys


def hex_colour(colour: str) -> str:
    """A CSS ``rgb(r, g, b)`` as ``#rrggbb``."""
    return "#" + "".join(f"{int(v):02x}" for v in re.findall(r"\d+", colour)[:3])
