"""Decontamination as a library call: the items of a set that copy a reference set's tasks, removed.

:func:`decontaminate` reads both sets (anything :func:`~knowledgepulse.runs.items_of` takes; a
reference may also be a text file of task texts, one a line), and removes from the first the
items whose task text a reference item's n-grams cover, and, with an embedder, those within a
cosine of one. It scores nothing; only the first set loses items. With ``redact``, what it gives
back is redacted: the items are compared as read, so redaction changes no verdict.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from numbers import Integral
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Unpack

from knowledgepulse._util.collector import young_collections_only
from knowledgepulse._util.settings import check_cosine, count_of, number_of, text_of, wrong_setting
from knowledgepulse._util.text import counted
from knowledgepulse.curation.overlap import MIN_OVERLAP, NGRAM, OverlapIndex
from knowledgepulse.errors import (
    InputFileError,
    Location,
    ParameterConflictError,
    ScorerParameterError,
    Setting,
)
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import check_stdin_once, read_records
from knowledgepulse.reports.curation import decontamination_summary
from knowledgepulse.reports.redaction import redaction_tail
from knowledgepulse.runs.curate import DEDUPE_THRESHOLD
from knowledgepulse.runs.inputs import (
    RunInput,
    files_of,
    items_of,
    paths_of,
    readable_twice,
    rows_of,
)
from knowledgepulse.runs.problems import repeats_folded
from knowledgepulse.runs.read import (
    OnProblem,
    TraceSettings,
    options_with,
    secret_free_file,
    told_of,
    valid_items,
)
from knowledgepulse.runs.redaction import messages_level, redactor_of, unread_rows
from knowledgepulse.runs.write import (
    UnreadRows,
    item_writer,
    output_form,
    redacted_like,
    table_schema,
    target_of,
)
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._chat._text import content_text
from knowledgepulse.sources._read import Notes
from knowledgepulse.trace.item import TraceItem, value_at
from knowledgepulse.value.scorer import TraceValueScorer, checked_scorer

AGAINST_ROWS = "against:rows"
"""What a reference set's rows in memory are called (``kp:trace:against:rows:<n>``, located
``against:rows:<line>``), so that a report tells them from the input's (``rows``)."""

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.trace.models import PrivacyLevel


@dataclass(frozen=True, slots=True)
class Reference:
    """An item of the reference (evaluation) set: its id, its task text, where it was read.

    Attributes:
        id: the trace's id (``kp:trace:against:rows:<n>`` for a row in memory without one); a
            record read at ``against_field``: its own ``id`` (a string or an integer), else
            ``<file>:<line>`` (``against:rows:<n>`` for a row in memory), as for a line of a
            text file (``texts:<n>`` for the n-th of ``against_texts``, from 1).
        text: its task text (the trace's ``task.objective``, or the line).
        location: where it was read.
    """

    id: str
    text: str
    location: Location


@dataclass(frozen=True, slots=True)
class Contaminated:
    """An item :func:`decontaminate` removed, and the reference item it matched.

    Attributes:
        item: the removed item.
        reference: the reference item it matched.
        reason: ``ngram`` (its task text covers the reference's, see
            :mod:`knowledgepulse.curation.overlap`) or ``embedding`` (its novelty vector's
            cosine with the reference's reaches the threshold).
        overlap: the share of the reference's words it covers, when the n-grams matched.
        similarity: the cosine with the reference, when compared by embedding, on the
            threshold's scale (MiniLM's; see :attr:`~knowledgepulse.runs.curate.Rejected`).
    """

    item: TraceItem
    reference: Reference
    reason: Literal["ngram", "embedding"]
    overlap: float | None = None
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A report row: the item's id and place, why, and the reference item it matched."""
        location, matched = self.item.location, self.reference.location
        return {
            "id": self.item.trace.id,
            "file": secret_free_file(location.file),
            "line": location.line,
            "reason": self.reason,
            "matched_id": self.reference.id,
            "matched_file": secret_free_file(matched.file),
            "matched_line": matched.line,
            "overlap": self.overlap,
            "similarity": self.similarity,
        }


