"""Builders for evaluation cases in tests: short to write, valid unless told otherwise.

``page("p1", b1="Intro", b2="Body")`` is a page with blocks ``b1`` and ``b2``;
``op("update", "b1", content="New")`` an operation targeting block ``b1``;
``make_case(pages, actual=[...], expected=[...])`` a validated :class:`Case`.
``make_suite({"type": "content-quality"})`` a resolved suite. Random valid cases for
hypothesis laws are drawn by :func:`cases`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.scorer import CaseContext, ScoreResult, get_scorer_class
from knowledgepulse.evals.suite import Suite, suite_from_dict

Json = dict[str, Any]


def block(block_id: str, content: str, kind: str = "paragraph") -> Json:
    """One block as JSON."""
    return {"id": block_id, "type": kind, "content": content}


def page(page_id: str, *blocks: Json, title: str | None = None, **contents: str) -> Json:
    """A page as JSON: blocks given as ``block(...)`` dicts, then ``id=content`` keywords."""
    data: Json = {
        "id": page_id,
        "blocks": [*blocks, *(block(bid, text) for bid, text in contents.items())],
    }
    if title is not None:
        data["title"] = title
    return data


def op(
    kind: str,
    target: str | None = None,
    *,
    index: int | None = None,
    page: str | None = None,
    position: str | None = None,
    content: str | None = None,
    **extra: Any,
) -> Json:
    """An operation as JSON; ``target`` is the ``targetBlockId``, ``index`` the ``targetIndex``."""
    fields = {
        "type": kind,
        "pageId": page,
        "targetBlockId": target,
        "targetIndex": index,
        "position": position,
        "content": content,
    }
    return {**{k: v for k, v in fields.items() if v is not None}, **extra}


def make_case(
    pages: Sequence[Json],
    *,
    actual: Sequence[Json] = (),
    expected: Sequence[Json] = (),
    patterns: Mapping[str, list[str]] | list[str] | None = None,
    duration_ms: float | None = None,
    case_id: str = "case-1",
) -> Case:
    """A validated case."""
    actual_json: Json = {"operations": list(actual)}
    if duration_ms is not None:
        actual_json["durationMs"] = duration_ms
    expected_json: Json = {"operations": list(expected)}
    if patterns is not None:
        expected_json["contentPatterns"] = patterns
    return Case.model_validate(
        {"id": case_id, "pages": list(pages), "actual": actual_json, "expected": expected_json}
    )


def evaluate(type_name: str, case: Case, **params: Any) -> ScoreResult:
    """Build the registered scorer from ``params`` and score ``case`` as the runner does."""
    scorer = get_scorer_class(type_name).from_params(params)
    return scorer.score_case(CaseContext.of(case))


def diagnose(type_name: str, case: Case, **params: Any) -> list[str]:
    """The registered scorer's diagnosis of its own result on ``case``."""
    scorer = get_scorer_class(type_name).from_params(params)
    return scorer.diagnose(scorer.score_case(CaseContext.of(case)))


def actual_of(case: Case) -> ActualOutput:
    """The case's ``actual`` in the bulk-edit form."""
    return ActualOutput.model_validate(case.actual)


def expected_of(case: Case) -> ExpectedOutput:
    """The case's ``expected`` in the bulk-edit form."""
    return ExpectedOutput.model_validate(case.expected)


def bulk(case: Case) -> tuple[ActualOutput, ExpectedOutput, list[Page]]:
    """The case's parts in the bulk-edit form: ``scorer.evaluate(*bulk(case))``."""
    context = CaseContext.of(case)
    return context.bulk_actual, context.bulk_expected, case.pages


def contents(page_model: Page) -> list[str]:
    """A page's block contents, in order."""
    return [b.content for b in page_model.blocks]


# --- hypothesis strategies -------------------------------------------------------------------

_BLOCK_IDS = ("b1", "b2", "b3", "b4")
_TEXTS = ("Cart", "Basket", "要約", "まとめ", "", "a\nb", "Cart Cart")
_PATTERNS = ("Cart", "Basket.*Cart", "^Cart$", "要約|まとめ", "(", "[a-z]+", "x{2,}")
KNOWN_TYPES = ("insert", "update", "delete")


@st.composite
def pages_json(draw: st.DrawFn, max_pages: int = 3) -> list[Json]:
    """1 to ``max_pages`` pages with unique ids, each with unique block ids (maybe none)."""
    count = draw(st.integers(1, max_pages))
    built = []
    for n in range(count):
        ids = draw(st.lists(st.sampled_from(_BLOCK_IDS), unique=True, max_size=4))
        built.append(page(f"p{n}", *(block(i, draw(st.sampled_from(_TEXTS))) for i in ids)))
    return built


@st.composite
def operation_json(
    draw: st.DrawFn,
    page_ids: Sequence[str],
    *,
    types: Sequence[str] = (*KNOWN_TYPES, "replace"),
    need_page: bool = False,
) -> Json:
    """A valid operation: any type, target, position and content, on a page of the case or not."""
    page_choice = st.sampled_from([*page_ids, "ghost"])
    return op(
        draw(st.sampled_from(types)),
        draw(st.none() | st.sampled_from([*_BLOCK_IDS, "b9"])),
        index=draw(st.none() | st.integers(-2, 5)),
        page=draw(page_choice if need_page else st.none() | page_choice),
        position=draw(st.none() | st.sampled_from(["before", "after"])),
        content=draw(st.none() | st.sampled_from(_TEXTS)),
    )


@st.composite
def cases(draw: st.DrawFn, *, known_types_only: bool = False) -> Case:
    """A random valid case: pages, actual and expected operations, patterns, maybe a duration."""
    pages = draw(pages_json())
    ids = [p["id"] for p in pages]
    types = KNOWN_TYPES if known_types_only else (*KNOWN_TYPES, "replace")
    several = len(pages) > 1
    actual = draw(st.lists(operation_json(ids, types=types), max_size=6))
    expected = draw(st.lists(operation_json(ids, types=types, need_page=several), max_size=6))
    patterns = draw(
        st.none()
        | st.dictionaries(st.sampled_from([*ids, "ghost"]), st.lists(st.sampled_from(_PATTERNS)))
    )
    duration = draw(st.none() | st.floats(0, 10_000, allow_nan=False))
    return make_case(
        pages, actual=actual, expected=expected, patterns=patterns, duration_ms=duration
    )


def make_suite(*entries: Json, **top: Any) -> Suite:
    """A resolved suite from scorer entries (``{"type": ...}``) and top-level keys."""
    return suite_from_dict({**top, "scorers": list(entries)})
