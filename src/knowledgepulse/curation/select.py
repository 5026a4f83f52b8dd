"""Score-first, diversity-aware selection (in the spirit of DEITA's filtering), and dedupe.

Walking down the ranking (the outcome when ranking by one, success, score, id, content digest:
never the input order), a candidate is rejected below the minimum score or outcome, as a
near-duplicate of the most similar selected trace, or past the budget; a rejected trace never
blocks another. Domains (``per_domain``) and, within one, tasks take turns, so a budget covers
as many as it can, then goes to successful runs before failed ones (``docs/curation.md``). A dedupe
group is what selection with no budget makes of a corpus: its representative is its best trace,
and groups do not chain. A task key is read (:func:`~knowledgepulse.trace.item.task_at`) or
inferred (:func:`infer_tasks`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import count_of
from knowledgepulse.errors import ScorerParameterError, VectorError
from knowledgepulse.novelty.cache.index import GrowingRows, approximate, nearest_other_key
from knowledgepulse.novelty.cache.search import as_float32, frozen_nearest

RejectionReason = Literal[
    "below_min_score", "below_min_reward", "near_duplicate", "over_budget", "over_per_task"
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One trace offered for selection.

    Attributes:
        key: the trace id (ties in score go to the smaller id).
        score: its value score.
        domain: its ``metadata.task_domain`` (for ``per_domain``).
        tiebreak: a digest of its content, for two copies of one id with equal scores.
        task: the task it is a run of (``None``: none known).
        failed: whether the run failed: it ranks after every run that did not, at an equal
            outcome, whatever its score.
        outcome: the number it is ranked by before success and score with ``by_outcome`` (a
            reward, or a field's value; ``None``: it has none, and ranks after every one that
            has), and compared with ``min_outcome``.
    """

    key: str
    score: float
    domain: str = ""
    tiebreak: bytes = b""
    task: str | None = None
    failed: bool = False
    outcome: float | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a candidate was not selected.

    Attributes:
        index: the candidate's position in the list given to :func:`select`.
        reason: ``below_min_score``, ``below_min_reward`` (its outcome is below
            ``min_outcome``, or it has none), ``near_duplicate``, ``over_budget`` or
            ``over_per_task`` (its task already has ``per_task`` picks).
        duplicate_of: with ``near_duplicate``, the index of the most similar selected candidate.
        similarity: with ``near_duplicate``, the cosine with that candidate.
    """

    index: int
    reason: RejectionReason
    duplicate_of: int | None = None
    similarity: float | None = None


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of :func:`select`: indexes into the candidate list.

    Attributes:
        selected: the selected candidates in the order picked (the first N are what a budget
            of N would select).
        rejected: every other candidate with its reason, in ranking order.
        min_score: the minimum score applied (``None`` when there was none).
    """

    selected: tuple[int, ...]
    rejected: tuple[Rejection, ...]
    min_score: float | None = None


def _check_rows(vectors: NDArray[np.floating[Any]], count: int) -> None:
    """Refuse ``vectors`` that are not a row per candidate (``VectorError``, a ValueError)."""
    if vectors.ndim != 2 or vectors.shape[0] != count:
        raise VectorError(
            f"the vectors have shape {vectors.shape} for {count} candidates: give one row per "
            f"candidate, row i for candidates[i] (shape ({count}, dimensions))"
        )


def ranking(candidates: Sequence[Candidate], *, by_outcome: bool = False) -> list[int]:
    """The candidates' indexes, best first.

    With ``by_outcome``, outcome descending (none last) first; then the successful before the
    failed, score descending, id, digest, domain, task.
    """
    keys = [
        (
            *((c.outcome is None, -(c.outcome or 0.0)) if by_outcome else ()),
            c.failed,
            -c.score,
            c.key,
            c.tiebreak,
            c.domain,
            c.task or "",
        )
        for c in candidates
    ]
    return sorted(range(len(candidates)), key=keys.__getitem__)


TOP_PERCENT_RANGE = (1.0, 100.0)
"""What a ``top`` share may be, in percent, in kp select and :func:`knowledgepulse.runs.select`.

Below 1 it is refused, not read: ``0.1`` is what a user who thinks in fractions writes for the
top 10%, and as a percentage it selects next to nothing (0 of 200); a budget gives fewer."""


