"""What ``kp select`` and ``kp dedupe`` share: the whole input scored in corpus mode.

Each trace's novelty is against every other trace of the input, so no verdict depends on input
order; the whole input is held in memory (1.5 KB of vector per trace with MiniLM). The
distribution of nearest-neighbour similarities can be printed to choose a threshold from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._console import ReadProgress, say
from knowledgepulse.cli._embedder import batch_size_for
from knowledgepulse.cli._redact import Redactor, redacted
from knowledgepulse.cli._traces import ProblemSink, read_traces, sources
from knowledgepulse.cli.profiles import registry_from
from knowledgepulse.curation import Candidate, content_digest, score_corpus
from knowledgepulse.curation.percentiles import (
    SUMMARY_PERCENTILES,
    SimilarityHistogram,
    similarity_histogram,
)
from knowledgepulse.trace.load import LoadedTrace
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:  # the converters bring pydantic: loaded for --from only
    from knowledgepulse.integrations import TraceOptions
    from knowledgepulse.novelty import Embedder

similarity_histogram_option = click.option(
    "--similarity-histogram",
    is_flag=True,
    help="Print on stderr the distribution of each trace's cosine with its nearest other "
    "trace (percentiles and a histogram), to choose --max-similarity from your own data.",
)


@dataclass(frozen=True, slots=True)
class ScoredCorpus:
    """Every valid trace of the input with its corpus-mode breakdown and vector."""

    traces: list[LoadedTrace]
    breakdowns: list[ValueBreakdown]
    candidates: list[Candidate]
    vectors: Any
    sink: ProblemSink

    @property
    def has_rows(self) -> bool:
        """Whether the input was dataset rows (``--from``), to be written back as rows."""
        return bool(self.traces) and self.traces[0].row is not None

    def row(self, index: int) -> dict[str, Any]:
        """One trace as a report row: id, score, domain, and where it was read."""
        breakdown, location = self.breakdowns[index], self.traces[index].location
        return {
            "id": breakdown.trace_id,
            "score": breakdown.score,
            "domain": breakdown.domain,
            "file": location.file,
            "line": location.line,
        }

    def require_vectors(self, option: str) -> None:
        """A ``click.UsageError`` when ``option`` needs embeddings and none could be made."""
        if self.vectors is None and self.traces:
            raise click.UsageError(
                f"{option} needs an embedder, and none could be loaded "
                "(install knowledgepulse[embeddings] or give --model)"
            )

    def print_similarity_histogram(self) -> None:
        """The histogram of each trace's corpus-novelty similarity, on stderr."""
        similarities = [
            b.novelty.similarity
            for b in self.breakdowns
            if b.novelty.source == "embedding" and b.novelty.similarity is not None
        ]
        say(render_similarity_histogram(similarity_histogram(similarities)))


def read_and_score(
    paths: Sequence[str],
    embedder: Embedder | None,
    *,
    novelty_text: str,
    profiles_file: Path | None,
    batch_size: int | None,
    source: str | None,
    options: TraceOptions | None,
    redactor: Redactor | None,
) -> ScoredCorpus:
    """Read every trace (converted with ``--from``, redacted with ``--redact``), then score all."""
    scorer = TraceValueScorer(
        embedder=embedder,
        novelty_text=novelty_text,
        profiles=registry_from(profiles_file),
        batch_size=batch_size_for(batch_size, embedder),
    )
    sink = ProblemSink()
    with ReadProgress.for_sources(sources(paths)) as progress:
        traces = list(redacted(redactor, read_traces(paths, sink, progress, source, options)))
    scored = score_corpus(scorer, traces)
    candidates = [
        Candidate(b.trace_id, b.score, domain=b.domain, tiebreak=content_digest(t.record.value))
        for t, b in zip(traces, scored.breakdowns, strict=True)
    ]
    return ScoredCorpus(traces, scored.breakdowns, candidates, scored.vectors, sink)


BAR_WIDTH = 40


def render_similarity_histogram(histogram: SimilarityHistogram | None) -> str:
    """Percentiles, one bar per bin, and how many traces each usual limit reaches."""
    if histogram is None:
        return "no nearest-neighbour similarities: fewer than two traces were embedded"
    summary = histogram.summary
    total = int(summary["count"])
    lines = [
        f"cosine of each trace with its nearest other trace ({total} traces):",
        "  "
        + "  ".join(
            f"{name} {summary[name]:.3f}"
            for name in ("min", *(f"p{p}" for p in SUMMARY_PERCENTILES), "max")
        ),
    ]
    tallest = max(count for _, _, count in histogram.bins)
    for low, high, count in histogram.bins:
        bar = "#" * (round(BAR_WIDTH * count / tallest) if tallest else 0)
        lines.append(f"  {low:5.2f}-{high:4.2f} {count:>7} {bar}")
    reach = ", ".join(
        f"{limit:g}: {count} ({100 * count / total:.0f}%)" for limit, count in histogram.at_or_above
    )
    lines.append(f"  traces at or above --max-similarity S (the most S can reject): {reach}")
    return "\n".join(lines)
