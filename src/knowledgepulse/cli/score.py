"""``kp score`` and ``kp validate``: read traces, report bad records, score the rest."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from knowledgepulse.cli._console import (
    output_console,
    stderr_console,
    stderr_is_terminal,
    stdout_is_terminal,
    write_output,
)
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.cli.profiles import profiles_file_option, registry_from
from knowledgepulse.novelty import (
    Embedder,
    MiniLMEmbedder,
    VectorCache,
    default_embedder,
    dimensions_of,
    model_id_of,
)
from knowledgepulse.records import STDIN, Problem
from knowledgepulse.reports.value import (
    ScoredTrace,
    ValueReport,
    summary_line,
    to_csv,
    to_json,
    to_jsonl,
    to_table,
)
from knowledgepulse.trace.load import LoadedTrace, load_traces
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD, TraceValueScorer

PROGRESS_MIN_TRACES = 50

paths_argument = click.argument("paths", nargs=-1, metavar="[PATH]...")


def _sources(paths: Sequence[str]) -> list[str]:
    """The inputs: the paths given, or standard input when it is piped and no path is given."""
    if paths:
        return list(paths)
    if sys.stdin.isatty():
        raise click.UsageError("give trace files (JSON or JSONL), or - to read standard input")
    return [STDIN]


def _load(paths: Sequence[str]) -> tuple[list[LoadedTrace], list[Problem]]:
    """Every valid trace and every problem, printing each problem to stderr as it is found."""
    traces: list[LoadedTrace] = []
    problems: list[Problem] = []
    console = stderr_console()
    for item in load_traces(_sources(paths)):
        if isinstance(item, Problem):
            problems.append(item)
            console.print(str(item), markup=False, highlight=False)
        else:
            traces.append(item)
    return traces, problems


@click.command("score")
@paths_argument
@click.option(
    "-f",
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "jsonl", "csv"]),
    help="Output format [default: table on a terminal, jsonl otherwise].",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here instead of stdout.",
)
@click.option(
    "--no-embedder", is_flag=True, help="Score without an embedder: novelty is 0.5 for every trace."
)
@click.option(
    "--model",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Another local all-MiniLM-L6-v2-compatible ONNX model to embed with.",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0.0, 1.0),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="The sharing threshold: report which traces reach it.",
)
@click.option(
    "--annotate",
    is_flag=True,
    help="Write the traces back with metadata.quality_score filled in (JSONL, or a JSON list "
    "with --format json).",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A saved vector cache: loaded before scoring (if it exists) and saved after.",
)
@click.option(
    "--frozen",
    is_flag=True,
    help="Score against the cache without adding to it (order-independent).",
)
@click.option("--explain", is_flag=True, help="With the table: explain every score in words.")
@profiles_file_option
def score_command(
    *,
    paths: tuple[str, ...],
    output_format: str | None,
    output: Path | None,
    no_embedder: bool,
    model: Path | None,
    min_score: float,
    annotate: bool,
    cache_path: Path | None,
    frozen: bool,
    explain: bool,
    profiles_file: Path | None,
) -> int:
    """Score reasoning traces 0.0-1.0 for how valuable they are to share.

    PATH is a JSON file (one trace or a list), a JSONL file (one trace a line), or - for
    standard input. Bad records are reported on stderr as FILE:LINE: PATH: message and
    skipped; exit code 1 when there were any.
    """
    output_format = output_format or (
        "table" if stdout_is_terminal() and output is None else "jsonl"
    )
    _check_options(
        output_format=output_format,
        no_embedder=no_embedder,
        model=model,
        annotate=annotate,
        cache_path=cache_path,
        frozen=frozen,
        explain=explain,
    )
    registry = registry_from(profiles_file)
    traces, problems = _load(paths)

    embedder = _embedder(no_embedder, model)
    cache = _load_cache(cache_path, embedder)
    scorer = TraceValueScorer(
        embedder=embedder,
        cache=cache,
        profiles=registry,
        threshold=min_score,
        mode="frozen" if frozen else "online",
    )
    breakdowns = list(_with_progress(scorer.iter_scores(t.trace for t in traces), len(traces)))
    if cache_path is not None and not frozen:
        _save_cache(scorer, cache_path)

    report = ValueReport(
        [ScoredTrace(b, t.record.location) for b, t in zip(breakdowns, traces, strict=True)],
        problems,
        min_score,
    )
    if annotate:
        write_output(_annotated(traces, breakdowns, as_list=output_format == "json"), output)
    elif output_format == "table":
        _print_table(report, output, explain)
    else:
        renderers = {"json": to_json, "jsonl": to_jsonl, "csv": to_csv}
        write_output(renderers[output_format](report), output)
    stderr_console().print(summary_line(report), markup=False)
    return EXIT_FINDINGS if problems else EXIT_OK


@click.command("validate")
@paths_argument
@click.option(
    "-f",
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: problems on stderr; json: a report on stdout.",
)
def validate_command(paths: tuple[str, ...], output_format: str) -> int:
    """Check traces against the ReasoningTrace schema, without scoring.

    Every problem is reported as FILE:LINE: PATH: message; exit code 1 when there were any.
    """
    traces, problems = _load(paths)
    invalid = ValueReport([], problems, DEFAULT_THRESHOLD).invalid_records
    if output_format == "json":
        document = {
            "valid": len(traces),
            "invalid": invalid,
            "problems": [problem.to_dict() for problem in problems],
        }
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
    stderr_console().print(
        f"{len(traces)} valid trace{'s' if len(traces) != 1 else ''}"
        + (f"; {invalid} invalid record{'s' if invalid != 1 else ''}" if invalid else ""),
        markup=False,
    )
    return EXIT_FINDINGS if problems else EXIT_OK


def _check_options(
    *,
    output_format: str,
    no_embedder: bool,
    model: Path | None,
    annotate: bool,
    cache_path: Path | None,
    frozen: bool,
    explain: bool,
) -> None:
    if no_embedder and model is not None:
        raise click.UsageError("--model and --no-embedder contradict each other; give one")
    if no_embedder and cache_path is not None:
        raise click.UsageError(
            "--cache holds embeddings, so it needs an embedder; drop --no-embedder"
        )
    if frozen and cache_path is None:
        raise click.UsageError("--frozen scores against a saved cache; give it with --cache PATH")
    if annotate and output_format not in ("json", "jsonl"):
        raise click.UsageError(
            "--annotate writes traces as JSONL (default) or a JSON list (--format json)"
        )
    if explain and output_format != "table":
        raise click.UsageError(
            "--explain is for the table view; the JSON formats carry the whole breakdown"
        )


def _embedder(no_embedder: bool, model: Path | None) -> Embedder | None:
    if no_embedder:
        return None
    if model is not None:
        return MiniLMEmbedder(model_path=model)
    return default_embedder()


def _load_cache(cache_path: Path | None, embedder: Embedder | None) -> VectorCache | None:
    """The saved cache, if there is one; else ``None`` and the scorer makes a fresh one."""
    if cache_path is None or embedder is None or not cache_path.exists():
        return None
    return VectorCache.load(
        cache_path,
        expected_model_id=model_id_of(embedder),
        expected_dimensions=dimensions_of(embedder),
    )


def _save_cache(scorer: TraceValueScorer, cache_path: Path) -> None:
    if scorer.embedder is None:
        stderr_console().print(
            f"kp: the cache was not saved to {cache_path}: no embedder was available", markup=False
        )
        return
    scorer.cache.save(cache_path, model_id=model_id_of(scorer.embedder))


def _with_progress(breakdowns: Iterator[ValueBreakdown], total: int) -> Iterator[ValueBreakdown]:
    if total < PROGRESS_MIN_TRACES or not stderr_is_terminal():
        yield from breakdowns
        return
    columns = (TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=stderr_console(), transient=True) as progress:
        task = progress.add_task("scoring", total=total)
        for breakdown in breakdowns:
            progress.advance(task)
            yield breakdown


def _annotated(
    traces: Sequence[LoadedTrace], breakdowns: Sequence[ValueBreakdown], *, as_list: bool
) -> str:
    documents: list[Any] = []
    for loaded, breakdown in zip(traces, breakdowns, strict=True):
        document = copy.deepcopy(loaded.record.value)
        document["metadata"]["quality_score"] = breakdown.score
        documents.append(document)
    if as_list:
        return json.dumps(documents, ensure_ascii=False, indent=2) + "\n"
    return "".join(json.dumps(document, ensure_ascii=False) + "\n" for document in documents)


def _print_table(report: ValueReport, output: Path | None, explain: bool) -> None:
    with output_console(output) as console:
        console.print(to_table(report))
        if explain:
            for result in report.results:
                console.print()
                console.print(result.breakdown.explain(), markup=False, highlight=False)