def is_top_percent(percent: float) -> bool:
    """Whether ``percent`` is a ``top`` share kp takes (see :data:`TOP_PERCENT_RANGE`)."""
    least, most = TOP_PERCENT_RANGE
    return least <= percent <= most


def budget_for_top(percent: float, count: int) -> int:
    """How many of ``count`` traces make the top ``percent``% (rounded down: never more)."""
    return int(count * percent / 100.0 + 1e-9)


def select(
    candidates: Sequence[Candidate],
    vectors: NDArray[np.floating[Any]] | None = None,
    *,
    budget: int | None = None,
    min_score: float | None = None,
    max_similarity: float | None = None,
    per_domain: bool = False,
    per_task: int | None = None,
    by_outcome: bool = False,
    min_outcome: float | None = None,
) -> Selection:
    """Pick the best candidates under a budget, a minimum score and a similarity limit.

    The candidates are taken in :func:`ranking` order (``by_outcome``: their outcomes first),
    so a task's successful runs come before its failed ones; ``min_outcome`` leaves out a
    candidate whose outcome is below it or missing.

    ``vectors`` (unit vectors, row ``i`` for ``candidates[i]``) are needed with
    ``max_similarity``: a candidate whose cosine with a selected one reaches it is rejected.
    ``budget`` and ``per_task`` cap the picks in all and of each task (``None``: no limit);
    ``per_domain`` shares the budget evenly across domains.

    Raises:
        ValueError: ``max_similarity`` without vectors; (a ``ScorerParameterError``) a
            ``budget`` that is no whole number of 0 or more (``budget=-1``) or a ``per_task`` of
            1 or more (0 would reject every candidate, as ``runs.select`` refuses it); or (a
            ``VectorError``) vectors that are not a row per candidate.
    """
    # Refused, not clamped: budget=-1 is a mistake (a count computed wrong), not "none".
    limit = len(candidates) if budget is None else count_of(budget, "budget", least=0)
    task_limit = None if per_task is None else count_of(per_task, "per_task", least=1)
    rows = None  # with a similarity limit, the picks' vectors, a row per pick (up to the limit)
    if max_similarity is not None:
        if vectors is None:
            raise ValueError("max_similarity needs the candidates' vectors")
        _check_rows(vectors, len(candidates))
        size = min(limit, len(vectors))
        rows = GrowingRows(size, vectors.shape[1], approximate=approximate(size), sample=vectors)
    order = ranking(candidates, by_outcome=by_outcome)
    position = {index: rank for rank, index in enumerate(order)}
    rejected = {
        index: Rejection(index, reason)
        for index in order
        if (reason := _below(candidates[index], min_score, min_outcome)) is not None
    }
    eligible: dict[str, list[int]] = {}
    for index in order:
        if index not in rejected:
            eligible.setdefault(candidates[index].domain if per_domain else "", []).append(index)
    picked: list[int] = []

    def duplicate(index: int) -> Rejection | None:
        # A near_duplicate rejection when the candidate is too close to a pick, else None.
        if rows is None or vectors is None or max_similarity is None or not picked:
            return None
        best, cosine = rows.nearest(vectors[index])  # ties: the earliest pick, the better one
        similarity = min(1.0, max(-1.0, cosine))
        if similarity < max_similarity:
            return None
        return Rejection(index, "near_duplicate", picked[best], similarity)

    taken: Counter[str | None] = Counter()
    domains = [
        _TaskTurns(indexes, candidates, position, taken, task_limit)
        for indexes in eligible.values()
    ]

    def head(queue: list[int]) -> int | None:
        # The queue's best candidate (its last) that is not a near-duplicate of a selected one.
        while queue:
            found = duplicate(queue[-1])
            if found is None:
                return queue[-1]
            rejected[queue[-1]] = found
            queue.pop()
        return None

    while len(picked) < limit:
        heads = [(i, turns) for turns in domains if (i := turns.head(head)) is not None]
        if not heads:
            break
        for _, turns in sorted(heads, key=lambda pair: position[pair[0]]):
            # An earlier pick in this round may have made this domain's head a near-duplicate.
            if len(picked) >= limit or turns.head(head) is None:
                continue
            index = turns.take()
            if rows is not None and vectors is not None:
                rows.add(vectors[index])
            picked.append(index)
    rest = [pair for turns in domains for pair in turns.rest()]
    # The picks are final: every candidate left is compared with them at once.
    rejected |= _near_duplicates(
        [index for index, _ in rest], vectors, rows, picked, max_similarity
    )
    for index, task_full in rest:
        if index not in rejected:
            rejected[index] = Rejection(index, "over_per_task" if task_full else "over_budget")
    return Selection(
        selected=tuple(picked),
        rejected=tuple(rejected[i] for i in sorted(rejected, key=position.__getitem__)),
        min_score=min_score,
    )


