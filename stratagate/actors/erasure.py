"""Which data keys an erasure destroys: pure rules over the read models.

A thread's content is sealed under its thread key (turns, blocks, seal errors), the keys of its
blocks (extraction reasons and errors), the keys of the cards drawn from those blocks, and the
keys of the projection jobs that read any of those cards (their facts). Erasing one card takes
its key and the keys of the projection jobs that read it. Key names are those of
``stratagate.events.content_fields``.
"""

from __future__ import annotations

from collections.abc import Iterable

from projections.blocks import thread_key
from projections.state import NamespaceState


def thread_key_names(state: NamespaceState, thread_id: str | None) -> set[str]:
    """The key names holding content of ``thread_id`` (its blocks, cards and facts too)."""
    thread = state.blocks.threads.get(thread_key(thread_id))
    blocks = set(thread.block_ids) if thread is not None else set()
    cards = {
        card_id
        for card_id, record in state.events.records.items()
        if record.card.source_block_id in blocks
    }
    names = {f"thread:{thread_id or ''}"}
    names.update(f"block:{block_id}" for block_id in blocks)
    names.update(f"event:{card_id}" for card_id in cards)
    names.update(job_key_names(state, cards))
    return names


def event_key_names(state: NamespaceState, event_id: str) -> set[str]:
    """The key names holding the text of card ``event_id`` and of the facts drawn from it."""
    return {f"event:{event_id}", *job_key_names(state, {event_id})}


def job_key_names(state: NamespaceState, card_ids: Iterable[str]) -> set[str]:
    """The keys of the projection jobs that read any of ``card_ids``."""
    wanted = set(card_ids)
    return {
        f"job:{job.id}"
        for job in state.jobs.projection.values()
        if wanted.intersection(job.source_event_ids)
    }


__all__ = ["event_key_names", "job_key_names", "thread_key_names"]
