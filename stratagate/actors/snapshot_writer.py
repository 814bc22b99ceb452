"""Snapshots written off the turn path, by a background thread, of a state of its own.

A turn only asks for a snapshot (``request``: a flag and, at most, a thread started); the
thread hydrates its own state from the last snapshot plus the log tail — never the live state,
which the turns keep folding — and saves it. So what is serialised is a consistent state at
one position that nothing else mutates, and the saved snapshot is provably equal to a replay
(it carries that position and the digest). A failed write is counted and logged, never raised
into a turn. The thread sleeps briefly after every ``SLICE_S`` of folding, so a turn waiting
for the GIL gets it within about that much; so does the indexing its read models defer to
their first read (``ReadModel.index_some``), which the snapshot's dump would otherwise do at
once while holding the GIL (a turn then waited for it after each of its disk writes).

Erasure: the job reads with keys of its own, loaded after it noted which keys were already
destroyed; if any other key is destroyed before it saves, or it folded an erasure whose keys
are not destroyed yet (the erasure's writer destroys them just after appending it), it saves
nothing — a snapshot never holds content an erasure destroyed. An erasure in this process also
``fence``s the writer before its event is appended (waits for a save in flight and voids the
job under way), and its append asks for no snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from projections.replay import apply_at, iter_records, load_snapshot, paused_gc, save_snapshot
from projections.state import NamespaceState
from stratagate.errors import KeyRaceError
from stratagate.events import EventErased, NamespaceErased, ThreadErased
from stratagate.store import EventStore
from stratagate.store.keys import NamespaceKeys, keyring_for

LOG = logging.getLogger(__name__)

SLICE_S = 0.001
"""The longest the writer folds between two short sleeps: each gives a turn waiting for the
GIL its turn, so a turn's every wait (after each of its disk writes) stays under about this."""
YIELD_S = 0.0005
INDEX_STEP = 8
"""Deferred items (a search index's waiting turns or cards) indexed between two looks at
the clock: well under ``SLICE_S``."""
ERASURES = (ThreadErased, EventErased, NamespaceErased)
JOIN_TIMEOUT_S = 120.0
"""How long ``close`` waits for a write in flight before it gives up on it (and says so)."""


@dataclass
class WriterCounters:
    """What the background writer did."""

    requested: int = 0
    written: int = 0
    skipped: int = 0
    failed: int = 0
    last_skip: str = ""
    last_error: str = ""


class SnapshotSkipped(Exception):
    """A background snapshot that was not written, and why (an expected outcome)."""


class SnapshotWriter:
    """Writes the snapshot ``key`` of a namespace in a background thread, one at a time."""

    def __init__(
        self, store: EventStore, namespace: str, components: Iterable[str] | None, key: str
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.components = None if components is None else tuple(components)
        self.key = key
        self.counters = WriterCounters()
        self.position = 0
        """The position of the last snapshot this writer saved."""
        self._thread: threading.Thread | None = None
        self._save_lock = threading.Lock()
        """Held while a snapshot is saved, and by ``fence`` (a save never crosses an erasure)."""
        self._generation = 0
        self._closed = False

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def request(self) -> bool:
        """Start a background write unless one is running (or the writer is closed); never
        blocks. Returns whether a write was started."""
        if self._closed or self.busy:
            return False
        self.counters.requested += 1
        generation = self._generation
        self._thread = threading.Thread(
            target=self._run,
            args=(generation,),
            name=f"stratagate-snapshot-{self.namespace}-{self.key}",
            daemon=True,
        )
        self._thread.start()
        return True

    def fence(self) -> None:
        """Void any write in flight (an erasure is about to be appended or was): waits for a
        save under way, and the job that started before this call saves nothing."""
        with self._save_lock:
            self._generation += 1

    def join(self, timeout: float = JOIN_TIMEOUT_S) -> None:
        """Wait for a write in flight; one still running after ``timeout`` is abandoned
        (logged, counted as skipped: it is only a cache)."""
        thread = self._thread
        if thread is None:
            return
        thread.join(timeout)
        if thread.is_alive():
            self.fence()  # it may finish its fold, but it will not save
            self._skip(f"still running after {timeout:.0f} s at close")

    def close(self) -> None:
        """No further writes; the one in flight is finished (or abandoned with a reason)."""
        self._closed = True
        self.join()

    # -- the background thread ----------------------------------------------------------------

    def _run(self, generation: int) -> None:
        try:
            # The job's state is a second copy of the namespace's, made and dropped here: with
            # the collector on, its growth set off full collections in this thread, each a
            # walk of every object of the process holding the GIL (~100 ms at 1,400 turns)
            # while the turns waited. Paused, the state is freed by reference counts before
            # the collector is on again, so no collection ever walks it.
            with paused_gc():
                self._write(generation)
            self.counters.written += 1
        except SnapshotSkipped as skipped:
            self._skip(str(skipped))
        except Exception as exc:  # a cache write: never raised into a turn, always reported
            self.counters.failed += 1
            self.counters.last_error = f"{type(exc).__name__}: {exc}"
            LOG.warning("snapshot %r of namespace %r failed: %s", self.key, self.namespace, exc)

    def _write(self, generation: int) -> None:
        """Fold the job's state and save it, unless an erasure forbids it (``SnapshotSkipped``)."""
        destroyed = self._destroyed_keys()
        erased: set[str] = set()
        state = self._fold(NamespaceKeys(keyring_for(self.store), self.namespace), erased)
        with self._save_lock:
            if generation != self._generation:
                raise SnapshotSkipped("an erasure or rehydration in this process came first")
            now = self._destroyed_keys()
            if now - destroyed:
                raise SnapshotSkipped("data keys were destroyed while it was folded")
            if erased - now:
                raise SnapshotSkipped("it folded an erasure whose keys are not destroyed yet")
            try:
                save_snapshot(self.store, state, self.key)
            except KeyRaceError:  # another writer stored the snapshot key first
                save_snapshot(self.store, state, self.key)
            self.position = state.position

    def _destroyed_keys(self) -> set[str]:
        return {k.key_id for k in self.store.load_keys(self.namespace) if k.material is None}

    def _skip(self, reason: str) -> None:
        self.counters.skipped += 1
        self.counters.last_skip = reason
        LOG.info("snapshot %r of namespace %r skipped: %s", self.key, self.namespace, reason)

    def _fold(self, keys: NamespaceKeys, erased: set[str]) -> NamespaceState:
        """The last snapshot (or nothing) plus every row after it (chain-checked), read with
        ``keys``, with a short sleep after every ``SLICE_S`` of folding; the keys the erasures
        folded name are added to ``erased``."""
        state = load_snapshot(self.store, self.namespace, self.key, self.components, keys)
        if state is None:
            state = NamespaceState(self.namespace, self.components)
        rows = iter_records(self.store, self.namespace, after=state.position, keys=keys)
        pause = _slices()
        for recorded in rows:
            apply_at(state, recorded)
            if isinstance(recorded.event, ERASURES):
                erased.update(recorded.event.keys)
            pause()
        for model in state.models.values():  # what its dump would do at once, in slices
            while model.index_some(INDEX_STEP):
                pause()
        return state


def _slices() -> Callable[[], None]:
    """A call to make between small pieces of work: it sleeps ``YIELD_S`` once ``SLICE_S``
    has passed since the last sleep."""
    clock = time.perf_counter
    until = clock() + SLICE_S

    def pause() -> None:
        nonlocal until
        if clock() >= until:
            time.sleep(YIELD_S)
            until = clock() + SLICE_S

    return pause


__all__ = ["SnapshotSkipped", "SnapshotWriter", "WriterCounters"]
