"""The trace value tables for people: one row per trace, and the score's percentiles."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.text import printable
from knowledgepulse.curation.percentiles import SUMMARY_PERCENTILES
from knowledgepulse.reports.value import RunTally
from knowledgepulse.value.breakdown import ValueBreakdown, score_text
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.profiles import ProfileRegistry, weight_text

# Novelty that did not come from a comparison is marked, and the caption says what it means.
_SOURCE_MARKS = {"embedding": "", "empty_cache": "°", "no_embedder": "*"}
_SOURCE_LEGEND = {
    ("empty_cache", False): "° first trace: empty cache, N = 0.5",
    ("empty_cache", True): "° no other trace in the cache, only its own vector: N = 0.5",
    ("no_embedder", False): "* no embedder: N = 0.5",
}
# Override names are long; narrow tables show these marks, explained in the caption.
_OVERRIDE_MARKS = {
    "single_thought": "1T",
    "error_recovery_bonus": "+ER",
    "low_tool_diversity": "-TD",
}
WIDE_TABLE_COLUMNS = 110
# What the wide table's other columns take: score, share, C N D O, overrides (the longest name;
# several wrap at their commas), profile (16 at most), two spaces apart, and the edges.
_WIDE_OTHERS = 5 + 5 + 4 * 5 + 20 + 16 + 8 * 2 + 2


def to_table(
    results: Sequence[ScoredItem], threshold: float, *, width: int = WIDE_TABLE_COLUMNS
) -> Table:
    """A rich table for people: one row per trace, the verdict, the dimensions and overrides.

    From :data:`WIDE_TABLE_COLUMNS` columns, when the longest id fits beside them, the table
    names the overrides and the profile. Otherwise it drops the profile column, marks overrides
    with short codes and packs its columns a space apart, so that at 80 columns an id of up to
    43 characters stays whole on its line; only a longer one is folded.
    """
    longest_id = max((len(r.breakdown.trace_id) for r in results), default=5)
    wide = width >= WIDE_TABLE_COLUMNS and longest_id <= width - _WIDE_OTHERS
    origins = (result.breakdown.novelty for result in results)
    sources = sorted({(origin.source, origin.only_itself) for origin in origins})
    legend = [_SOURCE_LEGEND[source] for source in sources if source in _SOURCE_LEGEND]
    if not wide:
        fired = sorted({o.name for r in results for o in r.breakdown.overrides})
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
        padding=(0, 1) if wide else (0, 0),
    )
    # Ids are what people copy: whole when wide (there is room, see above); narrow, every other
    # column keeps its width (no_wrap) and the id column alone gives way, so an id is folded
    # only when the line cannot hold it whole.
    if wide:
        table.add_column("trace", no_wrap=True, min_width=longest_id)
    else:
        table.add_column("trace", overflow="fold")
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    table.add_column("share", justify="center", no_wrap=True, min_width=5)
    for name in ("C", "N", "D", "O"):
        table.add_column(name, justify="right", no_wrap=True, min_width=4 if not wide else 5)
    if wide:
        table.add_column("overrides", overflow="fold", min_width=20)
        table.add_column("profile", no_wrap=True, overflow="ellipsis", max_width=16, min_width=7)
    else:
        table.add_column("ovr", no_wrap=True)
    for result in results:
        b, d = result.breakdown, result.breakdown.dimensions
        cells: list[Text | str] = [
            Text(printable(b.trace_id, one_line=True)),
            Text(score_text(b.score, b.threshold, 3), style="bold"),
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


def percentile_table(tally: RunTally, *, width: int = WIDE_TABLE_COLUMNS) -> Table:
    """The score's percentiles per domain and over all: where a sharing threshold would cut.

    The numbers are never cut: below :data:`WIDE_TABLE_COLUMNS` columns they are packed a space
    apart, and a domain name longer than the line leaves room for ends in an ellipsis.
    """
    summary = tally.percentiles()
    wide = width >= WIDE_TABLE_COLUMNS
    table = Table(
        title="Score percentiles by domain (--min-score pNN takes a threshold from them)",
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1) if wide else (0, 0),
    )
    columns = ["count", "min", *(f"p{p}" for p in SUMMARY_PERCENTILES), "max"]
    rows = list(summary["by_domain"].items())
    if summary["all"] is not None and len(rows) > 1:
        rows.append(("all", summary["all"]))
    cells = [
        [str(values[c]) if c == "count" else f"{values[c]:.3f}" for c in columns]
        for _, values in rows
    ]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    # What the numbers leave: the edges, a space (two when wide) between columns.
    room = width - 2 - sum(widths) - (3 if wide else 1) * len(columns)
    table.add_column("domain", no_wrap=True, overflow="ellipsis", max_width=max(6, room))
    for column, column_width in zip(columns, widths, strict=True):
        table.add_column(column, justify="right", no_wrap=True, min_width=column_width)
    for (domain, _), row in zip(rows, cells, strict=True):
        table.add_row(Text(printable(domain, one_line=True)), *row)
    return table


def print_scores(
    console: Console, results: Sequence[ScoredItem], tally: RunTally, *, explain: bool
) -> None:
    """The scores table, the percentiles (of two or more), and each explanation if asked."""
    console.print(to_table(results, tally.threshold, width=console.width))
    if len(results) > 1:
        console.print(percentile_table(tally, width=console.width))
    if explain:
        for result in results:
            console.print()
            console.print(explained(result.breakdown), markup=False, highlight=False)


def explained(breakdown: ValueBreakdown) -> str:
    """A score's explanation for a terminal: the id that opens it kept on its line, escaped."""
    text, head = breakdown.explain(), breakdown.trace_id
    if text.startswith(head):  # an id may hold a newline ("kp:trace:\n" is valid)
        return printable(head, one_line=True) + printable(text[len(head) :])
    return printable(text)


def profiles_table(registry: ProfileRegistry) -> Table:
    """The weight profiles: a row each, the weight of each dimension."""
    table = Table(header_style="bold", show_edge=False, pad_edge=False)
    for column in ("profile", "complexity", "novelty", "tool_diversity", "outcome_confidence"):
        table.add_column(column, justify="left" if column == "profile" else "right")
    for name, weights in registry.items():
        table.add_row(Text(printable(name, one_line=True)), *map(weight_text, weights.as_tuple()))
    return table
