"""Curation's reports as text: what a selection and a dedupe did, and the similarities found."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from knowledgepulse._util.text import counted
from knowledgepulse.curation.percentiles import SUMMARY_PERCENTILES, MinScore, SimilarityHistogram
from knowledgepulse.curation.select import RejectionReason
from knowledgepulse.curation.splits import BY_TASK
from knowledgepulse.reports.value import problem_tally, unread_parts

if TYPE_CHECKING:  # the run layer's results, named for their types only
    from knowledgepulse.runs.contamination import DecontaminationResult
    from knowledgepulse.runs.curate import DedupeResult, SelectionResult
    from knowledgepulse.runs.splits import SplitResult

BAR_WIDTH = 40


def render_similarity_histogram(histogram: SimilarityHistogram | None) -> str:
    """Percentiles, one bar per bin, and how many traces each usual limit reaches."""
    if histogram is None:
        return "no nearest-neighbour similarities: fewer than two traces were embedded"
    summary = histogram.summary
    total = int(summary["count"])
    lines = [
        f"cosine of each trace with its nearest other trace ({total:,} traces):",
        "  "
        + "  ".join(
            f"{name} {summary[name]:.3f}"
            for name in ("min", *(f"p{p}" for p in SUMMARY_PERCENTILES), "max")
        ),
    ]
    tallest = max(count for _, _, count in histogram.bins)
    for low, high, count in histogram.bins:
        bar = "#" * (round(BAR_WIDTH * count / tallest) if tallest else 0)
        lines.append(f"  {low:5.2f}-{high:4.2f} {count:>7,} {bar}")
    reach = ", ".join(
        f"{limit:g}: {count:,} ({100 * count / total:.0f}%)"
        for limit, count in histogram.at_or_above
    )
    lines.append(f"  traces at or above --max-similarity S (the most S can reject): {reach}")
    return "\n".join(lines)


# What follows a count of one, and of more ("1 near-duplicate", "2 near-duplicates").
_REASONS: tuple[tuple[RejectionReason, str, str], ...] = (
    ("near_duplicate", "near-duplicate", "near-duplicates"),
    ("over_budget", "over budget", "over budget"),
    ("over_per_task", "over --per-task", "over --per-task"),
)

TASK_COLUMN = "the dataset's task column"
"""Where the tasks were read from when no task field named it: the column the reader found."""


def _budget_said(result: SelectionResult) -> str:
    """`` (budget 50)``, or `` (top 10%: budget 0)`` when a percentage gave it; else nothing."""
    if result.budget is None:
        return ""
    given = f"top {result.top:g}%: " if result.top is not None else ""
    return f" ({given}budget {result.budget:,})"


def selection_summary(result: SelectionResult, min_score: MinScore | None) -> str:
    """Counts of the selected and rejected, then ``3 of 5 tasks covered (inferred)``."""
    selected = result.selected
    domains = Counter(scored.breakdown.domain for scored in selected)
    picked = _secret_free(", ".join(f"{domain} {n:,}" for domain, n in sorted(domains.items())))
    parts = [
        f"{counted(len(result.corpus.items), 'trace')} scored",
        ranked_by(result),
        f"{len(selected):,} selected"
        + _budget_said(result)
        # the counts are the picks' domains: say so, or "default 2" reads as a setting
        + (f", by domain: {picked}" if picked else ""),
    ]
    reasons = Counter(r.reason for r in result.rejected)
    if min_score is not None and result.min_score is not None:
        shown = (
            f"{min_score} = {result.min_score:.4f}"
            if min_score.percentile is not None
            else f"{min_score}"
        )
        parts.append(f"{reasons['below_min_score']:,} below the minimum score {shown}")
    if result.min_reward is not None:
        outcome = "reward" if result.rank_by == "score" else result.rank_by
        parts.append(
            f"{reasons['below_min_reward']:,} below the minimum {outcome} {result.min_reward:g} "
            "or without one"
        )
    parts += [
        f"{reasons[reason]:,} {one if reasons[reason] == 1 else many}"
        for reason, one, many in _REASONS
        if reasons[reason]
    ]
    parts += unread_parts(problem_tally(result.problems), result.unread.written)
    covered = {result.tasks[index] for index in result.picks}
    how = "inferred" if result.tasks_inferred else f"by {result.task_field or TASK_COLUMN}"
    parts.append(f"{len(covered):,} of {counted(len(set(result.tasks)), 'task')} covered ({how})")
    if missing := sum(task is None for task in result.tasks):
        without = result.task_field or "a task"
        parts[-1] += f", {counted(missing, 'trace')} without {without} taken as one task"
    return "; ".join(parts)


def _secret_free(text: str) -> str:
    """``text`` without secrets: a domain is the trace's own text, and the summary goes to stderr.

    Without ``--redact`` the picks' domains are as the traces gave them (with it, already
    redacted at the run's level), and a summary line, unlike the traces written, is kp's own.
    """
    # The rules load here, as for a problem's message (runs.read.secret_free).
    from knowledgepulse.redact import clean_text  # noqa: PLC0415

    return clean_text(text, "private").text


def ranked_by(result: SelectionResult) -> str:
    """``ranked by reward, then success and score (2 without one, last)``."""
    if result.rank_by == "score":
        return "ranked by success, then score"
    text = f"ranked by {result.rank_by}, then success and score"
    if missing := sum(outcome is None for outcome in result.outcomes):
        text += f" ({missing:,} without one, last)"
    return text


def dedupe_summary(result: DedupeResult) -> str:
    """``8 traces scored; 2 near-duplicate groups at cosine >= 0.95; 3 traces would go, 5 kept``.

    By task: ``8 traces scored; 2 task groups (tasks inferred); 3 traces would go, 5 kept``.
    """
    count = len(result.corpus.items)
    duplicates = sum(len(group.members) for group in result.groups)
    if result.by == "task":
        how = "inferred" if result.tasks_inferred else "read"
        groups = f"{counted(len(result.groups), 'task group')} (tasks {how})"
        if missing := sum(task is None for task in result.tasks):
            without = result.task_field or "a task"
            groups += f", {counted(missing, 'trace')} without {without} in no group"
    else:
        groups = (
            f"{counted(len(result.groups), 'near-duplicate group')} at cosine >= "
            f"{result.threshold:g}"
        )
    return (
        f"{counted(count, 'trace')} scored; {groups}; "
        f"{counted(duplicates, 'trace')} would go, {count - duplicates:,} kept"
    ) + _unread_tail(result)


def decontamination_summary(result: DecontaminationResult) -> str:
    """What decontamination removed, and why.

    ``100 traces against 10 reference items: 3 removed (2 by 8-gram overlap >= 0.7, 1 by
    cosine >= 0.95), 97 kept``.
    """
    reasons = Counter(found.reason for found in result.removed)
    why = [f"{reasons['ngram']:,} by {result.ngram}-gram overlap >= {result.min_overlap:g}"]
    if result.threshold is not None:
        why.append(f"{reasons['embedding']:,} by cosine >= {result.threshold:g}")
    else:
        why.append("no embedder")
    removed = len(result.removed)
    text = (
        f"{counted(len(result.items), 'trace')} against "
        f"{counted(result.references, 'reference item')}: {removed:,} removed "
        f"({', '.join(why)}), {len(result.items) - removed:,} kept"
    )
    if not result.references:  # every item kept: an evaluation set of prompts read as traces?
        text += (
            "; nothing to compare against: for an evaluation set of prompts, name the field "
            "holding each task text (kp: --against-field), or give the texts a line in a .txt"
        )
    return text + _unread_tail(result)


def split_summary(result: SplitResult) -> str:
    """What a split made: the groups, each set's size against its share, groups on two sides.

    ``10 traces in 4 groups by task (seed 0): train 8 (80.0%, asked 75%), ...; no group on
    two sides``.
    """
    total = len(result.items)
    sizes = ", ".join(
        f"{part} {count:,} ({100 * count / total if total else 0:.1f}%, asked "
        f"{100 * result.fractions[part]:g}%)"
        for part, count in result.sizes.items()
    )
    text = (
        f"{counted(total, 'trace')} in {counted(len(set(result.groups)), 'group')} by "
        f"{result.by}{' (inferred)' if result.tasks_inferred else ''} (seed {result.seed})"
    )
    if result.stratify is not None:
        text += f", stratified by {result.stratify}"
    text += f": {sizes}"
    if result.without_key and result.by == BY_TASK:
        without = result.task_field or "a task"
        text += f"; {counted(result.without_key, 'trace')} without {without}, grouped by objective"
    elif result.without_key:
        text += f"; {counted(result.without_key, 'trace')} without {result.by}, each its own group"
    empty = [part for part, count in result.sizes.items() if not count]
    if empty and total:  # a trainer meets an empty file: say why here
        text += (
            f"; {' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty: "
            f"too few groups ({len(set(result.groups))}) for every share (ask for fewer parts, "
            "or group by a key with more values)"
        )
    shared = result.shared_groups
    text += f"; {len(shared):,} groups on two sides" if shared else "; no group on two sides"
    return text + _unread_tail(result)


def _unread_tail(result: DedupeResult | SplitResult | DecontaminationResult) -> str:
    """``; 2 invalid records skipped``, rows written back, warnings (:func:`unread_parts`)."""
    parts = unread_parts(problem_tally(result.problems), result.unread.written)
    return "".join(f"; {part}" for part in parts)
