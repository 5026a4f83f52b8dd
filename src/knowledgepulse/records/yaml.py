"""YAML input: JSON data written as YAML, parsed safely, within bounds, every line remembered.

A repeated key is refused (not "last wins" as in JSON): YAML is written by hand, where it is a
typo. A top-level list is read item by item, so a syntax error loses only what follows it.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse._util.text import grapheme_end
from knowledgepulse.errors import Location, Problem
from knowledgepulse.records import json_values
from knowledgepulse.records.json_values import MAX_NESTING, TOO_DEEP, Loc, Record

MIN_ALIAS_BUDGET = 10_000
"""Nodes a file may always expand to through aliases, however small it is."""
ALIAS_FACTOR = 10
"""A larger file may expand to this many times the nodes it writes: reuse, not a bomb."""
MAX_INT_DIGITS = 4300
"""Python's own limit on reading and printing integers; a longer one should be a string."""

_MAX_INT_BITS = math.ceil(MAX_INT_DIGITS * math.log2(10))
_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _SEQ, _MAP, _MERGE = (
    _TAG + name for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge")
)
_AS_TEXT = {_STR}
_CONTROL = re.compile(Reader.NON_PRINTABLE.pattern)
# libyaml refuses a \ud800-\udfff escape as a syntax error; PyYAML's own parser reads it.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_NOT_JSON = (
    "this file holds JSON data (strings, numbers, true/false, null, lists and mappings); "
    "remove the tag"
)

# YAML 1.2's core schema (JSON's values, as modern YAML tools read them), not PyYAML's YAML 1.1:
# there 1:30 was 90, 010 was 8, yes/on were true and 1_000 was 1000; here each is its text.
_CORE_INT = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
_CORE_FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
_CORE_SPECIAL = r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
_CORE_BOOL = dict.fromkeys(("true", "True", "TRUE"), True) | dict.fromkeys(
    ("false", "False", "FALSE"), False
)


def _read_int(text: str) -> int:
    if not re.fullmatch(_CORE_INT, text):
        raise ValueError(text)
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return int(text if base == 10 else text[2:], base)  # int("010") is 10, never octal


def _read_float(text: str) -> float:
    if re.fullmatch(_CORE_SPECIAL, text):
        return float(text.lower().replace(".", ""))  # -.Inf -> float("-inf"), .NaN -> nan
    if not re.fullmatch(_CORE_FLOAT, text):
        raise ValueError(text)
    return float(text)


_READERS = {_INT: _read_int, _FLOAT: _read_float, _BOOL: _CORE_BOOL.__getitem__}


def parse_yaml(text: str, name: str) -> Iterator[Record | Problem]:
    """Parse YAML safely (no object construction), keeping the line of every key and item.

    A list gives one record per item, any other document one record. A problem inside a record
    replaces it (the problem's ``record`` is what was read of it, each refused part null); a
    syntax error or a passed bound ends the file with a problem at its line.
    """
    controls = _Controls(text)
    fast = yaml.__with_libyaml__ and not _SURROGATE_ESCAPE.search(controls.text)
    loader = _LibLoader(controls.text) if fast else _PyLoader(controls.text)
    index = 0
    try:
        for node in loader.record_nodes():
            yield from _record(node, Location(name, node.start_mark.line + 1, index), controls)
            index += 1
    except yaml.MarkedYAMLError as error:
        yield _file_problem(error, name, controls)
    except yaml.YAMLError as error:
        yield Problem(Location(name), "", f"invalid YAML: {error}")
    finally:
        loader.dispose()
    stray = [at for at in controls.positions if at not in controls.reported]
    if stray:
        yield controls.problem(Location(name), stray)


def with_key_lines(record: Record, text: str) -> Record:
    """A JSON document's record with the line of each path in it, as YAML's record has them.

    JSON is YAML's flow style: ``text`` (the document's own, starting on the record's line)
    read as YAML gives each path's line. Kept only when that reading gives the same value;
    else (a tab YAML refuses, a number it reads otherwise) every problem is at the document's
    line.
    """
    read = list(parse_yaml(text, record.location.file))
    if len(read) != 1 or not isinstance(read[0], Record) or read[0].value != record.value:
        return record
    offset = (record.location.line or 1) - 1
    return replace(record, lines={path: line + offset for path, line in read[0].lines.items()})


