"""Rows and traces made in Python are checked as a file's JSON is, at the one place they enter."""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import knowledgepulse as kp
from knowledgepulse import sources
from knowledgepulse.errors import TraceValidationError
from knowledgepulse.evals.cases import MalformedCase, case_inputs
from knowledgepulse.records import Problem
from knowledgepulse.runs.api import redact
from knowledgepulse.runs.splits import split
from knowledgepulse.trace import TraceItem
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import trace_json


def _cycle() -> dict[str, Any]:
    inner: dict[str, Any] = {}
    inner["self"] = inner
    return inner


def _deep() -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(100_000):
        value = {"a": value}
    return value


BAD: dict[str, tuple[Callable[[], Any], str, str]] = {
    "nan": (lambda: float("nan"), "", "NaN and infinite numbers are not valid JSON"),
    "infinity": (lambda: float("-inf"), "", "NaN and infinite numbers are not valid JSON"),
    "cycle": (_cycle, ".self", "a value that contains itself (a reference cycle)"),
    "object": (object, "", "a Python object, which JSON has no value for"),
    "set": (lambda: {1, 2}, "", "a Python set, which JSON has no value for"),
    "bytes": (lambda: b"\xff", "", "a Python bytes, which JSON has no value for"),
    "deep": (_deep, ".a.a", "nested deeper than 100 levels"),
    "huge int": (lambda: 10**400, "", "a number past a double"),
}


def _bad_trace(kind: str) -> dict[str, Any]:
    trace = trace_json(trace_id="kp:trace:bad")
    trace["steps"][0]["input"] = {"x": BAD[kind][0]()}
    return trace


def _scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=None)


