"""``kp dedupe``: near-duplicate groups, each with the trace kept to represent it.

Like ``kp select`` it holds the whole input in memory and scores in corpus mode; the
representative of a group is its best trace (highest score, then smallest id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse.cli._console import open_output, stderr_console
from knowledgepulse.cli._traces import embedder_from, model_options, paths_argument
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.cli.profiles import profiles_file_option, registry_from
from knowledgepulse.cli.select import ScoredCorpus, read_and_score
from knowledgepulse.curation import dedupe
from knowledgepulse.reports.value import dumps, tidy
from knowledgepulse.value.scorer import TraceValueScorer


@click.command("dedupe")
@paths_argument
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=0.95,
    show_default=True,
    help="Two traces are near-duplicates when their cosine reaches S.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the groups here (JSONL, atomically) instead of stdout.",
)
@model_options
@profiles_file_option
def dedupe_command(
    *,
    paths: tuple[str, ...],
    threshold: float,
    output: Path | None,
    no_embedder: bool,
    model: Path | None,
    batch_size: int,
    profiles_file: Path | None,
) -> int:
    """Group near-duplicate traces; each group names the trace it keeps.

    One JSON line per group of two or more traces: the representative (highest score, then
    smallest id) and each member with its cosine to the representative.
    """
    if no_embedder:
        raise click.UsageError("kp dedupe compares embeddings; drop --no-embedder")
    if output is not None:
        check_destination(output, what="output")
    scorer = TraceValueScorer(
        embedder=embedder_from(False, model),
        profiles=registry_from(profiles_file),
        batch_size=batch_size,
    )
    corpus = read_and_score(paths, scorer)
    if corpus.vectors is None:
        if corpus.traces:
            raise click.UsageError(
                "kp dedupe needs an embedder, and none could be loaded "
                "(install knowledgepulse[embeddings] or give --model)"
            )
        groups = []
    else:
        groups = dedupe(corpus.candidates, corpus.vectors, threshold=threshold)
    with open_output(output) as stream:
        for group in groups:
            row = {
                "representative": _trace(corpus, group.representative),
                "size": 1 + len(group.members),
                "members": [
                    {**_trace(corpus, index), "similarity": similarity}
                    for index, similarity in group.members
                ],
            }
            stream.write(dumps(tidy(row)) + "\n")
    duplicates = sum(len(g.members) for g in groups)
    count = len(corpus.traces)
    stderr_console().print(
        f"{count} trace{'s' if count != 1 else ''} scored; {len(groups)} near-duplicate "
        f"group{'s' if len(groups) != 1 else ''} at cosine >= {threshold:g}; "
        f"{duplicates} trace{'s' if duplicates != 1 else ''} would go, "
        f"{count - duplicates} kept",
        markup=False,
        highlight=False,
    )
    return EXIT_FINDINGS if corpus.sink.errors else EXIT_OK


def _trace(corpus: ScoredCorpus, index: int) -> dict[str, Any]:
    breakdown = corpus.breakdowns[index]
    location = corpus.traces[index].record.location
    return {
        "id": breakdown.trace_id,
        "score": breakdown.score,
        "domain": breakdown.domain,
        "file": location.file,
        "line": location.line,
    }