@dataclass(frozen=True, slots=True, repr=False)
class DecontaminationResult:
    """What :func:`decontaminate` removed from its input, and what it kept.

    Attributes:
        items: every valid item of the input, in input order.
        removed: each removed item with the reference item it matched, in input order.
        references: how many reference items were compared.
        ngram: the words per n-gram.
        min_overlap: the share of a reference item's words from which an item contains it.
        threshold: the cosine from which an item is a near-copy, or ``None``: no embedding.
        problems: what could not be read (the input's, then the references'), in order.
        data: the input, for :attr:`kept_rows` in its form.
        unread: the input's dataset rows that gave no trace, for an ``ItemWriter`` to write
            after the kept ones (each with ``kp_error``): no row goes missing from the output.
        redactor: what redacted the items, the reference ids and the unread rows, counting the
            kept items' redactions, or ``None``.
    """

    items: tuple[TraceItem, ...]
    removed: tuple[Contaminated, ...]
    references: int
    ngram: int = NGRAM
    min_overlap: float = MIN_OVERLAP
    threshold: float | None = None
    problems: tuple[Problem, ...] = ()
    data: Any = field(default=None, repr=False, compare=False)
    unread: UnreadRows = field(default_factory=UnreadRows, repr=False, compare=False)
    redactor: Redactor | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # Counts, not every item: a notebook prints the result of a call on 100,000 rows.
        reasons = Counter(found.reason for found in self.removed)
        return (
            f"<DecontaminationResult: {len(self.items) - len(self.removed)} of "
            f"{len(self.items)} kept; removed {dict(reasons.most_common())} against "
            f"{self.references} references; {len(self.problems)} problems>"
        )

    @property
    def summary(self) -> str:
        """One line (``kp dedupe --against``'s): the items removed and why, kept, redacted.

        The redactions are counted as the items are written: read it after :meth:`write_to`.
        """
        return decontamination_summary(self) + redaction_tail(self.redactor)

    @property
    def kept(self) -> list[TraceItem]:
        """The items that stay, in input order."""
        gone = {id(found.item) for found in self.removed}
        return [item for item in self.items if id(item) not in gone]

    @property
    def kept_rows(self) -> Any:
        """The items that stay in the input's form: its rows, else the trace documents.

        A pandas ``DataFrame``, an Arrow ``Table`` or a ``datasets.Dataset`` for those inputs;
        otherwise dicts. Nothing is added: the rows are as they came. From files of both
        forms, a list of both, which a next run refuses in part: give it :attr:`kept`.
        """
        return redacted_like(self.data, self.kept)

    def write_to(
        self,
        target: str | os.PathLike[str] | IO[str],
        inputs: Sequence[str] = (),
        *,
        messages: bool = False,
    ) -> None:
        """The kept items as they came to ``target``, then the rows that gave no trace.

        Dataset rows go back as rows (Parquet when the first of ``inputs`` or a ``.parquet``
        target is), traces as their documents. ``messages``: each kept item as a training
        row in chat form instead.

        Raises:
            ParameterConflictError: Parquet rows to a stream.
        """
        target = target_of(target)
        rows = not self.items or self.items[0].row is not None
        form = output_form(target, inputs, rows=rows, messages=messages, setting="target")
        schema = table_schema(self.data)  # a Dataset's features, an Arrow table's types
        with item_writer(
            target,
            form,
            (),
            messages=messages,
            unread=self.unread,
            schema=schema,
            inputs=(files_of(self.data) or ()) if rows else (),
        ) as out:
            for item in self.kept:
                out.write_as_read(item)


