"""The Ray runtime: four role actors per live namespace, recycled across namespaces.

This is the one place ``ray.remote`` is applied: to ``RoleActor``, a process that hosts one role
(the weights actor also hosts the reader) for one namespace at a time, and to the ``Directory``
that assigns them. Activating a namespace takes an idle actor of each role from the
directory's pool (starting one only when the pool is empty), acquires the namespace's writer
lease and tells each actor to serve the namespace under that lease's epoch (hydrating from
snapshot + log tail). Passivating one — when ``max_live_namespaces`` is reached, the least
recently used namespace no memory holds open — snapshots it, releases the actors to the pool
and gives the lease up. A namespace a memory holds open is not passivated for another (the two
would only take turns): while every live namespace is held open the bound is exceeded. No process is started or stopped per namespace; heavy imports load once
per process, and only in the roles that use them.

Fencing: an actor checks every call against the namespace it serves (a caller holding an old
handle gets ``NotAssignedError`` and re-activates), and every append carries the activation's
lease, so a late write for a namespace an actor no longer serves — or from any stale holder —
fails with ``StorageConflictError`` instead of landing. Ray object refs never reach the caller,
and Ray's task errors are unwrapped into the error the role raised.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import os
import statistics
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import ray
from ray.actor import ActorHandle
from ray.exceptions import (
    GetTimeoutError,
    ObjectLostError,
    RayActorError,
    RayError,
    RayTaskError,
)

from stratagate.actors import pipeline
from stratagate.actors.auditor import Auditor
from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.registry import ROLES, Handles, RoleName, handler_of, host_of
from stratagate.actors.role import MessageHandler
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.audit import refuse_damaged_log
from stratagate.errors import (
    DrainTimeoutError,
    RuntimeUnavailableError,
    StaleHandleError,
    StorageConflictError,
    StrataGateError,
)
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.store import EventStore, Holder, Lease, open_store
from stratagate.store.keys import keys_for

RAY_NAMESPACE = "stratagate"
DIRECTORY_NAME = "stratagate-directory"
CALL_ATTEMPTS = 4
RELEASE_SNAPSHOT_MIN = 200
"""A released actor snapshots only when at least this many events came since its last
snapshot: a short tail replays faster than a snapshot is written."""
R = TypeVar("R")
Actor = ActorHandle[Any]
"""A Ray actor's handle (role actors and the directory alike)."""
log = logging.getLogger(__name__)

PRELOAD: dict[RoleName, tuple[str, ...]] = {
    "sealer": ("stratagate.offline.summarizer",),
    "extractor": ("stratagate.offline.event_extractor", "projections.search_index"),
    "projector": ("stratagate.offline.element_projector",),
    "weights": ("projections.search_index", "stratagate.read.recall"),
}
"""What each role imports when its process starts (so a namespace's activation does not)."""


class NotAssignedError(StorageConflictError):
    """The actor no longer serves that namespace (it was passivated and recycled)."""


@dataclass
class _Assignment:
    database: str
    namespace: str
    live: LiveState
    handlers: dict[type[MessageHandler], MessageHandler]
    """The role, and for the weights actor also the reader it hosts."""
    peers: dict[RoleName, Actor]
    hydrated_at: int
    errors: list[BaseException] = field(default_factory=list)


