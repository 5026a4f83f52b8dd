"""docs/cli.md, the CLI reference, shows each option's default as ``kp --help`` does.

mkdocs-click's table style prints ``Option.default`` as it is, and click 8.3 made an option
without a default hold ``Sentinel.UNSET``: the table said ``Sentinel.UNSET`` for 129 options.
The page uses the plain style, which is click's own ``--help`` text."""

from __future__ import annotations

import markdown  # the test extra's, with mkdocs-click and pymdown-extensions
import pytest

from tests.paths import REPO

PAGE = (REPO / "docs" / "cli.md").read_text("utf-8")


@pytest.fixture(scope="module")
def html() -> str:
    """The page as mkdocs renders it: Markdown with the mkdocs-click extension (mkdocs.yml)."""
    return str(markdown.Markdown(extensions=["mkdocs-click", "pymdownx.superfences"]).convert(PAGE))


def test_no_option_shows_clicks_unset_sentinel(html: str) -> None:
    """No default on the page is click's placeholder for "no default"."""
    assert "kp score [OPTIONS]" in html  # the commands were rendered at all
    assert "Sentinel" not in html
    assert "UNSET" not in html


def test_a_default_shows_as_kp_help_prints_it(html: str) -> None:
    """An option with a default shows it (``--device``, ``--engine``); one without, none."""
    assert html.count("[default: cpu]") == 4  # score, select, dedupe, split
    assert "[default: local]" in html
    assert "--no-embedder                   Score without an embedder" in html
    assert "[default: None]" not in html
    assert "[default: False]" not in html
