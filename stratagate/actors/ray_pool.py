"""The Ray pool: the host actors that serve namespaces and the directory that assigns them.

Kept apart from the runtime (``stratagate.actors.ray_runtime``, the driver's side) so that the
drivers import only what they need — Ray, the store and the hosts' channels: a host imports
the roles (``stratagate.actors.hosted``) when it starts, and the memory's options reach the
directory packed (bytes it forwards to the host unread). The directory is itself the pool's
first host (one process fewer to start: on a fresh cluster the pool starts inside a memory's
first open, so what its processes import is paid there).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import os
import pickle
import statistics
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import ray
from ray import cloudpickle
from ray.actor import ActorHandle
from ray.exceptions import RayActorError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from stratagate.actors.channel import ChannelLost, Channels, ChannelServer, node_ip
from stratagate.errors import RuntimeUnavailableError, StorageConflictError, StrataGateError
from stratagate.store import EventStore, Holder, Lease, open_store

if TYPE_CHECKING:
    from stratagate.actors.hosted import HostedNamespace
    from stratagate.actors.registry import RoleName
    from stratagate.messages import Message
    from stratagate.options import MemoryOptions

RAY_NAMESPACE = "stratagate"
PROTOCOL = 3
"""The version of the calls between drivers, the directory and its hosts; raised whenever a
signature changes, or the way a call travels (the directory's name carries it, see
``DIRECTORY_NAME``). 3: the directory answers ``activate`` and ``detach`` on its channel."""
DIRECTORY_NAME = f"stratagate-directory-v{PROTOCOL}"
"""The detached directory's name: a cluster whose directory an older stratagate started (with
other call signatures) gets a directory of this version beside it, never a call it refuses."""
IMBALANCE = 1
"""How many namespaces more than a host still starting the started hosts may serve before a
new namespace waits for that host (see ``least_busy``)."""
RELEASE_THREADS = 4
"""Passivations the directory's threads carry out at once (each waits for a host)."""
RELEASE_SNAPSHOT_MIN = 200
"""A released namespace snapshots only when at least this many events came since its last
snapshot: a short tail replays faster than a snapshot is written."""
HOST_THREADS = 64
"""Calls a host runs at once (its namespaces' deliveries still take turns per namespace)."""
R = TypeVar("R")
K = TypeVar("K")
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
HOST_PRELOAD = ("stratagate.store.sql",)
"""What a host's first assignment would import otherwise (SQLAlchemy: the store it opens):
imported while the process starts, before the directory counts a host ready."""

CHANNEL_METHODS = frozenset({"handle", "settle", "positioned_digests", "assign", "release"})
"""The host's calls that drivers and the directory on the same machine make through the host's
channel (``stratagate.actors.channel``) instead of Ray: the ones made per turn and per
namespace."""
DIRECTORY_CHANNEL_METHODS = CHANNEL_METHODS | {"activate", "detach"}
"""The directory's channel also answers the two calls every memory makes of it (at its open and
at its close): a Ray call costs the caller and the directory about 0.6 ms of CPU each, the
channel a fraction of that."""


class NotAssignedError(StorageConflictError):
    """The host no longer serves that namespace (it was passivated, or moved)."""


def namespace_key(database: str, namespace: str) -> str:
    """How the directory and the hosts name a namespace of a database."""
    return f"{database}|{namespace}"


