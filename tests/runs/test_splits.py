"""``runs.split``: whole groups in one part, the same split for a seed, the input's form back."""

from __future__ import annotations

import json
import random
import unicodedata
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import OutputError, ParameterConflictError, ScorerParameterError
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.records import Location, Record
from knowledgepulse.redact.items import Redactor
from knowledgepulse.runs import dedupe, select, split
from knowledgepulse.runs.splits import key_of, write_split
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value.scorer import TraceValueScorer
from tests.builders import step, trace_json

pd = pytest.importorskip("pandas")  # untyped: no stubs


def chat_rows(tasks: list[int], domains: list[str] | None = None) -> list[dict[str, Any]]:
    """One chat row a run: ``tasks[i]`` is row i's task, ``domains[i]`` its domain."""
    return [
        {
            "id": f"run-{index}",
            "task_id": f"task-{task}",
            **({"domain": domains[index]} if domains else {}),
            "messages": [
                {"role": "user", "content": f"task {task}"},
                {"role": "assistant", "content": f"run {index}"},
            ],
        }
        for index, task in enumerate(tasks)
    ]


def parts_by_id(result: Any) -> dict[str, str]:
    return {item.trace.id: part for item, part in zip(result.items, result.parts, strict=True)}


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=40),
    st.integers(min_value=0, max_value=3),
    st.sampled_from([0.0, 0.2]),
    st.randoms(),
)
def test_no_task_is_on_two_sides_and_the_seed_decides_the_split(
    tasks: list[int], seed: int, validation: float, rng: random.Random
) -> None:
    """Each task's runs share a part; the same seed gives each row the same part in any order."""
    rows = chat_rows(tasks)
    result = split(rows, test=0.3, validation=validation, seed=seed)
    part_of_task: dict[str, str] = {}
    for row, part in zip(rows, result.parts, strict=True):
        assert part_of_task.setdefault(row["task_id"], part) == part
    assert result.shared_groups == []
    shuffled = rows[:]
    rng.shuffle(shuffled)
    assert parts_by_id(split(shuffled, test=0.3, validation=validation, seed=seed)) == (
        parts_by_id(result)
    )


def test_a_dataframe_part_comes_back_as_its_own_rows() -> None:
    """rows(part) of a DataFrame is a DataFrame of that part's rows, index kept."""
    frame = pd.DataFrame(chat_rows([0, 0, 1, 2, 3, 3, 4, 5, 6, 7]))
    result = split(frame, test=0.3, seed=1)
    test = result.rows("test")
    train = result.rows("train")
    assert isinstance(test, pd.DataFrame)
    assert sorted([*test.index, *train.index]) == list(range(10))
    assert set(test["task_id"]).isdisjoint(train["task_id"])


def test_a_part_the_split_has_not_is_an_error_not_an_empty_set() -> None:
    """rows("valid"), or "validation" with none asked for, names the parts there are.

    The library's error (a ValueError too), as for any other bad value a call is given.
    """
    result = split(chat_rows([0, 1, 2, 3]), test=0.5, seed=0)
    for part in ("valid", "validation"):
        with pytest.raises(
            ScorerParameterError,
            match=f"no part '{part}' in this split: its parts are train, test",
        ):
            result.rows(part)
        with pytest.raises(ScorerParameterError):
            result.items_in(part)


def test_tasks_not_read_are_inferred_as_select_infers_them() -> None:
    """Reworded runs of one task are one group: the tasks select infers, not the objectives."""
    objectives = ["refund order 7", "money back for order 7", "refund 7", "write a poem"]
    traces = [
        trace_json(trace_id=f"kp:trace:{n}", objective=objective)
        for n, objective in enumerate(objectives)
    ]
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    result = split(traces, test=0.5, scorer=scorer)
    assert result.tasks_inferred
    assert result.groups == select(traces, scorer=scorer).tasks
    assert len(set(result.groups)) < len(objectives)


