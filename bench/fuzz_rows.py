"""Rows in = rows out (issue 27) on generated chat datasets of varied shapes and columns.

    python bench/fuzz_rows.py                      # every variant, every row writer
    python bench/fuzz_rows.py --seed 3 --only extras-openai-chat one empty

Each variant is a dataset of chat rows in one of the real shapes (OpenAI chat with tool calls
as lists or as JSON strings, ShareGPT, Anthropic content blocks, Hermes tags, Responses items,
TRL's prompt/completion), with the column-level variations real datasets have: extra columns of
every type, a column null for the first batch then valued, a column whose type changes after
it, rows without a conversation, duplicated ids, batch-boundary row counts, an empty file and a
single row. Each is written as JSON Lines and, where pyarrow can hold it, as Parquet; every
command that writes rows (``kp score --annotate``, ``kp redact``, ``kp convert --to messages``,
``kp select``, ``kp dedupe --by task``) runs on each, to JSON Lines and to Parquet, in this
process. The checks are made from the input rows, never from kp's output: as many rows out as
in (in order, except ``kp select``'s picks), each row's own columns equal (same types, same
nested keys) where the form is kept, ``kp_error`` exactly on a row kp could not read, exit 0
(1 when a row was unreadable) and no internal error. A Parquet output kp refuses with a
message naming the row (a value its fixed schema cannot hold) is counted as a refusal, not a
failure: docs/datasets.md says it stops the run.

2026-12-01, seed 0, 20 variants (33 files) x 5 commands x 2 outputs, 360 runs in 77 CPU s:
0 problems, 22 Parquet outputs refused with a message (a JSON Lines input whose values no one
Parquet schema holds: Anthropic's text-or-blocks content, tool_calls a list in one row and
text in another, mixed lists, a value or a type or key new after the first 1,024 rows).
2026-12-02, seed 0: 360 runs, 0 problems, 0 Parquet outputs refused (a column of no one type
is written as JSON text since); the ``jsonl-oddities`` line's NaN nested, as a column's own NaN
is read as null (the run stopped on it, counting that row read). Before the fixes of
2026-12-01, the refusals of a later batch's type named no row and no column, the first batch's
named the column alone ("a list here and a list in an earlier row"), and a nanosecond
timestamp went to JSON Lines as ``1970-01-01 00:00:00.000000001+00:00``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import decimal
import io
import json
import math
import random
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

Row = dict[str, Any]
SHAPES = ("openai-chat", "sharegpt", "anthropic", "hermes", "openai-responses", "prompt-completion")
TOOLS = ("search", "get_weather", "run_sql", "read_file")
UNREADABLE = "__unreadable__"
"""A key the generator marks a row kp cannot read with (dropped before it is written)."""


def _call(rng: random.Random, number: int, step: int) -> tuple[str, str, str]:
    name = rng.choice(TOOLS)
    return f"call_{number}_{step}", name, json.dumps({"q": f"item {number}", "page": step})


def conversation(shape: str, number: int, rng: random.Random, *, string_calls: bool) -> Row:
    """The conversation columns of one row in ``shape``: a request, tool calls, an answer."""
    ask = f"Please look up item {number} ({rng.choice(['refund', 'flight', 'deploy'])})."
    calls = [_call(rng, number, step) for step in range(rng.randint(0, 2))]
    answer = f"Item {number} is done."
    if shape == "openai-chat":
        messages: list[Row] = [{"role": "system", "content": "Be brief."}]
        messages.append({"role": "user", "content": ask})
        for call_id, name, arguments in calls:
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            # Hub datasets keep tool_calls as a list, or the list (or each call) as JSON text.
            tool_calls: Any = json.dumps([call]) if string_calls else [call]
            messages.append({"role": "assistant", "content": "", "tool_calls": tool_calls})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": '{"ok": true}'})
        messages.append({"role": "assistant", "content": answer})
        return {"messages": messages}
    if shape == "sharegpt":
        turns = [{"from": "human", "value": ask}]
        for _, name, arguments in calls:
            turns.append(
                {
                    "from": "function_call",
                    "value": json.dumps({"name": name, "arguments": json.loads(arguments)}),
                }
            )
            turns.append({"from": "observation", "value": '{"ok": true}'})
        turns.append({"from": "gpt", "value": answer})
        return {"conversations": turns, "tools": "[]"}
    if shape == "anthropic":
        anthropic: list[Row] = [{"role": "user", "content": ask}]
        for call_id, name, arguments in calls:
            use = {"type": "tool_use", "id": call_id, "name": name, "input": json.loads(arguments)}
            anthropic.append({"role": "assistant", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}
            anthropic.append({"role": "user", "content": [result]})
        anthropic.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
        return {"system": "Be brief.", "messages": anthropic}
    if shape == "hermes":
        hermes = [
            {"from": "system", "value": "You are a function calling AI model. <tools>[]</tools>"}
        ]
        hermes.append({"from": "human", "value": ask})
        for _, name, arguments in calls:
            text = json.dumps({"name": name, "arguments": json.loads(arguments)})
            hermes.append({"from": "gpt", "value": f"<tool_call>\n{text}\n</tool_call>"})
            hermes.append(
                {
                    "from": "tool",
                    "value": f'<tool_response>\n{{"name": "{name}"}}\n</tool_response>',
                }
            )
        hermes.append({"from": "gpt", "value": answer})
        return {"conversations": hermes}
    if shape == "openai-responses":
        items: list[Row] = []
        for call_id, name, arguments in calls:
            items.append(
                {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
            )
            items.append({"type": "function_call_output", "call_id": call_id, "output": "ok"})
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer}],
            }
        )
        return {"input": [{"role": "user", "content": ask}], "output": items}
    completion: list[Row] = []
    for call_id, name, arguments in calls:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        completion.append({"role": "assistant", "content": "", "tool_calls": [json.dumps(call)]})
        completion.append({"role": "tool", "tool_call_id": call_id, "content": "ok"})
    completion.append({"role": "assistant", "content": answer})
    return {
        "prompt": [{"role": "user", "content": ask}],
        "completion": completion,
        "reward": rng.choice([0.0, 0.5, 1.0]),
    }


# One extra column's values: (row number, rng) -> value. Each keeps one Arrow type, so that the
# variant is written as Parquet too; MIXED holds those only JSON Lines can.
EXTRAS: dict[str, Callable[[int, random.Random], Any]] = {
    "x_int": lambda n, rng: rng.randrange(-(10**12), 10**12),
    "x_float_nan": lambda n, rng: math.nan if n % 3 == 0 else rng.random(),
    "x_bool": lambda n, rng: rng.random() < 0.5,
    "x_str": lambda n, rng: rng.choice(["a", "", "ünïcødé ✓", "日本語", "emoji 🧪", "tab\tnl\n"]),
    "x_null_some": lambda n, rng: None if n % 2 else "valued",
    "x_list_int": lambda n, rng: [rng.randrange(100) for _ in range(rng.randrange(4))],
    "x_struct": lambda n, rng: {
        "a": n,
        **({"b": "x"} if n % 2 else {}),
        **({"c": [1.5]} if n % 3 else {}),
    },
    "x_nested": lambda n, rng: {"outer": {"inner": [{"k": n, **({"v": "y"} if n % 2 else {})}]}},
    "x_empty_list": lambda n, rng: [],
    "x_long": lambda n, rng: "long " * rng.choice([1, 20_000]),
    "x_time": lambda n, rng: dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=n),
    "x_date": lambda n, rng: dt.date(2024, 1, 1) + dt.timedelta(days=n),
}
MIXED: dict[str, Callable[[int, random.Random], Any]] = {
    "m_list_mixed": lambda n, rng: [1, "two", 3.0, None, {"k": n}, [True]],
    "m_int_keys": lambda n, rng: {str(k): k for k in range(n % 3)} | {"0": "zero"},
    "m_empty_obj": lambda n, rng: {},
    "m_scalar_kinds": lambda n, rng: [1, "s", 2.5, True, None][n % 5],
    "m_big_int": lambda n, rng: 2**63 + n,
}


@dataclass
class Variant:
    """One generated dataset: its rows, the rows kp cannot read, whether Parquet holds it."""

    name: str
    rows: list[Row]
    parquet: bool = True
    jsonl_lines: list[str] | None = None  # lines written as they are (NaN, lone surrogates)
    unreadable: set[int] = field(default_factory=set)
    unparsed: set[int] = field(default_factory=set)  # lines that are no JSON to kp (NaN)
    table: pa.Table | None = None  # Parquet alone, of types JSON has no word for


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return None  # as pandas' to_json writes it
    if isinstance(value, dict):
        return {key: _jsonable(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_jsonable(inner) for inner in value]
    return value


def chat_rows(
    shape: str, count: int, rng: random.Random, *, extras: bool = True, string_calls: bool = False
) -> list[Row]:
    """``count`` rows of ``shape``, each with an id and a row index, and the EXTRAS columns."""
    rows = []
    for n in range(count):
        row: Row = {
            "id": f"r{n}",
            "row_idx": n,
            **conversation(shape, n, rng, string_calls=string_calls),
        }
        if extras:
            row |= {name: make(n, rng) for name, make in EXTRAS.items()}
        rows.append(row)
    return rows


def variants(seed: int = 0) -> Iterator[Variant]:
    """Every generated dataset, in a fixed order for ``seed``."""
    rng = random.Random(seed)
    for shape in SHAPES:
        yield Variant(f"extras-{shape}", chat_rows(shape, 6, rng))
    mixed = chat_rows("openai-chat", 6, rng, extras=False)
    for n, row in enumerate(mixed):
        row |= {name: make(n, rng) for name, make in MIXED.items()}
    yield Variant("mixed-types", mixed, parquet=False)
    calls = chat_rows("openai-chat", 6, rng, extras=False)
    strings = chat_rows("openai-chat", 6, rng, extras=False, string_calls=True)
    yield Variant("tool-calls-string", strings)
    yield Variant(
        "tool-calls-both", [r if n % 2 else strings[n] for n, r in enumerate(calls)], parquet=False
    )
    missing = chat_rows("openai-chat", 6, rng, extras=False)
    for n in (0, 3):
        missing[n] = {"id": missing[n]["id"], "row_idx": n, "note": "no conversation here"}
    yield Variant("missing-messages", missing, unreadable={0, 3})
    nulled = chat_rows("openai-chat", 6, rng, extras=False)
    for n in (2, 5):
        nulled[n]["messages"] = None
    yield Variant("null-messages", nulled, unreadable={2, 5})
    dup = chat_rows("openai-chat", 6, rng, extras=False)
    for row in dup:
        row["id"] = "same"
    yield Variant("duplicate-ids", dup)
    for count in (1, 1024, 1025):
        yield Variant(f"n{count}", chat_rows("openai-chat", count, rng, extras=False))
    yield Variant("empty", [])
    late = chat_rows("openai-chat", 1030, rng, extras=False)
    for n, row in enumerate(late):
        row["x_late"] = None if n < 1024 else {"score": n}
    yield Variant("null-first-batch", late)
    change = chat_rows("openai-chat", 1030, rng, extras=False)
    for n, row in enumerate(change):
        row["x_change"] = n if n < 1024 else f"text {n}"
    yield Variant("type-after-batch", change, parquet=False)
    new_key = chat_rows("openai-chat", 1030, rng, extras=False)
    for n, row in enumerate(new_key):
        row["x_meta"] = {"a": n} if n < 1024 else {"a": n, "b": "new"}
    yield Variant("key-after-batch", new_key)
    raw = chat_rows("openai-chat", 4, rng, extras=False)
    lines = [json.dumps(row) for row in raw]
    # Python's json.dumps writes these; NaN as a column's own value is a missing one, read as
    # null (docs/specification.md): deeper in, refused.
    lines[1] = lines[1][:-1] + ', "x_nan": [NaN]}'
    lines[2] = lines[2][:-1] + ', "x_surrogate": "\\ud800 lone"}'
    yield Variant("parquet-types", [], table=typed_table(chat_rows("openai-chat", 5, rng)))
    yield Variant(
        "jsonl-oddities", raw, parquet=False, jsonl_lines=lines, unreadable={1}, unparsed={1}
    )


def typed_table(rows: list[Row]) -> pa.Table:
    """``rows`` with columns of the Arrow types Parquet datasets hold beyond JSON's."""
    count, table = len(rows), pa.Table.from_pylist(rows)
    columns = {
        "t_map": pa.array(
            [[("1", n), ("2", None)] for n in range(count)], pa.map_(pa.string(), pa.int64())
        ),
        "t_large": pa.array(["x" * n for n in range(count)], pa.large_string()),
        "t_dictionary": pa.array(
            ["p", "q"] * (count // 2) + ["p"] * (count % 2)
        ).dictionary_encode(),
        "t_decimal": pa.array([decimal.Decimal("1.25")] * count, pa.decimal128(10, 2)),
        "t_binary": pa.array([b"\x00\xff"] * count),
        "t_duration": pa.array([dt.timedelta(seconds=n) for n in range(count)]),
        "t_float32": pa.array([math.nan] + [1.5] * (count - 1), pa.float32()),
        "t_uint8": pa.array(range(count), pa.uint8()),
        "t_nanoseconds": pa.array(range(count), pa.timestamp("ns")),
        "t_fixed_list": pa.array([[1, 2]] * count, pa.list_(pa.int32(), 2)),
        "t_null": pa.nulls(count),
    }
    for name, column in columns.items():
        table = table.append_column(name, column)
    return table


def write_variant(variant: Variant, folder: Path) -> list[Path]:
    """The variant's files: JSON Lines, and Parquet where pyarrow holds it."""
    if variant.table is not None:
        pq.write_table(variant.table, folder / f"{variant.name}.parquet")
        return [folder / f"{variant.name}.parquet"]
    paths = [folder / f"{variant.name}.jsonl"]
    lines = variant.jsonl_lines or [
        json.dumps(_jsonable(row), ensure_ascii=False) for row in variant.rows
    ]
    paths[0].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if variant.parquet:
        try:
            table = pa.Table.from_pylist(variant.rows)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return paths
        paths.append(folder / f"{variant.name}.parquet")
        pq.write_table(table, paths[-1])
    return paths


COMMANDS = {
    "annotate": ("score", "--annotate", "--no-embedder", "--from", "auto"),
    "redact": ("redact", "--from", "auto"),
    "messages": ("convert", "--to", "messages", "--from", "auto"),
    "select": ("select", "--no-embedder", "--from", "auto"),
    "dedupe": ("dedupe", "--by", "task", "--no-embedder", "--from", "auto"),
}


def read_input(path: Path) -> list[Row]:
    """The input's rows as a reader other than kp's gives them (Python's json, pyarrow)."""
    if path.suffix == ".parquet":
        rows: list[Row] = pq.read_table(path).to_pylist()
        return rows
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def read_output(path: Path) -> list[Row]:
    if not path.exists():
        return []
    return read_input(path)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types at any depth (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def kp(*args: str) -> tuple[int, str]:
    """Run ``kp ARGS`` in this process: its exit code and stderr."""
    from knowledgepulse.cli.main import main  # noqa: PLC0415 - after sys.path is set

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(list(args))
        except BaseException as error:  # what escapes main is the finding
            return -1, f"Traceback (escaped main): {type(error).__name__}: {error}"
    return code, err.getvalue()


def check(variant: Variant, source: Path, command: str, out: Path) -> list[str]:  # noqa: PLR0912
    """What breaks rows in = rows out for one run; [] when nothing does."""
    code, err = kp(*COMMANDS[command], str(source), "-o", str(out))
    said = f"{command} {source.name} -> {out.suffix}"
    if "Traceback" in err or "internal error" in err or code not in (0, 1, 2):
        return [f"{said}: exit {code}: {err.strip().splitlines()[-2:]}"]
    if code == 2:
        if out.suffix == ".parquet" and "write JSON Lines instead" in err:
            return [f"REFUSED {said}: {err.strip().splitlines()[-1][:300]}"]
        return [f"{said}: exit 2: {err.strip().splitlines()[-1][:300]}"]
    rows, written = read_input(source), read_output(out)
    if not rows and code == 1 and "--allow-empty" in err:  # an empty input is said, as it is
        return []
    problems = []
    if len(written) != len(rows):
        problems.append(f"{said}: {len(rows)} rows in, {len(written)} out")
    errors = [n for n, row in enumerate(written) if row.get("kp_error") is not None]
    if code != (1 if errors else 0):
        problems.append(f"{said}: exit {code} with {len(errors)} rows with kp_error")
    if command != "select" and not variant.unreadable.issubset(errors):
        problems.append(
            f"{said}: rows {sorted(variant.unreadable)} unreadable, kp_error on {errors}"
        )
    if command == "messages" or problems:
        return problems
    # A line that is no JSON comes back with no column of its own (docs/datasets.md).
    rows = [row for n, row in enumerate(rows) if n not in variant.unparsed]
    written = [
        row
        for row in written
        if not variant.unparsed
        or row.get("kp_error") is None
        or any(value is not None for key, value in row.items() if not key.startswith("kp_"))
    ]
    if command == "select":  # picks best first, then what it could not judge
        written = sorted(written, key=lambda row: str(row.get("row_idx")))
        rows = sorted(rows, key=lambda row: str(row.get("row_idx")))
    form_kept = source.suffix == out.suffix
    if source.suffix == out.suffix == ".parquet":  # the input's types, not only its values
        given_schema, back_schema = pq.read_schema(source), pq.read_schema(out)
        for column in given_schema:
            if column.type != back_schema.field(column.name).type:
                kind = back_schema.field(column.name).type
                problems.append(f"{said}: {column.name}: {column.type} -> {kind}")
    nulls_added = source.suffix == ".jsonl" and out.suffix == ".parquet"
    for n, (given, back) in enumerate(zip(rows, written, strict=True)):
        own = {key: value for key, value in back.items() if not key.startswith("kp_")}
        if command == "redact":  # values may be cleaned; the columns and their nesting stay
            extra = {key for key in own.keys() - given.keys() if own[key] is None}
            # In Parquet a column a row lacks is null (docs/datasets.md).
            if own.keys() - (extra if nulls_added else set()) != given.keys():
                problems.append(f"{said}: row {n}: columns {sorted(given)} -> {sorted(own)}")
        elif form_kept and not same(given, own):
            diff = [key for key in given if not same(given.get(key), own.get(key))]
            diff += [key for key in own if key not in given]
            was, now = given.get(diff[0]), own.get(diff[0])
            problems.append(f"{said}: row {n}: changed {diff[:4]}: {was!r:.80} -> {now!r:.80}")
        if len(problems) > 3:
            break
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="the variants to run (default: every one)")
    parser.add_argument("--commands", nargs="*", default=list(COMMANDS))
    options = parser.parse_args()
    runs = found = refused = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for variant in variants(options.seed):
            if options.only and variant.name not in options.only:
                continue
            for source in write_variant(variant, folder):
                for command in options.commands:
                    for suffix in (".jsonl", ".parquet"):
                        runs += 1
                        out = folder / f"out-{command}{suffix}"
                        out.unlink(missing_ok=True)
                        for problem in check(variant, source, command, out):
                            refused += problem.startswith("REFUSED")
                            found += not problem.startswith("REFUSED")
                            print(problem, flush=True)
    print(f"{runs} runs: {found} problems, {refused} Parquet outputs refused with a message")


if __name__ == "__main__":
    main()
