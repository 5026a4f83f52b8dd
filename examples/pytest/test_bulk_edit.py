"""Scoring a model's answer inside your own test: `assert_passes` fails it with the diagnosis."""

from typing import Any

from knowledgepulse.evals import evaluate_case, parse_case, preset
from knowledgepulse.testing import assert_passes

PAGE = {
    "id": "shop-help",
    "blocks": [
        {"id": "h1", "type": "heading", "content": "Your Cart"},
        {"id": "p1", "type": "paragraph", "content": "Items stay in your Cart for 30 days."},
    ],
}


def rename_cart(page: dict[str, Any]) -> list[dict[str, Any]]:
    """Stands in for the model under test: one update per block that mentions Cart."""
    return [
        {
            "type": "update",
            "targetBlockId": b["id"],
            "content": b["content"].replace("Cart", "Basket"),
        }
        for b in page["blocks"]
        if "Cart" in b["content"]
    ]


def test_rename_cart_to_basket() -> None:
    """The model renames every Cart, and nothing else: the strict suite passes."""
    case = parse_case(
        {
            "id": "rename-cart",
            "pages": [PAGE],
            "actual": {"operations": rename_cart(PAGE)},
            "expected": {
                "operations": [
                    {"type": "update", "targetBlockId": "h1"},
                    {"type": "update", "targetBlockId": "p1"},
                ],
                "contentPatterns": ["Basket.*Basket", r"\A(?!.*Cart)"],
            },
        }
    )
    assert_passes(evaluate_case(preset("strict"), case))
