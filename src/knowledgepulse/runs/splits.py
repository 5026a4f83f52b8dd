"""Train, test and validation sets split by group, so that no task is on two sides.

:func:`split` reads the whole input (anything :func:`~knowledgepulse.runs.items_of` takes),
gives each item a group key (its task, or any field or column), and sends every group whole to
one part (:func:`~knowledgepulse.curation.split.assign_groups`: the same seed, the same split).
Tasks that are not read with the items are inferred as :func:`~knowledgepulse.runs.select`
infers them, which scores the items (the one time a split needs the embedder); any other key
scores nothing. :func:`write_split` writes each part in the input's own form, as ``kp redact``
does: dataset rows as rows, traces as traces; with ``redact``, every one redacted (the groups are
read before, so the split is the same with and without it).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from knowledgepulse._util.atomic import is_same_file, made_directory, remove_together, together
from knowledgepulse._util.collector import young_collections_only
from knowledgepulse._util.settings import is_count, number_of, path_of, text_of, wrong_setting
from knowledgepulse.curation import score_corpus
from knowledgepulse.curation.splits import BY_TASK, PARTS, assign_groups
from knowledgepulse.errors import OutputError, ScorerParameterError, Setting, SettingTypeError
from knowledgepulse.records import Problem
from knowledgepulse.records.arrow import file_schema
from knowledgepulse.records.readers import SUFFIX_FORMATS, is_parquet_name
from knowledgepulse.reports.curation import split_summary
from knowledgepulse.reports.redaction import redaction_tail
from knowledgepulse.reports.rows import row_format
from knowledgepulse.runs.inputs import RunInput, files_of, items_of, readable_twice, table_kind
from knowledgepulse.runs.problems import repeats_folded
from knowledgepulse.runs.read import OnProblem, TraceSettings, options_with, told_of
from knowledgepulse.runs.redaction import messages_level, redact_items, redactor_of, unread_rows
from knowledgepulse.runs.tasks import inferred_tasks, similarity_of_tasks, tasks_read
from knowledgepulse.runs.write import (
    UnreadRows,
    WriteForm,
    item_writer,
    rows_like,
    table_schema,
)
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._read import Notes
from knowledgepulse.trace.item import TraceItem, task_in
from knowledgepulse.value.scorer import TraceValueScorer, checked_scorer

if TYPE_CHECKING:
    from knowledgepulse.redact.items import Redactor

_SUFFIXES = ("jsonl", "parquet")  # the forms write_split writes a part in
BY_DOMAIN = "domain"
"""The key ``domain``: the trace's ``metadata.task_domain``."""


def key_of(item: TraceItem, by: str) -> str | None:
    """An item's key: ``task``, ``domain``, or a row's column (dotted path) or the trace's."""
    if by == BY_TASK:
        return item.task or item.trace.task.objective
    if by == BY_DOMAIN:
        return item.trace.metadata.task_domain
    return task_in(None if item.row is None else item.row.value, item.document, by)


