"""Trace value reports as data, and their renderings (JSON, JSON Lines, CSV, a rich table).

Reports stream: a writer takes each scored trace as it comes and a :class:`RunTally` counts for
the summary, so a run over a million traces holds a few counters, not a million rows (the table,
meant for people, keeps its rows). :class:`ValueReport` and the ``to_*`` functions render a
finished run in one call, for library users.

Numbers are written rounded to 12 decimal places, which removes binary float noise
(``0.7240000000000001`` is written ``0.724``) and keeps far more precision than any weight or
score has; equal inputs still give byte-identical output. The table rounds further for reading.
"""

from __future__ import annotations

import csv
import json
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

import orjson
from rich import box
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.text import counted
from knowledgepulse.curation.percentiles import SUMMARY_PERCENTILES, domain_percentiles
from knowledgepulse.records import Location, Problem
from knowledgepulse.value.breakdown import ValueBreakdown

DECIMALS = 12


@dataclass(frozen=True, slots=True)
class ScoredTrace:
    """A breakdown and where its trace was read from."""

    breakdown: ValueBreakdown
    location: Location


@dataclass(slots=True)
class RunTally:
    """The counts of a run, kept as results and problems stream past.

    Attributes:
        threshold: the sharing threshold.
        scored: traces scored.
        shareable: traces that reach the threshold.
        invalid: records rejected (a record with several problems counts once).
        warnings: warnings (e.g. a repeated trace id); they reject nothing.
        novelty_sources: how many traces got their novelty from each source.
        scores_by_domain: every score, by domain, for the percentiles (8 bytes a trace).
    """

    threshold: float
    scored: int = 0
    shareable: int = 0
    invalid: int = 0
    warnings: int = 0
    novelty_sources: Counter[str] = field(default_factory=Counter)
    scores_by_domain: dict[str, array[float]] = field(default_factory=dict)
    _last_invalid: tuple[object, ...] | None = None

    def add(self, result: ScoredTrace) -> None:
        """Count one scored trace."""
        self.scored += 1
        self.shareable += result.breakdown.shareable
        self.novelty_sources[result.breakdown.novelty.source] += 1
        domain = result.breakdown.domain
        if domain not in self.scores_by_domain:
            self.scores_by_domain[domain] = array("d")
        self.scores_by_domain[domain].append(result.breakdown.score)

    def add_problem(self, problem: Problem) -> None:
        """Count one problem: a warning, or (once per record) an invalid record."""
        if problem.warning:
            self.warnings += 1
            return
        # A record's problems arrive together, so comparing with the last one counts records.
        location = problem.location
        key = (location.file, location.index, location.line if location.index is None else None)
        if key != self._last_invalid:
            self.invalid += 1
            self._last_invalid = key

    def summary(self) -> dict[str, Any]:
        """Counts for the whole run."""
        return {
            "scored": self.scored,
            "invalid": self.invalid,
            "warnings": self.warnings,
            "shareable": self.shareable,
            "threshold": self.threshold,
            "novelty_sources": {s: self.novelty_sources[s] for s in sorted(self.novelty_sources)},
            "percentiles": domain_percentiles(self.scores_by_domain),
        }


def tidy(value: Any) -> Any:
    """``value`` with every float rounded to :data:`DECIMALS` places (no binary noise)."""
    # Exact types, and leaves handled inline: this runs for every number of every row.
    kind = type(value)
    if kind is dict:
        return {
            key: item
            if type(item) in _PLAIN
            else _rounded(item)
            if type(item) is float
            else tidy(item)
            for key, item in value.items()
        }
    if kind is list or kind is tuple:
        return [
            item if type(item) in _PLAIN else _rounded(item) if type(item) is float else tidy(item)
            for item in value
        ]
    if kind is float:
        return _rounded(value)
    return value


_PLAIN = frozenset({str, int, bool, type(None)})
_SCALE = 10.0**DECIMALS


