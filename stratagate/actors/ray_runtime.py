"""The Ray runtime: namespaces served by a warm pool of host actors, one process per CPU.

The actors live in ``stratagate.actors.ray_pool`` (the one place ``ray.remote`` is applied,
importing little, so that the directory's process stays light): ``HostActor``, a process that
serves any number of namespaces at once — each with all four roles (and the reader) over one
shared live state (``stratagate.actors.hosted``), so a namespace's log is folded once — and the
``Directory`` that assigns namespaces to hosts and is itself the pool's first host. The
directory starts its pool when it is created: one host per CPU of the cluster, itself included
(``ray_prestart`` asks for more), spread over the nodes. Activating a namespace acquires its writer lease and has the least busy host that has
started serve it (a host still starting holds up no namespace another can take, within a bound
on the imbalance: ``ray_pool.least_busy``) under that
lease's epoch (hydrating from snapshot + log tail) — no process is started per
namespace, and heavy imports load once per host. Passivating one — when
``max_live_namespaces`` is reached, the least recently used namespace no memory holds open —
snapshots it, drops it from its host and gives the lease up. A namespace a memory holds open is
not passivated for another (the two would only take turns): while every live namespace is held
open the bound is exceeded. Memory is bounded by the pool and the bound, not by namespaces
opened.

A turn costs the caller one actor call (the append, answered once durable); the background
work it sets off is a nudge the host coalesces with the others that arrive while a pass is
queued. Fencing: a host checks every call against the namespaces it serves (a caller holding an
old handle gets ``NotAssignedError`` and re-activates), and every append carries the
activation's lease, so a late write for a namespace that moved — or from any stale holder —
fails with ``StorageConflictError`` instead of landing. Ray object refs never reach the caller,
and Ray's task errors are unwrapped into the error the role raised.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar, cast

import ray
from ray.exceptions import (
    GetTimeoutError,
    ObjectLostError,
    RayActorError,
    RayError,
    RayTaskError,
)

from stratagate.actors import pipeline
from stratagate.actors.auditor import Auditor
from stratagate.actors.channel import Channel, ChannelLost, ChannelTimeout
from stratagate.actors.ray_pool import (
    _CHANNELS,
    DIRECTORY_NAME,
    HOST_THREADS,
    PRELOAD,
    RAY_NAMESPACE,
    Actor,
    Directory,
    HostActor,
    NotAssignedError,
    forget_channel,
    namespace_key,
    on_host,
    pack,
)
from stratagate.actors.registry import Handles, host_of
from stratagate.audit import refuse_damaged_log
from stratagate.errors import DrainTimeoutError, RuntimeUnavailableError, StrataGateError
from stratagate.messages import AppendTurn, AppendTurns, Message
from stratagate.options import MemoryOptions
from stratagate.store import EventStore, open_store
from stratagate.store.keys import keys_for

CALL_ATTEMPTS = 4
PENDING_CHECK = 64
"""Unchecked background nudges a runtime keeps before it looks at the answered ones."""
R = TypeVar("R")

_STARTING = threading.Lock()
_PRESTARTED: dict[Any, int] = {}
"""The pool size this process already asked each directory to start."""


def ensure_ray(address: str | None = None, log_level: str = "error") -> None:
    """Connect to the given cluster, or start a local Ray when none is running (once, even when
    several threads open memories at the same time). Ray's own log lines below ``log_level``
    stay quiet, and its workers' output stays in Ray's log files (never this process's)."""
    with _STARTING:
        if ray.is_initialized():
            return
        try:
            ray.init(
                address=address,
                namespace=RAY_NAMESPACE,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=getattr(logging, log_level.upper()),
            )
        except Exception as exc:
            raise RuntimeUnavailableError(f"cannot start or reach Ray: {exc}") from exc


IDLE_STORES = 2
"""Stores of databases no memory of this process has open that are kept open for the next."""


class SharedStores:
    """One store per database for the memories of this process: a namespace's open does not
    build a SQL engine of its own (opening a store — engine, layout check, queue files — costs
    more than the rest of the driver's share of an open). Counted per user; the last
    ``IDLE_STORES`` stores nobody uses stay open, the older ones are closed."""

    def __init__(self, idle: int = IDLE_STORES) -> None:
        self._lock = threading.Lock()
        self._users: Counter[str] = Counter()
        self._stores: dict[str, EventStore] = {}
        self._idle: OrderedDict[str, None] = OrderedDict()
        self._keep = idle

    def take(self, database: str) -> EventStore:
        """The process's store of ``database`` (opened when there is none), for one more user."""
        with self._lock:
            store = self._stores.get(database)
            if store is None:
                store = self._stores[database] = open_store(database)
            self._users[database] += 1
            self._idle.pop(database, None)
            return store

    def give_back(self, database: str) -> None:
        """One user is done with ``database``'s store; close the oldest idle stores."""
        closing: list[EventStore] = []
        with self._lock:
            self._users[database] -= 1
            if self._users[database] > 0:
                return
            del self._users[database]
            self._idle[database] = None
            while len(self._idle) > self._keep:
                oldest, _ = self._idle.popitem(last=False)
                closing.append(self._stores.pop(oldest))
        for store in closing:
            store.close()


_STORES = SharedStores()
"""The stores of this process's Ray memories (the driver's side)."""


_DIRECTORIES: dict[str, Actor] = {}
"""The directory's handle, per Ray connection of this process (a new ``ray.init`` is another)."""
_DIRECTORY_LOOKUP = threading.Lock()


def directory(max_live: int, *, fresh: bool = False) -> Actor:
    """The cluster's directory actor (get-or-create; looked up once per Ray connection, or
    again when ``fresh``: the one known was lost)."""
    context = ray.get_runtime_context()
    connection = f"{context.get_node_id()}|{context.get_job_id()}"  # node ids are random
    with _DIRECTORY_LOOKUP:  # memories opened at once by several threads: one lookup
        handle = None if fresh else _DIRECTORIES.get(connection)
        if handle is None:
            # Detached: it must outlive the memory that happened to create it, or closing that
            # memory would take the directory down and with it every host it owns (fate-sharing).
            handle = Directory.options(  # type: ignore[attr-defined]
                name=DIRECTORY_NAME,
                namespace=RAY_NAMESPACE,
                get_if_exists=True,
                lifetime="detached",
                max_concurrency=HOST_THREADS,  # it is also a host
            ).remote(max_live)
            _DIRECTORIES[connection] = handle
        return handle


def following(message: Message[Any]) -> tuple[Message[Any], ...] | None:
    """The background chain the pipeline starts once ``message`` is answered (turns appended
    with ``processing="background"``): sent along, so the host queues it as it answers."""
    if isinstance(message, AppendTurn | AppendTurns) and message.processing == "background":
        return pipeline.DERIVED
    return None


def unwrap(exc: RayTaskError) -> BaseException:
    """The exception a role raised inside an actor, as the caller should see it."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return StrataGateError(str(exc))


class RayRuntime:
    """Talks to the namespace's host actor, through the directory that assigns it."""

    name = "ray"
    writes = True
    _host: Actor
    _channel: Channel | None
    """The host's channel when it runs on this machine (``None``: calls go through Ray)."""

    def __init__(
        self, database: str, namespace: str, options: MemoryOptions, *, recover: bool = True
    ) -> None:
        self.store: EventStore = _STORES.take(database)
        try:
            refuse_damaged_log(self.store, namespace)  # the whole chain: never extend a broken log
            ensure_ray(options.ray_address, options.ray_log_level)
        except BaseException:
            _STORES.give_back(database)
            raise
        self.database = database
        self.namespace = namespace
        self.key = namespace_key(database, namespace)
        self.options = options
        self.recover = recover
        self.retry_conflicts = options.on_conflict == "retry"
        self._auditor = Auditor(self.store, namespace, options, self._live_digests)
        self._pending: list[ray.ObjectRef[Any]] = []
        self._started = False
        self._lost = False
        self._sent_along: tuple[Message[Any], ...] | None = None
        try:
            self._directory = directory(options.max_live_namespaces)
            if options.ray_prestart > _PRESTARTED.get(self._directory._actor_id, 0):
                ray.get(self._directory.prestart.remote(options.ray_prestart))
                _PRESTARTED[self._directory._actor_id] = options.ray_prestart
            self._activate(attach=True)
        except BaseException:
            _STORES.give_back(database)
            raise

    def _activate(self, *, attach: bool = False) -> None:
        """Have the directory activate the namespace; its host (and that host's channel, when
        it runs on this machine) serve this handle's calls from now on."""
        options = pack(self.options)
        bound = self.options.max_live_namespaces
        args = (self.database, self.namespace, bound, options, self.recover, attach)
        try:
            host: Any = self._ask_directory("activate", *args)
        except (RayActorError, ChannelLost):  # the directory was stopped (ray.kill): a new one
            self._directory = directory(self.options.max_live_namespaces, fresh=True)
            host = self._ask_directory("activate", *args)
        self._host = cast(Actor, host)
        self._channel = _CHANNELS.of(host._actor_id, lambda: tuple(ray.get(host.channel.remote())))

    def _ask_directory(self, method: str, *args: Any) -> Any:
        """The directory's answer to a call made at every open or close: through its channel
        when it runs on this machine (it is a host), else through Ray; a lost directory raises
        ``RayActorError`` or ``ChannelLost``."""
        try:
            return on_host(self._directory, method, *args)
        except RayTaskError as exc:
            raise unwrap(exc) from None

    def _call(self, method: str, args: tuple[Any, ...], timeout: float | None) -> Any:
        """One call of the host's ``method``: through its channel when there is one, else Ray."""
        if self._channel is not None:
            return self._channel.call(method, *args, timeout=timeout)
        return ray.get(getattr(self._host, method).remote(*args), timeout=timeout)

    @property
    def handles(self) -> Handles:
        """The namespace's host, which hosts every role."""
        host = self._host
        return Handles(host, host, host, host)

    def send(self, message: Message[R]) -> R:
        """Answer one message (by its flow, see ``stratagate.actors.pipeline``)."""
        return pipeline.run(message, self)

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """No lock: the host already decides one message of the namespace at a time."""
        return None

    def idle(self, *stages: Message[Any]) -> bool:
        """Not known here: every stage is delivered."""
        return False

    def deliver(self, message: Message[Any]) -> Any:
        """Hand a message to the namespace's host and wait (re-activating and retrying if the
        namespace was passivated meanwhile); the auditor answers here."""
        if host_of(message) == Auditor.host:
            return self._auditor.handle(message)
        then = following(message)
        answer = self._on("handle", lambda: (self.key, message, then is not None))
        self._sent_along = then
        return answer

    def _on(
        self, method: str, args: Callable[[], tuple[Any, ...]], timeout: float | None = None
    ) -> Any:
        """Call the host's ``method`` with ``args()`` and wait (``DrainTimeoutError`` after
        ``timeout``); when the namespace was passivated, moved or its host lost, have the
        directory re-activate it and try again (``args`` is asked again then)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for attempt in range(CALL_ATTEMPTS):
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return self._call(method, args(), remaining)
            except (GetTimeoutError, ChannelTimeout) as exc:
                raise DrainTimeoutError(f"the host still busy after {timeout} s") from exc
            except (RayTaskError, NotAssignedError) as exc:  # Ray wraps, the channel does not
                error = unwrap(exc) if isinstance(exc, RayTaskError) else exc
                if not isinstance(error, NotAssignedError) or attempt == CALL_ATTEMPTS - 1:
                    raise error from None
            except (RayActorError, ObjectLostError, ChannelLost) as exc:  # the host (or an
                # object's owner) died
                if isinstance(exc, ChannelLost):
                    forget_channel(self._host)
                if attempt == CALL_ATTEMPTS - 1:
                    raise RuntimeUnavailableError(
                        f"the host of namespace {self.namespace!r} was lost "
                        f"{CALL_ATTEMPTS} times ({type(exc).__name__})"
                    ) from exc
                with contextlib.suppress(RayError):  # reassign, to a live host
                    ray.get(self._directory.repair.remote(self.database, self.namespace))
            self._lost = True  # the background work it was doing is to be finished
            self._activate()
        raise RuntimeUnavailableError("unreachable")  # pragma: no cover

    def start(self, messages: Sequence[Message[Any]]) -> None:
        """Nudge the host to run ``messages`` in the background (it coalesces nudges), unless
        they went along with the command just delivered."""
        self._started = True
        chain, sent = tuple(messages), self._sent_along
        self._sent_along = None
        if chain == sent:
            return
        self._pending.append(self._host.start.remote(self.key, tuple(messages)))
        if len(self._pending) >= PENDING_CHECK:
            answered, self._pending = ray.wait(
                self._pending, num_returns=len(self._pending), timeout=0
            )
            self._check(answered, None)

    def _check(self, nudges: list[ray.ObjectRef[Any]], timeout: float | None) -> None:
        """Wait for nudges to be answered; one that was not (its host lost, the namespace moved)
        means the background work is to be finished at ``drain``."""
        try:
            ray.get(nudges, timeout=timeout)
        except GetTimeoutError as exc:
            raise DrainTimeoutError(f"background work still busy after {timeout} s") from exc
        except (RayActorError, ObjectLostError, RayTaskError):
            self._lost = True
        except RayError as exc:  # anything else Ray raises: typed, the cause kept
            raise RuntimeUnavailableError(
                f"Ray failed while draining namespace {self.namespace!r}: {type(exc).__name__}"
            ) from exc

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the background work to end; when some was cut short (an error, a
        reassignment, a lost host), run each stage once more and report errors."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pending, self._pending = self._pending, []
        try:
            self._check(pending, timeout)
        except DrainTimeoutError:
            self._pending = pending
            raise
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        finish, self._lost = self._lost, False

        def settle() -> tuple[Any, ...]:  # after a loss inside _on, the new host finishes
            return (self.key, remaining, finish or self._lost)

        try:
            self._on("settle", settle, timeout=remaining)
        except DrainTimeoutError:
            self._lost = self._lost or finish  # not finished yet: the next drain does it
            raise
        self._lost = self._started = False

    def _live_digests(self) -> list[tuple[int, dict[str, str]]]:
        """The host's position and read-model digests for the namespace."""
        return [self._on("positioned_digests", lambda: (self.key,))]

    def reload(self) -> None:
        """The host's roles share the live state the erasure folded again; this process's keys
        (the auditor's) are dropped."""
        keys_for(self.store, self.namespace).forget()

    def passivate(self) -> bool:
        """Passivate this namespace now (used by tests and operators)."""
        return bool(ray.get(self._directory.passivate.remote(self.database, self.namespace)))

    def directory_stats(self) -> dict[str, Any]:
        return cast(dict[str, Any], ray.get(self._directory.stats.remote()))

    def close(self, *, snapshot: bool) -> None:
        """Wait for this handle's background work; the namespace stays live for other users
        until the directory passivates it (which snapshots it then: ``snapshot`` is for runtimes
        that stop with the memory)."""
        try:
            if self._started:
                with contextlib.suppress(RayActorError, RayTaskError, StrataGateError):
                    self.drain()
                self._pending = []
            with contextlib.suppress(RayActorError, ChannelLost):
                self._ask_directory("detach", self.database, self.namespace)
        finally:
            keys_for(self.store, self.namespace).forget()  # the store outlives this memory
            _STORES.give_back(self.database)


__all__ = [
    "DIRECTORY_NAME",
    "PRELOAD",
    "RAY_NAMESPACE",
    "Directory",
    "HostActor",
    "NotAssignedError",
    "RayRuntime",
    "ensure_ray",
    "namespace_key",
]
