"""``AsyncStrataGate``: the same methods as ``StrataGate``, awaitable, for async agent loops.

Each call runs the synchronous method on a worker thread (``asyncio.to_thread``), so the event
loop never blocks on the log, a model callback or a Ray round trip. Async callbacks work too:
they run on that worker thread's own event loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from stratagate.memory import StrataGate

ASYNC_METHODS: tuple[str, ...] = (
    "append_turn",
    "append_turns",
    "drain",
    "resume_pending_work",
    "list_blocks",
    "list_events",
    "list_elements",
    "list_open_tail",
    "list_extraction_jobs",
    "list_element_projection_jobs",
    "list_usage_receipts",
    "has_ingestion_receipt",
    "get_event",
    "get_block",
    "stats",
    "add_event",
    "add_events",
    "search_events",
    "search_elements",
    "search_raw_memory",
    "expand_event",
    "expand_element",
    "get_block_context",
    "expand_block",
    "assess_retrieval",
    "record_memory_use",
    "event_weight",
    "pin_event",
    "forget_event",
    "restore_event",
    "archive_event",
    "claim_next_element_projection",
    "complete_element_projection",
    "fail_element_projection",
    "recall_context",
    "history",
    "verify",
    "state_at",
    "import_external_memory",
    "undo_import",
    "close",
)


def _awaitable(name: str) -> Callable[..., Any]:
    sync = getattr(StrataGate, name)

    @functools.wraps(sync)
    async def method(self: AsyncStrataGate, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)

    return method


class AsyncStrataGate:
    """Awaitable twin of ``StrataGate``: ``mem = await AsyncStrataGate.open(db, ns)``."""

    def __init__(self, sync: StrataGate) -> None:
        if not isinstance(sync, StrataGate):
            raise TypeError("use await AsyncStrataGate.open(...) or AsyncStrataGate.in_memory(...)")
        self.sync = sync

    @classmethod
    async def open(cls, database: Any, namespace: str, **options: Any) -> AsyncStrataGate:
        return cls(await asyncio.to_thread(StrataGate.open, database, namespace, **options))

    @classmethod
    async def in_memory(cls, namespace: str = "default", **options: Any) -> AsyncStrataGate:
        return cls(await asyncio.to_thread(StrataGate.in_memory, namespace, **options))

    async def __aenter__(self) -> AsyncStrataGate:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.sync.close)

    @property
    def namespace(self) -> str:
        return self.sync.namespace

    @property
    def turn(self) -> int:
        return self.sync.turn

    @property
    def revision(self) -> int:
        return self.sync.revision

    @property
    def handles(self) -> Any:
        return self.sync.handles


for _name in ASYNC_METHODS:
    setattr(AsyncStrataGate, _name, _awaitable(_name))

__all__ = ["ASYNC_METHODS", "AsyncStrataGate"]
