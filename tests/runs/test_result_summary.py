"""Every curation result says what its run did in one line, as ``kp`` prints it (``.summary``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.redact.items import Redactor
from knowledgepulse.reports.redaction import redaction_summary
from knowledgepulse.runs import decontaminate, dedupe, select, split
from knowledgepulse.runs.splits import write_split
from tests.runs.test_result_repr import scorer, traces

BAD_RECORD: dict[str, Any] = {"id": "not a trace"}


def quiet(problem: object) -> None:
    """An ``on_problem`` that says nothing: the summary counts the problems."""


def test_a_selection_summary_counts_the_picks_the_reasons_and_the_unread() -> None:
    """select's summary: picks, budget, the percentile resolved, records skipped, tasks."""
    data = [*traces(2), BAD_RECORD]
    result = select(data, budget=3, min_score="p10", scorer=scorer(), on_problem=quiet)
    threshold = f"p10 = {result.min_score:.4f}"
    assert result.summary.startswith(f"{len(result.corpus.items)} traces scored;")
    assert f"{len(result.picks)} selected (budget 3)" in result.summary
    assert f"below the minimum score {threshold}" in result.summary
    assert "; 1 invalid record skipped;" in result.summary


def test_a_selection_summary_writes_every_count_with_thousands_separators() -> None:
    """Past a thousand traces each count reads alike: not "1,008 traces scored; ...; 1004 over"."""
    result = select(traces(126), budget=4, scorer=scorer())
    assert result.summary.startswith("1,008 traces scored;")
    assert "; 1,004 over budget;" in result.summary
    everything = select(traces(126), budget=1500, scorer=scorer())
    assert "1,008 selected (budget 1,500), by domain: " in everything.summary


def test_a_selection_summary_says_its_counts_are_the_picks_domains() -> None:
    """The counts after the picks are named as domains, so "default 2" is not read as a setting."""
    result = select(traces(2), budget=3, scorer=scorer())
    domains = sorted({item.breakdown.domain for item in result.selected})
    assert f"selected (budget 3), by domain: {domains[0]} " in result.summary


@pytest.mark.parametrize(("top", "budget"), [(10, 0), (50, 4)])
def test_a_top_percentage_is_shown_with_the_budget_it_gave(top: int, budget: int) -> None:
    """The top 10% of 8 traces is a budget of 0: the summary says so, so 0 picks are explained."""
    result = select(traces(1), top=top, scorer=scorer())
    assert len(result.corpus.items) == 8
    assert result.top == top
    assert f"{len(result.picks)} selected (top {top}%: budget {budget})" in result.summary


def test_one_near_duplicate_is_counted_in_the_singular() -> None:
    """One trace and a copy of it under another id: "1 near-duplicate", as "1 trace" is said."""
    (first, *_) = traces(1)
    data = [first, {**first, "id": f"{first['id']}-copy"}]
    result = select(data, max_similarity=0.95, scorer=scorer())
    assert [rejection.reason for rejection in result.rejected] == ["near_duplicate"]
    assert "; 1 near-duplicate;" in result.summary


def test_a_selection_summary_names_no_secret_a_domain_holds() -> None:
    """A trace's domain is its own text: the summary (stderr, CI logs) shows no key in it."""
    key = "sk-proj-" + "Qx7Rt2Lm9Vb4Nc8Zp3Wk6Yh1Jd5Fs0Ga"  # split: no secret in the source
    data = [
        {**document, "metadata": {**document["metadata"], "task_domain": key}}
        for document in traces(1)
    ]
    result = select(data, budget=3, scorer=scorer())
    assert "by domain: " in result.summary
    assert key[:12] not in result.summary


def test_a_selection_summary_ends_with_what_writing_redacted() -> None:
    """The redactions are counted as the picks are written: the summary says so after."""
    redactor = Redactor()
    result = select(traces(1), budget=2, scorer=scorer(), redact=redactor)
    result.write_to(io.StringIO())
    assert result.redactor is redactor
    assert result.summary.endswith("; " + redaction_summary(redactor))


def test_a_dedupe_summary_counts_the_groups_and_what_would_go() -> None:
    """dedupe's summary: every item scored, the groups, how many would go and stay."""
    result = dedupe(traces(2), scorer=scorer())
    gone = len(result.dropped)
    assert result.summary == (
        f"{len(result.corpus.items)} traces scored; {len(result.groups)} near-duplicate groups "
        f"at cosine >= 0.95; {gone} traces would go, {len(result.kept)} kept"
    )


def test_a_decontamination_summary_counts_what_was_removed_against_what() -> None:
    """decontaminate's summary: the items, the reference items, how many removed, kept."""
    data = traces(1)
    result = decontaminate(data, against=data[:2])
    removed = len(result.removed)
    assert result.summary.startswith(
        f"{len(result.items)} traces against 2 reference items: {removed} removed ("
    )
    assert result.summary.endswith(f"), {len(result.items) - removed} kept")


def test_a_split_summary_gives_each_set_with_its_share(tmp_path: Path) -> None:
    """split's summary: the groups, each set's size against the share asked, no leak."""
    result = split(traces(2), test=0.3)
    write_split(result, tmp_path)
    assert f"(seed {result.seed})" in result.summary
    assert f"test {result.sizes['test']} (" in result.summary
    assert "asked 30%" in result.summary
    assert result.summary.endswith("no group on two sides")


def test_dedupe_and_split_summaries_count_the_records_skipped() -> None:
    """As select's does: a record that gave no trace is said in the line, not only on stderr."""
    data = [*traces(2), BAD_RECORD, BAD_RECORD]
    deduped = dedupe(data, scorer=scorer(), on_problem=quiet)
    parted = split(data, test=0.3, on_problem=quiet)
    assert deduped.summary.endswith(" kept; 2 invalid records skipped")
    assert parted.summary.endswith("no group on two sides; 2 invalid records skipped")
    assert not dedupe(traces(2), scorer=scorer()).summary.endswith("skipped")
