"""``kp dedupe``: near-duplicate groups, each with the trace kept to represent it."""

from __future__ import annotations

from pathlib import Path

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._corpus import ScoredCorpus, read_and_score, similarity_histogram_option
from knowledgepulse.cli._embedder import build_embedder, model_options, novelty_text_option
from knowledgepulse.cli._emit import parquet_rows, row_output
from knowledgepulse.cli._options import output_option
from knowledgepulse.cli._redact import Redactor, redact_options, summary_tail
from knowledgepulse.cli._traces import paths_argument, source_options, sources, trace_options
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.cli.profiles import profiles_file_option
from knowledgepulse.curation import DuplicateGroup, dedupe
from knowledgepulse.reports.rows import DEDUPE_COLUMNS, SCORE_COLUMNS, kp_columns
from knowledgepulse.reports.value import dumps, tidy


@click.command("dedupe")
@paths_argument
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=0.95,
    show_default=True,
    help="Two traces are near-duplicates when their cosine reaches S (see --similarity-histogram).",
)
@similarity_histogram_option
@output_option(
    "Write the groups here (JSONL, atomically) instead of stdout; dataset rows go as "
    "JSONL or, for a .parquet name, Parquet."
)
@model_options
@novelty_text_option
@profiles_file_option
@source_options(required=False)
@redact_options
def dedupe_command(
    *,
    paths: tuple[str, ...],
    threshold: float,
    similarity_histogram: bool,
    output: Path | None,
    no_embedder: bool,
    model: Path | None,
    batch_size: int | None,
    workers: int | None,
    device: str,
    novelty_text: str,
    profiles_file: Path | None,
    source: str | None,
    domain: str | None,
    confidence: float | None,
    redact: bool,
    privacy_level: str | None,
    rules_file: Path | None,
    **row_columns: str | float | None,
) -> int:
    """Group near-duplicate traces; each group names the trace it keeps.

    One JSON line per group of two or more traces: the representative (highest score, then
    smallest id) and each member with its cosine to the representative. Dataset rows (--from)
    are written back instead, every row in input order with its kp_ columns, kp_group (its
    group's number, or null) and kp_kept (false for a duplicate that would go); --redact
    cleans them of secrets and personal data first.
    """
    convert_options = trace_options(source, domain, confidence, row_columns)
    if source is not None:
        parquet_rows(output, sources(paths))  # Parquet needs -o: refused before reading
    if no_embedder:
        raise click.UsageError("kp dedupe compares embeddings; drop --no-embedder")
    if output is not None:
        check_destination(output, what="output")
    redactor = Redactor.from_options(redact, privacy_level, rules_file)
    corpus = read_and_score(
        paths,
        build_embedder(False, model, workers=workers, device=device, paths=paths),
        novelty_text=novelty_text,
        profiles_file=profiles_file,
        batch_size=batch_size,
        source=source,
        options=convert_options,
        redactor=redactor,
    )
    corpus.require_vectors("kp dedupe")
    if similarity_histogram:
        corpus.print_similarity_histogram()
    groups = (
        []
        if corpus.vectors is None
        else dedupe(corpus.candidates, corpus.vectors, threshold=threshold)
    )
    if corpus.has_rows:
        _write_rows(corpus, groups, output, sources(paths))
    else:
        with open_output(output) as stream:
            for group in groups:
                row = {
                    "representative": corpus.row(group.representative),
                    "size": 1 + len(group.members),
                    "members": [
                        {**corpus.row(index), "similarity": similarity}
                        for index, similarity in group.members
                    ],
                }
                stream.write(dumps(tidy(row)) + "\n")
    duplicates = sum(len(g.members) for g in groups)
    count = len(corpus.traces)
    say(
        f"{counted(count, 'trace')} scored; {counted(len(groups), 'near-duplicate group')} "
        f"at cosine >= {threshold:g}; "
        f"{counted(duplicates, 'trace')} would go, "
        f"{count - duplicates} kept" + summary_tail(redactor),
    )
    return EXIT_FINDINGS if corpus.sink.errors else EXIT_OK


def _write_rows(
    corpus: ScoredCorpus, groups: list[DuplicateGroup], output: Path | None, inputs: list[str]
) -> None:
    """Every row in input order, with its kp_ columns, its group and whether it is kept."""
    group_of: dict[int, int] = {}
    dropped: set[int] = set()
    for number, group in enumerate(groups):
        group_of[group.representative] = number
        for index, _ in group.members:
            group_of[index] = number
            dropped.add(index)
    with row_output(output, inputs, SCORE_COLUMNS + DEDUPE_COLUMNS) as rows:
        for index, traced in enumerate(corpus.traces):
            columns = kp_columns(corpus.breakdowns[index])
            columns["kp_group"] = group_of.get(index)
            columns["kp_kept"] = index not in dropped
            rows.write(traced.row or traced.record, columns)
