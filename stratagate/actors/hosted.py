"""One namespace served inside a Ray host actor: every role over one shared live state.

The roles fold the log once (one ``LiveState``, as inline), deliveries are serialised by the
namespace's lock (as one actor's mailbox would serialise them), and the pipeline's background
work runs on the namespace's own worker thread. Nudges for background work are coalesced: while
a pass of a chain is queued and not yet started, another request for the same chain is already
served by it — so turn-by-turn ``append_turn(wait=False)`` calls cost one pass per batch of turns
that arrived meanwhile, not one per turn. Each append carries the activation's lease.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

from stratagate.actors import pipeline
from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.registry import ROLES, RoleName, handler_of
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.errors import DrainTimeoutError
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.store import EventStore, Lease

SNAPSHOT_KEY = "inline"
"""The snapshot key of a namespace's state under Ray: the inline runtime's, since it is the same
fold (every read model); a namespace moving between the runtimes restores either's snapshot."""

Chain = tuple[Message[Any], ...]


class HostedNamespace:
    """The roles of one namespace in a host actor, and the ``Runner`` its background stages use."""

    writes = True
    retry_conflicts = False

    def __init__(
        self,
        store: EventStore,
        namespace: str,
        options: MemoryOptions,
        lease: Lease,
        *,
        recover: bool,
    ) -> None:
        self.namespace = namespace
        self.live = LiveState(
            store,
            namespace,
            None,
            snapshot_key=SNAPSHOT_KEY,
            snapshot_every=options.snapshot_every,
            lease=lease,
        )
        weights = WeightKeeper(namespace, options, self.live)
        self.roles: dict[RoleName, Role] = {
            name: weights if cls is WeightKeeper else cls(namespace, options, self.live)
            for name, cls in ROLES.items()
        }
        hosted: list[MessageHandler] = [*self.roles.values(), Reader(self.live, weights)]
        self._handlers = {type(handler): handler for handler in hosted}
        self._lock = threading.RLock()
        self._idle = threading.Condition()
        self._queued: list[Chain] = []
        self._running = 0
        self._closed = False
        self._worker = ThreadPoolExecutor(1, thread_name_prefix=f"stratagate-{namespace}")
        self.errors: list[BaseException] = []
        if recover:
            for role in self.roles.values():
                pipeline.retrying_stale(role.recover, label="recover")

    # -- the Runner the stages use ------------------------------------------------------------

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """No lock: the namespace's deliveries already take turns here."""
        return None

    def idle(self, *stages: Message[Any]) -> bool:
        """Not known here: every stage is delivered."""
        return False

    def deliver(self, message: Message[Any]) -> Any:
        """Answer one message with its handler, serialised with every other delivery."""
        handler = self._handlers[handler_of(message)]
        with self._lock:
            return handler.handle(message)

    def start(self, messages: Sequence[Message[Any]]) -> None:
        """Run ``messages`` in order on the worker, unless an unstarted pass of them is queued
        (it will see whatever this request was for)."""
        chain = tuple(messages)
        with self._idle:
            if self._closed or chain in self._queued:
                return
            self._queued.append(chain)
            self._running += 1
        self._worker.submit(self._background, chain)

    def reload(self) -> None:
        """Nothing to do: the roles share the one live state the erasure folded again."""

    # -- background work ------------------------------------------------------------------------

    def _background(self, chain: Chain) -> None:
        with self._idle:
            if chain in self._queued:
                self._queued.remove(chain)
        try:
            for message in chain:
                if self._closed:
                    return
                try:
                    pipeline.run_stage(self, message)
                except Exception as exc:  # kept for settle(): the job state is already durable
                    self.errors.append(exc)
                    return
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def settle(self, timeout: float | None, finish: bool) -> None:
        """Wait for the background work; when it was cut short (an error kept, or ``finish``:
        the caller lost a run), run every stage once more, then raise the first error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            while self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise DrainTimeoutError(f"background work still busy after {timeout} s")
                self._idle.wait(remaining)
        errors, self.errors = self.errors, []
        if errors or finish:
            for stage in pipeline.DERIVED:
                try:
                    pipeline.run_stage(self, stage)
                except Exception as exc:
                    errors.append(exc)
        if errors:
            raise errors[0]

    # -- lifecycle ------------------------------------------------------------------------------

    def configure(self, options: MemoryOptions) -> None:
        """Adopt another opener's options (callbacks, clock, ids) for later calls."""
        for role in self.roles.values():
            role.options = options

    def positioned_digests(self) -> tuple[int, dict[str, str]]:
        with self._lock:
            self.live.refresh()
            return self.live.state.position, self.live.state.digests()

    def snapshot(self) -> int:
        with self._lock:
            self.live.snapshot()
            return self.live.state.position

    def _tail(self, at_least: int) -> int:
        """About how many of the namespace's events came since its last snapshot, when that
        is ``at_least`` or more by positions. Positions are global to the database, so their
        difference counts other namespaces' rows too; a namespace never snapshotted has at
        most its own row count (the store keeps it: no scan)."""
        live = self.live
        gap = live.state.position - live.snapshot_position
        if gap < at_least or live.snapshot_position:
            return gap
        return min(gap, live.store.count(self.namespace))

    def release(self, snapshot_min: int | None) -> int:
        """Stop background work (a pass under way ends after its stage; its late appends are
        refused once the lease is gone), snapshot when ``snapshot_min`` events came since the
        last one (``None``: no snapshot) and drop the cached data keys (the host outlives its
        namespaces: nothing of one stays behind); returns the position."""
        with self._idle:
            self._closed = True
            self._queued.clear()
        self._worker.shutdown(wait=False)  # queued passes see _closed and end at once
        with self._lock:
            live = self.live
            live.close()  # the background snapshot in flight: finished, or skipped (logged)
            if snapshot_min is not None and self._tail(snapshot_min) >= snapshot_min:
                live.snapshot()
            live.keys.forget()
            return live.state.position


__all__ = ["SNAPSHOT_KEY", "HostedNamespace"]
