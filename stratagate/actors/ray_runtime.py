"""The Ray runtime: namespaces served by a warm pool of host actors, one process per CPU.

This is the one place ``ray.remote`` is applied: to ``HostActor``, a process that serves any
number of namespaces at once — each with all four roles (and the reader) over one shared live
state (``stratagate.actors.hosted``), so a namespace's log is folded once — and to the
``Directory`` that assigns namespaces to hosts. The directory starts its pool when it is
created: one host per CPU of the cluster (``ray_prestart`` asks for more), spread over the
nodes. Activating a namespace acquires its writer lease and has the least busy host serve it
under that lease's epoch (hydrating from snapshot + log tail) — no process is started per
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

import atexit
import contextlib
import importlib
import logging
import os
import statistics
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
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
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from stratagate.actors import pipeline
from stratagate.actors.auditor import Auditor
from stratagate.actors.channel import (
    Channel,
    ChannelLost,
    Channels,
    ChannelServer,
    ChannelTimeout,
    node_ip,
)
from stratagate.actors.hosted import HostedNamespace
from stratagate.actors.registry import Handles, RoleName, host_of
from stratagate.audit import refuse_damaged_log
from stratagate.errors import (
    DrainTimeoutError,
    RuntimeUnavailableError,
    StorageConflictError,
    StrataGateError,
)
from stratagate.messages import AppendTurn, AppendTurns, Message
from stratagate.options import MemoryOptions
from stratagate.store import EventStore, Holder, Lease, open_store
from stratagate.store.keys import keys_for

RAY_NAMESPACE = "stratagate"
DIRECTORY_NAME = "stratagate-directory"
CALL_ATTEMPTS = 4
RELEASE_THREADS = 4
"""Passivations the directory's threads carry out at once (each waits for a host)."""
RELEASE_SNAPSHOT_MIN = 200
"""A released namespace snapshots only when at least this many events came since its last
snapshot: a short tail replays faster than a snapshot is written."""
HOST_THREADS = 64
"""Calls a host runs at once (its namespaces' deliveries still take turns per namespace)."""
PENDING_CHECK = 64
"""Unchecked background nudges a runtime keeps before it looks at the answered ones."""
R = TypeVar("R")
Actor = ActorHandle[Any]
"""A Ray actor's handle (host actors and the directory alike)."""
log = logging.getLogger(__name__)

PRELOAD: dict[RoleName, tuple[str, ...]] = {
    "sealer": ("stratagate.offline.summarizer",),
    "extractor": ("stratagate.offline.event_extractor", "projections.search_index"),
    "projector": ("stratagate.offline.element_projector",),
    "weights": ("projections.search_index", "stratagate.read.recall"),
}
"""What each role needs imported: a host imports them all when its process starts (so a
namespace's activation does not)."""

CHANNEL_METHODS = frozenset({"handle", "settle", "positioned_digests", "assign", "release"})
"""The host's calls that drivers and the directory on the same machine make through the host's
channel (``stratagate.actors.channel``) instead of Ray: the ones made per turn and per
namespace."""


class NotAssignedError(StorageConflictError):
    """The host no longer serves that namespace (it was passivated, or moved)."""


def namespace_key(database: str, namespace: str) -> str:
    """How the directory and the hosts name a namespace of a database."""
    return f"{database}|{namespace}"


