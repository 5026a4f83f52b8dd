"""The HTML reports' shared page shell, and a scoring run's page (``kp score -f html``).

A page is one self-contained file (inline CSS and SVG, no script, nothing fetched). All data goes
through :func:`text`, so an id such as ``<script>`` or ``"onload=`` is shown as written, never
run, and a Content-Security-Policy refuses all else. Tables name their headers' scope, for
screen readers.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import IO

import numpy as np

from knowledgepulse._util.text import counted, line_ends, printable
from knowledgepulse.records import Problem
from knowledgepulse.reports.value import RunTally, TableCollector, summary_line
from knowledgepulse.value.item import ScoredItem

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;vertical-align:top}
td:first-child,th:first-child{text-align:left}
th[scope=row]{overflow-wrap:anywhere;font-weight:normal}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}
body{overflow-wrap:break-word}
svg rect{fill:#4a78c2}
"""
"""The style every report page starts from; a report adds its own rules after it.

A long token (base64, a minified answer, an id of 300 characters) breaks where it must, so the
page never scrolls sideways; a row's header (an id, a name) may break anywhere to keep a table in
the window, the numbers beside it and the column headers ("cases") never.
"""

# Nothing but inline styles: if escaping ever failed, injected script or remote resources
# would still be refused by the browser.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def text(value: object, *, one_line: bool = False) -> str:
    r"""Data as HTML text: escaped (quotes too), controls as ``\x1b``, surrogates as U+FFFD.

    ``one_line`` shows a newline or tab as ``\n``, ``\t`` too, for a name (a case id), which a
    browser would otherwise show as a space. A CR before LF only ends the line (``line_ends``).
    """
    return html.escape(printable(line_ends(str(value)), one_line=one_line), quote=True)


def isolated(value: str) -> str:
    """HTML of user text (already HTML) set apart in its own direction: ``<bdi>``.

    An id or output in Arabic or Hebrew then reads right to left within the left-to-right text
    around it, and its neutral characters (``-``, digits) do not move the words next to it.
    """
    return f"<bdi>{value}</bdi>"


def page(title: str, sections: Iterable[str], *, style: str = "") -> str:
    """A whole HTML document: the shared style plus ``style``, the title, then the sections.

    ``title`` is plain text, ``sections`` HTML.
    """
    head = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
    head += f"<meta http-equiv='Content-Security-Policy' content=\"{POLICY}\">"
    parts = [head, f"<title>{text(title)}</title>", f"<style>{STYLE}{style}</style></head><body>"]
    return "\n".join([*parts, *sections, "</body></html>\n"])


def histogram(
    values: Sequence[float], *, bins: int = 20, bar_width: int = 6, height: int = 30
) -> str:
    """An inline SVG histogram of values in [0, 1], scaled to the tallest bar; tooltips count.

    Its label (what a screen reader says of the image) counts each bin that holds a value.
    """
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=bins, range=(0.0, 1.0))
    top = max(1, int(counts.max()))
    bars = "".join(
        f"<rect x='{i * bar_width}' y='{height - height * c / top:.1f}' "
        f"width='{bar_width - 1}' height='{height * c / top:.1f}'>"
        f"<title>{i / bins:.2f}-{(i + 1) / bins:.2f}: {c}</title></rect>"
        for i, c in enumerate(counts)
    )
    said = ", ".join(
        f"{c} in {i / bins:.2f}-{(i + 1) / bins:.2f}" for i, c in enumerate(counts) if c
    )
    label = f"histogram: {said or 'no values'}"
    return (
        f"<svg width='{bins * bar_width}' height='{height}' role='img' aria-label='{label}'>"
        f"{bars}</svg>"
    )


def table(
    head: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    css_class: str | None = None,
    row_headers: bool = False,
) -> str:
    """A table from a header (plain text) and rows of cells that are already HTML.

    ``row_headers``: each row's first cell names it (a scorer, a case), a ``th`` of the row.
    """
    header = "".join(f"<th scope='col'>{text(cell)}</th>" for cell in head)
    body = "".join("<tr>" + row_cells(row, row_headers=row_headers) + "</tr>" for row in rows)
    attribute = f" class='{text(css_class)}'" if css_class else ""
    return f"<table{attribute}><tr>{header}</tr>{body}</table>"


def row_cells(cells: Sequence[str], *, row_headers: bool = True) -> str:
    """A row's cells (already HTML), the first a row header when ``row_headers``."""
    first = "<th scope='row'>{}</th>" if row_headers else "<td>{}</td>"
    return "".join((first if i == 0 else "<td>{}</td>").format(c) for i, c in enumerate(cells))


