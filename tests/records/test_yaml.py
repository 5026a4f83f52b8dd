"""YAML records: JSON data, safely parsed, within bounds; every problem located, the rest read."""

from __future__ import annotations

import re
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Problem, Record
from knowledgepulse.records import yaml as yaml_module
from knowledgepulse.records.json_values import MAX_NESTING, too_large
from knowledgepulse.records.readers import read_records
from knowledgepulse.records.yaml import MIN_ALIAS_BUDGET, parse_yaml


def parsed(text: str, name: str = "f.yaml") -> list[Record | Problem]:
    return list(parse_yaml(text, name))


def shown(items: list[Record | Problem]) -> list[object]:
    """Records as their values, problems as the lines users read."""
    return [item.value if isinstance(item, Record) else str(item) for item in items]


def alias_bomb(levels: int = 9) -> str:
    """The billion laughs: each anchor holds nine aliases of the one before."""
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, levels):
        aliases = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{aliases}]")
    return "\n".join(lines) + "\n"


# --- syntax errors ---------------------------------------------------------------------------


def test_a_syntax_error_is_one_file_problem_with_its_line() -> None:
    """A YAML syntax error is one problem for the file (no index), at its line."""
    [problem] = parsed("- id: a\n  pages: [\n")
    assert isinstance(problem, Problem)
    assert problem.location.line == 3
    assert problem.location.index is None
    assert problem.message.startswith("invalid YAML: ")


def test_list_items_before_a_syntax_error_are_still_records() -> None:
    """A top-level list is read item by item: the items before a syntax error are kept."""
    items = parsed("- a: 1\n- b: 2\n- c: [\n")
    assert shown(items)[:2] == [{"a": 1}, {"b": 2}]
    assert isinstance(items[2], Problem)
    assert items[2].location.index is None


def test_documents_before_a_syntax_error_are_still_records() -> None:
    """In a multi-document file the documents before the bad one are yielded."""
    items = parsed("a: 1\n---\nb: 2\n---\nc: [\n")
    assert shown(items)[:2] == [{"a": 1}, {"b": 2}]
    assert [item.location.index for item in items[:2]] == [0, 1]
    assert isinstance(items[2], Problem)


def test_a_tab_in_the_indentation_says_to_use_spaces() -> None:
    """The message for a tab where YAML wants spaces says how to fix it."""
    [problem] = parsed("a:\n\tb: 1\n")
    assert str(problem).endswith("; indent with spaces (YAML does not allow tabs there)")


# --- control characters ----------------------------------------------------------------------


def test_a_control_character_rejects_only_its_record() -> None:
    """PyYAML refuses the whole text; here only the record that holds the character."""
    items = parsed("- a: 1\n- b: x\x01y\n- c: 3\n")
    assert shown(items) == [
        {"a": 1},
        "f.yaml:2: control character U+0001 at column 7 is not allowed in YAML; remove it, "
        'or write it as "\\x01" in a double-quoted string',
        {"c": 3},
    ]
    assert isinstance(items[1], Problem)
    assert items[1].location.index == 1


def test_a_nul_does_not_cut_the_file_short() -> None:
    """PyYAML's reader ends the text at a NUL; here it is a problem and the rest is read."""
    items = parsed("- a: x\x00\n- b: 2\n")
    assert isinstance(items[0], Problem)
    assert "U+0000" in items[0].message
    assert shown(items)[1] == {"b": 2}


def test_a_control_character_outside_every_record_is_a_file_problem() -> None:
    """In a comment after the last record it belongs to no record: the file has the problem."""
    items = parsed("- a: 1\n- b: 2\n# a \x1b comment\n")
    assert shown(items)[:2] == [{"a": 1}, {"b": 2}]
    problem = items[2]
    assert isinstance(problem, Problem)
    assert (problem.location.line, problem.location.index) == (3, None)
    assert "U+001B" in problem.message


def test_a_control_character_reached_through_an_alias_rejects_that_record_too() -> None:
    """An alias copies the value, and with it the character the first record was refused for."""
    items = parsed('- a: &x "q\x02"\n- b: *x\n- c: 3\n')
    assert isinstance(items[0], Problem)
    assert isinstance(items[1], Problem)
    assert items[1].path == "b"
    assert shown(items)[2] == {"c": 3}