@ray.remote(num_cpus=0, max_restarts=0)
class HostActor:
    """A process serving namespaces as they are assigned and released; its store connections
    outlive the assignments."""

    def __init__(self) -> None:
        self.stores: dict[str, EventStore] = {}
        self.hosted: dict[str, HostedNamespace] = {}
        self._table = threading.Lock()
        for modules in PRELOAD.values():
            for module in modules:
                importlib.import_module(module)
        self._channel = ChannelServer(self, CHANNEL_METHODS, within=sockets_directory())
        atexit.register(self._channel.close)

    def assign(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        lease: Lease,
        recover: bool,
    ) -> int:
        """Serve ``namespace`` under ``lease`` from now on; returns the position hydrated to."""
        key = namespace_key(database, namespace)
        stale = self._drop(key)  # served under an older lease: its work stops here
        if stale is not None:
            stale.release(None)
        with self._table:
            store = self.stores.get(database)
            if store is None:
                store = self.stores[database] = open_store(database)
        hosted = HostedNamespace(store, namespace, options, lease, recover=recover)
        with self._table:
            self.hosted[key] = hosted
        return hosted.live.state.position

    def _serving(self, key: str) -> HostedNamespace:
        hosted = self.hosted.get(key)
        if hosted is None:
            raise NotAssignedError(f"this host no longer serves {key.rpartition('|')[2]!r}")
        return hosted

    def _drop(self, key: str) -> HostedNamespace | None:
        with self._table:
            return self.hosted.pop(key, None)

    def handle(self, key: str, message: Message[R], derived: bool = False) -> R:
        """Answer one message for the namespace (queries too); on success and ``derived``,
        queue a pass of the derived work (the flow's next request, sent along to save a call)."""
        hosted = self._serving(key)
        result: R = hosted.deliver(message)
        if derived:
            hosted.start(pipeline.DERIVED)
        return result

    def start(self, key: str, chain: tuple[Message[Any], ...]) -> None:
        """Queue the chain's background pass (coalesced with an unstarted one)."""
        self._serving(key).start(chain)

    def settle(self, key: str, timeout: float | None, finish: bool) -> None:
        """Wait for the namespace's background work; finish it when it was cut short."""
        self._serving(key).settle(timeout, finish)

    def configure(self, key: str, options: MemoryOptions) -> None:
        self._serving(key).configure(options)

    def positioned_digests(self, key: str) -> tuple[int, dict[str, str]]:
        return self._serving(key).positioned_digests()

    def snapshot(self, key: str) -> int:
        """Write a snapshot of the namespace's read models now."""
        return self._serving(key).snapshot()

    def release(self, key: str, epoch: int) -> int:
        """Stop serving the namespace (snapshot first when a long tail accumulated) if it is
        still served under the lease of ``epoch``: a release that arrives after the namespace
        was assigned again (here, under a newer lease) is a no-op."""
        with self._table:
            hosted = self.hosted.get(key)
            if hosted is None or hosted.live.lease is None or hosted.live.lease.epoch != epoch:
                return 0
            del self.hosted[key]
        return hosted.release(RELEASE_SNAPSHOT_MIN)

    def ping(self) -> str:
        return "host"

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The Ray node this actor runs on."""
        return str(ray.get_runtime_context().get_node_id())

    def channel(self) -> tuple[str, str]:
        """Where drivers on this machine call this host directly: the node's address and the
        path of the host's socket."""
        return node_ip(), self._channel.path

    def serving(self) -> list[str]:
        """The namespaces this host serves now."""
        with self._table:
            return sorted(key.rpartition("|")[2] for key in self.hosted)


@dataclass
class _Activation:
    database: str
    namespace: str
    host: Actor
    lease: Lease


def sockets_directory() -> str | None:
    """Ray's directory of sockets for this session (where a host's channel goes), if known."""
    try:
        from ray._private import worker

        node: Any = worker.global_worker.node
        return str(node.get_sockets_dir_path())
    except Exception:  # another Ray's layout: the system's temp dir then
        return None


def alive_nodes() -> list[str]:
    """The ids of the cluster's live nodes, in a fixed order."""
    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    return sorted(str(node["NodeID"]) for node in nodes if node.get("Alive"))


def pool_size() -> int:
    """One host per CPU of the cluster (this machine's count when Ray does not say)."""
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = int(resources.get("CPU", 0))
    return max(1, cpus or os.cpu_count() or 1)


