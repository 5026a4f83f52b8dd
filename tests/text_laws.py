"""Text that hypothesis draws to test cuts, and the law a cut text keeps (whole graphemes)."""

from __future__ import annotations

import regex
from hypothesis import strategies as st

# Characters that build grapheme clusters: accents, joiners, emoji and their modifiers, flags'
# letters, Hangul jamo, a Devanagari virama, CR LF, a lone surrogate, and plain letters.
CLUSTERED = st.text(
    st.sampled_from(
        "ae \u0301\u0308\u200d\u200c\U0001f468\U0001f469\U0001f3fd\u2708\ufe0f"
        "\U0001f1ef\U0001f1f5\u1100\u1161\u11a8\u0915\u094d\u0937\u4e2d\r\n\ud83d"
    ),
    max_size=60,
)


def graphemes(text: str) -> list[str]:
    """The text's grapheme clusters, as the ``regex`` package's ``\\X`` finds them."""
    return regex.findall(r"\X", text)


def assert_grapheme_prefix(head: str, text: str) -> None:
    """``head`` is ``text``'s first clusters, whole: no cluster of ``text`` is split.

    Unless a cluster is longer than the 32 characters looked back at: then only a prefix.
    """
    whole = graphemes(text)
    assert text.startswith(head)
    if max(map(len, whole), default=0) > 32:
        return
    assert graphemes(head) == whole[: len(graphemes(head))]
    assert "".join(whole[: len(graphemes(head))]) == head