# --- bounds ----------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_quickly() -> None:
    """A 1 KB billion laughs is refused while composing, at the alias that passes the budget.

    (The bound on the time leaves a loaded machine room; expanding the bomb takes far longer.)
    """
    started = time.perf_counter()
    [problem] = parsed(alias_bomb())
    assert time.perf_counter() - started < 5
    assert isinstance(problem, Problem)
    assert problem.message.startswith("too many alias expansions: ")
    assert f"at least {MIN_ALIAS_BUDGET:,}" in problem.message
    assert problem.location.line == 5


def test_aliases_within_the_budget_are_expanded() -> None:
    """Reuse through anchors, aliases and merge keys reads as the copies it stands for."""
    items = parsed(
        "defaults: &d {weight: 1.0, threshold: 0.5}\n"
        "scorers:\n"
        "  - {<<: *d, type: a}\n"
        "  - {<<: *d, type: b, weight: 2.0}\n"
    )
    [record] = items
    assert isinstance(record, Record)
    assert record.value["scorers"] == [
        {"weight": 1.0, "threshold": 0.5, "type": "a"},
        {"weight": 2.0, "threshold": 0.5, "type": "b"},
    ]
    assert record.lines[("scorers", 1, "weight")] == 4


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    """``&a [*a]`` would be an endless structure, which no JSON consumer survives."""
    [problem] = parsed("a: &a [*a]\n")
    assert isinstance(problem, Problem)
    assert "is inside its own anchor &a" in problem.message


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * MAX_NESTING + "]" * MAX_NESTING,
        "a:\n" + "".join("  " * depth + "-\n" for depth in range(1, MAX_NESTING + 1)),
        "a: " + "[" * 100_000,
    ],
    ids=["flow", "block", "unclosed"],
)
def test_nesting_past_the_limit_is_a_problem_not_a_recursion_error(text: str) -> None:
    """Containers nested past MAX_NESTING (the mapping counts) are refused while composing."""
    [problem] = parsed(text)
    assert isinstance(problem, Problem)
    assert problem.message == f"nested deeper than {MAX_NESTING} levels; flatten the document"


def test_nesting_at_the_limit_is_read() -> None:
    """Exactly MAX_NESTING containers are fine (and one more is not, above)."""
    [record] = parsed("{a: " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1) + "}")
    assert isinstance(record, Record)


def test_aliases_cannot_nest_a_value_past_the_limit() -> None:
    """An alias placed deep inside copies its anchor deeper still: the walk counts that too."""
    half = MAX_NESTING // 2 + 10
    text = "a: &a " + "[" * half + "]" * half + "\nb: " + "[" * half + "*a" + "]" * half + "\n"
    [problem] = parsed(text)
    assert isinstance(problem, Problem)
    assert "nested deeper than" in problem.message


@pytest.mark.parametrize("number", ["1" * 4301, "0x" + "f" * 3600, "-" + "9" * 5000])
def test_an_integer_too_long_to_print_is_a_located_problem(number: str) -> None:
    """An integer past 4,300 digits (however it is written) is refused at its path."""
    [problem] = parsed(f"id: a\nx:\n  y: {number}\n")
    assert isinstance(problem, Problem)
    assert (problem.location.line, problem.path) == (3, "x.y")
    assert problem.message.startswith("a number too long to read")


@pytest.mark.parametrize("value", [".nan", ".inf", "-.Inf"])
def test_nan_and_infinity_are_problems_at_their_json_path(value: str) -> None:
    """NaN and infinite numbers are refused where they are, as in JSON."""
    text = f"scorers:\n  - type: x\n    weight: {value}\n"
    assert shown(parsed(text, "s.yaml")) == [
        "s.yaml:3: scorers[0].weight: NaN and infinite numbers are not valid JSON; "
        "use a finite number"
    ]


@pytest.mark.parametrize("value", ["1e400", "-1.0e+400", ".1e999"])
def test_a_number_too_large_for_a_float_is_told_as_json_tells_it(value: str) -> None:
    """Digits past a float's range are the JSON reader's 'too large' problem, not 'infinite'."""
    [problem] = parsed(f"scorers:\n  - type: x\n    weight: {value}\n")
    assert isinstance(problem, Problem)
    assert (problem.location.line, problem.path) == (3, "scorers[0].weight")
    assert problem.message == too_large(value)


# --- JSON data only --------------------------------------------------------------------------


def test_a_repeated_key_is_a_problem_at_the_second_one() -> None:
    """The last of two equal keys silently won; now it is an error at its line and path."""
    assert shown(parsed("- id: a\n  pages:\n    x: 1\n    x: 2\n")) == [
        "f.yaml:4: pages.x: the key 'x' appears twice in one mapping (lines 3 and 4); keep one "
        "(which one was meant is unknowable)"
    ]