def _rounded(number: float) -> float:
    # round(x, 12) goes through a decimal string (about 1 µs); for the scores, weights and
    # similarities of a row (|x| <= 1, so x * 1e12 is within 1e-4 of an integer below 2**53)
    # the nearest double to k / 1e12 is the same kind of clean number, twenty times faster.
    if -1.0 <= number <= 1.0:
        return round(number * _SCALE) / _SCALE
    return round(number, DECIMALS)


def row(result: ScoredTrace) -> dict[str, Any]:
    """One trace's JSON row: the breakdown, then where it was read from."""
    return {
        **tidy(result.breakdown.to_dict()),
        "file": result.location.file,
        "line": result.location.line,
    }


class ReportWriter(Protocol):
    """Writes a report as the run goes: each result, then the ending."""

    def write(self, result: ScoredTrace) -> None:
        """Write one scored trace."""

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Finish the report (summary, problems) once every result is written."""


class JsonLinesWriter:
    """One JSON object a line, one line per valid trace, in input order."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, result: ScoredTrace) -> None:
        """Write one trace's line."""
        self._stream.write(dumps(row(result)) + "\n")

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Nothing to add: problems and the summary go to stderr."""


class JsonWriter:
    """One JSON document: ``traces`` (one row a line, in input order), ``problems``, ``summary``.

    The summary comes last because it is known last: the rows are written as they are scored.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._first = True
        stream.write('{\n  "traces": [')

    def write(self, result: ScoredTrace) -> None:
        """Write one trace's row."""
        self._stream.write(("\n    " if self._first else ",\n    ") + dumps(row(result)))
        self._first = False

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Close the list, then the problems and the summary."""
        stream = self._stream
        stream.write("\n  ],\n" if not self._first else "],\n")
        items = ",\n    ".join(dumps(problem.to_dict()) for problem in problems)
        stream.write(f'  "problems": [\n    {items}\n  ],\n' if items else '  "problems": [],\n')
        summary = dumps(tidy(tally.summary()))
        stream.write(f'  "summary": {summary}\n}}\n')


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
    "novelty_windows",
    "novelty_capped",
)


class CsvWriter:
    """A CSV table, one row per valid trace; overrides joined with ``;``, booleans lower-case."""

    def __init__(self, stream: IO[str]) -> None:
        self._writer = csv.DictWriter(stream, fieldnames=CSV_COLUMNS, lineterminator="\n")
        self._writer.writeheader()

    def write(self, result: ScoredTrace) -> None:
        """Write one trace's row."""
        data = row(result)
        novelty = data.get("inputs", {}).get("novelty", {})
        flat = {
            **data,
            **data["dimensions"],
            "overrides": ";".join(data["overrides"]),
            "novelty_windows": novelty.get("windows_embedded"),
            "novelty_capped": novelty.get("capped"),
        }
        self._writer.writerow({column: _csv_cell(flat[column]) for column in CSV_COLUMNS})

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Nothing to add: problems and the summary go to stderr."""


def _csv_cell(value: Any) -> Any:
    # JSON's spelling, which every CSV reader's users expect more than Python's True/False.
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def dumps(data: Any) -> str:
    """Compact JSON, UTF-8 as is; orjson's speed, the standard library's reach as a fallback."""
    try:
        return orjson.dumps(data).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits, a lone surrogate
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class TableCollector:
    """Keeps the rows for :func:`to_table` (a table is for people, so it is rendered at the end)."""

    def __init__(self) -> None:
        self.results: list[ScoredTrace] = []

    def write(self, result: ScoredTrace) -> None:
        """Keep one trace's row."""
        self.results.append(result)

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Nothing to do: the caller renders :attr:`results`."""


def annotated_line(document: dict[str, Any], score: float) -> str:
    """A trace document with ``metadata.quality_score`` set, as one JSON line."""
    metadata = document.get("metadata")
    # The record was parsed for this run alone, so it can be changed in place (no deep copy,
    # which would recurse as deep as the document nests).
    if isinstance(metadata, dict):
        metadata["quality_score"] = _rounded(score)
    return dumps(document)


@dataclass(frozen=True, slots=True)
class ValueReport:
    """Everything one ``kp score`` run found: the scored traces and the problems, in order."""

    results: Sequence[ScoredTrace]
    problems: Sequence[Problem]
    threshold: float

    def tally(self) -> RunTally:
        """The run's counts."""
        tally = RunTally(self.threshold)
        for result in self.results:
            tally.add(result)
        for problem in self.problems:
            tally.add_problem(problem)
        return tally

    @property
    def invalid_records(self) -> int:
        """How many records were rejected (a record may have several problems)."""
        return self.tally().invalid

    def summary(self) -> dict[str, Any]:
        """Counts for the whole run."""
        return self.tally().summary()