def bullets(items: Iterable[str]) -> str:
    """A bulleted list of plain-text items."""
    return "<ul>" + "".join(f"<li dir='auto'>{text(item)}</li>" for item in items) + "</ul>"


# --- The scoring run's page (kp score -f html) ---------------------------------------------------

DUPLICATE_SIMILARITY = 0.95
SHOWN_AT_EACH_END = 10
_DIMENSIONS = ("score", "complexity", "novelty", "tool_diversity", "outcome_confidence")


class HtmlWriter(TableCollector):
    """Collects the scored traces, as the table does, and writes the page when the run closes."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self._stream = stream

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Write the whole page."""
        self._stream.write(value_page(self.results, tally, problems))


def value_page(results: Sequence[ScoredItem], tally: RunTally, problems: Sequence[Problem]) -> str:
    """A scoring run's page: distributions by domain, overrides, near-duplicates, top and bottom."""
    sections = [
        "<h1>Trace value report</h1>",
        f"<p>{text(summary_line(tally))}.</p>",
        _distributions(results),
        _overrides(results),
        _duplicates(results),
        _ends(results),
        f"<h2>Problems</h2>{bullets(str(p) for p in problems)}" if problems else "",
    ]
    return page("knowledgepulse trace value report", sections)


def _distributions(results: Sequence[ScoredItem]) -> str:
    by_domain: dict[str, list[ScoredItem]] = defaultdict(list)
    for result in results:
        by_domain[result.breakdown.domain].append(result)
    rows = ["<h2>Distributions by domain</h2>"]
    for domain in sorted(by_domain):
        group = by_domain[domain]
        rows.append(f"<h3>{text(domain)} ({counted(len(group), 'trace')})</h3><table>")
        heads = ("value", "histogram 0-1", "p10", "p50", "p90", "max")
        rows.append("<tr>" + "".join(f"<th scope='col'>{h}</th>" for h in heads) + "</tr>")
        for name in _DIMENSIONS:
            values = [
                r.breakdown.score if name == "score" else getattr(r.breakdown.dimensions, name)
                for r in group
            ]
            p10, p50, p90 = np.percentile(values, [10, 50, 90])
            rows.append(
                f"<tr><th scope='row'>{name}</th><td>{histogram(values)}</td><td>{p10:.3f}</td>"
                f"<td>{p50:.3f}</td><td>{p90:.3f}</td><td>{max(values):.3f}</td></tr>"
            )
        rows.append("</table>")
    return "\n".join(rows)


def _overrides(results: Sequence[ScoredItem]) -> str:
    fired = Counter(o.name for r in results for o in r.breakdown.overrides)
    total = max(1, len(results))
    rows = [[text(name), str(n), f"{100 * n / total:.1f}%"] for name, n in sorted(fired.items())]
    shown = table(
        ("override", "traces", "share"), rows or [["none fired", "", ""]], row_headers=True
    )
    return f"<h2>Overrides</h2>{shown}"


def _duplicates(results: Sequence[ScoredItem]) -> str:
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for result in results:
        origin = result.breakdown.novelty
        if origin.nearest_id is not None and (origin.similarity or 0) >= DUPLICATE_SIMILARITY:
            a, b = root(result.breakdown.trace_id), root(origin.nearest_id)
            parent[max(a, b)] = min(a, b)
    groups: dict[str, set[str]] = defaultdict(set)
    for key in list(parent):
        groups[root(key)].add(key)
    listed = sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g))
    items = "".join(f"<li>{text(', '.join(g))}</li>" for g in listed)
    return f"<h2>Near-duplicate groups (cosine &ge; {DUPLICATE_SIMILARITY})</h2>" + (
        f"<ol>{items}</ol>" if items else "<p>none</p>"
    )


def _ends(results: Sequence[ScoredItem]) -> str:
    ranked = sorted(results, key=lambda r: (-r.breakdown.score, r.breakdown.trace_id))
    ends = [("Top traces", ranked[:SHOWN_AT_EACH_END])]
    if len(ranked) > SHOWN_AT_EACH_END:
        ends.append(("Bottom traces", ranked[-SHOWN_AT_EACH_END:][::-1]))
    return "".join(
        f"<h2>{title}</h2>" + "".join(f"<pre>{text(r.breakdown.explain())}</pre>" for r in chosen)
        for title, chosen in ends
    )