@dataclass(frozen=True, slots=True, repr=False)
class SplitResult:
    """What :func:`split` made of the input: each item's part and group.

    Attributes:
        items: every item read, in input order.
        parts: each item's part (``train``, ``validation`` or ``test``), in input order.
        groups: each item's group key, in input order (an item without the key is a group of
            its own, keyed by its id).
        by: the group key's name.
        fractions: each part's share asked for.
        seed: the seed of the groups' shuffle.
        stratify: the key the groups were split within (each stratum split apart), or ``None``.
        without_key: how many items had no ``by`` value (with ``task`` read, no task: each
            is grouped by its objective).
        tasks_inferred: whether the tasks (``by`` ``task``) were inferred, not read.
        problems: what could not be read, and the warnings, in input order.
        data: the input, for :meth:`rows` in its form.
        unread: the dataset rows that gave no trace: in no part, since they cannot be grouped;
            :func:`write_split` writes them to a file of their own, each with ``kp_error``.
        redactor: what redacted the items (and the unread rows), with its counts, or ``None``.
        task_field: where the tasks were read (``by`` ``task``), as given to :func:`split`.
    """

    items: tuple[TraceItem, ...]
    parts: tuple[str, ...]
    groups: tuple[str, ...]
    by: str
    fractions: Mapping[str, float]
    seed: int
    stratify: str | None = None
    without_key: int = 0
    tasks_inferred: bool = False
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)
    unread: UnreadRows = field(default_factory=UnreadRows, repr=False, compare=False)
    redactor: Redactor | None = field(default=None, repr=False, compare=False)
    task_field: str | None = None

    def __repr__(self) -> str:
        # Counts, not every item: a notebook prints the result of a call on 100,000 rows.
        inferred = " (inferred)" if self.tasks_inferred else ""
        return (
            f"<SplitResult: {self.sizes} in {len(set(self.groups))} groups by {self.by}"
            f"{inferred}, seed {self.seed}; {len(self.shared_groups)} groups on two sides; "
            f"{len(self.problems)} problems>"
        )

    @property
    def summary(self) -> str:
        """One line (``kp split``'s): the groups, each set's size and share, redacted.

        The redactions are counted as the items are written: read it after :func:`write_split`.
        """
        return split_summary(self) + redaction_tail(self.redactor)

    def items_in(self, part: str) -> list[TraceItem]:
        """The items of one part, in input order.

        Raises:
            ScorerParameterError: ``part`` is not a part of this split (a misspelling, or
                ``validation`` when none was asked for), which would otherwise look like an
                empty set (a ``ValueError`` too).
        """
        if part not in self.fractions:
            raise ScorerParameterError(
                f"no part {part!r} in this split: its parts are {', '.join(self.fractions)}"
            )
        return [item for item, its in zip(self.items, self.parts, strict=True) if its == part]

    def rows(self, part: str) -> Any:
        """One part in the input's form: a DataFrame, Arrow table or Dataset, else dicts.

        Raises:
            ScorerParameterError: ``part`` is not a part of this split (a ``ValueError``).
        """
        return rows_like(self.data, self.items_in(part), redacted=self.redactor is not None)

    def write_to(
        self,
        directory: str | os.PathLike[str],
        form: WriteForm | None = None,
        inputs: Iterable[object] | None = None,
    ) -> dict[str, Path]:
        """Each part to ``directory/<part>.<ext>`` in the input's form (``kp split``'s output).

        As every other result writes itself: see :func:`write_split`.
        """
        return write_split(self, directory, form, inputs)

    @property
    def sizes(self) -> dict[str, int]:
        """How many items each part asked for holds."""
        counts = Counter(self.parts)
        return {part: counts[part] for part in PARTS if part in self.fractions}

    @property
    def shared_groups(self) -> list[str]:
        """The groups found in two parts or more: checked from the items, never expected."""
        seen: dict[str, set[str]] = {}
        for group, part in zip(self.groups, self.parts, strict=True):
            seen.setdefault(group, set()).add(part)
        return sorted(group for group, parts in seen.items() if len(parts) > 1)