# Six unrelated requests in Russian, Chinese and Arabic, two runs of each: the English models
# see every Russian (Chinese, Arabic) text alike, at cosines far past the task threshold.
REQUESTS = {
    "ru": [
        "Забронируйте рейс из Нью-Йорка в Сиэтл на двадцатое мая.",
        "Отмените мой заказ и верните деньги на карту.",
        "Измените адрес доставки моей посылки на Берлин.",
        "Какой прогноз погоды на завтра в Париже?",
        "Обменяйте синюю рубашку на больший размер.",
        "Добавьте второго пассажира и багаж к моему бронированию.",
    ],
    "zh": [
        "预订五月二十日从纽约到西雅图的航班。",
        "取消我的订单并把钱退到我的卡上。",
        "把我包裹的收货地址改为柏林。",
        "明天巴黎的天气预报是什么\uff1f",
        "把蓝色衬衫换成大一号的。",
        "在我的预订中添加第二位乘客和托运行李。",
    ],
    "ar": [
        "احجز رحلة من نيويورك إلى سياتل في العشرين من مايو.",
        "ألغِ طلبي وأعد المال إلى بطاقتي.",
        "غيّر عنوان توصيل طردي إلى برلين.",
        "ما هي توقعات الطقس غدا في باريس؟",
        "استبدل القميص الأزرق بمقاس أكبر.",
        "أضف راكبا ثانيا وأمتعة مسجلة إلى حجزي.",
    ],
}


@pytest.mark.parametrize("language", sorted(REQUESTS))
def test_tasks_in_a_script_the_model_cannot_tell_apart_are_not_one_task(language: str) -> None:
    """Inferred tasks of non-Latin objectives come from equal objectives, not from a cosine
    that the English models make high for any two texts of that script."""
    traces = [
        trace_json(
            trace_id=f"kp:trace:{language}-{n}",
            objective=REQUESTS[language][n % 6],
            step_list=[step(0, "tool_call", REQUESTS[language][n % 6] * 2, tool="respond")],
        )
        for n in range(12)
    ]
    result = split(traces, test=0.3, scorer=TraceValueScorer(embedder=StaticEmbedder()))
    assert result.tasks_inferred
    assert len(set(result.groups)) == 6


def test_a_field_of_the_trace_groups_and_traces_without_it_stand_alone() -> None:
    """--by a dotted path: equal values together; a trace without it is its own group."""
    traces = [trace_json(trace_id=f"kp:trace:{n}", objective=f"job {n}") for n in range(6)]
    for trace in traces[:4]:
        trace["metadata"]["session"] = "s1" if int(trace["id"][-1]) < 2 else "s2"
    result = split(traces, test=0.5, by="metadata.session")
    assert result.without_key == 2
    assert len(set(result.groups)) == 4
    assert result.parts[0] == result.parts[1]
    assert result.parts[2] == result.parts[3]


def test_a_key_is_the_rows_column_first_else_the_traces_field() -> None:
    """key_of by a field: a dataset row's column wins; without it, the trace's dotted path."""
    document = trace_json()
    document["metadata"]["session"] = "from-trace"
    trace = ReasoningTrace.model_validate(document)
    where = Location("rows", 1, 0)

    def item(row: dict[str, Any] | None) -> TraceItem:
        return TraceItem(
            Record(where, document), trace, None if row is None else Record(where, row)
        )

    assert key_of(item({"metadata": {"session": "from-row"}}), "metadata.session") == "from-row"
    assert key_of(item({"other": 1}), "metadata.session") == "from-trace"
    assert key_of(item(None), "metadata.session") == "from-trace"