def _near_duplicates(
    indexes: list[int],
    vectors: NDArray[np.floating[Any]] | None,
    rows: GrowingRows | None,
    picked: list[int],
    max_similarity: float | None,
) -> dict[int, Rejection]:
    """The candidates at ``indexes`` whose cosine with a pick (``rows``) reaches the limit."""
    if rows is None or vectors is None or max_similarity is None or not picked:
        return {}
    best, cosine = rows.nearest_many(vectors[indexes])
    found = {}
    for index, number, similarity in zip(indexes, best.tolist(), cosine.tolist(), strict=True):
        clamped = min(1.0, max(-1.0, similarity))
        if clamped >= max_similarity:
            found[index] = Rejection(index, "near_duplicate", picked[number], clamped)
    return found


def _below(
    candidate: Candidate, min_score: float | None, min_outcome: float | None
) -> RejectionReason | None:
    """Why a candidate is below a minimum (score first), or ``None``: it is not."""
    if min_score is not None and candidate.score < min_score:
        return "below_min_score"
    if min_outcome is not None and (candidate.outcome is None or candidate.outcome < min_outcome):
        return "below_min_reward"
    return None


class _TaskTurns:
    """One domain's eligible candidates by task; the next is the best of a least-picked task.

    Every task's first pick comes first; after it, a task's successful runs come before any
    task's failed ones (a failed run is taken past its task's first only when no task has a
    successful run left), and the tasks take turns within each. A heap of :meth:`_turn`
    entries, each checked when it comes to the top (another domain's pick, or a dropped
    near-duplicate, stale it).
    """

    def __init__(
        self,
        indexes: list[int],
        candidates: Sequence[Candidate],
        position: dict[int, int],
        taken: Counter[str | None],
        limit: int | None,
    ) -> None:
        # Each task's candidates, best last (a list a task, not a deque: a corpus of 200,000
        # tasks of one run each held 150 MB of deques).
        self.queues: dict[str | None, list[int]] = {}
        for index in indexes:  # in ranking order
            self.queues.setdefault(candidates[index].task, []).append(index)
        for queue in self.queues.values():
            queue.reverse()
        self._candidates = candidates
        self._position = position
        self._taken = taken
        self._limit = limit
        self._heap = [self._turn(task, queue[-1]) for task, queue in self.queues.items()]
        heapq.heapify(self._heap)

    def _turn(self, task: str | None, best: int) -> tuple[bool, int, int, str | None]:
        """The heap entry of a task whose best eligible candidate is ``best``.

        ``(a failed run past the task's first, picks of the task, rank of best, task)``: ranks
        are unique, so the task itself (maybe ``None``) is never compared.
        """
        count = self._taken[task]
        return (count > 0 and self._candidates[best].failed, count, self._position[best], task)

    def head(self, first: Callable[[list[int]], int | None]) -> int | None:
        """The next pick (``first`` gives a queue's best eligible candidate), or ``None``."""
        while self._heap:
            task = self._heap[0][-1]
            best = first(self.queues[task])
            if best is None or (self._limit is not None and self._taken[task] >= self._limit):
                heapq.heappop(self._heap)
            elif self._heap[0] != (turn := self._turn(task, best)):
                heapq.heapreplace(self._heap, turn)
            else:
                return best
        return None

    def rest(self) -> Iterator[tuple[int, bool]]:
        """Each candidate left, and whether its task has all the picks it may have."""
        for task, queue in self.queues.items():
            full = self._limit is not None and self._taken[task] >= self._limit
            for index in reversed(queue):
                yield index, full

    def take(self) -> int:
        """Remove the candidate :meth:`head` just gave (it is selected) and return it."""
        task = self._heap[0][-1]
        index = self.queues[task].pop()
        self._taken[task] += 1
        queue = self.queues[task]
        if queue:
            heapq.heapreplace(self._heap, self._turn(task, queue[-1]))
        else:
            heapq.heappop(self._heap)
        return index


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """A kept trace and the near-duplicates it stands for.

    Attributes:
        representative: the index of the kept candidate.
        members: ``(index, cosine with the representative)`` of each near-duplicate, in ranking
            order (the cosine ``None`` when unknown: a task's group without vectors).
    """

    representative: int
    members: tuple[tuple[int, float | None], ...]