@young_collections_only()
@repeats_folded()
def split(
    data: RunInput,
    *,
    test: float | None = None,
    validation: float = 0.0,
    by: str = BY_TASK,
    seed: int = 0,
    stratify: str | None = None,
    task_field: str | None = None,
    task_similarity: float | None = None,
    scorer: TraceValueScorer | None = None,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
    redact: bool | Redactor = False,
    **reading: Unpack[TraceSettings],
) -> SplitResult:
    """Split ``data`` into train, test (and validation) sets, each group whole in one.

    Args:
        data: files, row dicts, a DataFrame, an Arrow table, a ``datasets.Dataset`` or another
            table that gives Arrow data (a Polars DataFrame: its parts are pyarrow Tables).
        test: the test set's share of the items, in (0, 1) (required: ``test=0.2``).
        validation: the validation set's share, in [0, 1); train has the rest.
        by: the group key: ``task`` (see :data:`BY_TASK`), ``domain``, or a row's column (a
            dotted path into it) else a dotted path in the trace's JSON (``metadata.session``).
        seed: the same seed (and input) gives the same split.
        stratify: a key (as ``by``) whose values are split apart, each in the same shares
            (a group goes with its most common value).
        task_field: where ``task`` is read: a dataset's column, else a dotted path in the
            trace's JSON.
        task_similarity: with ``task`` not read, the cosine with a task's best run from which
            an item is a run of that task (as :func:`~knowledgepulse.runs.select`'s; default:
            ``INFERRED_TASK_SIMILARITY``).
        scorer: with ``task`` not read, scores the items whose tasks are inferred (default:
            ``TraceValueScorer()``, the static table; without an embedder, the same
            objective makes a task).
        source: a source's name, or ``None``: recognised from the content.
        options: the domain, confidence and row columns of converted traces.
        **reading: set a field of ``options`` each, as ``kp``'s options do
            (``success_field="passed"`` is ``--success-field passed``: see
            :class:`~knowledgepulse.runs.read.TraceSettings`).
        notes: told what a reader says about a whole file.
        progress: for files, told each further count of bytes read.
        on_problem: told each record that cannot be read, as it is found (default: a
            logged warning).
        redact: clean the items (and the rows that gave no trace) of secrets and personal data:
            ``True`` by each trace's privacy level, or a configured ``Redactor``. The groups are
            read first, so that redaction changes no part (an e-mail column as ``by`` would
            be one marker for all).

    Raises:
        ScorerParameterError: no ``test`` share, shares out of range, or leaving nothing for
            train; a ``by`` or ``stratify`` that no item has (a misspelt field); a setting of the
            wrong type; an empty ``task_field``.
        ParameterConflictError: ``task_similarity`` with ``task_field`` (which reads the tasks
            it would infer), or with another ``by`` than ``task``.
    """
    options = options_with(options, reading, split)
    if test is None:  # a keyword without a default would be Python's own error, naming no share
        raise SettingTypeError(
            Setting("test"), " is needed: give the test set's share, in (0, 1) (test=0.2)"
        )
    test = number_of(test, "test", "a share in (0, 1)", lambda share: 0.0 < share < 1.0)
    validation = number_of(
        validation,
        "validation",
        f"a share in [0, 1) that leaves train some (test is {test:g})",
        lambda share: 0.0 <= share < 1.0 and test + share < 1.0,
    )
    if not is_count(seed):
        raise wrong_setting("seed", seed, "a whole number", wrong_type=True)
    text_of(by, "by", _KEYS)
    if stratify is not None:
        text_of(stratify, "stratify", _KEYS)
    similarity = similarity_of_tasks(task_similarity, task_field, by_task=by == BY_TASK)
    fractions = {"train": 1.0 - test - validation, "test": test}
    if validation:
        fractions["validation"] = validation
    data = readable_twice(data)  # read to split, then each part's rows taken
    problems: list[Problem] = []
    redactor = redactor_of(redact)
    read = items_of(
        data,
        source=source,
        options=options,
        task_field=task_field,
        notes=notes,
        progress=progress,
        messages=messages_level(redactor),
    )
    unread = unread_rows(redactor, in_place=False)
    items = tuple(unread.valid(read, problems, told_of(on_problem)))
    inferred = by == BY_TASK and tasks_read(items, task_field) is None
    if inferred:
        corpus = score_corpus(checked_scorer(scorer) or TraceValueScorer(), items)
        keys: list[str | None] = list(inferred_tasks(corpus, similarity))
        without = 0
    else:
        keys = [key_of(item, by) for item in items]
        _found_in_some("by", by, keys)
        without = sum(
            (item.task is None) if by == BY_TASK else (key is None)
            for item, key in zip(items, keys, strict=True)
        )
    groups = tuple(
        key if key is not None else f"\0{item.trace.id}"
        for item, key in zip(items, keys, strict=True)
    )
    strata = _strata(items, groups, stratify)
    part_of: dict[str, str] = {}
    for members in strata.values():
        part_of |= assign_groups(Counter(members), fractions, seed=seed)
    if redactor is not None:
        items = tuple(redact_items(items, redactor))
    return SplitResult(
        items,
        tuple(part_of[group] for group in groups),
        groups,
        by,
        fractions,
        seed,
        stratify,
        without,
        inferred,
        tuple(problems),
        data,
        unread,
        redactor,
        task_field,
    )


_KEYS = "task, domain, a row's column or a dotted path in the trace's JSON (metadata.session)"


def _found_in_some(name: str, key: str, keys: list[str | None]) -> None:
    """A key that no item has is misspelt: every item would be a group, or a stratum, alone."""
    if keys and all(found is None for found in keys):
        raise ScorerParameterError(Setting(name, key), f": no item has it; give {_KEYS}")


def _strata(
    items: tuple[TraceItem, ...], groups: tuple[str, ...], stratify: str | None
) -> dict[str, list[str]]:
    """Each stratum's groups, one entry an item (their count is the group's size)."""
    if stratify is None:
        return {"": list(groups)}
    values: dict[str, Counter[str]] = {}
    keys = [key_of(item, stratify) for item in items]
    _found_in_some("stratify", stratify, keys)
    for key, group in zip(keys, groups, strict=True):
        values.setdefault(group, Counter())[key or ""] += 1
    # A group's stratum: its most common value (ties: the smallest).
    home = {
        group: min(counts.items(), key=lambda pair: (-pair[1], pair[0]))[0]
        for group, counts in values.items()
    }
    strata: dict[str, list[str]] = {}
    for group in groups:
        strata.setdefault(home[group], []).append(group)
    return strata


_FILE_SUFFIXES = (".gz", ".zst", ".xz", ".bz2", ".csv", ".tsv", ".arrow", ".txt")
"""Names of data files kp does not write a split as (``-o out.csv``), beside those it reads."""


