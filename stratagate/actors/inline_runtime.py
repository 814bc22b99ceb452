"""The inline runtime: the four roles in this process, sharing one live state.

Deliveries are serialised by a lock (as a Ray actor's mailbox would serialise them); the
pipeline's background work (``append_turn(wait=False)``) runs on one worker thread per
namespace. The runtime owns its store connection; the auditor answers from it. It takes no
lease: other handles, in this process or others, may write the namespace at the same time
(each role refreshes before deciding; a lost race is a ``StaleHandleError``, see
``stratagate.actors.pipeline``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from stratagate.actors import pipeline
from stratagate.actors.auditor import Auditor
from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.registry import ROLES, Handles, RoleName, handler_of
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.audit import refuse_damaged_log
from stratagate.callbacks import is_local
from stratagate.errors import DrainTimeoutError, StorageError
from stratagate.events import TurnAppended
from stratagate.messages import Message, QueueProjections, SealReady
from stratagate.options import MemoryOptions
from stratagate.providers import KINDS, resolve
from stratagate.store import EventStore, open_store

R = TypeVar("R")

STAGES = frozenset({*(type(stage) for stage in pipeline.DERIVED), QueueProjections})
"""The derived stages a turn sets off (seal, extract, project), and the projector's look for
events left without a projection job, which ``add_events`` sets off."""
TURN_APPENDED: str = TurnAppended.model_fields["type"].default

CONTENDED_S = 2.0
"""How long after a lost race a handle keeps deciding its commands inside the decision lock."""


class InlineRuntime:
    """Hosts the roles of one namespace in this process."""

    name = "inline"
    writes = True

    def __init__(
        self, database: str, namespace: str, options: MemoryOptions, *, recover: bool = True
    ) -> None:
        self.store: EventStore = open_store(database)
        try:
            self._start(namespace, options, recover=recover)
        except BaseException:
            self.store.close()
            raise

    def _start(self, namespace: str, options: MemoryOptions, *, recover: bool) -> None:
        store = self.store
        refuse_damaged_log(store, namespace)  # the whole chain: never extend a broken log
        self.live = LiveState(
            store, namespace, None, snapshot_key="inline", snapshot_every=options.snapshot_every
        )
        self.retry_conflicts = options.on_conflict == "retry"
        self._contended_until = 0.0
        self._local_models = all(is_local(resolve(kind, getattr(options, kind))) for kind in KINDS)
        weights = WeightKeeper(namespace, options, self.live)
        self.roles: dict[RoleName, Role] = {
            name: weights if cls is WeightKeeper else cls(namespace, options, self.live)
            for name, cls in ROLES.items()
        }
        hosted: list[MessageHandler] = [
            *self.roles.values(),
            Reader(self.live, weights),
            Auditor(store, namespace, options, self._live_digests),
        ]
        self._handlers = {type(handler): handler for handler in hosted}
        self._settled: dict[type[Message[Any]], tuple[int, int]] = {}
        """Derived stage → (``live.generation``, position) when it last ran to its end."""
        self.skipped_stages = 0
        """Derived stages answered without a delivery (nothing to do; for benchmarks)."""
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._futures: list[Future[None]] = []
        self._errors: list[BaseException] = []
        if recover:
            for role in self.roles.values():
                pipeline.retrying_stale(role.recover, label="recover")

    @property
    def handles(self) -> Handles:
        roles = self.roles
        return Handles(roles["sealer"], roles["extractor"], roles["projector"], roles["weights"])

    def send(self, message: Message[R]) -> R:
        """Answer one message (by its flow, see ``stratagate.actors.pipeline``)."""
        return pipeline.run(message, self)

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """The decision lock from a first lost race on, and for ``CONTENDED_S`` after it;
        ``None`` while this handle has not collided with another writer lately, and for the
        stages when a model runs outside this process (the lock is never held over a call)."""
        if stage and not self._local_models:
            return None
        now = time.monotonic()
        if attempt == 0 and now >= self._contended_until:
            return None
        self._contended_until = now + CONTENDED_S
        return self.store.taking_turns(self.live.namespace)

    def deliver(self, message: Message[Any]) -> Any:
        """Hand one message to its handler, serialised with every other delivery (a derived
        stage with nothing to do is not delivered: ``pipeline.run_stage`` asks ``idle``)."""
        handler = self._handlers[handler_of(message)]
        stage = type(message) in STAGES
        with self._lock:
            result = handler.handle(message)
            if stage:  # it ran to its end: settled here
                self._settled[type(message)] = (self.live.generation, self.live.state.position)
            return result

    def idle(self, *stages: Message[Any]) -> bool:
        """Whether every one of ``stages`` would find nothing to do (``_idle``): then each is
        settled here as if delivered, and the pipeline need not deliver them."""
        with self._lock:
            if not self._idle(stages):
                return False
            self.skipped_stages += len(stages)
            settled = (self.live.generation, self.live.state.position)
            for stage in stages:
                self._settled[type(stage)] = settled
            return True

    def _idle(self, stages: Sequence[Message[Any]]) -> bool:
        """Whether every one of ``stages`` would find nothing to do: each ran to its end since
        the state last folded anything but this handle's own appends (``LiveState.journal``),
        and what this handle appended since the earliest of those ends is only turns, none of
        which filled a tail that may be sealed (for a seal among them). A retrying stage always
        runs (it looks at failed work too), and so does any stage after a catch-up: a turn of
        another writer is that writer's to follow up, but this handle does not tell its rows
        apart. One walk of the journal for all of them: looking from the earliest end is
        stricter for a stage that ended later (``False``: then each stage is asked alone)."""
        live = self.live
        since = live.state.position
        sealing = False
        for stage in stages:
            switches = stage.__dict__  # a stage's fields (getattr on a missing one raises inside)
            if switches.get("retry_failed") or switches.get("retry_skipped"):
                return False
            settled = self._settled.get(type(stage))
            if settled is None or settled[0] != live.generation:
                return False
            kinds = type(stage).__mro__  # not isinstance: a message class's is an ABC check
            if QueueProjections in kinds:  # the jobs model holds what it would queue
                if live.state.jobs.unqueued:
                    return False
                continue
            since = min(since, settled[1])
            sealing = sealing or SealReady in kinds
        blocks = live.state.blocks
        size = blocks.block_turn_size
        for position, event_type, thread in reversed(live.journal):
            if position <= since:
                break
            if event_type != TURN_APPENDED:
                return False
            if sealing:
                record = blocks.threads.get(thread) if thread is not None else None
                if size is None or record is None:
                    return False
                if len(record.tail) >= size and record.seal_status is None:
                    return False
        return True

    def start(self, messages: Sequence[Message[Any]]) -> None:
        """Run ``messages`` in order on the namespace's worker thread."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                1, thread_name_prefix=f"stratagate-{self.live.namespace}"
            )
        self._futures.append(self._executor.submit(self._background, tuple(messages)))

    def _background(self, messages: tuple[Message[Any], ...]) -> None:
        for message in messages:
            try:
                pipeline.run_stage(self, message)
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
        for message in pipeline.DERIVED:
            pipeline.run_stage(self, message)

    def reload(self) -> None:
        """Nothing to do: the roles share the one live state the erasure folded again."""

    def _live_digests(self) -> list[tuple[int, dict[str, str]]]:
        """The live state's position and the digest of each of its read models."""
        with self._lock:
            self.live.refresh()
            return [(self.live.state.position, self.live.state.digests())]

    def close(self, *, snapshot: bool) -> None:
        """Stop the background worker, (durable mode) snapshot the read models, close."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        try:
            self.live.close()  # the background snapshot in flight: finished, or skipped (logged)
            if snapshot:
                with self._lock, contextlib.suppress(StorageError):
                    # a cache: one that cannot be written (a role that may only read, a full
                    # disk) costs the next opener a replay, not this close
                    if self.live.state.position:
                        self.live.snapshot()
        finally:
            self.store.close()


__all__ = ["InlineRuntime"]
