"""Pages, blocks, operations and cases: the data the evaluation scorers compare.

A case's output and expectation may be any JSON value; :class:`ActualOutput` and
:class:`ExpectedOutput` are how the bulk-edit scorers (pages of blocks, edit operations) read them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from knowledgepulse.trace.models import JSON_SCHEMA_DIALECT

Position = Literal["before", "after"]
KNOWN_OPERATION_TYPES: tuple[str, ...] = ("insert", "update", "delete")
CASE_ID_PATTERN = r"\S"
"""A case id names its case in every report (a test's name under pytest): it has a visible
character (the pattern is searched, not matched whole)."""


class _CaseModel(BaseModel):
    """Case files are written by people: unknown keys are typos, so they are errors."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, allow_inf_nan=False, populate_by_name=True
    )


def _refuse_repeats(ids: Iterable[str], rule: str) -> None:
    repeated = sorted(item for item, n in Counter(ids).items() if n > 1)
    if repeated:
        raise ValueError(f"{rule}; repeated: {', '.join(repeated)}")


class Block(_CaseModel):
    """One block of a page: a paragraph, a heading, a list item..."""

    id: StrictStr = Field(description="The block's id, unique within its page.")
    type: StrictStr = Field(description="The block's kind, e.g. 'paragraph' or 'heading'.")
    content: StrictStr = Field(description="The block's text.")


class Page(_CaseModel):
    """A page as the model saw it: an ordered list of blocks."""

    id: StrictStr = Field(description="The page's id, unique within its case.")
    title: StrictStr | None = Field(default=None, description="The page's title.")
    blocks: list[Block] = Field(description="The page's blocks, in order.")

    @model_validator(mode="after")
    def _unique_block_ids(self) -> Page:
        _refuse_repeats((b.id for b in self.blocks), "block ids must be unique within a page")
        return self

    @property
    def content(self) -> str:
        """The page's blocks' contents joined with newlines."""
        return "\n".join(block.content for block in self.blocks)


class Operation(BaseModel):
    """One edit operation, as a model produced it or as a case expects it.

    An unknown ``type`` is kept: never applicable, never matching. Extra keys are kept, ignored.
    """

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    type: StrictStr = Field(description="'insert', 'update' or 'delete'.")
    page_id: StrictStr | None = Field(
        default=None, alias="pageId", description="The page; optional when the case has one page."
    )
    target_block_id: StrictStr | None = Field(
        default=None, alias="targetBlockId", description="The target block's id."
    )
    target_index: StrictInt | None = Field(
        default=None,
        alias="targetIndex",
        description="0-based index into the page's ORIGINAL blocks.",
    )
    position: Position | None = Field(
        default=None, description="Insert only: 'before' or 'after' the target (default 'after')."
    )
    content: StrictStr | None = Field(default=None, description="New content (insert, update).")

    @property
    def effective_position(self) -> Position:
        """Where an insert goes relative to its target: ``after`` unless it says ``before``."""
        return self.position or "after"

    @property
    def has_target(self) -> bool:
        """Whether the operation names a target block at all."""
        return self.target_block_id is not None or self.target_index is not None

    def to_json(self) -> dict[str, Any]:
        """The operation as it appears in case files (camelCase keys, unset fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class ExpectedOperation(Operation):
    """An operation a case expects; written by people, so unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ActualOutput(_CaseModel):
    """What the workflow produced for the case."""

    operations: list[Operation] = Field(default_factory=list, description="The model's operations.")
    duration_ms: Annotated[float, Field(ge=0, strict=True)] | None = Field(
        default=None, alias="durationMs", description="How long the workflow took, in ms."
    )


_PATTERN_LIST: TypeAdapter[list[str]] = TypeAdapter(list[StrictStr])
_PATTERN_MAP: TypeAdapter[dict[str, list[str]]] = TypeAdapter(dict[str, list[StrictStr]])


def _one_form(value: Any, _: ValidatorFunctionWrapHandler) -> list[str] | dict[str, list[str]]:
    # The form is chosen by the value's JSON type, so a problem is told once, at its own path:
    # pydantic's union told it for both forms, under their Python types
    # ("contentPatterns['dict[str,list[str]]']: ... expected a JSON object").
    if isinstance(value, list):
        return _PATTERN_LIST.validate_python(value)
    if isinstance(value, dict):
        return _PATTERN_MAP.validate_python(value)
    raise PydanticCustomError(
        "content_patterns",
        "Input should be a list of regular expressions, or an object of page id to such a list",
    )