@young_collections_only()
@repeats_folded()
def decontaminate(
    data: RunInput,
    *,
    against: RunInput | None = None,
    against_texts: Iterable[str] | None = None,
    against_field: str | None = None,
    ngram: int = NGRAM,
    min_overlap: float = MIN_OVERLAP,
    threshold: float | None = None,
    scorer: TraceValueScorer | None = None,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    on_problem: OnProblem | None = None,
    redact: bool | Redactor = False,
    **reading: Unpack[TraceSettings],
) -> DecontaminationResult:
    """The items of ``data`` that are no copy of a reference (evaluation) item, and the rest.

    Only ``data`` loses items. An item goes when its task text (``task.objective``) covers
    ``min_overlap`` of a reference item's words in shared ``ngram``-word n-grams or in blocks
    a word-level alignment matches, case, punctuation and numbers aside
    (:mod:`knowledgepulse.curation.overlap` gives the sources of the defaults); and, when the
    scorer has an embedder (the default's, as ``kp dedupe --against``), when its novelty
    vector's cosine with a reference item's reaches ``threshold``.

    Args:
        data: the set to clean: files, row dicts, a DataFrame, an Arrow table, a
            ``datasets.Dataset`` or another table that gives Arrow data (a Polars DataFrame:
            a pyarrow Table comes back; see :data:`~knowledgepulse.runs.RunInput`).
        against: the reference set, in any of those forms; a ``.txt`` file (among other
            files too) is read as task texts, one a line (blank lines skipped).
        against_texts: reference task texts given as strings, besides ``against``.
        against_field: read each record of ``against`` as a task text at this field (a
            column, or a dotted path in its JSON), not as a trace: for an evaluation set of
            prompts (``question``, ``prompt``); a list of chat messages there gives its first
            user message. A record without text there is a problem; when none of them has
            one, the field is wrong: an error, raised before ``data`` is read.
        ngram: words per n-gram.
        min_overlap: the share of a reference item's words (0-1] from which an item contains
            it.
        threshold: with an embedder, the cosine from which an item is a near-copy (default:
            ``DEDUPE_THRESHOLD``).
        scorer: its embedder compares novelty vectors (a text line is embedded as it is);
            default: ``TraceValueScorer()``, the static table, as ``kp`` compares;
            ``TraceValueScorer(embedder=None)``: n-grams only.
        source: a source's name, or ``None``: recognised from the content (see ``items_of``),
            for both sets.
        options: the domain, confidence and row columns of converted traces, for both sets.
        **reading: set a field of ``options`` each, as ``kp``'s options do
            (``success_field="passed"`` is ``--success-field passed``: see
            :class:`~knowledgepulse.runs.read.TraceSettings`).
        notes: told what a reader says about a whole file.
        progress: for files of ``data``, told each further count of bytes read.
        on_problem: told each record that cannot be read, as it is found (default: a
            logged warning).
        redact: clean what is given back of secrets and personal data (the items, kept and
            removed, the rows that gave no trace, a reference trace's id): ``True`` by each
            trace's privacy level, or a configured ``Redactor``, which counts the kept items'.
            The items are compared before, as read.

    Raises:
        ScorerParameterError: ``ngram`` below 1, ``min_overlap`` outside (0, 1], ``threshold``
            outside [-1, 1]; a setting of the wrong type; neither ``against`` nor
            ``against_texts`` given; an ``against_field`` that none of ``against``'s records
            has (raised once they are read, before ``data`` is).
        InputFileError: ``-`` (standard input) is both ``data`` and ``against``, or twice.
        ParameterConflictError: ``threshold`` given to a scorer without an embedder.
        EmbedderUnavailableError: the scorer's embedder could not be loaded.
    """
    options = options_with(options, reading, decontaminate)
    ngram = count_of(ngram, "ngram", least=1)
    min_overlap = number_of(
        min_overlap, "min_overlap", "a share of words in (0, 1]", lambda share: 0 < share <= 1
    )
    scorer = checked_scorer(scorer) or TraceValueScorer()
    if threshold is not None and scorer.embedder is None:  # a cosine no vector would reach
        raise ParameterConflictError(
            Setting("threshold"),
            " is a cosine of embeddings, and ",
            Setting("embedder", None),
            " compares by n-gram overlap only: drop one of them",
        )
    threshold = DEDUPE_THRESHOLD if threshold is None else threshold
    check_cosine("threshold", threshold)
    texts = _task_texts(against_texts)
    if against is None and against_texts is None:  # nothing to compare with: a call's slip
        raise ScorerParameterError(
            "nothing to decontaminate against: give the reference (evaluation) set as ",
            Setting("against"),
            " (files, rows or a table), or its task texts as ",
            Setting("against_texts"),
        )
    check_stdin_once(paths_of(data), paths_of(against))
    data = readable_twice(data)  # read to compare, then the kept rows taken
    problems: list[Problem] = []
    on_problem = told_of(on_problem)
    redactor = redactor_of(redact)
    unread = unread_rows(redactor, in_place=False)  # not judged, not removed: after the kept
    messages = messages_level(redactor)
    if against_field is not None:
        text_of(against_field, "against_field", "the field holding each reference's task text")
    # The references first: a field none of them has is told before a large input is read.
    references, reference_items = _references(
        against, texts, against_field, source, options, notes, problems, on_problem, messages
    )
    read = items_of(
        data,
        source=source,
        options=options,
        notes=notes,
        progress=progress,
        messages=messages,
    )
    items = list(unread.valid(read, problems, on_problem))
    index = OverlapIndex((reference.text for reference in references), ngram)
    found: dict[int, Contaminated] = {}
    for position, item in enumerate(items):
        match = index.best_match(item.trace.task.objective)
        if match is not None and match.overlap >= min_overlap:
            reference = references[match.index]
            found[position] = Contaminated(item, reference, "ngram", overlap=match.overlap)
    embedded = scorer.embedder is not None
    if embedded and items and references:
        own_threshold = scorer.cosine_of(threshold)  # on MiniLM's scale: see cosine_of
        for position, (row, cosine) in _embedding_matches(
            scorer, items, references, reference_items
        ).items():
            earlier = found.get(position)
            said = scorer.reference_cosine(cosine)  # reported on the threshold's scale
            if earlier is not None:
                found[position] = replace(earlier, similarity=said)
            elif cosine >= own_threshold:
                found[position] = Contaminated(
                    items[position], references[row], "embedding", similarity=said
                )
    if redactor is not None:
        items, found = _redacted(items, found, redactor)
    return DecontaminationResult(
        tuple(items),
        tuple(found[position] for position in sorted(found)),
        len(references),
        ngram=ngram,
        min_overlap=min_overlap,
        threshold=threshold if embedded else None,
        problems=tuple(problems),
        data=data,
        unread=unread,
        redactor=redactor,
    )