def dedupe(
    candidates: Sequence[Candidate],
    vectors: NDArray[np.floating[Any]],
    *,
    threshold: float,
    nearest: Sequence[float] | None = None,
) -> list[DuplicateGroup]:
    """The near-duplicate groups (two or more traces), best representative first.

    Tasks play no part: a group is made of near-copies, whatever task each is a run of. What
    :func:`select` with ``max_similarity`` and nothing else picks, walked a block of the ranking
    at a time: the block against the picks before it in one product (or index search), then
    against its own picks. ``nearest``: each candidate's highest cosine with any other, where
    known (``inf`` where not; a corpus's leave-one-out novelty gives it): a candidate below
    ``threshold`` there is in no group and changes none, so the walk leaves it out.
    """
    _check_rows(vectors, len(candidates))
    # Tasks out of the ranking; a copy only of a candidate that has one (at a million, the
    # copies alone were some 90 MB).
    order = ranking([c if c.task is None else replace(c, task=None) for c in candidates])
    if nearest is not None:  # two products of one pair round apart: a hair under still walks
        order = [index for index in order if nearest[index] >= threshold - COSINE_SLACK]
    rows = GrowingRows(
        len(order), vectors.shape[1], approximate=approximate(len(order)), sample=vectors
    )
    kept: list[int] = []  # the picks, in the order picked (their numbers in rows)
    members: dict[int, list[tuple[int, float | None]]] = {}
    for start in range(0, len(order), WALK_BLOCK):
        block = order[start : start + WALK_BLOCK]
        block_vectors = as_float32(vectors[block])
        before, before_cosine = rows.nearest_many(block_vectors)
        inner = block_vectors @ block_vectors.T
        first = len(kept)  # the number of the block's first pick
        taken: list[int] = []  # the block's picks, as rows of the block
        for row, index in enumerate(block):
            best, cosine = int(before[row]), float(before_cosine[row])
            if taken:
                within = inner[row, taken]
                column = int(within.argmax())
                if within[column] > cosine:  # ties: the earlier pick, from an earlier block
                    best, cosine = first + column, float(within[column])
            similarity = min(1.0, max(-1.0, cosine))
            if best >= 0 and similarity >= threshold:
                members.setdefault(kept[best], []).append((index, similarity))
            else:
                taken.append(row)
                kept.append(index)
        rows.add_many(block_vectors[taken])
    return [DuplicateGroup(index, tuple(members[index])) for index in kept if index in members]


def dedupe_apart(
    candidates: Sequence[Candidate],
    vectors: NDArray[np.floating[Any]],
    *,
    threshold: float,
    nearest: Sequence[float] | None = None,
    objectives: Sequence[Hashable],
    compared: Sequence[bool],
) -> list[DuplicateGroup]:
    """:func:`dedupe`, a candidate not ``compared`` only among those of its objective.

    Each set of candidates with an equal objective (``objectives``) and ``compared`` false is
    deduplicated apart from the rest. ``compared`` false: a text the model cannot tell apart
    from others of its script, whose cosine with anything says nothing; a near-copy of a trace
    asks the same thing. Groups come best representative first, as :func:`dedupe`'s.
    """
    if all(compared):
        return dedupe(candidates, vectors, threshold=threshold, nearest=nearest)
    parts = [[index for index, read in enumerate(compared) if read]]
    same_objective: dict[Hashable, list[int]] = {}
    for index, read in enumerate(compared):
        if not read:
            same_objective.setdefault(objectives[index], []).append(index)
    parts.extend(part for part in same_objective.values() if len(part) > 1)
    found: list[DuplicateGroup] = []
    for part in parts:
        if len(part) < 2:  # a group needs two
            continue
        groups = dedupe(
            [candidates[index] for index in part],
            vectors[part],
            threshold=threshold,
            nearest=None if nearest is None else [nearest[index] for index in part],
        )
        found.extend(
            DuplicateGroup(
                part[group.representative],
                tuple((part[member], cosine) for member, cosine in group.members),
            )
            for group in groups
        )
    place = {index: number for number, index in enumerate(ranking(candidates))}
    return sorted(found, key=lambda group: place[group.representative])