@ray.remote(num_cpus=0)
class Directory:
    """Assigns at most ``max_live`` namespaces at once (LRU) to a warm pool of hosts."""

    def __init__(self, max_live: int) -> None:
        self.max_live = max_live
        self.live: OrderedDict[str, _Activation] = OrderedDict()
        self.hosts: list[Actor] = []
        self.users: Counter[str] = Counter()
        """Open memories per namespace: namespaces nobody has open are passivated first."""
        self.stores: dict[str, EventStore] = {}
        self.holder = Holder.current("ray directory")
        self.passivations = 0
        self.activations = 0
        self.started = 0
        self.activation_seconds: list[float] = []
        self._releasing: dict[str, _Activation] = {}
        """Passivated namespaces whose host has not released them yet."""
        self._lock = threading.Lock()
        """Guards the releasing table and the stores (the directory's calls and its threads)."""
        self._releases = ThreadPoolExecutor(
            RELEASE_THREADS, thread_name_prefix="stratagate-release"
        )
        self._grow(pool_size())  # warm from the start: the first activations wait for none
        threading.Thread(target=self._renew_leases, name="stratagate-leases", daemon=True).start()

    # -- pool -------------------------------------------------------------------------------

    def prestart(self, hosts: int) -> int:
        """Have at least ``hosts`` hosts, started and ready; returns the pool size."""
        self._grow(hosts)
        ray.get([host.ping.remote() for host in self.hosts])
        return len(self.hosts)

    def _grow(self, hosts: int) -> None:
        """Start hosts up to ``hosts``, one node after another (on a cluster the pool, and so
        the namespaces, spread over the nodes; Ray's SPREAD only tries to)."""
        nodes = alive_nodes()
        while len(self.hosts) < hosts:
            self.started += 1
            strategy: Any = "SPREAD"
            if nodes:
                node = nodes[(self.started - 1) % len(nodes)]
                strategy = NodeAffinitySchedulingStrategy(node, soft=True)
            host: Actor = HostActor.options(  # type: ignore[attr-defined]
                scheduling_strategy=strategy, max_concurrency=HOST_THREADS
            ).remote()
            self.hosts.append(host)

    def _least_busy(self) -> Actor:
        """The host serving the fewest namespaces, counting those it is still releasing."""
        with self._lock:
            releasing = list(self._releasing.values())
        load = Counter(a.host._actor_id for a in [*self.live.values(), *releasing])
        return min(self.hosts, key=lambda host: load[host._actor_id])

    def _lose(self, host: Actor) -> None:
        """Forget a host that died: its namespaces are no longer live, a new host takes its
        place in the pool."""
        self.hosts = [h for h in self.hosts if h._actor_id != host._actor_id]
        forget_channel(host)
        for key in [k for k, a in self.live.items() if a.host._actor_id == host._actor_id]:
            self._drop(key)
        with contextlib.suppress(Exception):
            ray.kill(host, no_restart=True)
        self._grow(pool_size())

    # -- activation -------------------------------------------------------------------------

    def activate(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        recover: bool,
        attach: bool = False,
    ) -> Actor:
        """The namespace's host, assigning it to one if it is not live; passivates beyond the
        bound (``attach``: a memory opens it, and holds it until ``release``)."""
        self.max_live = options.max_live_namespaces  # the latest opener sets the bound
        key = namespace_key(database, namespace)
        if attach:
            self.users[key] += 1
        activation = self.live.get(key)
        if activation is not None and attach:
            try:  # the latest opener's options (callbacks, clock) apply to the shared host
                ray.get(activation.host.configure.remote(key, options))
            except (RayActorError, RayTaskError):  # lost behind our back: start afresh
                self._drop(key)
                activation = None
        if activation is None:
            while len(self.live) >= self.max_live and (victim := self._victim()) is not None:
                self._passivate(victim)
            activation = self._assign(database, namespace, options, recover)
            self.live[key] = activation
        self.live.move_to_end(key)
        return activation.host

    def _assign(
        self, database: str, namespace: str, options: MemoryOptions, recover: bool
    ) -> _Activation:
        began = time.perf_counter()
        store = self._store(database)
        with self._lock:
            releasing = self._releasing.get(namespace_key(database, namespace))
        if releasing is not None:  # passivated, its host not done: this lease is ours to end
            store.release_lease(releasing.lease)  # (the new epoch fences that host's writes)
        lease = store.acquire_lease(namespace, self.holder)
        try:
            host = self._assign_host(database, namespace, options, lease, recover)
        except BaseException:
            with contextlib.suppress(StrataGateError):
                store.release_lease(lease)
            raise
        self.activations += 1
        self.activation_seconds.append(time.perf_counter() - began)
        return _Activation(database, namespace, host, lease)

    def _assign_host(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        lease: Lease,
        recover: bool,
    ) -> Actor:
        """The least busy host, told to serve the namespace; a host that died is replaced."""
        for _ in range(2):
            host = self._least_busy()
            try:
                on_host(host, "assign", database, namespace, options, lease, recover)
                return host
            except (RayActorError, ChannelLost):
                self._lose(host)
        raise RuntimeUnavailableError(f"hosts for {namespace!r} keep dying")

    def repair(self, database: str, namespace: str) -> None:
        """A caller found the namespace's host lost: take the namespace out of the live set
        (and, when the host is dead, every namespace it served) so that the next activation
        assigns a live host and recovers interrupted work."""
        activation = self.live.get(namespace_key(database, namespace))
        if activation is None:
            return
        try:
            ray.get(activation.host.ping.remote(), timeout=30)
        except Exception:
            self._lose(activation.host)
            return
        self._passivate(namespace_key(database, namespace))

    def _store(self, database: str) -> EventStore:
        """The directory's one store of ``database`` (its calls and its threads share it)."""
        with self._lock:
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
        """Take the namespace out of the live set now; its host releases it (and then its lease)
        on a thread, off the critical path of the activation that needed its place: a host
        busy with the namespace's last call holds up no other activation. Both steps are
        epoch-checked, so a release that lands after the namespace was activated again (a newer
        lease) changes nothing."""
        activation = self.live.pop(key)
        self.passivations += 1
        with self._lock:
            self._releasing[key] = activation
        self._releases.submit(self._release, key, activation)

    def _release(self, key: str, activation: _Activation) -> None:
        try:
            on_host(activation.host, "release", key, activation.lease.epoch)
        except Exception:  # a lost host has nothing to snapshot; the log is the truth
            log.warning("passivation snapshot failed", exc_info=True)
        try:
            with contextlib.suppress(StrataGateError):
                self._store(activation.database).release_lease(activation.lease)
        finally:
            with self._lock:
                if self._releasing.get(key) is activation:
                    del self._releasing[key]

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
        key = namespace_key(database, namespace)
        if self.users[key] > 0:
            self.users[key] -= 1
        if self.users[key] <= 0:
            del self.users[key]

    def passivate(self, database: str, namespace: str) -> bool:
        """Passivate one namespace now (it leaves the live set at once; its host snapshots and
        drops it on a thread); False if not live."""
        key = namespace_key(database, namespace)
        if key not in self.live:
            return False
        self._passivate(key)
        return True

    def stats(self) -> dict[str, Any]:
        seconds = self.activation_seconds
        busy = {activation.host._actor_id for activation in self.live.values()}
        return {
            "live": len(self.live),
            "open": sum(1 for key in self.live if self.users[key] > 0),
            "max_live": self.max_live,
            "passivations": self.passivations,
            "activations": self.activations,
            "actors_started": self.started,
            "hosts": len(self.hosts),
            "idle": sum(1 for host in self.hosts if host._actor_id not in busy),
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


_CHANNELS = Channels()
"""This process's channels to the hosts on its machine."""


def on_host(host: Actor, method: str, *args: Any) -> Any:
    """The host's answer to ``method(*args)``: through its channel when it runs on this
    machine, else through Ray (whose task errors then reach the caller wrapped). A lost host
    raises ``RayActorError`` or ``ChannelLost``."""
    channel = _CHANNELS.of(
        host._actor_id, lambda: cast(tuple[str, str], ray.get(host.channel.remote()))
    )
    if channel is None:
        return ray.get(getattr(host, method).remote(*args))
    try:
        return channel.call(method, *args)
    except ChannelLost:
        forget_channel(host)
        raise


def forget_channel(host: Actor) -> None:
    """Drop this process's channel to a lost host. (A function of the module: Ray pickles its
    actor classes by value, so their methods must not reach this process's objects directly.)"""
    _CHANNELS.forget(host._actor_id)


_DIRECTORIES: dict[str, Actor] = {}
"""The directory's handle, per Ray connection of this process (a new ``ray.init`` is another)."""


def directory(max_live: int, *, fresh: bool = False) -> Actor:
    """The cluster's directory actor (get-or-create; looked up once per Ray connection, or
    again when ``fresh``: the one known was lost)."""
    context = ray.get_runtime_context()
    connection = f"{context.get_node_id()}|{context.get_job_id()}"  # node ids are random
    handle = None if fresh else _DIRECTORIES.get(connection)
    if handle is None:
        # Detached: it must outlive the memory that happened to create it, or closing that
        # memory would take the directory down and with it every host it owns (fate-sharing).
        handle = Directory.options(  # type: ignore[attr-defined]
            name=DIRECTORY_NAME, namespace=RAY_NAMESPACE, get_if_exists=True, lifetime="detached"
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
        args = (self.database, self.namespace, self.options, self.recover, attach)
        try:
            host: Any = ray.get(self._directory.activate.remote(*args))
        except RayActorError:  # the directory was stopped (ray.kill): make a new one
            self._directory = directory(self.options.max_live_namespaces, fresh=True)
            host = ray.get(self._directory.activate.remote(*args))
        except RayTaskError as exc:
            raise unwrap(exc) from None
        self._host = cast(Actor, host)
        self._channel = _CHANNELS.of(host._actor_id, lambda: tuple(ray.get(host.channel.remote())))

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

    def idle(self, stage: Message[Any]) -> bool:
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
            with contextlib.suppress(RayActorError):
                ray.get(self._directory.release.remote(self.database, self.namespace))
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
