"""Trace value reports as data, and their streaming renderings (JSON, JSON Lines, CSV).

A writer takes each scored item as it comes and a :class:`RunTally` counts for the summary, so
a run holds a few counters and 8 bytes a score, not its rows. Numbers are rounded to 12 decimal
places: no binary noise (``0.7240000000000001`` is ``0.724``), far more precision than any score.
"""

from __future__ import annotations

import csv
import io
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from knowledgepulse._util.text import counted
from knowledgepulse.records import Problem
from knowledgepulse.records.json_values import json_text
from knowledgepulse.value.item import ScoredItem

if TYPE_CHECKING:
    from knowledgepulse.novelty.cache.vector_cache import CacheCounts

DECIMALS = 12
_SCALE = 10.0**DECIMALS


@dataclass(slots=True)
class RunTally:
    """The counts of a run, kept as results and problems stream past.

    ``invalid`` counts records rejected (a record with several problems once); ``warnings``
    reject nothing; ``scores`` holds every score by domain for the percentiles (8 bytes a trace).
    """

    threshold: float
    scored: int = 0
    shareable: int = 0
    invalid: int = 0
    warnings: int = 0
    novelty_sources: Counter[str] = field(default_factory=Counter)
    scores: dict[str, array[float]] = field(default_factory=dict)
    _last_invalid: tuple[object, ...] | None = None

    def add(self, result: ScoredItem) -> None:
        """Count one scored trace."""
        self.scored += 1
        self.shareable += result.breakdown.shareable
        self.novelty_sources[result.breakdown.novelty.source] += 1
        self.scores.setdefault(result.breakdown.domain, array("d")).append(result.breakdown.score)

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
            "percentiles": self.percentiles(),
        }

    def percentiles(self) -> dict[str, Any]:
        """The scores' percentiles, ``all`` and ``by_domain`` (see ``domain_percentiles``)."""
        # curation brings numpy, which a run that writes no summary does not need.
        from knowledgepulse.curation.percentiles import domain_percentiles  # noqa: PLC0415

        return domain_percentiles(self.scores)


def tidy(value: Any) -> Any:
    """``value`` with every float rounded to :data:`DECIMALS` places (no binary noise)."""
    if type(value) is dict:
        return {key: tidy(item) for key, item in value.items()}
    if type(value) is list or type(value) is tuple:
        return [tidy(item) for item in value]
    return _rounded(value)


def _rounded(number: float) -> float:
    # As tidy treats a leaf: only a float, exactly (not an int, nor a subclass), is rounded.
    if type(number) is not float:
        return number
    # round(x, 12) goes through a decimal string (about 1 µs); for the scores, weights and
    # similarities of a row (|x| <= 1, so x * 1e12 is within 1e-4 of an integer below 2**53)
    # the nearest double to k / 1e12 is the same kind of clean number, twenty times faster.
    if -1.0 <= number <= 1.0:
        return round(number * _SCALE) / _SCALE
    return round(number, DECIMALS)


def row(result: ScoredItem, *, explain: bool = False) -> dict[str, Any]:
    """One trace's JSON row: the breakdown, where it was read from, and the explanation if asked.

    Rounded as it is built, as :func:`tidy` would (tidying after took a seventh of a run).
    """
    data = {
        **result.breakdown.to_dict(rounding=_rounded),
        "file": result.location.file,
        "line": result.location.line,
    }
    if explain:
        data["explanation"] = result.breakdown.explain()
    return data


class ReportWriter:
    """Writes a report as the run goes: each result, then the ending."""

    def write(self, result: ScoredItem) -> None:
        """Write one scored trace."""
        raise NotImplementedError

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Finish the report once every result is written (by default nothing: see stderr)."""


class TableCollector(ReportWriter):
    """Keeps the rows for the table, which is for people and so rendered at the end."""

    def __init__(self) -> None:
        self.results: list[ScoredItem] = []

    def write(self, result: ScoredItem) -> None:
        """Keep one trace's row."""
        self.results.append(result)


class JsonLinesWriter(ReportWriter):
    """One JSON object a line, one line per valid trace, in input order.

    ``explain``: each row has the breakdown in words too (``explanation``).
    """

    def __init__(self, stream: IO[str], *, explain: bool = False) -> None:
        self._stream = stream
        self._explain = explain

    def write(self, result: ScoredItem) -> None:
        """Write one trace's line."""
        self._stream.write(json_text(row(result, explain=self._explain)) + "\n")


