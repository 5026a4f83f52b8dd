"""Scoring files in one call: read, redact, score, and write a report or the rows back.

What ``kp score`` does, as a library call: every setting a user can get wrong (a conflict, a
destination, a ``frozen`` cache that does not exist) is refused before the first record is
read; then the items stream through a :class:`~knowledgepulse.runs.scoring.ScoreRun` (its
cache saved after a clean run) into the writer, a batch at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Unpack

from knowledgepulse._util.atomic import check_destination, same_name
from knowledgepulse.errors import CacheFileError, OutputError, ParameterConflictError, Setting
from knowledgepulse.records.readers import input_files
from knowledgepulse.reports.redaction import redaction_tail
from knowledgepulse.reports.value import RunTally, cache_lines, summary_line
from knowledgepulse.reports.value_formats import (
    EXPLAINED_FORMATS,
    SCORE_FORMATS,
    check_report_name,
)
from knowledgepulse.runs.embedder import ModelSettings, check_model, run_scorer
from knowledgepulse.runs.problems import ProblemDigest, ProblemSink
from knowledgepulse.runs.read import read_items, valid_items
from knowledgepulse.runs.redaction import (
    messages_level,
    redactor_of,
    unread_rows,
    written_items,
)
from knowledgepulse.runs.scoring import (
    Order,
    ScoreRun,
    min_score_of,
    tallied,
    tell_unweighed_domain,
    threshold_of,
)
from knowledgepulse.runs.task_field import task_column, told_when_no_task
from knowledgepulse.runs.write import WriteForm, rows_form, scores_writer, target_of
from knowledgepulse.value.item import ScoredItem
from knowledgepulse.value.profiles import misspelt_profiles

if TYPE_CHECKING:
    from knowledgepulse.curation.percentiles import MinScore
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.sources import TraceOptions
    from knowledgepulse.sources._read import Notes


@dataclass
class ScoredFiles:
    """What :func:`score_files` did.

    Attributes:
        tally: the counts: scored, shareable (at the final threshold), invalid, warnings.
        results: every scored item, in output order, for ``output_format="table"`` (drawn by
            the caller); empty otherwise (they were written as they came).
        notes: what to say of the cache: that it was not saved, how many traces it held.
        kept_rows: the dataset rows that gave no trace, written back with ``kp_error``.
        redactor: the redactor used, if any, with its counts.
    """

    tally: RunTally
    results: list[ScoredItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept_rows: int = 0
    redactor: Redactor | None = None

    @property
    def summary(self) -> str:
        """One line: scored, shareable, skipped, rows written back, what was redacted."""
        return summary_line(self.tally, self.kept_rows) + redaction_tail(self.redactor)


def score_files(
    paths: Sequence[str],
    target: str | os.PathLike[str] | IO[str] | None = None,
    *,
    output_format: str = "jsonl",
    annotate: bool = False,
    explain: bool = False,
    redact: bool | Redactor = False,
    min_score: MinScore | float | str | None = None,
    order: Order = "input",
    corpus: bool = False,
    cache_path: Path | None = None,
    frozen: bool = False,
    cache_size: int | None = None,
    ttl_ms: float | None = None,
    source: str | None = None,
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    on_problem: Callable[[str], object] | ProblemDigest | None = None,
    progress: Callable[[int], object] | None = None,
    scored: Callable[[int], object] | None = None,
    **model: Unpack[ModelSettings],
) -> ScoredFiles:
    """Score the traces of ``paths`` and write a report of them, or the traces back, to ``target``.

    Args:
        paths: trace files, or a framework's or dataset's files (``-``: standard input).
        target: a path (replaced atomically when the run completes) or a text stream; ``None``
            with ``output_format="table"`` (the results are returned instead).
        output_format: the report: ``jsonl``, ``json``, ``csv``, ``html``, or ``table`` (kept
            in :attr:`ScoredFiles.results`); with ``annotate``, ``jsonl`` or ``json``.
        annotate: write the traces back with ``metadata.quality_score`` set; dataset rows go
            back as they were, with ``kp_`` columns added, every row in its place (one that
            gave no trace with ``kp_error``), as JSON Lines or Parquet (the input's form or
            ``target``'s suffix).
        explain: each score explained in words (``table``, ``json``, ``jsonl`` reports).
        redact: clean what ``annotate`` writes: ``True`` by each trace's privacy level, or a
            configured ``Redactor``.
        min_score: the sharing threshold: a score, or ``"pNN"``, a percentile of the scores
            (reads the whole input first).
        order: ``input`` streams; ``time`` scores by ``metadata.created_at`` (reads the whole
            input first; see :func:`~knowledgepulse.runs.scoring.score_items`).
        corpus: novelty against every other trace of the input (reads it whole first).
        cache_path: a saved vector cache, made if missing and saved after a clean run (see
            :class:`~knowledgepulse.runs.scoring.ScoreRun`).
        frozen: score against ``cache_path`` without adding to it.
        cache_size: how many vectors the cache holds.
        ttl_ms: the cache's time-to-live in milliseconds.
        source: a source's name, or ``None`` / ``auto``: recognised from the content.
        options: the domain, confidence and row columns of converted traces.
        notes: told what a reader says about a whole file.
        on_problem: told each record that gives no trace, as a line of text (a
            :class:`~knowledgepulse.runs.problems.ProblemDigest`: the problem, repeats digested).
        progress: told each further count of bytes read.
        scored: told the items scored so far.
        **model: the embedder and scorer (:class:`~knowledgepulse.runs.embedder.ModelSettings`).

    Raises:
        ParameterConflictError: settings that contradict each other, naming them.
        CacheFileError: a ``frozen`` ``cache_path`` that does not exist (a missing input file).
        OutputError: ``target`` or ``cache_path`` cannot be written.
    """
    target = None if target is None else target_of(target)  # text is a path, not a stream
    redactor = redactor_of(redact)
    _check(
        output_format,
        target,
        annotate=annotate,
        explain=explain,
        redacts=redactor is not None,
        cache_path=cache_path,
        tunes=(cache_size, ttl_ms, model.get("max_windows")) != (None, None, None),
        no_embedder=model.get("no_embedder", False),
    )
    model.setdefault("threshold", threshold_of(min_score_of(min_score)))
    check_model(model, corpus=corpus)
    # Everything a user can get wrong fails here, before the first record is read.
    files = [str(file) for file in input_files(paths)]  # the folders' (paths: as given)
    # The profiles and the model are read too: neither the output nor the cache may replace them.
    also_read = [
        str(path) for path in (model.get("profiles_file"), model.get("model_path")) if path
    ]
    _check_files([*files, *also_read], target, cache_path, frozen=frozen)
    with ExitStack() as stack:
        scorer = stack.enter_context(run_scorer(files, **model))
        tell_unweighed_domain(scorer, options, notes)
        run = ScoreRun(
            scorer, cache_path=cache_path, frozen=frozen, cache_size=cache_size, ttl_ms=ttl_ms
        )
        # --annotate: dataset rows go back as Parquet when they came from (or -o names) Parquet.
        other: WriteForm = "json" if output_format == "json" else "jsonl"
        output = target if isinstance(target, Path) else None
        writes = rows_form(output, files, other) if annotate else None
        unread = unread_rows(redactor) if annotate else None
        done = ScoredFiles(RunTally(run.scorer.threshold), redactor=redactor)
        keep = output_format in ("json", "html") and not annotate
        sink = ProblemSink(done.tally, keep=keep, unread=unread, show=on_problem)
        with run:
            read = read_items(
                paths,
                source=source,
                options=options,
                notes=notes,
                progress=progress,
                messages=messages_level(redactor),
            )
            valid = told_when_no_task(valid_items(read, None, sink), task_column(options))
            items = written_items(valid, unread, redactor)
            # Time order, a corpus or a percentile read the whole input here, before any output.
            results = run.score(
                items, order=order, corpus=corpus, min_score=min_score_of(min_score)
            )
            if output_format == "table" and not annotate:
                done.results.extend(tallied(results, done.tally, scored))
            else:
                assert target is not None  # refused by _check
                with scores_writer(
                    target,
                    output_format,
                    sink,
                    rows=writes,
                    unread=unread,
                    explain=explain,
                    inputs=files,
                ) as emit:
                    for result in tallied(results, done.tally, scored):
                        emit(result)
    counts = {domain: len(scores) for domain, scores in done.tally.scores.items()}
    where = f"{model['profiles_file']}: " if model.get("profiles_file") else ""
    done.notes = [where + said for said in misspelt_profiles(run.scorer.profiles, counts)]
    if cache_path is not None:
        saved = run.cache_outcome != "no_embedder"
        done.notes += cache_lines(
            str(cache_path),
            saved=saved,
            already_cached=run.already_cached,
            dropped=run.dropped_on_open,
            cache_size=run.cache_size,
            frozen=frozen,
            change=run.cache_change,
        )
    done.kept_rows = 0 if unread is None else unread.written
    return done


def _check_files(
    paths: Sequence[str], target: Path | IO[str] | None, cache_path: Path | None, *, frozen: bool
) -> None:
    """Refuse a ``target`` or ``cache_path`` that cannot be written, or a ``frozen`` one missing.

    A frozen cache is only read, so it may sit in a directory this run cannot write. The
    output may not be the cache, whether it exists yet or not: the output, written first,
    would replace the cache, frozen or not, and the cache's save would then find no cache.
    """
    if isinstance(target, Path) and cache_path is not None and same_name(target, cache_path):
        raise OutputError(
            f"cannot write the output {target}: it is this run's cache (",
            Setting("cache_path"),
            "), which it would replace; write to another file",
        )
    for path, what, reads in ((target, "output", False), (cache_path, "cache", frozen)):
        if isinstance(path, Path):
            try:
                check_destination(path, what=what, inputs=paths, read_only=reads)
            except OutputError as error:
                if path != cache_path or not path.is_file() or "permission" not in str(error):
                    raise
                # A shared cache the user may only read: they can still score against it.
                raise OutputError(
                    f"{error}; to score against it without saving, give ", Setting("frozen", True)
                ) from None
    if frozen and cache_path is not None and not cache_path.exists():
        raise CacheFileError(
            Setting("frozen", True),
            f" scores against a saved cache, and {cache_path} does not exist; build it first with ",
            Setting("cache_path"),
            " without ",
            Setting("frozen", True),
        )


def _check(
    output_format: str,
    target: Path | IO[str] | None,
    *,
    annotate: bool,
    explain: bool,
    redacts: bool,
    cache_path: Path | None,
    tunes: bool,
    no_embedder: bool,
) -> None:
    """Refuse the settings of :func:`score_files` that contradict each other, naming them."""
    without_model = Setting("no_embedder", True)
    rules = (
        (
            redacts and not annotate,
            (
                Setting("redact", True),
                " cleans the traces ",
                Setting("annotate", True),
                " writes",
            ),
            ("; add ", Setting("annotate", True)),
        ),
        (
            no_embedder and cache_path is not None,
            (Setting("cache_path"), " holds embeddings, so it needs an embedder; "),
            ("drop ", without_model),
        ),
        (
            no_embedder and tunes,
            (
                Setting("cache_size"),
                ", ",
                Setting("ttl_ms"),
                " and ",
                Setting("max_windows"),
                " tune the embedder and its cache; ",
            ),
            ("drop them or ", without_model),
        ),
        (
            annotate and output_format not in ("json", "jsonl"),
            (Setting("annotate", True), " writes traces as JSONL (default) or a JSON list "),
            ("(", Setting("output_format", "json"), ")"),
        ),
        (
            explain and (annotate or output_format not in EXPLAINED_FORMATS),
            (
                Setting("explain", True),
                " explains the scores of a report: give ",
                Setting("output_format", "table"),
                ", json or jsonl ",
            ),
            ("(without ", Setting("annotate", True), ")"),
        ),
    )
    for broken, what, fix in rules:
        if broken:
            raise ParameterConflictError(*what, *fix)
    if not annotate and isinstance(target, Path):
        check_report_name(target, SCORE_FORMATS, output_format)
    if target is None and (annotate or output_format != "table"):
        raise ParameterConflictError(
            Setting("output_format", output_format),
            " is written: give a target (a path or a stream)",
        )