def test_a_key_a_merge_overrides_is_not_repeated() -> None:
    """A merge key's values are defaults: overriding them is what merges are for."""
    [record] = parsed("base: &b {x: 1}\nuse: {<<: *b, x: 2}\n")
    assert isinstance(record, Record)
    assert record.value["use"] == {"x": 2}


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("1", "the key 1 is read as !!int, not a string; JSON keys are strings, so quote it: '1'"),
        ("true", "the key true is read as !!bool, not a string"),
        ("~", "the key ~ is read as !!null, not a string"),
        ("[a, b]", "a key must be a string, not a list or a mapping"),
    ],
)
def test_a_key_that_is_not_a_string_is_a_problem(key: str, message: str) -> None:
    """JSON keys are strings; a key YAML reads as something else says how to quote it."""
    [problem] = parsed(f"a: 1\n{key}: x\n")
    assert isinstance(problem, Problem)
    assert problem.location.line == 2
    assert problem.message.startswith(message)


@pytest.mark.parametrize("tag", ["!!binary aGk=", "!!set {a}", "!!omap [a: 1]", "!local x"])
def test_tags_beyond_json_are_refused(tag: str) -> None:
    """Nothing but JSON values is constructed; the message says what the file should hold."""
    [problem] = parsed(f"a: {tag}\n")
    assert isinstance(problem, Problem)
    assert "is not supported: this file holds JSON data" in problem.message


@pytest.mark.parametrize("value", ["!!float", "!!float abc", "!!bool maybe", "!!int x"])
def test_a_scalar_tag_on_text_that_is_no_such_scalar_is_a_problem(value: str) -> None:
    """``!!float abc`` names a type its text is not: a located problem, not an exception."""
    [problem] = parsed(f"a: 1\nb: {value}\n")
    assert isinstance(problem, Problem)
    assert (problem.location.line, problem.path) == (2, "b")
    assert "cannot be read as !!" in problem.message


def test_libyaml_and_pyyamls_own_parser_read_the_same_records() -> None:
    """The parser is libyaml's when PyYAML has it; a surrogate escape takes PyYAML's own."""
    text = "- {a: 1, b: [x, 'y'], c: 2024-01-01, d: 0x1f}\n- e: &v {f: 1.5}\n  g: *v\n"
    fast = parsed(text)
    with mock.patch.object(yaml_module, "_SURROGATE_ESCAPE", re.compile("")):
        own = parsed(text)
    assert (
        shown(fast)
        == shown(own)
        == [
            {"a": 1, "b": ["x", "y"], "c": "2024-01-01", "d": 31},
            {"e": {"f": 1.5}, "g": {"f": 1.5}},
        ]
    )
    assert [item.lines for item in fast] == [item.lines for item in own]  # type: ignore[union-attr]


def test_python_object_tags_are_refused() -> None:
    """The classic unsafe-load payload is a refused tag, never a call."""
    [problem] = parsed("a: !!python/object/apply:os.system ['echo hacked']\n")
    assert isinstance(problem, Problem)
    assert "!!python/object/apply:os.system is not supported" in problem.message


def test_dates_stay_strings_and_exponents_are_numbers() -> None:
    """A date is text (JSON has no date type); ``1e12`` is the number everyone means by it."""
    [record] = parsed("when: 2024-01-31\ntimeout: 1e12\nversion: 1.0e3\nname: e5\n")
    assert isinstance(record, Record)
    assert record.value == {"when": "2024-01-31", "timeout": 1e12, "version": 1000.0, "name": "e5"}


_DECIMAL = st.from_regex(r"[-+]?[0-9]{1,40}", fullmatch=True)


@given(_DECIMAL)
def test_any_decimal_integer_text_is_that_integer(text: str) -> None:
    """Leading zeros are decimal, as YAML 1.2 and JSON mean them: 010 was octal 8 (YAML 1.1)."""
    [record] = parsed(f"n: {text}\n")
    assert isinstance(record, Record)
    assert record.value == {"n": int(text, 10)}


@given(st.lists(_DECIMAL, min_size=2, max_size=4).map(":".join))
def test_digits_joined_by_colons_are_text(text: str) -> None:
    """``1:30`` or ``12:30:00`` is a time or a ratio, not YAML 1.1's base-60 number (90)."""
    [record] = parsed(f"t: {text}\n")
    assert isinstance(record, Record)
    assert record.value == {"t": text}


