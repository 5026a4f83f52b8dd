"""Personal data as people type it: full-width forms, a word processor's dashes, any script.

Chinese and Japanese input methods write ASCII full-width (a plus, an IBAN's letters), word
processors put a non-breaking hyphen (U+2011) or an en dash between a number's groups; the
detectors read each as its ASCII and hide the span as written, nothing of it left.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.redact import clean_text
from knowledgepulse.redact.rules import folded

_FULL_WIDTH = str.maketrans({chr(code): chr(code + 0xFEE0) for code in range(0x21, 0x7F)})
_IBAN = "DE89 3704 0044 0532 0130 00"
_DASHES = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"]


def _full_width(text: str) -> str:
    return text.translate(_FULL_WIDTH)


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("call \uff0b44 20 7946 0958 today", "call [REDACTED:phone] today"),
        ("call " + _full_width("+44 20 7946 0958") + " today", "call [REDACTED:phone] today"),
        ("電話は\uff0b81 3-1234-5678です", "電話は[REDACTED:phone]です"),
    ],
)
def test_a_full_width_plus_goes_with_its_number(text: str, cleaned: str) -> None:
    """A full-width plus (U+FF0B) opens the number as "+" does: it goes too, not left in front."""
    assert clean_text(text, "aggregated").text == cleaned


@pytest.mark.parametrize("dash", _DASHES)
@pytest.mark.parametrize("number", ["(415) 555{}0132", "415{}555{}0132", "+1 415{}555{}0132"])
def test_a_phone_number_with_a_unicode_dash_between_its_groups_is_redacted(
    dash: str, number: str
) -> None:
    """A non-breaking hyphen (U+2011), an en dash or a minus sign apart the groups as "-" does."""
    text = f"ring {number.replace('{}', dash)} after six"
    assert clean_text(text, "aggregated").text == "ring [REDACTED:phone] after six"


@pytest.mark.parametrize(
    "iban",
    [
        _full_width(_IBAN),
        _full_width(_IBAN).replace(" ", "\u3000"),  # the ideographic space too
        _full_width(_IBAN.replace(" ", "")),
        _full_width(_IBAN.replace(" ", "-")),
    ],
)
def test_an_iban_in_full_width_letters_and_digits_is_redacted(iban: str) -> None:
    """The IBAN DE89 3704 ... in full-width forms: its checksum holds, it goes whole."""
    cleaned = clean_text(f"振込先 {iban} まで", "aggregated").text
    assert cleaned == "振込先 [REDACTED:iban] まで"


def test_a_full_width_email_address_is_redacted() -> None:
    """The fold reaches every identifier rule and its keyword: a full-width @ lets e-mail run."""
    text = _full_width("alice@example.com") + " に送って"
    assert clean_text(text, "aggregated").text == "[REDACTED:email] に送って"


def test_full_width_forms_stay_in_the_text_where_nothing_is_found() -> None:
    """The fold is for reading: a text with nothing personal comes back as it was written."""
    text = _full_width("OK") + "\u3000" + _full_width("version") + "\u2011" + _full_width("2")
    text += " \u2013 " + _full_width("+3") + " points, pages 12\u201334, 1990\u20132024"
    assert clean_text(text, "federated").text == text


@given(st.text())
def test_folding_keeps_each_character_in_its_place(text: str) -> None:
    """One character for one: a span found in the folded text is the same span of the text."""
    result = folded(text)
    assert len(result) == len(text)
    changed = [(a, b) for a, b in zip(text, result, strict=True) if a != b]
    assert all(b.isascii() and not a.isascii() for a, b in changed)


@pytest.mark.parametrize(
    ("word", "number"),
    [
        ("звоните", "+7 495 123-45-67"),
        ("τηλέφωνο", "+30 21 0123 4567"),
        ("اتصل", "+966 50 123 4567"),
        ("फोन", "+91 98765 43210"),
        ("call", "+44 20 7946 0958"),
        ("tel", "\uff0b44 20 7946 0958"),
    ],
)
def test_a_number_glued_to_a_word_before_its_plus_is_redacted(word: str, number: str) -> None:
    """ "+" opens a number of its own: a word glued before it in any script does not make an id."""
    assert clean_text(f"{word}{number}", "aggregated").text == f"{word}[REDACTED:phone]"


_WORD = st.text(
    st.characters(categories=("Lu", "Ll", "Lo", "Mn", "Mc")), min_size=1, max_size=10
).filter(lambda word: "@" not in folded(word))


@given(_WORD)
def test_a_word_in_any_script_before_a_plus_number_stays_and_the_number_goes(word: str) -> None:
    """The word is kept as written, the number hidden whole, whatever the word's script."""
    cleaned = clean_text(f"{word}+44 20 7946 0958", "aggregated").text
    assert cleaned == f"{word}[REDACTED:phone]"


@pytest.mark.parametrize("text", ["user4155550132", "id-4155550132", "v2+4155550132x"])
def test_an_id_glued_to_a_word_without_a_plus_stays(text: str) -> None:
    """Without a "+" the digits after a word are still an id's: nothing is hidden."""
    assert clean_text(text, "aggregated").text == text