WALK_BLOCK = 1024
"""Candidates :func:`dedupe` compares with the picks before them in one product."""
COSINE_SLACK = 1e-5
"""How far two float32 products of the same two unit vectors may round apart, and more."""


def dedupe_by_task(
    candidates: Sequence[Candidate], vectors: NDArray[np.floating[Any]] | None = None
) -> list[DuplicateGroup]:
    """The groups of two or more candidates of one task, best representative first.

    Each group is a task's candidates (their ``task``; one without a task is in no group),
    its representative the task's best by :func:`ranking`. A member's cosine with the
    representative needs ``vectors`` (unit rows, one per candidate); without them it is
    ``None``.
    """
    by_task: dict[str, list[int]] = {}
    for index in ranking(candidates):
        task = candidates[index].task
        if task is not None:
            by_task.setdefault(task, []).append(index)
    return [
        DuplicateGroup(
            kept,
            tuple(
                (member, None if vectors is None else _cosine(vectors[kept], vectors[member]))
                for member in members
            ),
        )
        for kept, *members in by_task.values()
        if members
    ]


def _cosine(first: NDArray[np.floating[Any]], second: NDArray[np.floating[Any]]) -> float:
    """The cosine of two unit vectors, a float32 product whatever they are held in."""
    return float(as_float32(first) @ as_float32(second))


INFERRED_TASK_SIMILARITY = 0.65
"""The cosine of two novelty vectors from which they are runs of one task (``docs/curation.md``:
on tau-bench, a median of 0.75 within a task, 0.35 between two)."""
JOIN_MARGIN = 0.1
"""How far below the task similarity the mean cosine of two inferred tasks' runs may be for a
task whose runs all failed to join one with a successful run (:func:`infer_tasks`): a mean
over every pair is steadier than the one cosine a run joins by. At 0.65, 0.55: halfway between
tau-bench's medians within a task and between two (``docs/curation.md``)."""


def infer_tasks(
    candidates: Sequence[Candidate],
    objectives: Sequence[Hashable],
    vectors: NDArray[np.floating[Any]] | None = None,
    *,
    threshold: float = INFERRED_TASK_SIMILARITY,
    compared: Sequence[bool] | None = None,
    failed: Sequence[bool] | None = None,
    joined: float | None = None,
) -> list[str]:
    """Each candidate's task: the id of the best run of the task it is inferred to belong to.

    Walking down the ranking, a candidate joins the task of an earlier one with the same
    objective (``objectives[i]``: its text, or what is equal for equal texts only, a digest),
    else the task whose best run's vector is most similar to its own when their cosine reaches
    ``threshold``, else it starts its own. Without vectors, only
    equal objectives make a task; nor for a candidate whose ``compared`` is false (its text is
    one the model cannot tell apart from others). With ``failed`` (whether each run failed) and
    ``joined``, a task whose runs all failed then joins the task with a successful run that is
    its nearest, and whose nearest it is, by the mean cosine of their runs, when that reaches
    ``joined`` (:func:`join_failed_tasks`). The answer does not depend on the candidates'
    order (their ``task`` is ignored); two tasks whose best runs share an id are one (a copy of
    one trace).

    Raises:
        ValueError: objectives, ``compared`` or ``failed`` not one per candidate (a
            ``ScorerParameterError``), or vectors not a row per candidate (a ``VectorError``).
    """
    count = len(candidates)
    if vectors is not None:
        _check_rows(vectors, count)
    given = {"objectives": objectives, "compared": compared, "failed": failed}
    wrong = [
        f"{name} has {len(each)}"
        for name, each in given.items()
        if each is not None and len(each) != count
    ]
    if wrong:
        raise ScorerParameterError(
            f"{', '.join(wrong)} for {count} candidates: give one per candidate, in their order"
        )
    tasks = [""] * count
    by_objective: dict[Hashable, str] = {}
    leaders: list[int] = []  # the first (best) run of each task with a row, in ranking order
    # Their vectors, a row per task as tasks are found (never more rows than candidates).
    rows = (
        None
        if vectors is None
        else GrowingRows(count, vectors.shape[1], approximate=approximate(count), sample=vectors)
    )
    for index in ranking(candidates):
        task = by_objective.get(objectives[index])
        near = rows is not None and vectors is not None and (compared is None or compared[index])
        if task is None and near and rows is not None and vectors is not None and leaders:
            best, similarity = rows.nearest(vectors[index])  # ties: the earlier, better task
            if similarity >= np.float32(threshold):  # compared in float32, as the vectors are
                task = tasks[leaders[best]]
        if task is None:
            task = candidates[index].key
            if near and rows is not None and vectors is not None:
                rows.add(vectors[index])
                leaders.append(index)
        tasks[index] = task
        by_objective.setdefault(objectives[index], task)
    if vectors is None or failed is None or joined is None:
        return tasks
    return join_failed_tasks(
        tasks, ranking(candidates), vectors, failed=failed, joined=joined, compared=compared
    )


