"""YAML input: JSON data written as YAML, parsed safely, within bounds, every line remembered.

YAML here holds what JSON holds (strings, numbers, booleans, null, lists, mappings with string
keys); nothing else is constructed (timestamps stay strings; other tags are refused). What would
silently change a record's meaning, or cost far more than the file's size, is refused with the
line and JSON path: a repeated key, a key that is not a string, NaN or infinity, an integer of
more than 4,300 digits, nesting past :data:`MAX_NESTING`, aliases expanding past
:data:`ALIAS_FACTOR` times the nodes the file writes (at least :data:`MIN_ALIAS_BUDGET`), and
any control character in the text.

A top-level list is read item by item, each item a record as soon as it is composed: a syntax
error loses only what follows it, and a long list is never held whole as nodes. A problem inside
one record rejects that record only; the others are still read.

This module reads a file into records; composing within bounds is :mod:`.yaml_loader`, the
checks of one record's nodes :mod:`.yaml_walk`, and control characters :mod:`.yaml_controls`.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml
from yaml.nodes import Node, ScalarNode, SequenceNode

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.records.model import MAX_NESTING, Location, Problem, Record
from knowledgepulse.records.yaml_controls import Controls
from knowledgepulse.records.yaml_loader import (
    ALIAS_FACTOR,
    MIN_ALIAS_BUDGET,
    RecordLoader,
    Refused,
)
from knowledgepulse.records.yaml_walk import MAX_INT_DIGITS, RecordWalk

# The bounds are kept where they are enforced; they stay importable from here, where they began.
__all__ = ["ALIAS_FACTOR", "MAX_INT_DIGITS", "MIN_ALIAS_BUDGET", "parse_yaml"]

_SURROGATE_WARNING = "a \\ud800-\\udfff escape without its pair names no character; read as U+FFFD"


def parse_yaml(text: str, name: str) -> Iterator[Record | Problem]:
    """Parse YAML safely (no object construction), keeping the line of every key and item.

    A document that is a list gives one record per item; any other document is one record.
    A problem inside a record (a repeated key, NaN, a control character...) replaces that
    record; a syntax error or a passed bound ends the file with a problem at its line (index
    ``None``), after the records before it.
    """
    controls = Controls(text)
    loader = RecordLoader(controls.text)
    index = 0
    try:
        for node in loader.record_nodes():
            yield from _record(
                loader, node, Location(name, node.start_mark.line + 1, index), controls
            )
            index += 1
    except yaml.MarkedYAMLError as error:
        yield _file_problem(error, name, controls)
    except yaml.YAMLError as error:
        yield Problem(Location(name), "", f"invalid YAML: {error}")
    except RecursionError:
        yield Problem(
            Location(name), "", f"nested deeper than {MAX_NESTING} levels; flatten the document"
        )
    finally:
        loader.dispose()
    stray = controls.unreported()
    if stray:
        yield Problem(
            Location(name, controls.line(stray[0])), "", controls.message(stray[0], len(stray) - 1)
        )
        controls.reported.update(stray)


def _record(
    loader: RecordLoader, node: Node, location: Location, controls: Controls
) -> Iterator[Record | Problem]:
    found = controls.within(node.start_mark.index, _content_end(node, node))
    if found:
        yield Problem(
            location.at_line(controls.line(found[0])),
            "",
            controls.message(found[0], len(found) - 1),
        )
        return
    walk = RecordWalk(loader, controls.stand_in)
    walk.visit(node, (), 0)
    if walk.problems:
        for loc, line, message in walk.problems:
            yield Problem(location.at_line(line), format_path(loc) if loc else "", message)
        return
    try:
        value = loader.construct_document(node)
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        # The walk refuses what construction would fail on; this is the backstop.
        yield Problem(location, "", f"cannot be read as JSON data: {error}")
        return
    for loc, line in walk.warnings:
        yield Problem(
            location.at_line(line), format_path(loc) if loc else "$", _SURROGATE_WARNING, True
        )
    yield Record(location, value, walk.lines)


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


def _file_problem(error: yaml.MarkedYAMLError, name: str, controls: Controls) -> Problem:
    mark = error.problem_mark or error.context_mark
    if mark is None:
        return Problem(Location(name), "", f"invalid YAML: {error.problem or error}")
    line = mark.line + 1
    at_control = controls.within(mark.index, mark.index + 1)
    if at_control:
        return Problem(Location(name, line), "", controls.message(at_control[0]))
    if isinstance(error, Refused):
        return Problem(Location(name, line), "", str(error.problem))
    message = f"invalid YAML: {error.problem}"
    if "'\\t'" in str(error.problem):
        message += "; indent with spaces (YAML does not allow tabs there)"
    context = error.context_mark
    if error.context and context is not None and context.line != mark.line:
        message += f" ({error.context} on line {context.line + 1})"
    return Problem(Location(name, line), "", message)
