"""The size of the code and its import cycles, as issue 17's goals count them.

Prints the lines and modules under ``src/knowledgepulse`` (all of it, and outside
``integrations/``) and the import cycles among modules (imports under ``TYPE_CHECKING`` left out,
as import-linter leaves them out). Run: ``python bench/code_size.py``.
"""

from __future__ import annotations

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


def main() -> None:
    every = sorted(SRC.rglob("*.py"))
    outside = [path for path in every if "integrations" not in path.relative_to(SRC).parts]
    for label, paths in (("src/", every), ("src/ outside integrations/", outside)):
        lines, modules = lines_and_modules(paths)
        print(f"{label:<28} {lines:>6} lines in {modules:>3} modules")
    cyclic = modules_in_cycles()
    print(f"imports inside a cycle: {len(cyclic)}")
    for importer, imported in cyclic:
        print(f"  {importer} -> {imported}")


if __name__ == "__main__":
    main()
