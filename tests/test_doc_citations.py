"""The docs cite only what the repository has: every relative link leads to a file, and every
Markdown file named in code (``integrations.md``) is one of the pages or a file of the
repository. The project's specification lives outside it; the pages once cited its files."""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import REPO

PAGES = sorted((REPO / "docs").glob("*.md"))
NAMED_MD = re.compile(r"`([\w./-]+\.md)(?:#[\w-]+)?`")
LINK = re.compile(r"\]\(([^)#\s]+)")


def cited(page: Path) -> list[str]:
    """The ``.md`` files a page names in code spans."""
    return NAMED_MD.findall(page.read_text("utf-8"))


def exists(name: str, page: Path) -> bool:
    """Whether a named file is a page beside ``page`` or a file of the repository."""
    return (page.parent / name).is_file() or (REPO / name).is_file()


def test_every_markdown_file_a_page_names_exists() -> None:
    """No page names a spec file (``trace-value.md``, ``spec/integrations.md``) it does not ship."""
    named = {(page.name, name) for page in PAGES for name in cited(page)}
    assert named  # pages do name files: docs/cache-file.md, corpora/README.md...
    assert {(page, name) for page, name in named if not exists(name, REPO / "docs" / page)} == set()


def test_every_relative_link_leads_to_a_file() -> None:
    """Each ``[text](path)`` that is not a URL leads to a file beside the page."""
    broken = [
        (page.name, link)
        for page in PAGES
        for link in LINK.findall(page.read_text("utf-8"))
        if "://" not in link
        and not link.startswith("mailto:")
        and not (page.parent / link).exists()
    ]
    assert broken == []
