"""Where the lines of ``cli/`` are, by kind: what is left to cut once the workflows are gone.

Each line of each ``cli`` module is counted once, as the first that applies: blank or comment,
import, decorator (the options a command declares), docstring (a command's is its ``--help``),
signature, option declaration (a ``click.option`` call elsewhere, or a module-level assignment
that calls click), else logic.
Run: ``python bench/cli_size.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "src" / "knowledgepulse" / "cli"
KINDS = ("import", "decorator", "docstring", "signature", "declaration", "logic", "blank")


def _is_text(node: ast.AST) -> bool:
    """Whether ``node`` is a bare string: a docstring where it stands first or after a name."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _docstring(node: ast.AST) -> ast.AST | None:
    body = getattr(node, "body", None)
    return body[0] if isinstance(body, list) and body and _is_text(body[0]) else None


def kinds_of(source: str) -> list[str]:
    """The kind of each line of ``source``."""
    lines = source.splitlines()
    kind = ["blank" if not s.strip() or s.strip().startswith("#") else "logic" for s in lines]

    def mark(first: int, last: int, what: str) -> None:
        for number in range(first - 1, last):
            if kind[number] != "blank":
                kind[number] = what

    tree = ast.parse(source)
    nodes = [tree, *ast.walk(tree)]
    for node in nodes:  # an option declared anywhere: in a group, a helper, a table
        if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("click.option"):
            mark(node.lineno, node.end_lineno or node.lineno, "declaration")
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            mark(node.lineno, node.end_lineno or node.lineno, "import")
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            for decorator in node.decorator_list:
                mark(decorator.lineno, decorator.end_lineno or decorator.lineno, "decorator")
            if isinstance(node, ast.FunctionDef):
                mark(node.lineno, node.body[0].lineno - 1, "signature")
    for before, after in zip(tree.body, tree.body[1:], strict=False):
        if isinstance(before, ast.Assign) and "click." in ast.unparse(before.value):
            mark(before.lineno, before.end_lineno or before.lineno, "declaration")
        if isinstance(before, ast.Assign | ast.AnnAssign) and _is_text(after):
            mark(after.lineno, after.end_lineno or after.lineno, "docstring")
    for node in nodes:
        if (doc := _docstring(node)) is not None:
            assert isinstance(doc, ast.Expr)
            mark(doc.lineno, doc.end_lineno or doc.lineno, "docstring")
    return kind


def main() -> None:
    """Print each module's lines by kind, and the totals."""
    print(f"{'module':14}{'total':>7}" + "".join(f"{k[:7]:>8}" for k in KINDS))
    totals = dict.fromkeys(KINDS, 0)
    for path in sorted(CLI.glob("*.py")):
        kinds = kinds_of(path.read_text(encoding="utf-8"))
        counts = {k: kinds.count(k) for k in KINDS}
        totals = {k: totals[k] + counts[k] for k in KINDS}
        print(f"{path.name:14}{len(kinds):7}" + "".join(f"{counts[k]:8}" for k in KINDS))
    print(f"{'cli/':14}{sum(totals.values()):7}" + "".join(f"{totals[k]:8}" for k in KINDS))


if __name__ == "__main__":
    main()