class JsonWriter(ReportWriter):
    """One JSON document: ``traces`` (one row a line, in input order), ``problems``, ``summary``.

    The summary comes last because it is known last: the rows are written as they are scored.
    """

    def __init__(self, stream: IO[str], *, explain: bool = False) -> None:
        self._stream = stream
        self._explain = explain
        self._first = True
        stream.write('{\n  "traces": [')

    def write(self, result: ScoredItem) -> None:
        """Write one trace's row."""
        line = json_text(row(result, explain=self._explain))
        self._stream.write(("\n    " if self._first else ",\n    ") + line)
        self._first = False

    def close(self, tally: RunTally, problems: Sequence[Problem]) -> None:
        """Close the list, then the problems and the summary."""
        stream = self._stream
        stream.write("\n  ],\n" if not self._first else "],\n")
        items = ",\n    ".join(json_text(problem.to_dict()) for problem in problems)
        stream.write(f'  "problems": [\n    {items}\n  ],\n' if items else '  "problems": [],\n')
        summary = json_text(tidy(tally.summary()))
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
    "domain_source",
    "confidence_source",
)


# A spreadsheet opening a CSV file runs a cell that starts with one of these as a formula
# (OWASP, "CSV Injection"): a trace's domain or a file's name, which whoever made it chose.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(value: object) -> object:
    """A CSV cell a spreadsheet shows as written: text that could start a formula gets a ``'``.

    As OWASP advises (a leading quote: a spreadsheet shows the rest as text). Numbers are not
    text, so a negative score stays a number; a number written as text (``-0.5``) and a lone
    ``-`` (standard input's name) start no formula and are kept as they are.
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or value == "-":
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


class CsvWriter(ReportWriter):
    """A CSV table, one row per valid trace; overrides joined with ``;``, booleans lower-case.

    Text that a spreadsheet would run as a formula is written with a leading ``'``
    (:func:`spreadsheet_text`); the JSON forms keep every value as it is.
    """

    def __init__(self, stream: IO[str]) -> None:
        # csv quotes a field for the characters of its line ending only (Python 3.11): with "\n",
        # a lone "\r" in an id or a domain went unquoted, and readers split the row there. So a
        # row is written with "\r\n", which quotes both, and ends with "\n" as before.
        self._stream, self._row = stream, io.StringIO()
        self._writer = csv.DictWriter(self._row, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
        self._writer.writeheader()
        self._flush()

    def _flush(self) -> None:
        self._stream.write(self._row.getvalue().removesuffix("\r\n") + "\n")
        self._row.seek(0)
        self._row.truncate()

    def write(self, result: ScoredItem) -> None:
        """Write one trace's row."""
        data = row(result)
        novelty = data.get("inputs", {}).get("novelty", {})
        flat = {
            **data,
            **data["dimensions"],
            "overrides": ";".join(data["overrides"]),
            "novelty_windows": novelty.get("windows_embedded"),
            "novelty_capped": novelty.get("capped"),
            "confidence_source": data["inputs"]["outcome_confidence"]["confidence_source"],
        }
        # Booleans in JSON's spelling, which CSV readers expect more than Python's True/False.
        cells = {
            c: str(flat[c]).lower() if type(flat[c]) is bool else spreadsheet_text(flat[c])
            for c in CSV_COLUMNS
        }
        self._writer.writerow(cells)
        self._flush()


def annotated_document(document: dict[str, Any], score: float) -> dict[str, Any]:
    """A trace document with ``metadata.quality_score`` set to ``score`` (rounded), keys in order.

    A new dict, sharing every value but the metadata with ``document``, which is not changed.
    """
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return document
    return {**document, "metadata": {**metadata, "quality_score": _rounded(score)}}


def annotated_line(document: dict[str, Any], score: float) -> str:
    """A trace document with ``metadata.quality_score`` set, as one JSON line."""
    return json_text(annotated_document(document, score))


def summary_line(tally: RunTally, written_back: int = 0) -> str:
    """One line for stderr: how many were scored, shareable, rejected, and warned about.

    ``written_back``: the dataset rows among the invalid records written back with their
    ``kp_error`` (:func:`unread_parts`).
    """
    parts = [
        f"{counted(tally.scored, 'trace')} scored",
        f"{tally.shareable:,} reach{'es' if tally.shareable == 1 else ''} "
        f"the sharing threshold {tally.threshold:g}",
        *unread_parts(tally, written_back),
    ]
    return "; ".join(parts)


def unread_parts(tally: RunTally, written_back: int = 0) -> list[str]:
    """What reading met, for every command's summary: ``["1 invalid record skipped", ...]``.

    Then ``"2 rows that gave no trace written back with kp_error"`` and ``"3 warnings"``: a
    user counts each record lost or warned about in the summary, whichever command read it.
    Each record that gave no trace is said once: the dataset rows written back with their
    ``kp_error`` are among the ``invalid`` records, and not also said to be skipped.
    """
    parts = []
    if skipped := max(tally.invalid - written_back, 0):
        parts.append(f"{counted(skipped, 'invalid record')} skipped")
    if written_back:
        parts.append(
            f"{counted(written_back, 'row')} that gave no trace written back with kp_error"
        )
    if tally.warnings:
        parts.append(counted(tally.warnings, "warning"))
    return parts


