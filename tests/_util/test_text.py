"""The closest known name: what a lookup miss suggests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse._util.text import (
    closest,
    counted,
    cut,
    did_you_mean,
    grapheme_end,
    utf8_prefix,
)
from tests.text_laws import CLUSTERED, assert_grapheme_prefix

NAMES = st.lists(st.text("abcAB_-", min_size=1, max_size=8), min_size=1, max_size=6)


def test_a_misspelt_name_gets_the_known_one() -> None:
    """difflib's similarity by default: 'treshold' is 'threshold'; nothing near is None."""
    assert closest("treshold", ["type", "threshold", "weight"]) == "threshold"
    assert closest("zzz", ["type", "threshold"]) is None


def test_folding_sets_case_and_underscores_aside_and_keeps_the_known_spelling() -> None:
    """target_block_id and TARGETBLOCKID are targetBlockId, spelt as known, not as folded."""
    known = ("type", "pageId", "targetBlockId", "targetIndex")
    assert closest("T_A_R_G_E_T_B_L_O_C_K_I_D", known) is None
    folds = {"ignore_case": True, "ignore_underscores": True}
    assert closest("T_A_R_G_E_T_B_L_O_C_K_I_D", known, **folds) == "targetBlockId"
    assert closest("TARGETBLOCKID", known, ignore_case=True) == "targetBlockId"
    assert closest("TARGETBLOCKID", ["targetIndex"]) is None


def test_with_max_edits_a_short_name_is_not_near_every_short_key() -> None:
    """'kind' is like 'id' to difflib, but two edits from a two-letter key is too many."""
    assert closest("kind", ["id", "steps"]) == "id"
    assert closest("kind", ["id", "steps"], max_edits=2) is None
    assert closest("tols", ["tool", "type"], max_edits=2) == "tool"
    assert closest("stepId", ["step_id", "steps"], ignore_case=True, max_edits=2) == "step_id"
    assert closest("x_id", ["id"], ignore_case=True, max_edits=2) is None


def test_did_you_mean_is_a_sentence_or_nothing() -> None:
    """' Did you mean ...?' after a full stop, or '' when no name is close."""
    assert did_you_mean("strct", ["standard", "strict"]) == " Did you mean 'strict'?"
    assert did_you_mean("qqqq", ["standard", "strict"]) == ""


def test_did_you_mean_can_set_case_aside() -> None:
    """With ignore_case, a name in capitals is near its lower-case spelling, answered as known."""
    assert did_you_mean("DELETE", ["insert", "delete"]) == ""
    assert (
        did_you_mean("DELETE", ["insert", "delete"], ignore_case=True) == " Did you mean 'delete'?"
    )


@given(NAMES, st.data(), st.booleans(), st.booleans(), st.sampled_from([None, 1, 2]))
def test_a_known_name_is_its_own_closest(
    names: list[str],
    data: st.DataObject,
    ignore_case: bool,
    ignore_underscores: bool,
    max_edits: int | None,
) -> None:
    """Asked for a name it knows, it answers that name (or one folded alike), as spelt there."""
    name = data.draw(st.sampled_from(names))
    found = closest(
        name,
        names,
        ignore_case=ignore_case,
        ignore_underscores=ignore_underscores,
        max_edits=max_edits,
    )
    assert found in names

    def folded(text: str) -> str:
        text = text.casefold() if ignore_case else text
        return text.replace("_", "") if ignore_underscores else text

    assert folded(found) == folded(name)


@given(CLUSTERED, st.integers(min_value=0, max_value=70))
def test_grapheme_end_never_splits_what_a_reader_sees_as_one_character(
    text: str, index: int
) -> None:
    """A cut at ``grapheme_end`` keeps whole clusters, at most ``index`` characters."""
    end = grapheme_end(text, index)
    assert end <= max(index, 0)
    assert_grapheme_prefix(text[:end], text)


@given(CLUSTERED, st.integers(min_value=0, max_value=200))
def test_utf8_prefix_fits_its_bytes_and_keeps_whole_clusters_and_surrogates(
    text: str, max_bytes: int
) -> None:
    """The prefix fits ``max_bytes``, splits no cluster and keeps a lone surrogate as it is."""
    head = utf8_prefix(text, max_bytes)
    assert len(head.encode("utf-8", "surrogatepass")) <= max(max_bytes, 0)
    assert_grapheme_prefix(head, text)


@given(CLUSTERED, st.integers(min_value=1, max_value=40))
def test_cut_shows_whole_clusters_and_counts_the_rest(text: str, limit: int) -> None:
    """A cut message keeps whole clusters and says how many characters it left out."""
    shown = cut(text, limit)
    if len(text) <= limit:
        assert shown == text
        return
    head, _, rest = shown.partition("… (")
    assert_grapheme_prefix(head, text)
    assert rest == f"{len(text) - len(head):,} more characters)"


def test_a_cluster_longer_than_32_characters_is_cut_where_asked() -> None:
    """Stacked accents by the dozen (Zalgo text) are cut at the index, not searched back."""
    text = "a" + "\u0301" * 100
    assert grapheme_end(text, 50) == 50
    assert grapheme_end("xy" + text, 1) == 1


def test_a_count_is_written_as_the_digest_lines_write_theirs() -> None:
    """The summary's "3,000 warnings" beside "... and 2,997 more files": one way to count."""
    assert [counted(n, "trace") for n in (0, 1, 2, 3000, 1234567)] == [
        "0 traces",
        "1 trace",
        "2 traces",
        "3,000 traces",
        "1,234,567 traces",
    ]