def join_failed_tasks(
    tasks: Sequence[str],
    order: Sequence[int],
    vectors: NDArray[np.floating[Any]],
    *,
    failed: Sequence[bool],
    joined: float,
    compared: Sequence[bool] | None = None,
) -> list[str]:
    """``tasks`` with each task whose runs all failed joined to its task with a successful run.

    A failed run acts apart from its task's successful runs (other calls, other ids), so the
    walk of :func:`infer_tasks` splits it off as a task of its own, which then takes a first
    pick before any task's second successful run. Two tasks join when each is the other's
    nearest of its kind by the mean cosine of their runs (the product of their mean vectors)
    and that reaches ``joined``: mutual, so two tasks that only one of them is near to stay
    apart. Repeated until none joins; the task is named by the better best run (``order``: the
    ranking). A task with a run whose vector is not ``compared`` takes no part.
    """
    tasks = list(tasks)
    while True:
        names = list(dict.fromkeys(tasks[index] for index in order))  # best runs in rank order
        code = {name: number for number, name in enumerate(names)}
        codes = np.array([code[tasks[index]] for index in order], dtype=np.intp)
        sums = np.zeros((len(names), vectors.shape[1]), dtype=np.float32)
        for start in range(0, len(order), WALK_BLOCK):  # summed in rank order: order-free
            block = list(order[start : start + WALK_BLOCK])
            np.add.at(sums, codes[start : start + WALK_BLOCK], as_float32(vectors[block]))
        sizes = np.bincount(codes, minlength=len(names)).astype(np.float32)
        won = np.zeros(len(names), dtype=bool)
        out = np.zeros(len(names), dtype=bool)
        for index, number in zip(order, codes.tolist(), strict=True):
            won[number] |= not failed[index]
            out[number] |= compared is not None and not compared[index]
        if not (won & ~out).any() or (won | out).all():
            return tasks
        part = np.flatnonzero(~out)  # the tasks taking part, in rank order
        nearest, similarity = _nearest_other(sums[part] / sizes[part, None])
        renamed: dict[str, str] = {}
        for number, other in enumerate(nearest.tolist()):
            if other <= number or nearest[other] != number:
                continue  # each pair once, and only two tasks that are each other's nearest
            task, partner = part[number], part[other]
            if won[task] != won[partner] and similarity[number] >= np.float32(joined):
                renamed[names[task]] = renamed[names[partner]] = names[task]  # the better best run
        if not renamed:
            return tasks
        tasks = [renamed.get(task, task) for task in tasks]


def _nearest_other(means: NDArray[np.float32]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Each row's other row of the highest product (the earliest of equals), and the product."""
    codes = np.arange(len(means), dtype=np.intp)
    if approximate(len(means)):  # past the exact limit an index proposes the neighbours
        return nearest_other_key(means, codes)
    found = frozen_nearest(means, means, held_keys=codes, query_keys=codes)
    return found.index, found.similarity
