"""The size of the code, its public surface and its import cycles, as issues 17 and 26 count them.

Prints the lines and modules under ``src/knowledgepulse`` (all of it, outside ``integrations/``
and ``sources/``, and ``cli/``), the names in the ``__all__`` lists of public modules (every
module whose dotted path has no part starting with ``_``), the ``cli/`` modules that import a
command module, and the import cycles among modules (imports under ``TYPE_CHECKING`` left out,
as import-linter leaves them out). Run: ``python bench/code_size.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[1] / "src" / "knowledgepulse"


def lines_and_modules(paths: list[Path]) -> tuple[int, int]:
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in paths), len(paths)


def modules_in_cycles() -> list[tuple[str, str]]:
    """Each direct import ``a -> b`` for which ``b`` also leads back to ``a``."""
    graph = grimp.build_graph("knowledgepulse", exclude_type_checking_imports=True)
    found = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if graph.find_shortest_chain(importer=imported, imported=module) is not None:
                found.append((module, imported))
    return found


def public_names(paths: list[Path]) -> dict[str, int]:
    """Each public module's dotted name and the length of its ``__all__`` (read, not imported)."""
    found = {}
    for path in paths:
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert isinstance(node, ast.Assign)
                found[".".join(parts)] = len(ast.literal_eval(node.value))
    return found


COMMANDS = ("score", "curate", "split", "convert", "redact", "inspect", "eval", "schema")


def cli_command_imports() -> list[tuple[str, str]]:
    """Each ``cli`` module that imports a command module of ``cli`` other than itself."""
    graph = grimp.build_graph("knowledgepulse", exclude_type_checking_imports=True)
    commands = {f"knowledgepulse.cli.{name}" for name in COMMANDS} & graph.modules
    return [
        (module, imported)
        for module in sorted(m for m in graph.modules if m.startswith("knowledgepulse.cli."))
        for imported in sorted(graph.find_modules_directly_imported_by(module) & commands)
        if imported != module
    ]


def main() -> None:
    every = sorted(SRC.rglob("*.py"))
    # The readers (sources/) and the live collectors (integrations/) were one package when
    # issue 17 counted "outside integrations/".
    readers = ("integrations", "sources")
    outside = [path for path in every if path.relative_to(SRC).parts[0] not in readers]
    cli = [path for path in every if path.relative_to(SRC).parts[0] == "cli"]
    counted = (("src/", every), ("outside integrations, sources", outside), ("cli/", cli))
    for label, paths in counted:
        lines, modules = lines_and_modules(paths)
        print(f"{label:<30} {lines:>6} lines in {modules:>3} modules")
    names = public_names(every)
    print(f"names in public __all__ lists: {sum(names.values())} in {len(names)} modules")
    for module, count in sorted(names.items(), key=lambda item: -item[1])[:8]:
        print(f"  {count:>4} {module}")
    crossing = cli_command_imports()
    print(f"cli modules importing another command: {len(crossing)}")
    for importer, imported in crossing:
        print(f"  {importer} -> {imported}")
    cyclic = modules_in_cycles()
    print(f"imports inside a cycle: {len(cyclic)}")
    for importer, imported in cyclic:
        print(f"  {importer} -> {imported}")


if __name__ == "__main__":
    main()