def render(report: ValueReport, writer_type: type[JsonLinesWriter | JsonWriter | CsvWriter]) -> str:
    """A finished report rendered by one of the streaming writers."""
    import io  # noqa: PLC0415 - only the one-call renderers need a string buffer

    buffer = io.StringIO()
    writer = writer_type(buffer)
    for result in report.results:
        writer.write(result)
    writer.close(report.tally(), report.problems)
    return buffer.getvalue()


def to_jsonl(report: ValueReport) -> str:
    """One JSON object a line, one line per valid trace, in input order."""
    return render(report, JsonLinesWriter)


def to_json(report: ValueReport) -> str:
    """One JSON document: ``traces`` (rows in input order), ``problems`` and ``summary``."""
    return render(report, JsonWriter)


def to_csv(report: ValueReport) -> str:
    """A CSV table, one row per valid trace."""
    return render(report, CsvWriter)


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
    results: ValueReport | Sequence[ScoredTrace],
    threshold: float | None = None,
    *,
    width: int = WIDE_TABLE_COLUMNS,
) -> Table:
    """A rich table for people: one row per trace, the verdict, the dimensions and overrides.

    Below :data:`WIDE_TABLE_COLUMNS` columns the table drops the profile column, marks
    overrides with short codes and lets long ids wrap, so it stays readable at 80 columns.
    """
    if isinstance(results, ValueReport):
        threshold = results.threshold if threshold is None else threshold
        results = results.results
    wide = width >= WIDE_TABLE_COLUMNS
    sources = {result.breakdown.novelty.source for result in results}
    legend = [_SOURCE_LEGEND[source] for source in sorted(sources) if source in _SOURCE_LEGEND]
    fired = sorted({o.name for r in results for o in r.breakdown.overrides})
    if not wide:
        legend += [f"{_OVERRIDE_MARKS[name]} {name}" for name in fired]
    table = Table(
        title=f"Trace value (sharing threshold {threshold if threshold is not None else 0.75:g})",
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
            Text(b.trace_id),
            Text(f"{b.score:.3f}", style="bold"),
            Text("yes", style="green") if b.shareable else Text("no", style="dim"),
            f"{d.complexity:.2f}",
            f"{d.novelty:.2f}{_SOURCE_MARKS[b.novelty.source]}",
            f"{d.tool_diversity:.2f}",
            f"{d.outcome_confidence:.2f}",
        ]
        if wide:
            cells += [Text(", ".join(o.name for o in b.overrides)), Text(b.profile)]
        else:
            cells.append(" ".join(_OVERRIDE_MARKS[o.name] for o in b.overrides))
        table.add_row(*cells)
    return table


def summary_line(report: ValueReport | RunTally) -> str:
    """One line for stderr: how many were scored, shareable, rejected, and warned about."""
    tally = report.tally() if isinstance(report, ValueReport) else report
    parts = [
        f"{counted(tally.scored, 'trace')} scored",
        f"{tally.shareable} reach{'es' if tally.shareable == 1 else ''} "
        f"the sharing threshold {tally.threshold:g}",
    ]
    if tally.invalid:
        parts.append(f"{counted(tally.invalid, 'invalid record')} skipped")
    if tally.warnings:
        parts.append(counted(tally.warnings, "warning"))
    return "; ".join(parts)


def percentile_table(tally: RunTally) -> Table:
    """The score's percentiles per domain and over all: where a sharing threshold would cut."""
    summary = domain_percentiles(tally.scores_by_domain)
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
            Text(domain),
            *(str(values[c]) if c == "count" else f"{values[c]:.3f}" for c in columns),
        )
    return table
