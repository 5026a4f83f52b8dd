"""Fixtures for the evals tests (builders live in tests/evals/builders.py)."""

from __future__ import annotations

import pytest

from knowledgepulse.evals.models import Case
from tests.evals.builders import make_case, op, page


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
