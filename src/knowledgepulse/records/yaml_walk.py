"""One YAML record's nodes, checked for what JSON cannot hold, with the line of every path."""

from __future__ import annotations

import math
import re

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from knowledgepulse.records.model import MAX_NESTING
from knowledgepulse.records.yaml_loader import (
    AS_TEXT,
    FLOAT,
    INT,
    MAP,
    MERGE,
    SCALARS,
    SEQ,
    TAG_PREFIX,
    RecordLoader,
)

MAX_INT_DIGITS = 4300
"""Python's own limit on reading and printing integers; a longer one should be a string."""

_MAX_INT_BITS = math.ceil(MAX_INT_DIGITS * math.log2(10))
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_JSON = (
    "this file holds JSON data (strings, numbers, true/false, null, lists and mappings); "
    "remove the tag"
)

Loc = tuple[str | int, ...]


class RecordWalk:
    """Check one record's nodes for what JSON cannot hold, and note the line of every path.

    The walk follows aliases (they become copies in the value), so it costs what the record
    expands to, which the composer has bounded.
    """

    def __init__(self, loader: RecordLoader, stand_in: str) -> None:
        self.loader = loader
        self.stand_in = stand_in
        self.lines: dict[Loc, int] = {}
        self.problems: list[tuple[Loc, int, str]] = []
        self.warnings: list[tuple[Loc, int]] = []

    def visit(self, node: Node, loc: Loc, depth: int) -> None:
        """Check ``node`` (at path ``loc``, nested ``depth`` deep) and everything under it."""
        line = node.start_mark.line + 1
        self.lines[loc] = line
        if depth > MAX_NESTING:
            self.problems.append(
                (loc, line, f"nested deeper than {MAX_NESTING} levels; flatten the document")
            )
        elif isinstance(node, ScalarNode):
            self._scalar(node, loc, line)
        elif isinstance(node, SequenceNode):
            if self._json_tag(node, SEQ, loc, line):
                for position, item in enumerate(node.value):
                    self.visit(item, (*loc, position), depth + 1)
        elif isinstance(node, MappingNode) and self._json_tag(node, MAP, loc, line):
            self._mapping(node, loc, depth)

    def _json_tag(self, node: Node, expected: str, loc: Loc, line: int) -> bool:
        if node.tag == expected:
            return True
        self.problems.append(
            (loc, line, f"the tag {_short(node.tag)} is not supported: {_NOT_JSON}")
        )
        return False

    def _scalar(self, node: ScalarNode, loc: Loc, line: int) -> None:
        tag = node.tag
        if self.stand_in and self.stand_in in node.value:
            # Reached through an alias from the record whose span holds the character.
            self.problems.append(
                (
                    loc,
                    line,
                    "reaches, through an alias, a value that holds a control character, "
                    "which YAML does not allow",
                )
            )
        elif tag in AS_TEXT:
            if _LONE_SURROGATE.search(node.value):
                node.value = _LONE_SURROGATE.sub("\ufffd", node.value)
                self.warnings.append((loc, line))
        elif tag == INT:
            try:
                number = self.loader.construct_yaml_int(node)
            except ValueError:
                number = None
            if number is None or number.bit_length() > _MAX_INT_BITS:
                self.problems.append(
                    (
                        loc,
                        line,
                        f"a number too long to read (more than {MAX_INT_DIGITS} digits); "
                        "write it as a string",
                    )
                )
        elif tag == FLOAT:
            if not math.isfinite(self.loader.construct_yaml_float(node)):
                self.problems.append(
                    (loc, line, "NaN and infinite numbers are not valid JSON; use a finite number")
                )
        elif tag not in SCALARS:
            self.problems.append(
                (loc, line, f"the tag {_short(tag)} is not supported: {_NOT_JSON}")
            )

    def _mapping(self, node: MappingNode, loc: Loc, depth: int) -> None:
        # Merged keys first, so that the mapping's own keys (which override them) keep their lines.
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:
                self._merge(value_node, loc, depth)
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:
                continue
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, ScalarNode) or key_node.tag not in AS_TEXT:
                self.problems.append((loc, line, _key_message(key_node)))
                continue
            self._scalar(key_node, loc, line)
            key = key_node.value
            if key in seen:
                self.problems.append(
                    (
                        (*loc, key),
                        line,
                        f"the key {key!r} appears twice in one mapping (lines {seen[key]} and "
                        f"{line}); keep one (which one was meant is unknowable)",
                    )
                )
                continue
            seen[key] = line
            self.visit(value_node, (*loc, key), depth + 1)
            self.lines[(*loc, key)] = line

    def _merge(self, value: Node, loc: Loc, depth: int) -> None:
        line = value.start_mark.line + 1
        sources = value.value if isinstance(value, SequenceNode) else [value]
        if depth >= MAX_NESTING:
            self.problems.append(
                (loc, line, f"merges ('<<') nested deeper than {MAX_NESTING} levels; flatten them")
            )
            return
        for source in sources:
            if isinstance(source, MappingNode) and source.tag == MAP:
                self._mapping(source, loc, depth + 1)
            else:
                self.problems.append(
                    (
                        loc,
                        source.start_mark.line + 1,
                        "a merge ('<<') takes a mapping or a list of mappings",
                    )
                )


def _short(tag: str | None) -> str:
    return "!!" + tag.removeprefix(TAG_PREFIX) if tag and tag.startswith(TAG_PREFIX) else repr(tag)


def _key_message(node: Node) -> str:
    if isinstance(node, ScalarNode):
        text = node.value if len(node.value) <= 40 else node.value[:39] + "…"
        return (
            f"the key {text} is read as {_short(node.tag)}, not a string; JSON keys are "
            f"strings, so quote it: '{text}'"
        )
    return "a key must be a string, not a list or a mapping; JSON keys are strings"
