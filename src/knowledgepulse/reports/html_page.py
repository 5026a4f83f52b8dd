"""What both HTML reports share: the page shell, the style, escaping, tables and SVG histograms.

A page is one self-contained file: inline CSS and SVG, no script, nothing fetched, so it can be
mailed, archived or opened offline. Every piece of data goes through :func:`text`, which escapes
it for HTML (element content and quoted attributes alike) and shows control characters as
escapes, so an id such as ``<script>`` or ``"onload=`` is shown as written, never run.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

import numpy as np

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;vertical-align:top}
td:first-child,th:first-child{text-align:left}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}
svg rect{fill:#4a78c2}
"""
"""The style every report page starts from; a report adds its own rules after it."""

# Nothing but inline styles: if escaping ever failed, injected script or remote resources
# would still be refused by the browser.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"

# C0 and C1 controls but tab and newline, unpaired surrogates, and the two non-characters.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def text(value: object) -> str:
    r"""Data as HTML text: escaped (quotes too), controls as ``\x1b``, surrogates as U+FFFD."""
    return html.escape(_UNPRINTABLE.sub(_shown, str(value)), quote=True)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def page(title: str, sections: Iterable[str], *, style: str = "", policy: bool = False) -> str:
    """A whole HTML document: the shared style plus ``style``, the title, then the sections.

    Args:
        title: the page's title (plain text; escaped here).
        sections: the body's parts, already HTML.
        style: CSS rules added after :data:`STYLE`.
        policy: add a Content-Security-Policy that refuses everything but inline styles.
    """
    head = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
    if policy:
        head += f"<meta http-equiv='Content-Security-Policy' content=\"{POLICY}\">"
    parts = [
        head,
        f"<title>{text(title)}</title>",
        f"<style>{STYLE}{style}</style></head><body>",
        *sections,
        "</body></html>\n",
    ]
    return "\n".join(parts)


def histogram(
    values: Sequence[float], *, bins: int = 20, bar_width: int = 6, height: int = 30
) -> str:
    """An inline SVG histogram of values in [0, 1]; each bar's tooltip gives its range and count.

    Bars are scaled to the tallest one; with no values every bar is empty.
    """
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=bins, range=(0.0, 1.0))
    top = max(1, int(counts.max()))
    bars = "".join(
        f"<rect x='{i * bar_width}' y='{height - height * c / top:.1f}' "
        f"width='{bar_width - 1}' height='{height * c / top:.1f}'>"
        f"<title>{i / bins:.2f}-{(i + 1) / bins:.2f}: {c}</title></rect>"
        for i, c in enumerate(counts)
    )
    return f"<svg width='{bins * bar_width}' height='{height}' role='img'>{bars}</svg>"


def table(
    head: Sequence[str], rows: Iterable[Sequence[str]], *, css_class: str | None = None
) -> str:
    """A table from a header (plain text) and rows of cells that are already HTML."""
    header = "".join(f"<th>{text(cell)}</th>" for cell in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    attribute = f" class='{text(css_class)}'" if css_class else ""
    return f"<table{attribute}><tr>{header}</tr>{body}</table>"
