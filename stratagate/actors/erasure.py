"""Erasure (crypto-shredding), the weight keeper's part that destroys content: which data keys
an erasure destroys (pure rules over the read models), and the handlers that record it.

A thread's content is sealed under its thread key (turns, blocks, seal errors), the keys of its
blocks (extraction reasons and errors), the keys of the cards drawn from those blocks, and the
keys of the projection jobs that read any of those cards (their facts). Erasing one card takes
its key and the keys of the projection jobs that read it. Key names are those of
``stratagate.events.content_fields``.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Callable, Iterable
from typing import Literal

from projections.blocks import thread_key
from projections.state import NamespaceState
from stratagate.actors.role import Role, handles
from stratagate.errors import UnknownIdError
from stratagate.events import DomainEvent, EventErased, NamespaceErased, ThreadErased
from stratagate.messages import EraseEvent, EraseNamespace, EraseThread
from stratagate.results import ErasureReport
from stratagate.timeutil import format_utc

CHECKPOINT_WAIT_S = 2.0
"""How long an erasure waits for other connections' read transactions to let the checkpoint
that removes the destroyed keys' bytes finish (``ErasureReport.key_bytes_gone`` says if it did)."""


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


class Erasure(Role):
    """The erasure handlers of the weights stream's writer (``WeightKeeper`` is this role):
    erasure needs every read model to find a thread's keys, and the weights actor holds them."""

    @handles(EraseThread)
    def erase_thread(self, command: EraseThread) -> ErasureReport:
        """Erase a thread: its turns, blocks, cards and the facts drawn from them."""
        self.refresh()
        thread_id = command.thread_id
        if self.state.blocks.thread(thread_id) is None:
            raise UnknownIdError(f"unknown thread id {thread_id!r}")
        names = thread_key_names(self.state, thread_id)
        return self._erase(
            "thread",
            thread_id,
            names,
            command.reason,
            lambda keys, by: ThreadErased(
                thread_id=thread_id, reason=command.reason, by=by, keys=keys, at=self.options.now()
            ),
        )

    @handles(EraseEvent)
    def erase_event(self, command: EraseEvent) -> ErasureReport:
        """Erase one card's text and the facts drawn from it (its source messages stay:
        they are sealed under their thread's key, see docs/OPERATIONS.md)."""
        self.refresh()
        event_id = command.event_id
        if event_id not in self.state.events.records:
            raise UnknownIdError(f"unknown event id {event_id!r}")
        return self._erase(
            "event",
            event_id,
            event_key_names(self.state, event_id),
            command.reason,
            lambda keys, by: EventErased(
                event_id=event_id, reason=command.reason, by=by, keys=keys, at=self.options.now()
            ),
        )

    @handles(EraseNamespace)
    def erase_namespace(self, command: EraseNamespace) -> ErasureReport:
        """Erase every content field of the namespace (all its data keys go)."""
        self.refresh()
        return self._erase(
            "namespace",
            None,
            None,
            command.reason,
            lambda keys, by: NamespaceErased(
                reason=command.reason, by=by, keys=keys, at=self.options.now()
            ),
        )

    def _erase(
        self,
        kind: Literal["thread", "event", "namespace"],
        target: str | None,
        names: set[str] | None,
        reason: str,
        make: Callable[[list[str], str], DomainEvent],
    ) -> ErasureReport:
        """Record the erasure, then destroy the keys and snapshots, then fold the log again.

        The record comes first: a crash before the keys go leaves an erasure to repeat (it is
        idempotent), never keys destroyed without a record of who asked and why.
        """
        live_keys = self.live.keys.names()
        ids = sorted(key_id for name, key_id in live_keys.items() if names is None or name in names)
        erased = make(ids, _who())
        self._append(erased)
        position = self.state.position
        destroyed = self.live.store.shred(
            self.namespace, None if names is None else ids, format_utc(erased.at)
        )
        gone = self.live.store.flush_erased(CHECKPOINT_WAIT_S)
        self.live.rehydrate()
        return ErasureReport(
            kind=kind,
            target=target,
            position=position,
            keys_destroyed=destroyed,
            reason=reason,
            key_bytes_gone=gone,
        )


def _who() -> str:
    """The operator as this process sees it: user, host and process id."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()} pid {os.getpid()}"


__all__ = ["Erasure", "event_key_names", "job_key_names", "thread_key_names"]