def test_stratified_each_domain_is_split_in_the_shares() -> None:
    """With stratify, every domain sends about its share to test, not one domain all of it."""
    domains = ["code", "qa"] * 100
    result = split(chat_rows(list(range(200)), domains), test=0.25, stratify="domain")
    for domain in ("code", "qa"):
        parts = [p for p, d in zip(result.parts, domains, strict=True) if d == domain]
        assert parts.count("test") == 25


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"by": ""}, "by=''"),
        ({"stratify": " "}, "stratify=' '"),
        ({"task_field": ""}, "task_field=''"),
    ],
)
def test_an_empty_key_is_refused_naming_its_parameter(settings: dict[str, str], named: str) -> None:
    """An empty group, stratum or task key is an error, not every trace a group of its own."""
    with pytest.raises(ScorerParameterError, match=named):
        split(chat_rows([0, 1]), test=0.5, **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("test", "validation", "named"), [(0.0, 0.0, "test=0.0"), (0.6, 0.4, "validation=0.4")]
)
def test_shares_leaving_no_train_or_no_test_are_refused(
    test: float, validation: float, named: str
) -> None:
    """A share out of range names its parameter."""
    with pytest.raises(ScorerParameterError, match=named):
        split(chat_rows([0, 1]), test=test, validation=validation)


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"task_field": "metadata.task"}, "task_similarity infers the tasks task_field reads"),
        ({"by": "domain"}, "task_similarity infers the tasks of by='task': give by='task'"),
    ],
)
def test_task_similarity_where_no_task_is_inferred_is_refused(
    settings: dict[str, str], words: str
) -> None:
    """task_similarity with tasks read, or grouping by another key: a conflict naming both."""
    with pytest.raises(ParameterConflictError, match=words):
        split([trace_json()], test=0.5, task_similarity=0.5, **settings)  # type: ignore[arg-type]


def test_write_split_gives_each_part_in_the_input_form(tmp_path: Path) -> None:
    """Rows are written back as rows, each part in its file, every row once."""
    rows = chat_rows([0, 0, 1, 2, 3])
    result = split(rows, test=0.4, seed=2)
    files = write_split(result, tmp_path / "out")
    assert sorted(path.name for path in files.values()) == ["test.jsonl", "train.jsonl"]
    written = [
        json.loads(line) for path in files.values() for line in path.read_text().splitlines()
    ]
    assert sorted(row["id"] for row in written) == sorted(row["id"] for row in rows)
    assert all(row in rows for row in written)


def test_a_split_writes_itself_as_write_split_writes_it(tmp_path: Path) -> None:
    """``result.write_to(directory)``, as every other result's: write_split's files, bytes too."""
    result = split(chat_rows([0, 0, 1, 2, 3]), test=0.4, seed=2)
    mine = result.write_to(tmp_path / "mine")
    theirs = write_split(result, tmp_path / "theirs")
    assert {part: path.name for part, path in mine.items()} == {
        part: path.name for part, path in theirs.items()
    }
    assert all(mine[part].read_bytes() == theirs[part].read_bytes() for part in theirs)


