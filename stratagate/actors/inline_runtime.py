"""The inline runtime: the four roles in this process, sharing one live state.

Calls are serialised by a lock (as a Ray actor's mailbox would serialise them); background
work (``append_turn(wait=False)``) runs on one worker thread per namespace.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

from stratagate.actors.lease_keeper import LeaseKeeper
from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.routing import ROLE_CLASSES, STAGES, WRITERS, Handles, RoleName, route
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.errors import DrainTimeoutError
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.store import EventStore, Holder

R = TypeVar("R")


class InlineRuntime:
    """Hosts the roles of one namespace in this process."""

    name = "inline"

    def __init__(
        self, store: EventStore, namespace: str, options: MemoryOptions, *, recover: bool = True
    ) -> None:
        # Hydrate before taking the lease: a damaged log raises LogIntegrityError here, with
        # nothing written at all (not even a lease row); what a writer appends in between is
        # folded once the lease is held.
        self.live = LiveState(
            store, namespace, None, snapshot_key="inline", snapshot_every=options.snapshot_every
        )
        self.keeper = LeaseKeeper(store, namespace, Holder.current("inline"))
        try:
            self.live.hold(self.keeper.lease)
        except BaseException:
            self.keeper.release()
            raise
        weights = WeightKeeper(namespace, options, self.live)
        self.roles: dict[RoleName, Role] = {
            name: weights if cls is WeightKeeper else cls(namespace, options, self.live)
            for name, cls in ROLE_CLASSES.items()
        }
        self.reader = Reader(self.live, weights)
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._futures: list[Future[None]] = []
        self._errors: list[BaseException] = []
        if recover:
            for name in WRITERS:
                self.roles[name].recover()

    @property
    def handles(self) -> Handles:
        roles = self.roles
        return Handles(roles["sealer"], roles["extractor"], roles["projector"], roles["weights"])

    def send(self, message: Message[R]) -> R:
        """Deliver one message, serialised with every other call on this namespace."""
        target = route(message)
        handler: MessageHandler = self.reader if target == "reader" else self.roles[target]
        with self._lock:
            return handler.handle(message)

    def start_pipeline(self) -> None:
        """Run seal → extract → project in the background."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                1, thread_name_prefix=f"stratagate-{self.live.namespace}"
            )
        self._futures.append(self._executor.submit(self._background))

    def _background(self) -> None:
        for _, message in STAGES:
            try:
                self.send(message)
            except Exception as exc:  # kept for drain(): the job state is already durable
                self._errors.append(exc)
                return

    def drain(self, timeout: float | None = None) -> None:
        """Wait for background work, then finish whatever is ready; re-raise a background error."""
        pending, self._futures = self._futures, []
        _done, not_done = wait(pending, timeout=timeout)
        if not_done:
            self._futures.extend(not_done)
            raise DrainTimeoutError(f"{len(not_done)} background runs still busy after {timeout} s")
        errors, self._errors = self._errors, []
        if errors:
            raise errors[0]
        for _, message in STAGES:
            self.send(message)

    def reload(self) -> None:
        """Nothing to do: the roles share the one live state the erasure re-folded."""

    def positioned_digests(self) -> list[tuple[int, dict[str, str]]]:
        """The live state's position and the digest of each of its read models."""
        with self._lock:
            self.live.refresh()
            return [(self.live.state.position, self.live.state.digests())]

    def close(self, *, snapshot: bool) -> None:
        """Stop the background worker and (durable mode) snapshot the read models."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        try:
            if snapshot:
                with self._lock:
                    if self.live.state.position:
                        self.live.snapshot()
        finally:
            self.keeper.release()


__all__ = ["InlineRuntime"]
