"""The rules of taking things in, as pure deciders: turns into the log, an import's decided items.

A role refreshes its state, hands a decider what the state knows, and appends what the
decision says; the decider reads nothing and writes nothing, so every rule here is a unit test.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from stratagate.errors import InvalidInputError, ReceiptConflictError, UnknownIdError
from stratagate.models import EventCardInput

# -- turns -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One turn asked to be appended, as the decider needs it."""

    receipt_id: str | None
    command_id: str
    thread_id: str | None
    message_ids: tuple[str, ...]
    digest: str | None
    """The turn's content digest: what a receipt id names (``None`` without a receipt id:
    nothing reads it then)."""


class TurnsSoFar(Protocol):
    """What the log already holds of a namespace's turns (the blocks model is one)."""

    @property
    def receipts(self) -> Mapping[str, str]:
        """Receipt id → the digest of the turn it names."""
        ...

    @property
    def commands(self) -> Mapping[str, int]:
        """Command id → the turn it appended (a retried command appends nothing)."""
        ...

    @property
    def messages(self) -> Container[str]:
        """Message ids already used."""
        ...

    @property
    def turn(self) -> int:
        """Turns appended so far, all threads."""
        ...

    def thread_turns(self, thread_id: str | None) -> int:
        """Turns appended so far to one thread."""
        ...


@dataclass(frozen=True, slots=True)
class TurnVerdict:
    """What becomes of one requested turn: a new turn (its numbers), a retried command (the
    turn it appended then), or a duplicate of a receipt (nothing)."""

    turn: int | None
    thread_turn: int | None = None
    new: bool = False
    duplicate: bool = False


@dataclass(slots=True)
class TurnBatch:
    """What the turns decided before one in a batch took: receipts, message ids, turns."""

    turn: int
    receipts: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    thread_turns: dict[str | None, int] = field(default_factory=dict)


DUPLICATE = TurnVerdict(turn=None, duplicate=True)


def decide_turns(requests: Sequence[TurnRequest], seen: TurnsSoFar) -> list[TurnVerdict]:
    """Each request decided as if appended alone, after the ones before it in the batch
    (``decide_turn``). Either error of one means nothing of the batch is appended."""
    batch = TurnBatch(seen.turn)
    return [decide_turn(request, seen, batch, index) for index, request in enumerate(requests)]


def decide_turn(
    request: TurnRequest, seen: TurnsSoFar, batch: TurnBatch | None = None, index: int = 0
) -> TurnVerdict:
    """One request, after the turns before it in ``batch`` (none: a turn alone).

    A known receipt id with the same content is a duplicate, with other content a
    ``ReceiptConflictError``; a known command id answers its turn again; a message id used
    before (or twice in the batch or the turn) is an ``InvalidInputError``.
    """
    receipt = request.receipt_id
    if receipt is not None:
        known = seen.receipts.get(receipt)
        if known is None and batch is not None:
            known = batch.receipts.get(receipt)
        if known is not None:
            if known != request.digest:
                raise ReceiptConflictError(
                    f"turns[{index}]: receipt id {receipt!r} already names a different turn "
                    "(same id, other content): nothing was appended"
                )
            return DUPLICATE
    turn = seen.commands.get(request.command_id)
    if turn is not None:
        return TurnVerdict(turn=turn)
    ids = request.message_ids
    used = () if batch is None else batch.used
    taken = [i for i in ids if i in seen.messages or i in used]
    if taken or len(set(ids)) != len(ids):
        raise InvalidInputError(
            f"message ids already used: {', '.join(taken) or 'repeated in the turn'}"
        )
    thread = request.thread_id
    if batch is None:
        return TurnVerdict(seen.turn + 1, seen.thread_turns(thread) + 1, new=True)
    batch.used.update(ids)
    if receipt is not None and request.digest is not None:
        batch.receipts[receipt] = request.digest
    thread_turn = batch.thread_turns.get(thread, seen.thread_turns(thread)) + 1
    batch.thread_turns[thread] = thread_turn
    batch.turn += 1
    return TurnVerdict(turn=batch.turn, thread_turn=thread_turn, new=True)


# -- imports -----------------------------------------------------------------------------------

Action = Literal["add", "merge", "supersede", "conflict", "ignore"]


@dataclass(frozen=True, slots=True)
class DecidedItem:
    """One planned import item with the caller's decision about it."""

    digest: str
    """The item's content hash (an item imported before is skipped)."""
    message_id: str
    """The id of the raw message the item becomes."""
    candidate: EventCardInput
    action: Action
    target_event_id: str | None
    supersedes: tuple[str, ...] = ()
    """Events the item itself says it replaces (its ``supersedes``): each must be active."""


@dataclass(frozen=True, slots=True)
class ImportStep:
    """What one kept item becomes: a card to add (for add, supersede and conflict; a conflict's
    card names the event it conflicts with), an event the item's message merges into, or
    nothing (ignore)."""

    item: DecidedItem
    card: EventCardInput | None
    """The card to add, or ``None`` (merge, ignore)."""
    replaces: tuple[str, ...] = ()
    """The events the card supersedes: the item's own ``supersedes``, then a decider's
    ``supersede`` target (each once)."""


@dataclass(frozen=True, slots=True)
class ImportDecision:
    """The kept items in order, as steps, and how many items were skipped as duplicates."""

    steps: list[ImportStep]
    skipped_duplicates: int


def decide_import(
    items: Sequence[DecidedItem],
    *,
    imported: Collection[str],
    events: Container[str],
    active: Container[str] = (),
    skipped_before: int = 0,
) -> ImportDecision:
    """The steps of an import: items imported meanwhile (their hash is in ``imported``) are
    skipped; a decision's target must be an event the namespace holds (else
    ``UnknownIdError`` and nothing is appended); an event an item supersedes must be held and
    ``active``, and named by one item only (else ``InvalidInputError``)."""
    kept = [item for item in items if item.digest not in imported]
    replaced: set[str] = set()
    for item in kept:
        if item.target_event_id is not None and item.target_event_id not in events:
            raise UnknownIdError(f"decide() target {item.target_event_id!r} is not an event")
        for old_id in item.supersedes:
            if old_id not in events:
                raise UnknownIdError(f"an item supersedes {old_id!r}, which is not an event")
            if old_id not in active or old_id in replaced:
                why = "superseded by another item" if old_id in replaced else "not active"
                raise InvalidInputError(f"an item supersedes {old_id!r}, which is {why}")
            replaced.add(old_id)
    steps = []
    for item in kept:
        card: EventCardInput | None = item.candidate
        if item.action in ("merge", "ignore"):
            card = None
        elif item.action == "conflict":
            temporal = item.candidate.temporal
            assert temporal is not None and item.target_event_id is not None
            update = {"conflicts_with_event_ids": [item.target_event_id]}
            card = item.candidate.model_copy(
                update={"temporal": temporal.model_copy(update=update)}
            )
        olds = [*item.supersedes] if card is not None else []
        if item.action == "supersede" and item.target_event_id is not None:
            olds.append(item.target_event_id)
        steps.append(ImportStep(item=item, card=card, replaces=tuple(dict.fromkeys(olds))))
    return ImportDecision(steps, skipped_before + len(items) - len(kept))


__all__ = [
    "Action",
    "DecidedItem",
    "ImportDecision",
    "ImportStep",
    "TurnBatch",
    "TurnRequest",
    "TurnVerdict",
    "TurnsSoFar",
    "decide_import",
    "decide_turn",
    "decide_turns",
]