@ray.remote(num_cpus=0, max_restarts=0)
class RoleActor:
    """A process hosting one role for one namespace at a time, reassigned as namespaces come
    and go; its store connections outlive the assignments."""

    def __init__(self, role: RoleName) -> None:
        self.role_name: RoleName = role
        self.stores: dict[str, EventStore] = {}
        self.current: _Assignment | None = None
        for module in PRELOAD[role]:
            importlib.import_module(module)

    def assign(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        lease: Lease,
        recover: bool,
        peers: dict[RoleName, Actor],
    ) -> int:
        """Serve ``namespace`` under ``lease`` from now on; returns the position hydrated to."""
        self.current = None
        store = self.stores.get(database)
        if store is None:
            store = self.stores[database] = open_store(database)
        cls = ROLES[self.role_name]
        live = LiveState(
            store,
            namespace,
            cls.components,
            snapshot_key=self.role_name,
            snapshot_every=options.snapshot_every,
            lease=lease,
        )
        role = cls(namespace, options, live)
        handlers: dict[type[MessageHandler], MessageHandler] = {cls: role}
        if isinstance(role, WeightKeeper):
            handlers[Reader] = Reader(live, role)
        if recover:
            pipeline.retrying_stale(role.recover, label="recover")
        self.current = _Assignment(database, namespace, live, handlers, peers, live.state.position)
        return live.state.position

    def _serving(self, namespace: str) -> _Assignment:
        current = self.current
        if current is None or current.namespace != namespace:
            raise NotAssignedError(f"this {self.role_name} actor no longer serves {namespace!r}")
        return current

    def handle(self, namespace: str, message: Message[R]) -> R:
        """Answer one message for ``namespace`` (the weights actor also answers queries)."""
        current = self._serving(namespace)
        return current.handlers[handler_of(message)].handle(message)

    def run_chain(self, namespace: str, messages: tuple[Message[Any], ...]) -> Any:
        """Answer the first message here and, on success, nudge the actor of the next: returns
        the next link's reference (``drain`` follows the chain), ``True`` when the chain ended
        here, ``False`` when it was cut short (an error, kept for ``drain``, or a
        reassignment)."""
        current = self.current
        if current is None or current.namespace != namespace:
            return False  # passivated meanwhile: drain or the next activation finishes the work
        first, rest = messages[0], messages[1:]
        handler = current.handlers[handler_of(first)]
        try:
            pipeline.retrying_stale(lambda: handler.handle(first), label=type(first).__name__)
        except StaleHandleError:
            pass  # other writers kept winning: they are doing this work
        except Exception as exc:  # the job state is durable; the caller sees it at drain()
            current.errors.append(exc)
            return False
        if not rest:
            return True
        following = cast(RoleName, host_of(rest[0]))
        return current.peers[following].run_chain.remote(namespace, rest)

    def configure(self, namespace: str, options: MemoryOptions) -> None:
        """Adopt another opener's options (callbacks, clock, ids) for later calls."""
        for handler in self._serving(namespace).handlers.values():
            if isinstance(handler, ROLES[self.role_name]):
                handler.options = options

    def take_errors(self, namespace: str) -> list[BaseException]:
        current = self._serving(namespace)
        errors, current.errors = current.errors, []
        return errors

    def positioned_digests(self, namespace: str) -> tuple[int, dict[str, str]]:
        live = self._serving(namespace).live
        live.refresh()
        return live.state.position, live.state.digests()

    def rehydrate(self, namespace: str) -> int:
        """Drop cached keys and fold the log again (after an erasure); returns the position."""
        live = self._serving(namespace).live
        live.rehydrate()
        return live.state.position

    def snapshot(self, namespace: str) -> int:
        """Write a snapshot of this role's read models now."""
        live = self._serving(namespace).live
        live.snapshot()
        return live.state.position

    def release(self) -> int:
        """Stop serving the current namespace (snapshot first when a long tail accumulated);
        back to the pool."""
        current, self.current = self.current, None
        if current is None:
            return 0
        live = current.live
        live.close()  # the background snapshot in flight: finished, or skipped (logged)
        if live.state.position - live.snapshot_position >= RELEASE_SNAPSHOT_MIN:
            live.snapshot()
        return live.state.position

    def ping(self) -> str:
        return self.role_name

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The Ray node this actor runs on."""
        return str(ray.get_runtime_context().get_node_id())

    def serving(self) -> str | None:
        return None if self.current is None else self.current.namespace


@dataclass
class _Activation:
    database: str
    namespace: str
    handles: dict[RoleName, Actor]
    lease: Lease


@ray.remote(num_cpus=0)
class Directory:
    """Assigns pooled role actors to at most ``max_live`` namespaces at once (LRU)."""

    def __init__(self, max_live: int) -> None:
        self.max_live = max_live
        self.live: OrderedDict[str, _Activation] = OrderedDict()
        self.idle: dict[RoleName, list[Actor]] = {role: [] for role in ROLES}
        self.users: Counter[str] = Counter()
        """Open memories per namespace: namespaces nobody has open are passivated first."""
        self.stores: dict[str, EventStore] = {}
        self.holder = Holder.current("ray directory")
        self.passivations = 0
        self.activations = 0
        self.started = 0
        self.activation_seconds: list[float] = []
        threading.Thread(target=self._renew_leases, name="stratagate-leases", daemon=True).start()

    # -- pool -------------------------------------------------------------------------------

    def prestart(self, per_role: int) -> int:
        """Start idle actors ahead so activations find them warm; returns the pool size."""
        fresh: list[tuple[RoleName, Actor]] = []
        for role in ROLES:
            missing = per_role - len(self.idle[role]) - len(self.live)  # one serving per live
            fresh.extend((role, self._new_actor(role)) for _ in range(max(0, missing)))
        ray.get([actor.ping.remote() for _, actor in fresh])
        for role, actor in fresh:
            self.idle[role].append(actor)
        return sum(len(actors) for actors in self.idle.values())

    def _new_actor(self, role: RoleName) -> Actor:
        self.started += 1
        # SPREAD: on a cluster, the pool (and so the namespaces) spreads over the nodes
        actor: Actor = RoleActor.options(  # type: ignore[attr-defined]
            scheduling_strategy="SPREAD"
        ).remote(role)
        return actor

    def _take(self, role: RoleName) -> Actor:
        return self.idle[role].pop() if self.idle[role] else self._new_actor(role)

    # -- activation -------------------------------------------------------------------------

    def activate(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        recover: bool,
        attach: bool = False,
    ) -> dict[RoleName, Actor]:
        """The namespace's actors, assigning pooled ones if it is not live; passivates beyond
        the bound (``attach``: a memory opens it, and holds it until ``release``)."""
        self.max_live = options.max_live_namespaces  # the latest opener sets the bound
        key = f"{database}|{namespace}"
        if attach:
            self.users[key] += 1
        activation = self.live.get(key)
        if activation is not None and attach:
            try:  # the latest opener's options (callbacks, clock) apply to the shared actors
                ray.get(
                    [h.configure.remote(namespace, options) for h in activation.handles.values()]
                )
            except (RayActorError, RayTaskError):  # lost behind our back: start afresh
                self._drop(key)
                activation = None
        if activation is None:
            while len(self.live) >= self.max_live and (victim := self._victim()) is not None:
                self._passivate(victim)
            activation = self._assign(database, namespace, options, recover)
            self.live[key] = activation
        self.live.move_to_end(key)
        return activation.handles

    def _assign(
        self, database: str, namespace: str, options: MemoryOptions, recover: bool
    ) -> _Activation:
        began = time.perf_counter()
        store = self._store(database)
        lease = store.acquire_lease(namespace, self.holder)
        try:
            handles = self._assign_actors(database, namespace, options, lease, recover)
        except BaseException:
            with contextlib.suppress(StrataGateError):
                store.release_lease(lease)
            raise
        self.activations += 1
        self.activation_seconds.append(time.perf_counter() - began)
        return _Activation(database, namespace, handles, lease)

    def _assign_actors(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        lease: Lease,
        recover: bool,
    ) -> dict[RoleName, Actor]:
        """Assign one pooled actor per role; a pooled actor that died is replaced by a new one."""
        handles = {role: self._take(role) for role in ROLES}
        for attempt in range(2):
            calls: dict[RoleName, Any] = {
                role: actor.assign.remote(database, namespace, options, lease, recover, handles)
                for role, actor in handles.items()
            }
            dead: list[RoleName] = []
            for role, call in calls.items():
                try:
                    ray.get(call)
                except RayActorError:
                    dead.append(role)
                except BaseException:
                    self._return(handles)
                    raise
            if not dead:
                return handles
            if attempt == 1:
                break
            for role in dead:
                handles[role] = self._new_actor(role)
        self._return({r: a for r, a in handles.items() if r not in dead})
        raise RuntimeUnavailableError(f"role actors for {namespace!r} keep dying: {dead}")

    def repair(self, database: str, namespace: str) -> None:
        """A caller found one of the namespace's actors dead: take the namespace out of the
        live set (live actors back to the pool, the lost one forgotten) so that the next
        activation assigns a full set and recovers interrupted work."""
        key = f"{database}|{namespace}"
        activation = self.live.pop(key, None)
        if activation is None:
            return
        for role, actor in activation.handles.items():
            try:
                ray.get(actor.release.remote(), timeout=30)
                self.idle[role].append(actor)
            except Exception:
                with contextlib.suppress(Exception):
                    ray.kill(actor, no_restart=True)
        with contextlib.suppress(StrataGateError):
            self._store(database).release_lease(activation.lease)

    def _store(self, database: str) -> EventStore:
        store = self.stores.get(database)
        if store is None:
            store = self.stores[database] = open_store(database)
        return store

    def _victim(self) -> str | None:
        """The least recently used namespace no memory holds open. ``None`` when every live
        namespace is held open: then the bound is exceeded rather than taking a namespace from
        under a memory that is using it (which would only make the two take turns)."""
        return next((key for key in self.live if self.users[key] <= 0), None)

    def _passivate(self, key: str) -> None:
        activation = self.live.pop(key)
        try:
            ray.get([actor.release.remote() for actor in activation.handles.values()])
            self._return(activation.handles)
        except Exception:  # a lost actor has nothing to snapshot; the log is the truth
            log.warning("passivation snapshot failed", exc_info=True)
            for actor in activation.handles.values():
                with contextlib.suppress(Exception):
                    ray.kill(actor, no_restart=True)
        with contextlib.suppress(StrataGateError):
            self._store(activation.database).release_lease(activation.lease)
        self.passivations += 1

    def _return(self, handles: dict[RoleName, Actor]) -> None:
        for role, actor in handles.items():
            self.idle[role].append(actor)

    def _drop(self, key: str) -> None:
        activation = self.live.pop(key)
        with contextlib.suppress(StrataGateError):
            self._store(activation.database).release_lease(activation.lease)

    def _renew_leases(self) -> None:
        """Keep the leases of live namespaces fresh for readers on other hosts (a thread: the
        directory's calls run one at a time, so this may see the table mid-change)."""
        while True:
            time.sleep(10)
            with contextlib.suppress(RuntimeError):  # changed while copied: next tick
                live = list(self.live.values())
            for activation in live:
                with contextlib.suppress(StrataGateError):
                    self._store(activation.database).renew_lease(activation.lease)

    # -- callers ----------------------------------------------------------------------------

    def release(self, database: str, namespace: str) -> None:
        """A memory on the namespace closed; it stays live until the bound needs its place."""
        key = f"{database}|{namespace}"
        if self.users[key] > 0:
            self.users[key] -= 1
        if self.users[key] <= 0:
            del self.users[key]

    def passivate(self, database: str, namespace: str) -> bool:
        """Passivate one namespace now (snapshot, release its actors); False if not live."""
        key = f"{database}|{namespace}"
        if key not in self.live:
            return False
        self._passivate(key)
        return True

    def stats(self) -> dict[str, Any]:
        seconds = self.activation_seconds
        return {
            "live": len(self.live),
            "open": sum(1 for key in self.live if self.users[key] > 0),
            "max_live": self.max_live,
            "passivations": self.passivations,
            "activations": self.activations,
            "actors_started": self.started,
            "idle": sum(len(actors) for actors in self.idle.values()),
            "activation_p50_ms": statistics.median(seconds) * 1000 if seconds else None,
            "activation_ms": [round(s * 1000, 2) for s in seconds[-10_000:]],
        }


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


def directory(max_live: int) -> Actor:
    """The cluster's directory actor (get-or-create)."""
    # Detached: it must outlive the memory that happened to create it, or closing that memory
    # would take the directory down and with it every role actor it owns (fate-sharing).
    handle: Actor = Directory.options(  # type: ignore[attr-defined]
        name=DIRECTORY_NAME, namespace=RAY_NAMESPACE, get_if_exists=True, lifetime="detached"
    ).remote(max_live)
    return handle


def _run_alone(namespace: str, message: Message[Any], actor: Actor) -> Any:
    """Have ``actor`` run ``message`` as a chain of one (nothing is nudged after it)."""
    return actor.run_chain.remote(namespace, (message,))


def unwrap(exc: RayTaskError) -> BaseException:
    """The exception a role raised inside an actor, as the caller should see it."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return StrataGateError(str(exc))


class RayRuntime:
    """Talks to the namespace's four actors, through the directory that assigns them."""

    name = "ray"
    writes = True

    def __init__(
        self, database: str, namespace: str, options: MemoryOptions, *, recover: bool = True
    ) -> None:
        self.store: EventStore = open_store(database)
        try:
            refuse_damaged_log(self.store, namespace)  # the whole chain: never extend a broken log
            ensure_ray(options.ray_address, options.ray_log_level)
        except BaseException:
            self.store.close()
            raise
        self.database = database
        self.namespace = namespace
        self.options = options
        self.recover = recover
        self.retry_conflicts = options.on_conflict == "retry"
        self._auditor = Auditor(self.store, namespace, options, self._live_digests)
        self._pending: list[ray.ObjectRef[Any]] = []
        self._directory = directory(options.max_live_namespaces)
        if options.ray_prestart > _PRESTARTED.get(self._directory._actor_id, 0):
            ray.get(self._directory.prestart.remote(options.ray_prestart))
            _PRESTARTED[self._directory._actor_id] = options.ray_prestart
        self._handles = self._activate(attach=True)

    def _activate(self, *, attach: bool = False) -> dict[RoleName, Actor]:
        args = (self.database, self.namespace, self.options, self.recover, attach)
        try:
            handles: Any = ray.get(self._directory.activate.remote(*args))
        except RayActorError:  # the directory was stopped (ray.kill): make a new one
            self._directory = directory(self.options.max_live_namespaces)
            handles = ray.get(self._directory.activate.remote(*args))
        except RayTaskError as exc:
            raise unwrap(exc) from None
        return cast(dict[RoleName, Actor], handles)

    @property
    def handles(self) -> Handles:
        h = self._handles
        return Handles(h["sealer"], h["extractor"], h["projector"], h["weights"])

    def send(self, message: Message[R]) -> R:
        """Answer one message (by its flow, see ``stratagate.actors.pipeline``)."""
        return pipeline.run(message, self)

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """No lock: each actor already decides one message at a time."""
        return None

    def deliver(self, message: Message[Any]) -> Any:
        """Hand a message to the actor hosting its handler and wait (re-activating and
        retrying if the namespace was passivated meanwhile); the auditor answers here."""
        host = host_of(message)
        if host == Auditor.host:
            return self._auditor.handle(message)
        namespace = self.namespace
        return self._on(cast(RoleName, host), lambda actor: actor.handle.remote(namespace, message))

    def _on(self, role: RoleName, call: Callable[[Actor], Any]) -> Any:
        """Make one call on a role's actor and wait for it; when the actor was passivated,
        recycled or lost, have the directory re-activate the namespace and try again."""
        for attempt in range(CALL_ATTEMPTS):
            try:
                return ray.get(call(self._handles[role]))
            except RayTaskError as exc:
                error = unwrap(exc)
                if not isinstance(error, NotAssignedError) or attempt == CALL_ATTEMPTS - 1:
                    raise error from None
            except (RayActorError, ObjectLostError) as exc:  # an actor or an object's owner died
                if attempt == CALL_ATTEMPTS - 1:
                    raise RuntimeUnavailableError(
                        f"the {role} actor of namespace {self.namespace!r} was lost "
                        f"{CALL_ATTEMPTS} times ({type(exc).__name__})"
                    ) from exc
                with contextlib.suppress(RayError):  # one of its actors died: reassign
                    ray.get(self._directory.repair.remote(self.database, self.namespace))
            self._handles = self._activate()
        raise RuntimeUnavailableError("unreachable")  # pragma: no cover

    def start(self, messages: Sequence[Message[Any]]) -> None:
        """Nudge the actor of the first message; each passes the rest on (``run_chain``)."""
        chain = tuple(messages)
        first = self._handles[cast(RoleName, host_of(chain[0]))]
        self._pending.append(first.run_chain.remote(self.namespace, chain))

    def drain(self, timeout: float | None = None) -> None:
        """Wait for background runs to the end of their chains; when one was cut short (an
        error, a reassignment, a lost actor), run each stage once more and report errors."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pending, self._pending = self._pending, []
        complete = True
        try:
            while pending:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                results = ray.get(pending, timeout=remaining)
                pending = [r for r in results if isinstance(r, ray.ObjectRef)]
                complete = complete and all(
                    r is True or isinstance(r, ray.ObjectRef) for r in results
                )
        except GetTimeoutError as exc:
            self._pending = pending
            raise DrainTimeoutError(f"background work still busy after {timeout} s") from exc
        except (RayActorError, ObjectLostError):  # an actor, or a result's owner, died
            complete = False  # lost mid-run; the stages below finish the work
        except RayError as exc:  # anything else Ray raises: typed, the cause kept
            raise RuntimeUnavailableError(
                f"Ray failed while draining namespace {self.namespace!r}: {type(exc).__name__}"
            ) from exc
        if complete:
            return
        namespace = self.namespace
        hosts = [cast(RoleName, host_of(stage)) for stage in pipeline.DERIVED]
        for host, stage in zip(hosts, pipeline.DERIVED, strict=True):
            if deadline is None:
                self._on(host, functools.partial(_run_alone, namespace, stage))
            else:
                self._timed(host, (stage,), max(0.0, deadline - time.monotonic()))
        for host in hosts:
            errors = self._on(host, lambda actor: actor.take_errors.remote(namespace))
            if errors:
                raise errors[0]

    def _timed(self, role: RoleName, chain: tuple[Message[Any], ...], timeout: float) -> None:
        """``run_chain`` on a role's actor within ``timeout``; a lost actor is re-activated
        and tried again as ``_on`` does (a raw ``ActorDiedError`` came out of ``drain``)."""
        deadline = time.monotonic() + timeout
        for attempt in range(CALL_ATTEMPTS):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                ray.get(
                    self._handles[role].run_chain.remote(self.namespace, chain), timeout=remaining
                )
                return
            except GetTimeoutError as exc:
                raise DrainTimeoutError(f"{role} still busy after the drain timeout") from exc
            except RayTaskError as exc:
                error = unwrap(exc)
                if not isinstance(error, NotAssignedError) or attempt == CALL_ATTEMPTS - 1:
                    raise error from None
            except (RayActorError, ObjectLostError) as exc:
                if attempt == CALL_ATTEMPTS - 1:
                    raise RuntimeUnavailableError(
                        f"the {role} actor of namespace {self.namespace!r} was lost "
                        f"{CALL_ATTEMPTS} times ({type(exc).__name__})"
                    ) from exc
                with contextlib.suppress(RayError):
                    ray.get(self._directory.repair.remote(self.database, self.namespace))
            self._handles = self._activate()

    def _live_digests(self) -> list[tuple[int, dict[str, str]]]:
        """Each role actor's position and read-model digests."""
        namespace = self.namespace
        return [
            self._on(role, lambda actor: actor.positioned_digests.remote(namespace))
            for role in ROLES
        ]

    def reload(self) -> None:
        """Every role actor drops its cached keys and folds the log again (the weights actor,
        which erased, already did), and so do this process's keys (the auditor's)."""
        namespace = self.namespace
        for role in ROLES:
            if role != WeightKeeper.name:
                self._on(role, lambda actor: actor.rehydrate.remote(namespace))
        keys_for(self.store, namespace).forget()

    def passivate(self) -> bool:
        """Passivate this namespace now (used by tests and operators)."""
        return bool(ray.get(self._directory.passivate.remote(self.database, self.namespace)))

    def directory_stats(self) -> dict[str, Any]:
        return cast(dict[str, Any], ray.get(self._directory.stats.remote()))

    def close(self, *, snapshot: bool) -> None:
        """Wait for this handle's background runs; the actors stay for other users of the
        namespace until the directory passivates them (which snapshots them then: ``snapshot``
        is for runtimes that stop with the memory)."""
        try:
            if self._pending:
                with contextlib.suppress(RayActorError, RayTaskError, DrainTimeoutError):
                    self.drain()
                self._pending = []
            with contextlib.suppress(RayActorError):
                ray.get(self._directory.release.remote(self.database, self.namespace))
        finally:
            self.store.close()


__all__ = [
    "DIRECTORY_NAME",
    "PRELOAD",
    "RAY_NAMESPACE",
    "Directory",
    "NotAssignedError",
    "RayRuntime",
    "RoleActor",
    "ensure_ray",
]
