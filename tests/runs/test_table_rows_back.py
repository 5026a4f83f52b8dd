"""A table's rows come back in its own form whatever its other columns hold (a property).

For every column of values pyarrow can hold (nested lists and structs, nulls, NaN and
infinities, large integers, text), beside a conversation: ``annotate`` gives the same table
back (its schema, its values, in order) with the ``kp_`` columns after it, and reads every row
(``kp_error`` empty), as an Arrow table, a DataFrame and a ``datasets.Dataset`` alike. Checked
with pyarrow's own equality, not kp's reader.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse import runs
from knowledgepulse.value.scorer import TraceValueScorer

MESSAGES = [{"role": "user", "content": "Book a table"}, {"role": "assistant", "content": "Done."}]

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.fixed_dictionaries({"a": inner, "b": inner}),
    ),
    max_leaves=6,
)


def _column(values: list[Any]) -> pa.Array | None:
    """The values as one Arrow column, or ``None`` where pyarrow cannot type them as one."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None


def _same(given: pa.Table, back: pa.Table) -> bool:
    """The same schema and values, NaN equal to NaN (pyarrow's ``equals`` says it is not)."""
    return back.schema.equals(given.schema) and _values_equal(back.to_pylist(), given.to_pylist())


def _values_equal(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_values_equal(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_values_equal, left, right))
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


def _scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=None)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(values=st.lists(VALUES, min_size=1, max_size=4))
def test_annotate_gives_an_arrow_table_back_whatever_its_other_column_holds(
    values: list[Any],
) -> None:
    extra = _column(values)
    if extra is None:
        return
    table = pa.table({"messages": [MESSAGES] * len(values), "extra": extra})
    out = runs.annotate(table, scorer=_scorer())
    assert out.schema.names[:2] == ["messages", "extra"]
    assert _same(table, out.select(["messages", "extra"]))
    assert out.column("kp_error").null_count == len(values)


@pytest.mark.parametrize("form", ["pandas", "datasets"])
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(values=st.lists(VALUES, min_size=1, max_size=3))
def test_every_row_of_a_frame_or_dataset_is_read_whatever_its_other_column_holds(
    form: str, values: list[Any]
) -> None:
    extra = _column(values)
    if extra is None:
        return
    table = pa.table({"messages": [MESSAGES] * len(values), "extra": extra})
    if form == "pandas":
        frame = table.to_pandas()
        out = runs.annotate(frame, scorer=_scorer())
        assert list(out.columns[:2]) == ["messages", "extra"]
        assert out.index.equals(frame.index)
        assert bool(pd.isna(out["kp_error"]).all())
        return
    import datasets

    dataset = datasets.Dataset(table)
    out = runs.annotate(dataset, scorer=_scorer())
    assert _same(dataset.data.table, out.data.table.select(["messages", "extra"]))
    assert out["kp_error"] == [None] * len(values)


def test_the_law_reaches_nan_in_a_list() -> None:
    """The case that failed: NaN inside a list column (a logprob), read, the table the same."""
    table = pa.table({"messages": [MESSAGES], "extra": [[0.5, math.nan]]})
    out = runs.annotate(table, scorer=_scorer())
    assert _same(table, out.select(["messages", "extra"]))
    assert out.column("kp_error").to_pylist() == [None]