@given(
    st.sampled_from(["yes", "no", "on", "off", "y", "n"]).flatmap(
        lambda word: st.sampled_from([word, word.capitalize(), word.upper()])
    )
)
def test_yaml_11_boolean_words_are_text_as_keys_and_values(word: str) -> None:
    """Only true/false are booleans (YAML 1.2's core schema): ``on: yes`` was {True: True}."""
    [record] = parsed(f"{word}: {word}\n")
    assert isinstance(record, Record)
    assert record.value == {word: word}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0o17", 15),
        ("0x1F", 31),
        ("+7", 7),
        ("-0", 0),
        ("1.", 1.0),
        ("-.5e-3", -0.0005),
        ("TRUE", True),
        ("False", False),
        ("Null", None),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("+0x1f", "+0x1f"),
        ("0o8", "0o8"),
        ("1:30.5", "1:30.5"),
        ("2024-01-31", "2024-01-31"),
        ("=", "="),
    ],
)
def test_plain_scalars_follow_the_yaml_12_core_schema(text: str, value: object) -> None:
    """What is a number, a boolean or null, and what stays text, as YAML 1.2's core schema says."""
    [record] = parsed(f"v: {text}\n")
    assert isinstance(record, Record)
    assert record.value == {"v": value}
    assert type(record.value["v"]) is type(value)


@pytest.mark.parametrize("text", ["!!int 1:30", "!!int 1_000", "!!bool yes", "!!float 1:30"])
def test_a_tag_does_not_bring_back_yaml_11_spellings(text: str) -> None:
    """An explicit tag reads its text by the same core schema: ``!!int 1:30`` is no number."""
    [problem] = parsed(f"v: {text}\n")
    assert isinstance(problem, Problem)
    assert "cannot be read as !!" in problem.message


def test_an_unpaired_surrogate_escape_is_read_as_a_replacement_with_a_warning() -> None:
    r"""``"\ud800"`` names no character: U+FFFD in its place and a warning at its path."""
    warning, record = parsed('- a: ok\n- b: "x\\ud800"\n')[1:]
    assert isinstance(warning, Problem)
    assert warning.warning
    assert (warning.location.line, warning.location.index, warning.path) == (2, 1, "b")
    assert isinstance(record, Record)
    assert record.value == {"b": "x\ufffd"}


def test_list_items_know_their_index_and_lines() -> None:
    """Each item of a top-level list is a record with its index, line and per-path lines."""
    items = parsed("- id: a\n  x: 1\n- id: b\n  y:\n    - 2\n")
    assert [(r.location.line, r.location.index) for r in items if isinstance(r, Record)] == [
        (1, 0),
        (3, 1),
    ]
    second = items[1]
    assert isinstance(second, Record)
    assert second.lines[("y", 0)] == 5


# --- fuzzing ---------------------------------------------------------------------------------

_YAML_PIECES = st.sampled_from(
    [
        "-",
        " ",
        "  ",
        "\n",
        ":",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&a ",
        "*a",
        "&b ",
        "*b",
        "<<: ",
        "!!str ",
        "!!binary ",
        "!x ",
        "---\n",
        "...\n",
        "#",
        "'",
        '"',
        "|",
        ">",
        "?",
        ".nan",
        "0x1f",
        "1:2",
        "1e9",
        "~",
        "yes",
        "a",
        "b: ",
        "\\u",
        "\\ud800",
        "\t",
        "\x01",
        "\x00",
        "\ufeff",
        "\u2028",
        "%YAML 1.1\n",
        "9" * 5000,
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_YAML_PIECES, max_size=40).map("".join) | st.text(max_size=200))
def test_any_text_gives_only_records_and_problems(text: str) -> None:
    """Whatever the text, the reader yields records and problems, never another exception."""
    for item in parse_yaml(text, "f.yaml"):
        assert isinstance(item, Record | Problem)
        str(item)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.binary(max_size=300))
def test_any_bytes_in_a_yaml_file_give_only_records_and_problems(
    tmp_path: Path, data: bytes
) -> None:
    """Bytes that are not UTF-8, a BOM, gzip magic...: records and problems only."""
    path = tmp_path / "cases.yaml"
    path.write_bytes(data)
    for item in read_records(path, formats=("yaml",)):
        assert isinstance(item, Record | Problem)