class _Refused(yaml.MarkedYAMLError):
    """Raised while composing when the file passes a bound."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(problem=message, problem_mark=mark)


class _BoundedComposer(Composer, BaseResolver):
    """PyYAML's composer, counting depth, written nodes and what aliases expand to."""

    if TYPE_CHECKING:  # given by the parser the composer is mixed with

        def get_event(self) -> yaml.Event | None: ...
        def peek_event(self) -> yaml.Event | None: ...
        def check_event(self, *choices: type[yaml.Event]) -> bool: ...
        def dispose(self) -> None: ...

    def _start(self) -> None:
        Composer.__init__(self)
        BaseResolver.__init__(self)
        self.written = 0
        self.expanded = 0
        self.depth = 0
        self.sizes: dict[str, int] = {}

    def record_nodes(self) -> Iterator[Node]:
        """Each document's node, or each item of a document that is a plain list."""
        self.get_event()  # stream start
        while not self.check_event(yaml.StreamEndEvent):
            self.get_event()  # document start
            event = self.peek_event()
            if (
                isinstance(event, yaml.SequenceStartEvent)
                and event.anchor is None
                and event.tag in (None, "!", _SEQ)
            ):
                self.get_event()  # the list's start; its items are handed out, never kept in it
                index = 0
                while not self.check_event(yaml.SequenceEndEvent):
                    # The parent matters only to path resolvers, which a safe loader has none of.
                    yield self.compose_node(None, index)
                    index += 1
                self.get_event()
            else:
                node = self.compose_node(None, None)
                if isinstance(node, SequenceNode) and node.tag == _SEQ:
                    yield from node.value  # a list with an anchor or a tag on it
                else:
                    yield node
            self.get_event()  # document end
            self.anchors = {}
            self.sizes = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            anchor = str(event.anchor)
            if anchor in self.anchors and anchor not in self.sizes:
                raise _Refused(
                    f"the alias *{anchor} is inside its own anchor &{anchor}, which makes an "
                    "endless structure that JSON cannot hold; copy the part you meant instead",
                    event.start_mark,
                )
            self.expanded += self.sizes.get(anchor, 0)
            budget = max(MIN_ALIAS_BUDGET, ALIAS_FACTOR * self.written)
            if self.expanded > budget:
                raise _Refused(
                    f"too many alias expansions: the aliases so far expand to "
                    f"{self.expanded:,} nodes, more than the {budget:,} allowed "
                    f"({ALIAS_FACTOR} times the {self.written:,} nodes written, at least "
                    f"{MIN_ALIAS_BUDGET:,}); write the repeated parts out, or alias less",
                    event.start_mark,
                )
            return cast(Node, super().compose_node(parent, index))
        container = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        if container and self.depth >= MAX_NESTING:
            raise _Refused(TOO_DEEP, cast(yaml.Event, event).start_mark)
        self.depth += container
        self.written += 1
        self.expanded += 1
        before = self.expanded
        try:
            node = cast(Node, super().compose_node(parent, index))
        finally:
            self.depth -= container
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            self.sizes[event.anchor] = self.expanded - before + 1
        return node


for _tag, _pattern, _first in (
    (_BOOL, "|".join(_CORE_BOOL), "tTfF"),
    (_INT, _CORE_INT, "-+0123456789"),
    (_FLOAT, f"{_CORE_FLOAT}|{_CORE_SPECIAL}", "-+.0123456789"),
    (_NULL, "~|null|Null|NULL|", ["~", "n", "N", ""]),
    (_MERGE, "<<", "<"),  # not in the core schema, but what every YAML tool reads it as
):
    _BoundedComposer.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), list(_first))


class _PyLoader(Reader, Scanner, Parser, _BoundedComposer):
    def __init__(self, text: str) -> None:
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)
        self._start()


if yaml.__with_libyaml__:  # PyYAML was built with libyaml
    from yaml._yaml import CParser

    class _LibLoader(CParser, _BoundedComposer):
        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            self._start()


