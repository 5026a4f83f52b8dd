"""The trace value tables for people: one row per trace, and the score's percentiles.

Rendering only (rich lives here and in ``cli/``); the data is :mod:`knowledgepulse.reports.value`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.text import printable
from knowledgepulse.curation.percentiles import SUMMARY_PERCENTILES
from knowledgepulse.reports.value import RunTally, ScoredTrace

# Novelty that did not come from a comparison is marked, and the caption says what it means.
_SOURCE_MARKS = {"embedding": "", "empty_cache": "°", "no_embedder": "*"}
_SOURCE_LEGEND = {
    "empty_cache": "° first trace: empty cache, N = 0.5",
    "no_embedder": "* no embedder: N = 0.5",
}
# Override names are long; narrow tables show these marks, explained in the caption.
_OVERRIDE_MARKS = {
    "single_thought": "1T",
    "error_recovery_bonus": "+ER",
    "low_tool_diversity": "-TD",
}
WIDE_TABLE_COLUMNS = 110


def to_table(
    results: Sequence[ScoredTrace],
    threshold: float,
    *,
    width: int = WIDE_TABLE_COLUMNS,
) -> Table:
    """A rich table for people: one row per trace, the verdict, the dimensions and overrides.

    Below :data:`WIDE_TABLE_COLUMNS` columns the table drops the profile column, marks
    overrides with short codes and lets long ids wrap, so it stays readable at 80 columns.
    """
    wide = width >= WIDE_TABLE_COLUMNS
    sources = {result.breakdown.novelty.source for result in results}
    legend = [_SOURCE_LEGEND[source] for source in sorted(sources) if source in _SOURCE_LEGEND]
    fired = sorted({o.name for r in results for o in r.breakdown.overrides})
    if not wide:
        legend += [f"{_OVERRIDE_MARKS[name]} {name}" for name in fired]
    table = Table(
        title=f"Trace value (sharing threshold {threshold:g})",
        title_justify="left",
        caption="C complexity, N novelty, D tool diversity, O outcome confidence"
        + "".join(f"; {line}" for line in legend),
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    # Ids are what people copy from the table: keep them whole where there is room.
    longest_id = max((len(r.breakdown.trace_id) for r in results), default=5)
    if wide:
        table.add_column("trace", no_wrap=True, min_width=min(longest_id, 48))
    else:
        table.add_column("trace", overflow="fold", min_width=min(longest_id, 24))
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    table.add_column("share", justify="center", no_wrap=True, min_width=5)
    for name in ("C", "N", "D", "O"):
        table.add_column(name, justify="right", no_wrap=True, min_width=4 if not wide else 5)
    if wide:
        table.add_column("overrides", overflow="fold", min_width=14)
        table.add_column("profile", no_wrap=True, overflow="ellipsis", max_width=16)
    else:
        table.add_column("ovr", no_wrap=True)
    for result in results:
        b = result.breakdown
        d = b.dimensions
        cells: list[Text | str] = [
            Text(printable(b.trace_id, one_line=True)),
            Text(f"{b.score:.3f}", style="bold"),
            Text("yes", style="green") if b.shareable else Text("no", style="dim"),
            f"{d.complexity:.2f}",
            f"{d.novelty:.2f}{_SOURCE_MARKS[b.novelty.source]}",
            f"{d.tool_diversity:.2f}",
            f"{d.outcome_confidence:.2f}",
        ]
        if wide:
            cells += [
                Text(", ".join(o.name for o in b.overrides)),
                Text(printable(b.profile, one_line=True)),
            ]
        else:
            cells.append(" ".join(_OVERRIDE_MARKS[o.name] for o in b.overrides))
        table.add_row(*cells)
    return table


def percentile_table(tally: RunTally) -> Table:
    """The score's percentiles per domain and over all: where a sharing threshold would cut."""
    summary = tally.percentiles()
    table = Table(
        title="Score percentiles by domain (--min-score pNN takes a threshold from them)",
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    columns = ["count", "min", *(f"p{p}" for p in SUMMARY_PERCENTILES), "max"]
    table.add_column("domain", no_wrap=True)
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    rows = list(summary["by_domain"].items())
    if summary["all"] is not None and len(rows) > 1:
        rows.append(("all", summary["all"]))
    for domain, values in rows:
        table.add_row(
            Text(printable(domain, one_line=True)),
            *(str(values[c]) if c == "count" else f"{values[c]:.3f}" for c in columns),
        )
    return table