class Hosting:
    """Serving namespaces as they are assigned and released (a host's calls); the store
    connections outlive the assignments. Both actors below are hosts."""

    def __init__(self, channel_methods: frozenset[str] = CHANNEL_METHODS) -> None:
        """Import what the roles need; answer ``channel_methods`` on this host's channel."""
        from stratagate.actors import pipeline

        self.derived = pipeline.DERIVED
        self.stores: dict[str, EventStore] = {}
        self.hosted: dict[str, HostedNamespace] = {}
        self._table = threading.Lock()
        for modules in (*PRELOAD.values(), HOST_PRELOAD):
            for module in modules:
                importlib.import_module(module)
        self._channel = ChannelServer(self, channel_methods, within=sockets_directory())
        atexit.register(self._channel.close)

    def assign(
        self,
        database: str,
        namespace: str,
        options: bytes,
        lease: Lease,
        recover: bool,
    ) -> int:
        """Serve ``namespace`` under ``lease`` (and the ``pack``ed ``options``) from now on;
        returns the position hydrated to."""
        from stratagate.actors.hosted import HostedNamespace

        key = namespace_key(database, namespace)
        stale = self._unserve(key)  # served under an older lease: its work stops here
        if stale is not None:
            stale.release(None)
        store = self._open_store(database)
        hosted = HostedNamespace(store, namespace, unpack(options), lease, recover=recover)
        with self._table:
            self.hosted[key] = hosted
        return hosted.live.state.position

    def _open_store(self, database: str) -> EventStore:
        """This process's one store of ``database`` (its namespaces and threads share it, and
        in the directory its leases)."""
        with self._table:
            store = self.stores.get(database)
            if store is None:
                store = self.stores[database] = open_store(database)
            return store

    def _serving(self, key: str) -> HostedNamespace:
        hosted = self.hosted.get(key)
        if hosted is None:
            raise NotAssignedError(f"this host no longer serves {key.rpartition('|')[2]!r}")
        return hosted

    def _unserve(self, key: str) -> HostedNamespace | None:
        with self._table:
            return self.hosted.pop(key, None)

    def handle(self, key: str, message: Message[R], derived: bool = False) -> R:
        """Answer one message for the namespace (queries too); on success and ``derived``,
        queue a pass of the derived work (the flow's next request, sent along to save a call)."""
        hosted = self._serving(key)
        result: R = hosted.deliver(message)
        if derived:
            hosted.start(self.derived)
        return result

    def start(self, key: str, chain: tuple[Message[Any], ...]) -> None:
        """Queue the chain's background pass (coalesced with an unstarted one)."""
        self._serving(key).start(chain)

    def settle(self, key: str, timeout: float | None, finish: bool) -> None:
        """Wait for the namespace's background work; finish it when it was cut short."""
        self._serving(key).settle(timeout, finish)

    def configure(self, key: str, options: bytes) -> None:
        """Adopt another opener's ``pack``ed options."""
        self._serving(key).configure(unpack(options))

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