def _record(node: Node, location: Location, controls: _Controls) -> Iterator[Record | Problem]:
    found = controls.within(node.start_mark.index, _content_end(node, node))
    if found:
        yield controls.problem(location, found)
        return
    walk = _Walk(controls.stand_in, location)
    value = walk.value(node, (), 0)
    record = Record(location, value, walk.lines)
    if walk.problems:
        # A problem replaces the record and its warnings; each carries what was read (a part
        # refused read as null), so that a reader of cases still knows the record's id.
        yield from (replace(problem, record=record) for problem in walk.problems)
        return
    yield from walk.warnings
    yield record


class _Walk:
    """One record's value from its nodes, checked for what JSON cannot hold, each line noted."""

    def __init__(self, stand_in: str, location: Location) -> None:
        self.stand_in = stand_in
        self.location = location
        self.lines: dict[Loc, int] = {}
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []

    def _refuse(self, loc: Loc, line: int, message: str) -> None:
        path = format_path(loc) if loc else ""
        self.problems.append(Problem(self.location.at_line(line), path, message))

    def value(self, node: Node, loc: Loc, depth: int) -> Any:
        line = node.start_mark.line + 1
        self.lines[loc] = line
        if depth > MAX_NESTING:
            self._refuse(loc, line, TOO_DEEP)
            return None
        if isinstance(node, ScalarNode):
            return self._scalar(node, loc, line)
        if node.tag not in (_SEQ, _MAP):
            self._refuse(loc, line, f"the tag {_short(node.tag)} is not supported: {_NOT_JSON}")
            return None
        if isinstance(node, SequenceNode):
            return [self.value(item, (*loc, at), depth + 1) for at, item in enumerate(node.value)]
        mapping: dict[str, Any] = {}
        self._mapping(cast(MappingNode, node), loc, depth, mapping)
        return mapping

    def _scalar(self, node: ScalarNode, loc: Loc, line: int) -> Any:
        tag, text = node.tag, node.value
        if self.stand_in and self.stand_in in text:
            # Reached through an alias from the record whose span holds the character.
            self._refuse(
                loc,
                line,
                "reaches, through an alias, a value that holds a control character, "
                "which YAML does not allow",
            )
            return None
        if tag in _AS_TEXT:
            if json_values.SURROGATE.search(text):
                at = self.location.at_line(line)
                self.warnings.append(
                    Problem(at, format_path(loc), json_values.LONE_SURROGATE, warning=True)
                )
                return json_values.SURROGATE.sub("\ufffd", text)
            return text
        if tag == _NULL:
            return None
        read = _READERS.get(tag)
        if read is None:
            self._refuse(loc, line, f"the tag {_short(tag)} is not supported: {_NOT_JSON}")
            return None
        value: Any
        try:
            value = read(text)
        except (ValueError, KeyError, IndexError):  # a tag on text that is no such scalar
            value = None
        # Past 4,300 digits int() refuses decimal text, and a hex one is read but too long.
        too_long = tag == _INT and (
            len(text) > MAX_INT_DIGITS if value is None else value.bit_length() > _MAX_INT_BITS
        )
        if isinstance(value, float) and not math.isfinite(value):
            # Digits a float cannot hold (1e999) are a size problem, as JSON's reader says;
            # .inf and .nan are YAML's words for what JSON has none of.
            digits = any(character.isdigit() for character in text)
            told = json_values.too_large(text) if digits else json_values.NOT_FINITE
            self._refuse(loc, line, told)
        elif too_long:
            self._refuse(
                loc,
                line,
                f"a number too long to read (more than {MAX_INT_DIGITS} digits); "
                "write it as a string",
            )
        elif value is None:
            self._refuse(loc, line, f"{text!r} cannot be read as {_short(tag)}")
        return value

    def _mapping(self, node: MappingNode, loc: Loc, depth: int, into: dict[str, Any]) -> None:
        # Merged keys first, so that the mapping's own keys override them (and keep their lines).
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                self._merge(value_node, loc, depth, into)
        own: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, ScalarNode) or key_node.tag not in _AS_TEXT:
                self._refuse(loc, line, _key_message(key_node))
                continue
            key = self._scalar(key_node, loc, line)
            if key in own:
                self._refuse(
                    (*loc, key),
                    line,
                    f"the key {key!r} appears twice in one mapping (lines {own[key]} and "
                    f"{line}); keep one (which one was meant is unknowable)",
                )
                continue
            own[key] = line
            into[key] = self.value(value_node, (*loc, key), depth + 1)
            self.lines[(*loc, key)] = line

    def _merge(self, value: Node, loc: Loc, depth: int, into: dict[str, Any]) -> None:
        if depth >= MAX_NESTING:
            self._refuse(
                loc,
                value.start_mark.line + 1,
                f"merges ('<<') nested deeper than {MAX_NESTING} levels; flatten them",
            )
            return
        sources = value.value if isinstance(value, SequenceNode) else [value]
        # In a list of merges the first mapping wins, as in PyYAML: merge the last one first.
        for source in reversed(sources):
            if isinstance(source, MappingNode) and source.tag == _MAP:
                self._mapping(source, loc, depth + 1, into)
            else:
                self._refuse(
                    loc,
                    source.start_mark.line + 1,
                    "a merge ('<<') takes a mapping or a list of mappings",
                )