ContentPatterns = Annotated[dict[str, list[StrictStr]] | list[StrictStr], WrapValidator(_one_form)]


class ExpectedOutput(_CaseModel):
    """What the case expects."""

    operations: list[ExpectedOperation] = Field(default_factory=list)
    content_patterns: ContentPatterns | None = Field(
        default=None,
        alias="contentPatterns",
        description="Regexes searched in each page's content after the actual operations: "
        "{pageId: [regex, ...]}, or a plain list when the case has one page.",
    )


_JSON_TAGS = frozenset({"dict", "list", "str", "int", "float", "bool", "[key]"})


def _data_path(value: Any, loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A JSON value's error location without the type tags pydantic's ``JsonValue`` puts in it.

    ``JsonValue`` is a union: its errors name the member before each key or index and at the
    end (``dict, 'durationMs', float``). Walking the value tells a tag from a key of that name.
    """
    path: list[str | int] = []
    i = 0
    while i < len(loc):
        part, key = loc[i], loc[i + 1] if i + 1 < len(loc) else None
        if part == "dict" and isinstance(value, dict) and key is not None:
            path.append(key)
            value, i = value.get(key), i + 2
        elif part == "list" and isinstance(value, list) and isinstance(key, int):
            path.append(key)
            value, i = value[key] if 0 <= key < len(value) else None, i + 2
        else:
            if not (isinstance(part, str) and part in _JSON_TAGS):
                path.append(part)
            i += 1
    return tuple(path)


def _untagged(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # A NaN at actual.durationMs was told at 'actual.dict.durationMs.float' (from Python: files
    # refuse NaN as they are read).
    try:
        return handler(value)
    except ValidationError as error:
        details = [
            InitErrorDetails(
                type=PydanticCustomError(item["type"], item["msg"]),
                loc=_data_path(value, tuple(item["loc"])),
                input=item["input"],
            )
            for item in error.errors()
        ]
        raise ValidationError.from_exception_data(error.title, details) from None


JsonData = Annotated[JsonValue, WrapValidator(_untagged)]
"""Any JSON value; a problem inside it is located by its JSON path alone."""


class Case(_CaseModel):
    """One evaluation case: the input the workflow sees, its actual output and what was expected.

    The bulk-edit form of ``actual`` and ``expected`` is checked only for the scorers reading it.
    """

    id: StrictStr = Field(
        pattern=CASE_ID_PATTERN,
        description="The case's id, shown in every report; not blank.",
    )
    description: StrictStr | None = None
    instruction: StrictStr | None = Field(
        default=None, description="What the workflow is asked to do; a task receives it."
    )
    input: JsonData = Field(
        default=None,
        description="The workflow's input besides the pages, any JSON value (a text, say); a "
        "task receives it.",
    )
    pages: list[Page] = Field(
        default_factory=list,
        description="The original pages; the bulk-edit scorers need at least one.",
    )
    actual: JsonData = Field(
        default=None,
        description="The workflow's output, any JSON value; the bulk-edit scorers read "
        "{operations, durationMs}. Left out when a task produces it.",
    )
    expected: JsonData = Field(
        default=None,
        description="What was expected, any JSON value; the bulk-edit scorers read "
        "{operations, contentPatterns}.",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="Free-form, kept as is.")
    _lines: Mapping[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _unique_pages(self) -> Case:
        _refuse_repeats((p.id for p in self.pages), "page ids must be unique within a case")
        return self

    @property
    def source_lines(self) -> Mapping[tuple[str | int, ...], int]:
        """The line of each path inside the case, when its file was YAML (to locate problems)."""
        return self._lines

    @property
    def has_actual(self) -> bool:
        """Whether the case gives an ``actual`` output (``null`` included)."""
        return "actual" in self.model_fields_set

    @property
    def has_expected(self) -> bool:
        """Whether the case gives an ``expected`` value (``null`` included)."""
        return "expected" in self.model_fields_set

    def with_actual(self, actual: JsonValue) -> Case:
        """The same case with another actual output (a task's), keeping where it was read."""
        return self.model_copy(update={"actual": actual})


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of one evaluation case (a JSONL line, or an item of a YAML list)."""
    return {"$schema": JSON_SCHEMA_DIALECT, **Case.model_json_schema(by_alias=True)}