def _redacted(
    items: list[TraceItem], found: dict[int, Contaminated], redactor: Redactor
) -> tuple[list[TraceItem], dict[int, Contaminated]]:
    """The items redacted (the kept ones counted), and each removed one with its redacted item.

    The reference it matched keeps its place; its id is hashed when a rule finds anything in it.
    """
    from knowledgepulse.redact.walk import redact_id  # noqa: PLC0415 - the rules load to redact

    cleaned = [
        redactor.redact(item, count=position not in found)[0] for position, item in enumerate(items)
    ]
    level = messages_level(redactor)  # a reference has no level of its own, as a message
    for position, match in found.items():
        reference = match.reference
        hidden = replace(reference, id=redact_id(reference.id, level, redactor.rules)[0])
        found[position] = replace(match, item=cleaned[position], reference=hidden)
    return cleaned, found


def _task_texts(texts: Iterable[str] | None) -> list[str]:
    """``against_texts`` as a list: any iterable of strings (a list, a pandas ``Series``...).

    Raises:
        SettingTypeError: one string (not a list of them), no iterable, or an item that is no
            string (a ``Series``' missing value, NaN), named by its place.
    """
    if texts is None:
        return []
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise wrong_setting("against_texts", texts, "a list of task texts", wrong_type=True)
    listed = list(texts)
    for place, text in enumerate(listed):
        if not isinstance(text, str):
            raise wrong_setting(
                f"against_texts[{place}]",
                text,
                "a task text, a string (drop missing values first: series.dropna())",
                wrong_type=True,
            )
    return listed


def _references(  # noqa: PLR0917 - one private call, the run's reading settings
    against: RunInput | None,
    texts: Iterable[str],
    field: str | None,
    source: str | None,
    options: TraceOptions | None,
    notes: Notes | None,
    problems: list[Problem],
    on_problem: OnProblem,
    messages: PrivacyLevel,
) -> tuple[list[Reference], list[TraceItem | None]]:
    """The reference items, and each one's trace (``None`` for a text).

    ``messages``: the level the references' problems are cleaned at, as the input's are.
    """
    references: list[Reference] = []
    traces: list[TraceItem | None] = []

    def add_text(text: str, name: str, line: int) -> None:
        if text.strip():
            where = Location(name, line)
            references.append(Reference(str(where), text.strip(), where))
            traces.append(None)

    read, paths = _text_paths(against)
    if read is not None and field is not None:
        missed = len(problems)
        for text, where, own_id in _texts_at(read, field, problems, on_problem):
            references.append(Reference(own_id or str(where), text, where))
            traces.append(None)
        if not references and len(problems) > missed:  # not one record: the field is wrong
            raise _no_text_at(field, len(problems) - missed)
    elif read is not None:
        found = items_of(
            read,
            source=source,
            options=options,
            notes=notes,
            messages=messages,
            name=AGAINST_ROWS,
        )
        for item in valid_items(found, problems, on_problem):
            references.append(Reference(item.trace.id, item.trace.task.objective, item.location))
            traces.append(item)
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as error:
            raise InputFileError(
                f"{Location(str(path))}: cannot read the reference texts "
                f"({error.strerror or error})"
            ) from None
        for number, line in enumerate(lines, start=1):
            add_text(line, str(path), number)
    for number, text in enumerate(texts, start=1):
        add_text(text, "texts", number)
    return references, traces