@ray.remote(num_cpus=0, max_restarts=0)
class HostActor(Hosting):
    """A process of the pool serving namespaces (the directory is the pool's first)."""


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
class Directory(Hosting):
    """Assigns at most ``max_live`` namespaces at once (LRU) to a warm pool of hosts, of which
    it is the first: it serves namespaces itself, so a pool of one host per CPU is that many
    processes (on a fresh cluster the pool's start is a process and its imports fewer). Its
    own calls take turns (``_serial``); its host calls run at once, as any host's (it is
    created with ``max_concurrency=HOST_THREADS``). Drivers on its machine call ``activate`` and
    ``detach`` on its channel, as they call a host's."""

    def __init__(self, max_live: int) -> None:
        self.max_live = max_live
        self.live: OrderedDict[str, _Activation] = OrderedDict()
        self._me: Actor = ray.get_runtime_context().current_actor
        self.hosts: list[Actor] = [self._me]
        self._serial = threading.RLock()
        """The directory's calls, one at a time (the host's calls run on the same threads)."""
        self._starting: dict[Any, ray.ObjectRef[Any]] = {}
        """Hosts not known to be started yet: actor id -> the ping sent when it was created."""
        self.users: Counter[str] = Counter()
        """Open memories per namespace: namespaces nobody has open are passivated first."""
        self.holder = Holder.current("ray directory")
        self.passivations = 0
        self.activations = 0
        self.started = 1  # this process
        self.activation_seconds: list[float] = []
        self._releasing: dict[str, _Activation] = {}
        """Passivated namespaces whose host has not released them yet."""
        self._lock = threading.Lock()
        """Guards the releasing table (the directory's calls and its threads)."""
        self._releases = ThreadPoolExecutor(
            RELEASE_THREADS, thread_name_prefix="stratagate-release"
        )
        self._grow(pool_size())  # warm from the start: the other hosts start while this one does
        super().__init__(DIRECTORY_CHANNEL_METHODS)
        threading.Thread(target=self._renew_leases, name="stratagate-leases", daemon=True).start()

    # -- pool -------------------------------------------------------------------------------

    def prestart(self, hosts: int) -> int:
        """Have at least ``hosts`` hosts, started and ready; returns the pool size."""
        with self._serial:
            self._grow(hosts)
            ray.get([host.ping.remote() for host in self.hosts])
            return len(self.hosts)

    def _grow(self, hosts: int) -> None:
        """Start hosts up to ``hosts``, one node after another (on a cluster the pool, and so
        the namespaces, spread over the nodes), this one's first. Hard node affinity: Ray's
        SPREAD, and a soft affinity, placed hosts on the directory's node while the others had
        no idle worker yet; a host pinned to a node that died fails its start, and is replaced
        by one on a live node when an assignment finds out."""
        nodes = from_here(alive_nodes(), str(ray.get_runtime_context().get_node_id()))
        while len(self.hosts) < hosts:
            self.started += 1
            strategy: Any = "SPREAD"
            if nodes:
                node = nodes[(self.started - 1) % len(nodes)]
                strategy = NodeAffinitySchedulingStrategy(node, soft=False)
            host: Actor = HostActor.options(  # type: ignore[attr-defined]
                scheduling_strategy=strategy, max_concurrency=HOST_THREADS
            ).remote()
            self.hosts.append(host)
            self._starting[host._actor_id] = host.ping.remote()

    def _note_started(self) -> None:
        """Forget the hosts whose start has ended (answered, or failed: an assignment finds
        out); this one has."""
        if self._starting:
            pings = list(self._starting.values())
            ended, _ = ray.wait(pings, num_returns=len(pings), timeout=0)
            done = set(ended)
            self._starting = {a: p for a, p in self._starting.items() if p not in done}

    def _least_busy(self) -> Actor:
        """The started host serving the fewest namespaces, counting those it is still
        releasing."""
        with self._lock:
            releasing = list(self._releasing.values())
        load = Counter(a.host._actor_id for a in [*self.live.values(), *releasing])
        self._note_started()
        ids = [host._actor_id for host in self.hosts]
        chosen = least_busy(ids, self._starting.keys(), load)
        return self.hosts[ids.index(chosen)]

    def _lose(self, host: Actor) -> None:
        """Forget a host that died: its namespaces are no longer live, a new host takes its
        place in the pool. (Not this one: when it dies, so does the directory.)"""
        if host._actor_id == self._me._actor_id:
            return
        self.hosts = [h for h in self.hosts if h._actor_id != host._actor_id]
        self._starting.pop(host._actor_id, None)
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
        max_live: int,
        options: bytes,
        recover: bool,
        attach: bool = False,
    ) -> Actor:
        """The namespace's host, assigning it to one (with the opener's ``pack``ed
        ``options``) if it is not live; passivates beyond the bound ``max_live`` (``attach``: a
        memory opens it, and holds it until ``detach``)."""
        with self._serial:
            self.max_live = max_live  # the latest opener sets the bound
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

    def _assign(self, database: str, namespace: str, options: bytes, recover: bool) -> _Activation:
        began = time.perf_counter()
        store = self._open_store(database)
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
        options: bytes,
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
        with self._serial:
            activation = self.live.get(namespace_key(database, namespace))
            if activation is None:
                return
            try:
                ray.get(activation.host.ping.remote(), timeout=30)
            except Exception:
                self._lose(activation.host)
                return
            self._passivate(namespace_key(database, namespace))

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
                self._open_store(activation.database).release_lease(activation.lease)
        finally:
            with self._lock:
                if self._releasing.get(key) is activation:
                    del self._releasing[key]

    def _drop(self, key: str) -> None:
        activation = self.live.pop(key)
        with contextlib.suppress(StrataGateError):
            self._open_store(activation.database).release_lease(activation.lease)

    def _renew_leases(self) -> None:
        """Keep the leases of live namespaces fresh for readers on other hosts (a thread: the
        directory's calls run one at a time, so this may see the table mid-change)."""
        while True:
            time.sleep(10)
            with contextlib.suppress(RuntimeError):  # changed while copied: next tick
                live = list(self.live.values())
            for activation in live:
                with contextlib.suppress(StrataGateError):
                    self._open_store(activation.database).renew_lease(activation.lease)

    # -- callers ----------------------------------------------------------------------------

    def detach(self, database: str, namespace: str) -> None:
        """A memory on the namespace closed; it stays live until the bound needs its place."""
        with self._serial:
            key = namespace_key(database, namespace)
            if self.users[key] > 0:
                self.users[key] -= 1
            if self.users[key] <= 0:
                del self.users[key]

    def passivate(self, database: str, namespace: str) -> bool:
        """Passivate one namespace now (it leaves the live set at once; its host snapshots and
        drops it on a thread); False if not live."""
        with self._serial:
            key = namespace_key(database, namespace)
            if key not in self.live:
                return False
            self._passivate(key)
            return True

    def stats(self) -> dict[str, Any]:
        with self._serial:
            return self._stats()

    def _stats(self) -> dict[str, Any]:
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


