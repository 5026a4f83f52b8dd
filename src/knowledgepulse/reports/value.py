"""Trace value reports as data, and their renderings (JSON, JSON Lines, CSV, a rich table).

The report is plain data (:class:`ValueReport`); each renderer is a function of it, testable
without a terminal. Floats are written at full precision, so equal inputs give byte-identical
output; the table rounds for reading.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from knowledgepulse.records import Location, Problem
from knowledgepulse.value.breakdown import ValueBreakdown


@dataclass(frozen=True, slots=True)
class ScoredTrace:
    """A breakdown and where its trace was read from."""

    breakdown: ValueBreakdown
    location: Location


@dataclass(frozen=True, slots=True)
class ValueReport:
    """Everything one ``kp score`` run found: the scored traces and the bad records, in order."""

    results: Sequence[ScoredTrace]
    problems: Sequence[Problem]
    threshold: float

    @property
    def invalid_records(self) -> int:
        """How many records were rejected (a record may have several problems)."""
        return len(
            {
                (
                    p.location.file,
                    p.location.index,
                    p.location.line if p.location.index is None else None,
                )
                for p in self.problems
            }
        )

    def summary(self) -> dict[str, Any]:
        """Counts for the whole run."""
        sources = Counter(result.breakdown.novelty.source for result in self.results)
        return {
            "scored": len(self.results),
            "invalid": self.invalid_records,
            "shareable": sum(1 for result in self.results if result.breakdown.shareable),
            "threshold": self.threshold,
            "novelty_sources": {source: sources[source] for source in sorted(sources)},
        }


def row(result: ScoredTrace) -> dict[str, Any]:
    """One trace's JSON row: the breakdown, then where it was read from."""
    return {
        **result.breakdown.to_dict(),
        "file": result.location.file,
        "line": result.location.line,
    }


def to_jsonl(report: ValueReport) -> str:
    """One JSON object a line, one line per valid trace, in input order."""
    return "".join(json.dumps(row(result), ensure_ascii=False) + "\n" for result in report.results)


def to_json(report: ValueReport) -> str:
    """One JSON document: ``summary``, ``traces`` (rows in input order) and ``problems``."""
    document = {
        "summary": report.summary(),
        "traces": [row(result) for result in report.results],
        "problems": [problem.to_dict() for problem in report.problems],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


CSV_COLUMNS = (
    "id",
    "file",
    "line",
    "score",
    "shareable",
    "domain",
    "profile",
    "complexity",
    "novelty",
    "tool_diversity",
    "outcome_confidence",
    "weighted_sum",
    "overrides",
    "novelty_source",
    "nearest_trace",
    "nearest_similarity",
)


def to_csv(report: ValueReport) -> str:
    """A CSV table, one row per valid trace; overrides joined with ``;``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in report.results:
        data = row(result)
        flat = {**data, **data["dimensions"], "overrides": ";".join(data["overrides"])}
        writer.writerow({column: flat[column] for column in CSV_COLUMNS})
    return buffer.getvalue()


# Novelty that did not come from a comparison is marked, and the caption says what it means.
_SOURCE_MARKS = {"embedding": "", "empty_cache": "°", "no_embedder": "*"}
_SOURCE_LEGEND = {
    "empty_cache": "° first trace: empty cache, N = 0.5",
    "no_embedder": "* no embedder: N = 0.5",
}


def to_table(report: ValueReport) -> Table:
    """A rich table for people: one row per trace, the verdict, the dimensions and overrides."""
    sources = {result.breakdown.novelty.source for result in report.results}
    legend = [_SOURCE_LEGEND[source] for source in sorted(sources) if source in _SOURCE_LEGEND]
    table = Table(
        title=f"Trace value (sharing threshold {report.threshold:g})",
        title_justify="left",
        caption="C complexity, N novelty, D tool diversity, O outcome confidence"
        + "".join(f"; {line}" for line in legend),
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    # Ids are what people copy from the table: keep them whole, squeeze the other columns.
    longest_id = max((len(r.breakdown.trace_id) for r in report.results), default=5)
    table.add_column("trace", no_wrap=True, min_width=min(longest_id, 48))
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    table.add_column("share", justify="center", no_wrap=True, min_width=5)
    for name in ("C", "N", "D", "O"):
        table.add_column(name, justify="right", no_wrap=True, min_width=5)
    table.add_column("overrides", overflow="fold", min_width=14)
    table.add_column("profile", no_wrap=True, overflow="ellipsis", max_width=16)
    for result in report.results:
        b = result.breakdown
        d = b.dimensions
        table.add_row(
            b.trace_id,
            Text(f"{b.score:.3f}", style="bold"),
            Text("yes", style="green") if b.shareable else Text("no", style="dim"),
            f"{d.complexity:.2f}",
            f"{d.novelty:.2f}{_SOURCE_MARKS[b.novelty.source]}",
            f"{d.tool_diversity:.2f}",
            f"{d.outcome_confidence:.2f}",
            ", ".join(o.name for o in b.overrides),
            b.profile,
        )
    return table


def summary_line(report: ValueReport) -> str:
    """One line for stderr: how many were scored, shareable and rejected."""
    summary = report.summary()
    parts = [
        f"{summary['scored']} trace{'s' if summary['scored'] != 1 else ''} scored",
        f"{summary['shareable']} reach{'es' if summary['shareable'] == 1 else ''} "
        f"the sharing threshold {report.threshold:g}",
    ]
    if summary["invalid"]:
        parts.append(
            f"{summary['invalid']} invalid record{'s' if summary['invalid'] != 1 else ''} skipped"
        )
    return "; ".join(parts)
