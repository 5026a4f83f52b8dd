"""YAML input: parsed safely (no object construction), keeping the line of every key and item."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from knowledgepulse.records.model import Location, Problem, Record
from knowledgepulse.records.strict_json import _too_deep  # noqa: F401 - the helper hardening YAML may use it


def parse_yaml(text: str, name: str) -> Iterator[Record | Problem]:
    """Parse YAML safely (no object construction), keeping the line of every key and item."""
    loader = yaml.SafeLoader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            value = loader.construct_document(node)
            lines: dict[tuple[str | int, ...], int] = {}
            _node_lines(node, (), lines)
            if isinstance(node, yaml.SequenceNode):
                for position, item in enumerate(node.value):
                    item_lines = {
                        path[1:]: line for path, line in lines.items() if path[:1] == (position,)
                    }
                    location = Location(name, item.start_mark.line + 1, index)
                    index += 1
                    yield (Record(location, value[position], item_lines))
            else:
                yield (Record(Location(name, node.start_mark.line + 1, index), value, lines))
                index += 1
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        yield Problem(Location(name, line), "", f"invalid YAML: {error.problem or error}")
    except yaml.YAMLError as error:
        yield Problem(Location(name), "", f"invalid YAML: {error}")
    finally:
        loader.dispose()


def _node_lines(
    node: yaml.Node, loc: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int]
) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*loc, str(key_node.value))
            _node_lines(value_node, key, lines)
            lines[key] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            _node_lines(item, (*loc, position), lines)
