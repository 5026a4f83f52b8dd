"""The closest known name: what a lookup miss suggests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse._util.text import closest, did_you_mean

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
