"""Fixtures for the evals tests (builders live in tests/evals/builders.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowledgepulse.evals import scorer as registry
from knowledgepulse.evals.models import Case
from tests.evals.builders import make_case, op, page


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    """Let a test register scorers and reload entry points; restore the registry afterwards."""
    registry.get_scorer_class("operation-accuracy")  # the built-ins are in the snapshot
    saved = dict(registry._scorers.classes)
    loaded = registry._scorers.entry_points_loaded
    yield
    registry._scorers.classes.clear()
    registry._scorers.classes.update(saved)
    registry._scorers.entry_points_loaded = loaded


@pytest.fixture
def cart_case() -> Case:
    """The guide's rename example: 'Cart' to 'Basket' in every block of one page."""
    pages = [page("p1", b1="Add to Cart", b2="Your Cart is empty", b3="Checkout")]
    renames = [
        op("update", "b1", content="Add to Basket"),
        op("update", "b2", content="Your Basket is empty"),
    ]
    return make_case(
        pages,
        actual=renames,
        expected=renames,
        patterns=["Basket.*Basket", "Checkout"],
        duration_ms=1200,
    )