def from_here(nodes: Sequence[str], here: str) -> list[str]:
    """The nodes in turn from ``here`` (the directory's, whose process is the pool's first
    host), so that the next hosts go to the other nodes first."""
    if here not in nodes:
        return list(nodes)
    start = nodes.index(here)
    return [*nodes[start:], *nodes[:start]]


def least_busy(
    hosts: Sequence[K], starting: Collection[K], load: Mapping[K, int], imbalance: int = IMBALANCE
) -> K:
    """The host to serve a new namespace: the first serving the fewest namespaces of those that
    have started — a host still starting holds up no namespace another can take — unless even
    those serve more than ``imbalance`` namespaces more than a host still starting: then that
    host (the caller waits for its start), so the first host up does not take every namespace
    of a fresh cluster. All hosts count as started when none has."""
    started = [host for host in hosts if host not in starting] or list(hosts)
    chosen = min(started, key=lambda host: load.get(host, 0))
    waiting = [host for host in hosts if host not in started]
    if waiting:
        idlest = min(waiting, key=lambda host: load.get(host, 0))
        if load.get(chosen, 0) - load.get(idlest, 0) > imbalance:
            return idlest
    return chosen


def pack(options: MemoryOptions) -> bytes:
    """A memory's options as the directory forwards them to a host without reading them."""
    return bytes(cloudpickle.dumps(options))  # type: ignore[no-untyped-call]


def unpack(packed: bytes) -> MemoryOptions:
    """The options ``pack`` made (on the host that serves the namespace)."""
    return cast("MemoryOptions", pickle.loads(packed))


__all__ = [
    "CHANNEL_METHODS",
    "DIRECTORY_CHANNEL_METHODS",
    "DIRECTORY_NAME",
    "HOST_PRELOAD",
    "IMBALANCE",
    "PRELOAD",
    "PROTOCOL",
    "RAY_NAMESPACE",
    "Actor",
    "Directory",
    "HostActor",
    "NotAssignedError",
    "forget_channel",
    "from_here",
    "least_busy",
    "namespace_key",
    "on_host",
    "pack",
    "unpack",
]