@pytest.mark.parametrize("name", ["x.csv", "sets.tsv", "out.arrow"])
def test_a_split_refuses_a_file_name_it_would_make_a_folder_of(tmp_path: Path, name: str) -> None:
    """``write_to("x.csv")`` made a folder named x.csv holding train.jsonl and test.jsonl."""
    result = split(chat_rows([0, 0, 1, 2, 3]), test=0.4, seed=2)
    with pytest.raises(OutputError, match=rf"{name!r} names a file; give a directory"):
        result.write_to(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_write_split_gives_parquet_rows_back_as_parquet(tmp_path: Path) -> None:
    """The parts of a Parquet file's split are Parquet by default, as kp split writes them."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    source = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(chat_rows([0, 0, 1, 2, 3])), source)
    files = write_split(split([str(source)], test=0.4, seed=2), tmp_path / "out")
    assert sorted(path.name for path in files.values()) == ["test.parquet", "train.parquet"]


def test_rows_that_give_no_trace_are_written_apart_with_their_error(tmp_path: Path) -> None:
    """Rows in = rows out: a row kp cannot read is in no part (it cannot be grouped) but in
    ``unread.jsonl``, as it was, with ``kp_error`` saying why."""
    rows = chat_rows([0, 0, 1, 2, 3])
    broken = {"id": "run-broken", "task_id": "task-9", "messages": 7}
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in [*rows[:2], broken, *rows[2:]]))
    result = split([str(path)], test=0.4, seed=2)
    files = write_split(result, tmp_path / "out")
    assert sorted(files) == ["test", "train", "unread"]
    [unread] = [json.loads(line) for line in files["unread"].read_text().splitlines()]
    unread_columns = ("kp_error", "kp_raw")
    assert {key: value for key, value in unread.items() if key not in unread_columns} == broken
    assert "messages" in unread["kp_error"]
    assert unread["kp_raw"] is None  # a JSON object: its columns are its own
    parts = [
        json.loads(line)
        for part in ("train", "test")
        for line in files[part].read_text().splitlines()
    ]
    assert sorted(row["id"] for row in parts) == sorted(row["id"] for row in rows)
    assert result.unread.written == 1


def test_a_set_an_earlier_split_left_in_the_directory_goes(tmp_path: Path) -> None:
    """A second split without validation leaves no stale validation set to leak tasks."""
    rows = chat_rows([0, 0, 1, 2, 3, 4, 5])
    out = tmp_path / "out"
    write_split(split(rows, test=0.3, validation=0.3, seed=2), out)
    (out / "unread.jsonl").write_text("{}\n")
    write_split(split(rows, test=0.4, seed=2), out)
    assert sorted(path.name for path in out.iterdir()) == ["test.jsonl", "train.jsonl"]


def test_a_split_into_the_directory_of_its_input_part_is_refused(tmp_path: Path) -> None:
    """Splitting ``out/validation.jsonl`` into ``out`` would remove its input: refused."""
    out = tmp_path / "out"
    out.mkdir()
    source = out / "validation.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in chat_rows([0, 1, 2, 3])))
    kept = source.read_text()
    with pytest.raises(OutputError, match=r"its input .*validation\.jsonl is there"):
        write_split(split([str(source)], test=0.5, seed=2), out, inputs=[str(source)])
    assert [path.name for path in out.iterdir()] == ["validation.jsonl"]
    assert source.read_text() == kept


def test_redact_cleans_every_part_and_changes_no_group() -> None:
    """Grouped by an e-mail column: the same parts with redact (read before), no e-mail left."""
    rows = chat_rows([0, 1, 2, 3, 4, 5])
    for index, row in enumerate(rows):
        row["user"] = f"user{index % 3}@corp.io"
    plain = split(rows, test=0.3, by="user", seed=2)
    redacted = split(rows, test=0.3, by="user", seed=2, redact=Redactor("aggregated"))
    assert redacted.parts == plain.parts
    assert len(set(redacted.groups)) == 3
    written = json.dumps([redacted.rows(part) for part in ("train", "test")])
    assert "@corp.io" not in written
    assert written.count("[REDACTED:email]") == 6
    assert redacted.redactor is not None
    assert redacted.redactor.types["email"] == 6


def test_a_parquet_value_json_has_no_type_for_groups_by_its_text() -> None:
    """Split by a timestamp or decimal column of Arrow rows: groups by value, no TypeError."""
    pa = pytest.importorskip("pyarrow")
    rows = chat_rows([0, 1, 2, 3])
    for index, row in enumerate(rows):
        row["started"] = datetime(2024, 1, 1 + index % 2, tzinfo=UTC)
        row["cost"] = Decimal(index % 2)
    for by in ("started", "cost"):
        result = split(pa.Table.from_pylist(rows), test=0.5, by=by, seed=0)
        assert len(set(result.groups)) == 2
        assert result.shared_groups == []


def test_a_split_stopped_between_two_sets_writes_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a later set is written: the directory holds the earlier split, byte for
    byte; before, the sets written first had replaced its files, and kp said nothing was."""
    out = tmp_path / "out"
    write_split(split(chat_rows([0, 1, 2, 3, 4, 5]), test=0.3, validation=0.3, seed=1), out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    result = split(chat_rows([6, 7, 8, 9]), test=0.5, seed=1)
    last = list(result.fractions)[-1]
    items_in = type(result).items_in

    def stopped(self: Any, part: str) -> Any:
        if part == last:
            raise KeyboardInterrupt
        return items_in(self, part)

    monkeypatch.setattr(type(result), "items_in", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_split(result, out)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_a_split_stopped_leaves_no_directory_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the sets are written to a new directory: neither it nor the parents it made
    are left (before, kp said nothing was written and left them, empty); one that was there
    stays."""
    result = split(chat_rows([0, 1, 2, 3]), test=0.5, seed=1)
    items_in = type(result).items_in

    def stopped(self: Any, part: str) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(type(result), "items_in", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_split(result, tmp_path / "new" / "nested" / "out")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "there").mkdir()
    with pytest.raises(KeyboardInterrupt):
        write_split(result, tmp_path / "there" / "out")
    assert [path.name for path in tmp_path.iterdir()] == ["there"]
    assert list((tmp_path / "there").iterdir()) == []
    monkeypatch.setattr(type(result), "items_in", items_in)
    assert set(write_split(result, tmp_path / "new" / "out")) == {"train", "test"}


@pytest.mark.parametrize("language", sorted(REQUESTS))
def test_near_duplicates_in_a_script_the_model_cannot_tell_apart_ask_the_same(
    language: str,
) -> None:
    """dedupe by similarity groups non-Latin traces only with copies of the same request: the
    six pairs, not unrelated requests the models see alike (before, 10 of 12 Russian went)."""
    traces = [
        trace_json(
            trace_id=f"kp:trace:{language}-{n}",
            objective=REQUESTS[language][n % 6],
            step_list=[step(0, "tool_call", REQUESTS[language][n % 6] * 2, tool="respond")],
        )
        for n in range(12)
    ]
    result = dedupe(traces, scorer=TraceValueScorer(embedder=StaticEmbedder()))
    assert sorted(len(group.members) for group in result.groups) == [1] * 6


def test_one_request_written_in_other_forms_is_one_task() -> None:
    """Equal objectives make a task (alone in a script the models cannot read): full-width
    digits, case, spacing and a decomposed letter do not make another request; another request
    stays apart. Before, each writing was a task of its own."""
    request = "Отмените мой заказ 30 и верните деньги"
    writings = [
        request,
        request.replace("30", "\uff13\uff10"),
        request.upper(),
        "  " + request.replace(" ", "   ") + "\n",
        unicodedata.normalize("NFD", request),
        REQUESTS["ru"][2],
    ]
    traces = [
        trace_json(
            trace_id=f"kp:trace:w{n}",
            objective=objective,
            step_list=[step(0, "tool_call", objective, tool="respond")],
        )
        for n, objective in enumerate(writings)
    ]
    tasks = select(traces, scorer=TraceValueScorer(embedder=StaticEmbedder())).tasks
    assert len(set(tasks[:5])) == 1
    assert tasks[5] not in tasks[:5]


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=30),
    st.integers(min_value=0, max_value=3),
    st.sampled_from([0.0, 0.2]),
)
def test_the_parts_rows_are_the_input_rows_each_in_the_part_its_item_has(
    tasks: list[int], seed: int, validation: float
) -> None:
    """The parts partition the input: each part's rows are, in input order and unchanged, the
    rows of the items ``parts`` puts in it, and the sizes add up to the input."""
    rows = chat_rows(tasks)
    result = split(rows, test=0.3, validation=validation, seed=seed)
    for part in result.sizes:
        assert result.rows(part) == [
            row for row, its in zip(rows, result.parts, strict=True) if its == part
        ]
    assert sum(result.sizes.values()) == len(rows)
    assert set(result.parts) <= set(result.sizes)
