"""Turning a proposed event card into a stored one: ids, provenance, mention time, weight.

Provenance rules (spec 000, "Delayed event extraction"): a card cites exactly one source block
and only that block's messages. For extraction the target block is forced as the source and
message ids outside it are dropped, falling back to every target message when none is valid;
for a caller's ``add_event`` an id outside the block is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from datetime import datetime
from typing import Any, Protocol

from stratagate.core.memory_weight import criticality_floor
from stratagate.errors import InvalidInputError
from stratagate.models import EventCardInput
from stratagate.timeutil import format_utc


class CitableMessage(Protocol):
    """What provenance reads of a block's message: its id and creation time (an API message,
    or a read model's row of one, which need not be built into a message for this)."""

    @property
    def id(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


def cited_messages(
    proposed: Sequence[str], block_messages: Sequence[CitableMessage], *, strict: bool
) -> list[str]:
    """The message ids a card may cite: the valid subset, or every block message if none."""
    legal = [m.id for m in block_messages]
    legal_set = set(legal)
    invalid = [m for m in proposed if m not in legal_set]
    if invalid and strict:
        raise InvalidInputError(f"source_message_ids not in the source block: {', '.join(invalid)}")
    valid = [m for m in dict.fromkeys(proposed) if m in legal_set]
    return valid or legal


EVENT_ID_PREFIX = "evt_"


def namespace_event_ids(
    proposals: Sequence[EventCardInput], draw: Callable[[], str]
) -> list[EventCardInput]:
    """A model's cards with ids of the namespace's one style (``evt_…``): an id of its own
    (a label linking siblings of one batch, such as ``<block id>-e1``) becomes a drawn one, and
    the batch's ``supersedes``/``conflicts`` references to it follow. ``evt_`` ids are kept."""
    renamed = {
        p.id: draw() for p in proposals if p.id is not None and not p.id.startswith(EVENT_ID_PREFIX)
    }
    if not renamed:
        return list(proposals)
    out: list[EventCardInput] = []
    for proposed in proposals:
        update: dict[str, object] = {}
        if proposed.id in renamed:
            update["id"] = renamed[proposed.id]
        temporal = proposed.temporal
        if temporal is not None:
            update["temporal"] = temporal.model_copy(
                update={
                    "supersedes_event_ids": [
                        renamed.get(i, i) for i in temporal.supersedes_event_ids
                    ],
                    "conflicts_with_event_ids": [
                        renamed.get(i, i) for i in temporal.conflicts_with_event_ids
                    ],
                }
            )
        out.append(proposed.model_copy(update=update))
    return out


def card_values(
    proposed: EventCardInput,
    *,
    block_id: str,
    block_messages: Sequence[CitableMessage],
    existing_ids: Container[str],
    at: datetime,
    turn: int,
    new_id: Callable[[str], str],
    strict: bool,
    fill_mentioned: bool = True,
) -> dict[str, Any]:
    """The field values of the stored card for ``proposed`` whose source is ``block_id`` (see
    the module rules), as plain data: the caller validates them once, into the form it keeps
    (an ``EventCard``, or the log's stored card)."""
    message_ids = cited_messages(proposed.source_message_ids, block_messages, strict=strict)
    if proposed.id is not None and proposed.id in existing_ids:
        if strict:
            raise InvalidInputError(f"event id {proposed.id!r} already exists")
        event_id = new_id("evt")
    else:
        event_id = proposed.id or new_id("evt")
    cited_ids = set(message_ids)
    cited = [m.created_at for m in block_messages if m.id in cited_ids]
    values = proposed.model_dump(exclude={"id", "source_block_id", "source_message_ids"})
    temporal = values["temporal"] or {}
    if temporal.get("mentioned_at") is None and fill_mentioned:
        temporal["mentioned_at"] = format_utc(max(cited) if cited else at)
    values.update(
        id=event_id,
        source_block_id=block_id,
        source_message_ids=message_ids,
        temporal=temporal,
        weight={
            "last_adopted_turn": turn,
            "floor_weight": criticality_floor(proposed.criticality),
        },
        created_at=at,
        updated_at=at,
    )
    return values


__all__ = [
    "EVENT_ID_PREFIX",
    "CitableMessage",
    "card_values",
    "cited_messages",
    "namespace_event_ids",
]
