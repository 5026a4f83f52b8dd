"""The HTML shell both reports share: escaping, histograms, the page, and the trace report on it."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records import Location, Problem
from knowledgepulse.reports import html as trace_html
from knowledgepulse.reports.html import POLICY, STYLE, histogram, page, table, text
from knowledgepulse.reports.value import RunTally
from knowledgepulse.value import TraceValueScorer
from tests.builders import make_trace, scored_item


def test_text_escapes_markup_quotes_and_controls() -> None:
    """<, >, &, both quotes; a control character as a visible escape; a surrogate as U+FFFD."""
    assert (
        text("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;"
    )
    assert text("bell\x07 esc\x1b") == "bell\\x07 esc\\x1b"
    assert text("half \ud800") == "half \ufffd"
    assert text("tab\tnew\nline") == "tab\tnew\nline"


@given(st.text())
def test_escaped_text_never_opens_a_tag_or_leaves_an_attribute(value: str) -> None:
    """Whatever the data, it holds no raw <, > or quote."""
    assert not set(text(value)) & {"<", ">", '"', "'"}


def test_a_histogram_counts_each_value_in_its_bin() -> None:
    """Ten bins over [0, 1]; 1.0 falls in the last bin; the tooltips carry the counts."""
    svg = histogram([0.0, 0.05, 0.55, 1.0, 1.0], bins=10, bar_width=10, height=20)
    counts = [int(n) for n in re.findall(r": (\d+)</title>", svg)]
    assert counts == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert svg.startswith("<svg width='100' height='20' role='img'")


def test_a_histogram_says_its_counts_to_a_screen_reader() -> None:
    """The image's label counts each bin holding a value; before, an unnamed image."""
    svg = histogram([0.0, 0.05, 1.0], bins=10)
    assert "aria-label='histogram: 2 in 0.00-0.10, 1 in 0.90-1.00'" in svg
    assert "aria-label='histogram: no values'" in histogram([], bins=4)


def test_a_histogram_of_nothing_has_empty_bars() -> None:
    """No values: every bar has height 0, nothing divides by zero."""
    svg = histogram([], bins=4)
    assert svg.count("height='0.0'") == 4


def test_page_wraps_sections_in_one_document_with_the_shared_style() -> None:
    """Doctype, the escaped title, the shared style then the page's own, the sections."""
    document = page("a <b>", ["<p>one</p>", "<p>two</p>"], style="p{color:red}")
    assert document.startswith("<!DOCTYPE html>")
    assert "<title>a &lt;b&gt;</title>" in document
    assert f"<style>{STYLE}p{{color:red}}</style>" in document
    assert document.index("<p>one</p>") < document.index("<p>two</p>")
    assert document.endswith("</body></html>\n")


def test_every_page_refuses_scripts_and_remote_resources() -> None:
    """Both reports carry the policy; before, kp score -f html had none, so only escaping held."""
    policy = f"<meta http-equiv='Content-Security-Policy' content=\"{POLICY}\">"
    assert policy in page("t", [])
    problem = Problem(Location("t.jsonl", 3), "steps[0]", "<bad>")
    assert policy in trace_html.value_page([], RunTally(threshold=0.75), [problem])


def test_table_escapes_the_header_and_takes_cells_as_html() -> None:
    """Header text is data; cells are already HTML (so a renderer can put an SVG in one)."""
    built = table(["a<b"], [["<svg></svg>"]], css_class="matrix")
    assert built == (
        "<table class='matrix'><tr><th scope='col'>a&lt;b</th></tr>"
        "<tr><td><svg></svg></td></tr></table>"
    )


def test_a_tables_headers_say_their_scope_and_row_headers_name_each_row() -> None:
    """Column headers are scope='col'; with row_headers, each row's first cell a scope='row' th.

    Before, headers had no scope and a scorer's or case's name was a plain cell, so a screen
    reader read a score without saying whose it was.
    """
    built = table(["name", "score"], [["a", "1"], ["b", "2"]], row_headers=True)
    assert built == (
        "<table><tr><th scope='col'>name</th><th scope='col'>score</th></tr>"
        "<tr><th scope='row'>a</th><td>1</td></tr><tr><th scope='row'>b</th><td>2</td></tr>"
        "</table>"
    )


def test_the_trace_value_report_is_built_on_the_shared_shell() -> None:
    """kp score -f html uses the same head, style and escaping."""
    problem = Problem(Location("t.jsonl", 3), "steps[0]", "<bad>")
    document = trace_html.value_page([], RunTally(threshold=0.75), [problem])
    shell = page("knowledgepulse trace value report", [])
    assert document.startswith(shell.removesuffix("\n</body></html>\n"))
    assert document.endswith("</body></html>\n")
    assert "t.jsonl:3: steps[0]: &lt;bad&gt;" in document


def test_the_trace_value_report_loads_no_evaluation_code() -> None:
    """kp score -f html does not pay for the evaluation half (about 0.3 s of imports)."""
    code = "import sys, knowledgepulse.reports.html; print('knowledgepulse.evals' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_the_trace_value_report_counts_in_words_as_the_summary_line_does() -> None:
    """One trace of a domain is '1 trace', and the page's summary is the stderr line."""
    breakdown = TraceValueScorer(embedder=None).score(make_trace())
    tally = RunTally(threshold=0.75)
    item = scored_item(breakdown)
    tally.add(item)
    document = trace_html.value_page([item], tally, [])
    assert f"{breakdown.domain} (1 trace)</h3>" in document
    assert "<p>1 trace scored; 0 reach the sharing threshold 0.75.</p>" in document
