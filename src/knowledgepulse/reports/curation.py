"""Curation's reports as text: the distribution of nearest-neighbour similarities."""

from __future__ import annotations

from knowledgepulse.curation.percentiles import SUMMARY_PERCENTILES, SimilarityHistogram

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