def problem_tally(problems: Iterable[Problem]) -> RunTally:
    """The invalid records (a record's problems counted once) and warnings among ``problems``."""
    tally = RunTally(0.0)
    for problem in problems:
        tally.add_problem(problem)
    return tally


def validation_report(valid: int, tally: RunTally, problems: Sequence[Problem]) -> dict[str, Any]:
    """``kp validate``'s JSON report: the valid and invalid counts, warnings and each problem."""
    return {
        "valid": valid,
        "invalid": tally.invalid,
        "warnings": tally.warnings,
        "problems": [problem.to_dict() for problem in problems],
    }


def validation_line(valid: int, tally: RunTally) -> str:
    """``5 valid traces; 1 invalid record; 2 warnings``."""
    message = counted(valid, "valid trace")
    if tally.invalid:
        message += f"; {counted(tally.invalid, 'invalid record')}"
    if tally.warnings:
        message += f"; {counted(tally.warnings, 'warning')}"
    return message


@dataclass(frozen=True, slots=True)
class CacheChange:
    """What a run did to its cache: what it holds after, what the run added and evicted."""

    live: int
    """Vectors that count at the end of the run."""
    expired: int
    """Vectors past the TTL still in the cache: they no longer count, and go first."""
    capacity: int
    added: int
    """Vectors the run added (a trace held already under its id adds none)."""
    evicted: int
    """Vectors the run's additions pushed out of a full cache (the oldest)."""
    saved_meanwhile: int = 0
    """Vectors other processes saved into the cache file while the run scored, which the traces
    scored before them were not compared with (:attr:`CacheCounts.saved_meanwhile`)."""

    @classmethod
    def of(cls, before: CacheCounts | None, after: CacheCounts, capacity: int) -> CacheChange:
        """The change from ``before`` (``None``: a new cache) to ``after``."""
        held_before = 0 if before is None else before.held
        added = after.added - (0 if before is None else before.added)
        return cls(
            live=after.live,
            expired=after.expired,
            capacity=capacity,
            added=added,
            evicted=max(0, held_before + added - after.held),
            saved_meanwhile=after.saved_meanwhile
            - (0 if before is None else before.saved_meanwhile),
        )


def cache_lines(
    cache: str,
    *,
    saved: bool,
    already_cached: int,
    dropped: int = 0,
    cache_size: int | None = None,
    frozen: bool = False,
    change: CacheChange | None = None,
) -> list[str]:
    """What to say of a run's cache: what a smaller size dropped, unsaved, held now.

    ``dropped``: the oldest vectors a ``cache_size`` below the saved cache's count left out.
    """
    lines: list[str] = []
    if dropped:
        fate = "left out of this run; the file keeps them" if frozen else "dropped from the file"
        lines.append(
            f"kp: {cache} held {counted(dropped + (cache_size or 0), 'vector')}; --cache-size "
            f"{cache_size} keeps the newest {cache_size}, so the {dropped} oldest are {fate}"
        )
    if not saved:
        lines.append(f"kp: the cache was not saved to {cache}: no embedder was available")
    if already_cached:
        lines.append(
            f"kp: {counted(already_cached, 'trace')} of this input "
            f"{'was' if already_cached == 1 else 'were'} already in {cache} (by id): "
            "each was compared with the other vectors, not with its own"
        )
    if change is not None:
        lines.append(f"kp: {cache} {_cache_change(change, saved=saved and not frozen)}")
    if change is not None and change.saved_meanwhile:
        lines.append(
            f"kp: another run saved {counted(change.saved_meanwhile, 'vector')} into {cache} "
            "while this one scored; the traces scored before that were not compared with them, "
            "so these scores are not those of the two runs one after the other (to get those, "
            "run them in turn)"
        )
    return lines


def _cache_change(change: CacheChange, *, saved: bool) -> str:
    """``holds 8 of 1000 vectors: 8 added by this run``, with what was evicted and expired."""
    said = f"holds {change.live} of {counted(change.capacity, 'vector')}"
    if not saved:
        said += "; nothing was added"
    else:
        said += f": {change.added} added by this run"
        if change.evicted:
            said += f", {change.evicted} of the oldest evicted to make room (--cache-size)"
    if change.expired:
        said += f"; {change.expired} more expired (older than --ttl): they no longer count"
    return said