CALLS: dict[str, Callable[[list[Any], Callable[[Problem], object]], object]] = {
    "score": lambda rows, told: kp.score(rows, scorer=_scorer(), on_problem=told),
    "annotate": lambda rows, told: kp.annotate(rows, scorer=_scorer(), on_problem=told),
    "select": lambda rows, told: kp.select(rows, scorer=_scorer(), on_problem=told),
    "dedupe": lambda rows, told: kp.dedupe(rows, by="task", scorer=_scorer(), on_problem=told),
    "redact": lambda rows, told: redact(rows, on_problem=told),
    "split": lambda rows, told: split(rows, test=0.5, on_problem=told),
    "convert": lambda rows, told: [
        told(item) for item in sources.convert(rows) if isinstance(item, Problem)
    ],
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("kind", BAD)
def test_a_row_no_json_file_could_hold_is_its_rows_problem_and_the_rest_are_read(
    kind: str, call: str
) -> None:
    """NaN, a cycle, a set, bytes, a depth or an int no file could hold: a located problem."""
    told: list[Problem] = []
    rows = [trace_json(trace_id="kp:trace:good"), _bad_trace(kind), trace_json()]
    CALLS[call](rows, told.append)
    errors = [problem for problem in told if not problem.warning]
    assert [str(problem.location) for problem in errors] == ["rows:2"]
    assert errors[0].path.startswith(f"steps[0].input.x{BAD[kind][1]}")
    assert errors[0].message.startswith(BAD[kind][2])
    assert "; " in errors[0].message  # and how to fix it


@pytest.mark.parametrize("kind", BAD)
def test_parse_trace_refuses_a_value_no_json_file_could_hold_at_its_path(kind: str) -> None:
    """One document: the library's error, naming the path, never a crash when it is written."""
    with pytest.raises(TraceValidationError) as caught:
        kp.parse_trace(_bad_trace(kind), source="t")
    (problem,) = caught.value.problems
    assert problem.path.startswith(f"steps[0].input.x{BAD[kind][1]}")
    assert problem.message.startswith(BAD[kind][2])


def test_python_values_that_stand_for_json_ones_are_kept() -> None:
    """Datetimes, Decimal, NumPy and pandas values, a shared (not cyclic) list: read as before."""
    shared = [1, 2]
    trace = trace_json()
    trace["steps"][0]["input"] = {
        "when": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
        "stamp": pd.Timestamp("2026-01-01"),
        "price": decimal.Decimal("1.50"),
        "count": np.int64(3),
        "vector": np.array([1.0, 2.0]),
        "a": shared,
        "b": shared,
        "big": 2**70,
    }
    # Read as before (pydantic writes NumPy scalars only in Python mode: as they were).
    assert kp.parse_trace(trace).steps[0].input == trace["steps"][0]["input"]
    (item,) = sources.convert([trace])
    assert isinstance(item, TraceItem)


def test_a_frames_missing_cells_and_an_arrow_binary_column_are_read() -> None:
    """NaN (pandas' missing value) in a column, and bytes of a binary column, are no problem."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    frame = pd.DataFrame({"messages": [messages, messages], "reward": [0.5, None]})
    table = pa.table({"messages": [messages], "image": pa.array([b"\x89PNG\xff"], pa.binary())})
    for data in (frame, table):
        told: list[Problem] = []
        scored = kp.score(data, scorer=_scorer(), on_problem=told.append)
        assert len(scored) == len(data)
        assert [p for p in told if not p.warning] == []


@pytest.mark.parametrize("kind", ["nan", "cycle", "set"])
def test_an_eval_case_given_as_a_dict_is_checked_as_a_case_files_is(kind: str) -> None:
    """A case made in Python that no case file could hold is malformed at its path."""
    case = {"id": "c1", "actual": {"output": "x", "extra": BAD[kind][0]()}}
    (read,) = case_inputs([case])
    assert isinstance(read, MalformedCase)
    assert [(p.path, p.message.startswith(BAD[kind][2])) for p in read.problems] == [
        (f"actual.extra{BAD[kind][1]}", True)
    ]


MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
LISTS_WITH_NAN = {
    # pandas makes a list of integers with a null a float array with NaN there.
    "int list with a null": pa.array([[1, None], [2]], pa.list_(pa.int64())),
    # A float list holds NaN (and infinity) as values: a logprob, a loss.
    "float list with NaN": pa.array([[0.5, math.nan], [-math.inf]], pa.list_(pa.float64())),
    "struct with a NaN": pa.array([{"scores": [math.nan]}, {"scores": None}]),
}


@pytest.mark.parametrize("form", ["arrow", "pandas", "datasets"])
@pytest.mark.parametrize("extra", LISTS_WITH_NAN)
@pytest.mark.parametrize("call", CALLS)
def test_a_tables_nan_inside_a_column_is_its_value_not_a_refusal(
    form: str, extra: str, call: str
) -> None:
    """A table's row with NaN inside a column reads as the Parquet file of the table does.

    Each such row was refused whole before (``extra[1]: NaN and infinite numbers are not valid
    JSON``), in a DataFrame, an Arrow table and a ``Dataset`` alike, while ``kp score`` of the
    same table's Parquet file read it: its conversation had nothing wrong.
    """
    import datasets

    table = pa.table({"messages": [MESSAGES, MESSAGES], "extra": LISTS_WITH_NAN[extra]})
    data: Any = {
        "arrow": table,
        "pandas": table.to_pandas(),
        "datasets": datasets.Dataset(table),
    }[form]
    told: list[Problem] = []
    CALLS[call](data, told.append)
    assert [p.message for p in told if not p.warning] == []


def test_nan_inside_a_row_dicts_column_is_still_refused() -> None:
    """Row dicts are JSON values, as a file's lines are: NaN inside a column is no JSON."""
    told: list[Problem] = []
    kp.score(
        [{"messages": MESSAGES, "extra": [1.0, math.nan]}], scorer=_scorer(), on_problem=told.append
    )
    assert [(p.path, p.message.startswith(BAD["nan"][2])) for p in told] == [("extra[1]", True)]


@pytest.mark.parametrize("form", ["arrow", "pandas", "datasets", "row dicts"])
@pytest.mark.parametrize("call", CALLS)
def test_a_duration_column_is_its_rows_value_not_a_refusal(form: str, call: str) -> None:
    """A run's duration (an Arrow ``duration``, pandas' ``Timedelta``) is read as a file's is.

    Each such row was refused whole before (``elapsed: a Python timedelta, which JSON has no
    value for``), in every form held in memory, while ``kp score`` of the same table's Parquet
    file read it, and every writer writes one (ISO 8601, ``PT1.5S``).
    """
    import datasets

    elapsed = pa.array([datetime.timedelta(seconds=1.5), None], pa.duration("us"))
    table = pa.table({"messages": [MESSAGES, MESSAGES], "elapsed": elapsed})
    data: Any = {
        "arrow": table,
        "pandas": table.to_pandas(),
        "datasets": datasets.Dataset(table),
        "row dicts": table.to_pylist(),
    }[form]
    told: list[Problem] = []
    CALLS[call](data, told.append)
    assert [p.message for p in told if not p.warning] == []


@pytest.mark.parametrize("form", ["pandas", "row dicts"])
def test_a_column_named_by_a_number_is_named_in_its_rows_problem(form: str) -> None:
    """A DataFrame's column ``0`` refuses each row naming the key and the string to give.

    It said only ``$: an object key that is not a string``, for every row, leaving the user
    to find which of the columns it was.
    """
    frame = pd.DataFrame({"messages": [MESSAGES], 0: [1]})
    data: Any = frame if form == "pandas" else frame.to_dict(orient="records")
    told: list[Problem] = []
    kp.score(data, scorer=_scorer(), on_problem=told.append)
    assert [p.message for p in told] == [
        "an object key that is not a string: the key 0 is a Python int; JSON keys are "
        "strings, so give '0' (a DataFrame's columns: frame.columns = frame.columns.map(str))"
    ]