def _texts_at(
    data: RunInput, field: str, problems: list[Problem], on_problem: OnProblem
) -> Iterator[tuple[str, Location, str | None]]:
    """Each record's task text at ``field``, where it is and its own ``id`` if it has one.

    A record without a text there is a problem.
    """
    paths = paths_of(data)
    records: Iterable[Record | Problem] = (
        chain.from_iterable(read_records(path) for path in paths)
        if paths is not None
        else (Record(Location(AGAINST_ROWS, n + 1, n), row) for n, row in enumerate(rows_of(data)))
    )
    for record in records:
        if isinstance(record, Record) and (text := _text_at(record.value, field)) is not None:
            yield text, record.location, _own_id(record.value)
            continue
        problem = (
            record
            if isinstance(record, Problem)
            else record.problem(
                (),
                f"no task text at {field!r}, the field named for the reference's task texts: "
                "a text, or a list of chat messages with a user message, was expected there",
            )
        )
        problems.append(problem)
        on_problem(problem)


def _no_text_at(field: str, records: int) -> ScorerParameterError:
    """The error for an ``against_field`` that none of the ``records`` of ``against`` has."""
    return ScorerParameterError(
        Setting("against_field", field),
        f": no task text there in any of the {counted(records, 'record')} of ",
        Setting("against"),
        " (a text, or a list of chat messages with a user message, was expected); name the "
        "field that holds each reference's task text",
    )


def _own_id(value: Any) -> str | None:
    """A record's own ``id`` (an evaluation set's item id), when it is a text or an integer."""
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, Integral) and not isinstance(found, bool):  # numpy's integers too
        return str(found)
    return found.strip() or None if isinstance(found, str) else None


def _text_at(value: Any, field: str) -> str | None:
    """The text at ``field``: a string, or a list of chat messages' first user message."""
    found = value_at(value, field)
    if isinstance(found, list):
        user = next((m for m in found if isinstance(m, dict) and m.get("role") == "user"), None)
        found = None if user is None else content_text(user.get("content"))
    return (found.strip() or None) if isinstance(found, str) else None


def _text_paths(
    against: RunInput | None,
) -> tuple[RunInput | None, list[str | os.PathLike[str]]]:
    """``against`` apart: what is read as traces (``None``: nothing), and the ``.txt`` files."""
    paths = [against] if isinstance(against, str | os.PathLike) else against
    if not isinstance(paths, list | tuple):
        return against, []
    texts = [p for p in paths if isinstance(p, str | os.PathLike) and _is_text(p)]
    if not texts:
        return against, []
    others = [p for p in paths if p not in texts]
    return others or None, texts


def _is_text(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() == ".txt"


def _embedding_matches(
    scorer: TraceValueScorer,
    items: Sequence[TraceItem],
    references: Sequence[Reference],
    reference_items: Sequence[TraceItem | None],
) -> dict[int, tuple[int, float]]:
    """Each item's nearest reference item by cosine, and the cosine (for the report too).

    A reference trace is compared by novelty vectors, as ``kp dedupe`` compares two traces; a
    reference that is only a task text (a line of a ``.txt`` file) has no steps to embed, so it
    is compared with each item's task text, both embedded as plain text.
    """
    import numpy as np  # noqa: PLC0415 - only with an embedder

    from knowledgepulse.novelty.cache.search import frozen_nearest  # noqa: PLC0415
    from knowledgepulse.novelty.windows import unit_rows  # noqa: PLC0415

    embedder = scorer.embedder
    assert embedder is not None  # called only when the scorer has one

    def as_text(texts: list[str]) -> NDArray[np.float32]:
        return unit_rows(np.asarray(embedder.embed_batch(texts), dtype=np.float32))

    traced = [row for row, item in enumerate(reference_items) if item is not None]
    lines = [row for row, item in enumerate(reference_items) if item is None]
    compared: list[tuple[list[int], NDArray[np.float32], NDArray[np.float32]]] = []
    if traced:
        held = scorer.embed_traces([reference_items[row].trace for row in traced])  # type: ignore[union-attr]
        queries = scorer.embed_traces([item.trace for item in items])
        assert held is not None  # the scorer has an embedder
        assert queries is not None
        compared.append((traced, held, queries))
    if lines:
        tasks = as_text([item.trace.task.objective for item in items])
        compared.append((lines, as_text([references[row].text for row in lines]), tasks))
    best: dict[int, tuple[int, float]] = {}
    for rows, held, queries in compared:
        nearest = frozen_nearest(held, queries)
        for position, (row, cosine) in enumerate(
            zip(nearest.index, nearest.similarity, strict=True)
        ):
            if row >= 0 and (position not in best or cosine > best[position][1]):
                best[position] = (rows[int(row)], float(cosine))
    return best