class _Controls:
    """Control characters, each replaced by a stand-in: PyYAML would refuse the whole text."""

    def __init__(self, text: str) -> None:
        self.positions = [match.start() for match in _CONTROL.finditer(text)]
        self.originals = {position: text[position] for position in self.positions}
        self.reported: set[int] = set()
        self.text = text
        self.stand_in = ""
        if self.positions:
            self.stand_in = next(
                chr(code) for code in range(0xF0000, 0xFFFFE) if chr(code) not in text
            )
            self.text = _CONTROL.sub(self.stand_in, text)
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", self.text))]

    def within(self, start: int, end: int) -> list[int]:
        """The positions in ``[start, end)``, marked as reported."""
        low = bisect.bisect_left(self.positions, start)
        found = self.positions[low : bisect.bisect_left(self.positions, end)]
        self.reported.update(found)
        return found

    def problem(self, location: Location, found: list[int]) -> Problem:
        """The problem of the first of ``found``, at its line, counting the others."""
        position = found[0]
        line = bisect.bisect_right(self._line_starts, position)
        code = ord(self.originals[position])
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        message = (
            f"control character U+{code:04X} at column {position - self._line_starts[line - 1] + 1}"
            f'{others} is not allowed in YAML; remove it, or write it as "{escape}" in a '
            "double-quoted string"
        )
        return Problem(location.at_line(line), "", message)


def _content_end(node: Node, record: Node) -> int:
    """Where a node's own text ends: a block collection's end mark lies past trailing comments."""
    if isinstance(node, ScalarNode) or getattr(node, "flow_style", False):
        return int(node.end_mark.index)
    parts: list[Node] = (
        node.value
        if isinstance(node, SequenceNode)
        else [part for pair in node.value for part in pair]
    )
    for part in reversed(parts):
        # An alias's node was written elsewhere (its anchor), outside this record's text.
        if record.start_mark.index <= part.start_mark.index <= record.end_mark.index:
            return _content_end(part, record)
    return int(node.end_mark.index)


def _file_problem(error: yaml.MarkedYAMLError, name: str, controls: _Controls) -> Problem:
    mark = error.problem_mark or error.context_mark
    if mark is None:
        return Problem(Location(name), "", f"invalid YAML: {error.problem or error}")
    line = mark.line + 1
    at_control = controls.within(mark.index, mark.index + 1)
    if at_control:
        return controls.problem(Location(name), at_control)
    if isinstance(error, _Refused):
        return Problem(Location(name, line), "", str(error.problem))
    if error.problem == "exceeded maximum nesting depth":  # libyaml's bound, looking ahead
        return Problem(Location(name, line), "", TOO_DEEP)
    message = f"invalid YAML: {error.problem}"
    if controls.text[mark.index : mark.index + 1] == "\t":
        message += "; indent with spaces (YAML does not allow tabs there)"
    context = error.context_mark
    if error.context and context is not None and context.line != mark.line:
        message += f" ({error.context} on line {context.line + 1})"
    return Problem(Location(name, line), "", message)


def _short(tag: str | None) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag and tag.startswith(_TAG) else repr(tag)


def _key_message(node: Node) -> str:
    if isinstance(node, ScalarNode):
        text = (
            node.value
            if len(node.value) <= 40
            else node.value[: grapheme_end(node.value, 39)] + "…"
        )
        return (
            f"the key {text} is read as {_short(node.tag)}, not a string; JSON keys are "
            f"strings, so quote it: '{text}'"
        )
    return "a key must be a string, not a list or a mapping; JSON keys are strings"