def check_split_directory(
    directory: str | os.PathLike[str], inputs: Iterable[object] = ()
) -> list[Path]:
    """Every part's file a split may write in ``directory``, once it is known it can.

    Call it before the work (``kp split`` does) to fail fast; :func:`write_split` calls it too.
    Nothing is made: the nearest folder of ``directory`` that exists is tried with a scratch
    folder made and removed (permissions alone do not tell root, nor a folder such as /proc).

    Raises:
        OutputError: the directory cannot be made or written (a file is in its place, no
            permission), or one of ``inputs`` is a part's file there, which the split would
            replace or remove; or it does not exist and is named as a data file (``out.jsonl``).
    """
    directory = Path(directory)
    # A directory not made yet named as a data file is a file meant (`-o out.jsonl`), not a split.
    named_as_file = directory.suffix.lower() in (*SUFFIX_FORMATS, *_FILE_SUFFIXES)
    if (named_as_file or is_parquet_name(directory.name)) and not directory.is_dir():
        stem = directory.with_name(directory.name.partition(".")[0] or "split")
        raise OutputError(
            f"cannot write the split to {directory}: a split is a directory of train and test "
            f"files, and {directory.name!r} names a file; give a directory ({stem}), or make "
            "the directory first to keep this name"
        )
    parts = [directory / f"{part}.{ext}" for part in (*PARTS, "unread") for ext in _SUFFIXES]
    sources = tuple(inputs)
    for path in parts:
        if any(is_same_file(path, source) for source in sources):
            raise OutputError(
                f"cannot write the split to {directory}: its input {path} is there, which the "
                "split would replace; write to another directory"
            )
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{existing} is a file")
        tempfile.TemporaryDirectory(dir=existing).cleanup()
    except OSError as error:
        raise OutputError(
            f"cannot write the split to {directory}: {error.strerror or error}; give a directory "
            "that can be made and written"
        ) from None
    return parts


def write_split(
    result: SplitResult,
    directory: str | os.PathLike[str],
    form: WriteForm | None = None,
    inputs: Iterable[object] | None = None,
) -> dict[str, Path]:
    """Each part written to ``directory/<part>.<ext>`` (atomically) in the input's form.

    Dataset rows go back as rows, traces as their documents, in ``form``: by default Parquet
    when the input is a table (a DataFrame, an Arrow table or a ``datasets.Dataset``) or the
    first file read is Parquet (traces as a table of traces, one row a trace, as they were
    read), else ``jsonl``; the directory is made if it is missing. The dataset rows that gave
    no trace go to ``directory/unread.<ext>``, each with ``kp_error`` saying why, when there
    are any: rows in are rows out. A part's file an earlier split left in ``directory`` and
    this one does not write (its validation set, say) is removed, so that the directory holds
    one split. The files take effect together: a run stopped while writing them leaves none
    of them, and an earlier split's as they were. Returns each part's file (``unread`` too,
    when written).

    Raises:
        OutputError: one of ``inputs`` (by default the files the split read) is a part's file
            in ``directory``, which the split would replace or remove; nothing is written.
        SettingTypeError: ``directory`` is not a path.
    """
    directory = path_of(directory, "directory", "a folder's path, a str or a Path")
    files = [str(path) for path in files_of(result.data) or ()]
    inputs = tuple(files if inputs is None else inputs)
    if form is None:  # a table (a Parquet or Arrow file's, or one in memory) stays one
        # An Arrow file or a save_to_disk folder is a table as a Dataset is: its sets as JSON
        # Lines lost its types (a ClassLabel, an Image, a timestamp), which Parquet keeps.
        table = table_kind(result.data) is not None or bool(files and file_schema(files[0]))
        form = "parquet" if table else row_format(None, files)
    parts = check_split_directory(directory, inputs)
    written: dict[str, Path] = {}
    suffix = "parquet" if form == "parquet" else "jsonl"
    schema = table_schema(result.data)  # a Dataset's features, an Arrow table's types
    # A set of no row keeps the rows' columns (their files'), as the others have them.
    rows = all(item.row is not None for part in result.fractions for item in result.items_in(part))
    columns_of = files if rows else ()
    # All the sets or none: a Ctrl-C between two sets leaves neither, nor a directory made.
    with made_directory(directory), together():
        for part in result.fractions:
            path = directory / f"{part}.{suffix}"
            with item_writer(
                path, form, (), clean=result.unread.clean, schema=schema, inputs=columns_of
            ) as out:
                for item in result.items_in(part):
                    out.write_as_read(item)
            written[part] = path
        if result.unread.has_rows():
            unread = directory / f"unread.{suffix}"
            with item_writer(unread, form, (), unread=result.unread, schema=schema):
                pass  # nothing read: the writer writes the held rows as it closes
            written["unread"] = unread
        for stale in parts:  # an earlier split's set would overlap this one's
            if stale not in written.values():
                remove_together(stale)
    return written
