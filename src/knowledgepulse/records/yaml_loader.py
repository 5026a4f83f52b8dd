"""PyYAML's safe loader, made to compose within bounds and to hand out a file's records one by one.

Composing is where a file's cost is decided, so the bounds are kept here: nesting past
:data:`~knowledgepulse.records.model.MAX_NESTING`, and aliases expanding past
:data:`ALIAS_FACTOR` times the nodes the file writes (at least :data:`MIN_ALIAS_BUDGET`), stop
the file with :class:`Refused` at the place they are passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, cast

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    Event,
    MappingStartEvent,
    NodeEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import Node, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from knowledgepulse.records.model import MAX_NESTING

MIN_ALIAS_BUDGET = 10_000
"""Nodes a file may always expand to through aliases, however small it is."""
ALIAS_FACTOR = 10
"""A larger file may expand to this many times the nodes it writes: reuse, not a bomb."""

TAG_PREFIX = "tag:yaml.org,2002:"
STR, INT, FLOAT, SEQ, MAP, MERGE = (
    TAG_PREFIX + name for name in ("str", "int", "float", "seq", "map", "merge")
)
# Plain 2024-01-01 resolves to a timestamp and a lone '=' to 'value'; JSON keeps both as text.
AS_TEXT = {STR, TAG_PREFIX + "timestamp", TAG_PREFIX + "value"}
"""The tags whose scalars are read as strings."""
SCALARS = {*AS_TEXT, INT, FLOAT, TAG_PREFIX + "bool", TAG_PREFIX + "null"}
"""The tags of every scalar JSON can hold."""


class Refused(yaml.MarkedYAMLError):
    """Raised while composing when the file passes a bound; the message is ours, not PyYAML's."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(problem=message, problem_mark=mark)


class _Constructor(SafeConstructor):
    """Safe construction of JSON values only (the walk has refused every other tag)."""

    yaml_constructors = {  # noqa: RUF012 - PyYAML's own class-level registry
        **SafeConstructor.yaml_constructors,
        **dict.fromkeys(AS_TEXT, SafeConstructor.construct_yaml_str),
    }


class _Resolver(Resolver):
    """YAML 1.1's resolver, plus the floats YAML 1.2 and JSON write without a dot or a sign.

    YAML 1.1 reads ``1e12`` and ``1.0e12`` as strings; everyone who writes them means numbers.
    """


_Resolver.add_implicit_resolver(
    FLOAT,
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


class RecordLoader(Reader, Scanner, Parser, Composer, _Constructor, _Resolver):
    """PyYAML's safe loader, composing within bounds and handing out records one by one."""

    def __init__(self, text: str) -> None:
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)
        self.written = 0
        self.expanded = 0
        self.depth = 0
        self.sizes: dict[str, int] = {}

    def _next(self) -> Event:
        return cast(Event, self.get_event())  # type: ignore[no-untyped-call] # untyped in stubs

    def _peek(self) -> Event:
        return cast(Event, self.peek_event())  # type: ignore[no-untyped-call] # untyped in stubs

    def record_nodes(self) -> Iterator[Node]:
        """Each document's node, or each item of a document that is a plain list."""
        self._next()  # stream start
        while not self.check_event(StreamEndEvent):
            self._next()  # document start
            event = self._peek()
            if (
                isinstance(event, SequenceStartEvent)
                and event.anchor is None
                and event.tag in (None, "!", SEQ)
            ):
                yield from self._items()
            else:
                node = self.compose_node(None, None)
                if isinstance(node, SequenceNode) and node.tag == SEQ:
                    yield from node.value  # a list with an anchor or a tag on it
                else:
                    yield node
            self._next()  # document end
            self.anchors = {}
            self.sizes = {}

    def _items(self) -> Iterator[Node]:
        self._next()  # the list's start; its items are handed out, never kept in it
        index = 0
        while not self.check_event(SequenceEndEvent):
            # The parent matters only to path resolvers, which a safe loader has none of.
            yield self.compose_node(None, index)
            index += 1
        self._next()

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        """PyYAML's composition, counting depth, written nodes and what aliases expand to."""
        event = self._peek()
        if isinstance(event, AliasEvent):
            anchor = str(event.anchor)
            if anchor in self.anchors and anchor not in self.sizes:
                raise Refused(
                    f"the alias *{anchor} is inside its own anchor &{anchor}, which makes an "
                    "endless structure that JSON cannot hold; copy the part you meant instead",
                    event.start_mark,
                )
            self.expanded += self.sizes.get(anchor, 0)
            budget = max(MIN_ALIAS_BUDGET, ALIAS_FACTOR * self.written)
            if self.expanded > budget:
                raise Refused(
                    f"too many alias expansions: the aliases so far expand to "
                    f"{self.expanded:,} nodes, more than the {budget:,} allowed "
                    f"({ALIAS_FACTOR} times the {self.written:,} nodes written, at least "
                    f"{MIN_ALIAS_BUDGET:,}); write the repeated parts out, or alias less",
                    event.start_mark,
                )
            return cast(Node, super().compose_node(parent, index))
        container = isinstance(event, SequenceStartEvent | MappingStartEvent)
        if container and self.depth >= MAX_NESTING:
            raise Refused(
                f"nested deeper than {MAX_NESTING} levels; flatten the document",
                event.start_mark,
            )
        self.depth += container
        self.written += 1
        self.expanded += 1
        before = self.expanded
        try:
            node = cast(Node, super().compose_node(parent, index))
        finally:
            self.depth -= container
        if isinstance(event, NodeEvent) and event.anchor is not None:
            self.sizes[event.anchor] = self.expanded - before + 1
        return node
