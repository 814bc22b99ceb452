"""The Ray runtime: each (namespace, role) is a Ray actor; a directory bounds how many live.

This is the one place ``ray.remote`` is applied, to one generic class: a ``RoleActor`` hosts
one role of one namespace (the weights actor also hosts the reader). Actors are named
``sg:<database hash>:<namespace>:<role>`` in the Ray namespace ``stratagate`` and created
get-or-create, so two opens of one namespace in one cluster share its actors. The directory
actor keeps at most ``max_live_namespaces`` namespaces alive: activating one more passivates
the least recently used (snapshot, then stop); the next call to it rehydrates from snapshot +
log tail. Ray object refs never reach the caller, and Ray's task errors are unwrapped into the
error the role raised (a ``StrataGateError`` or the callback's own exception).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar, cast

import ray
from ray.actor import ActorHandle
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.routing import (
    DOWNSTREAM,
    HOST,
    ROLE_CLASSES,
    STAGES,
    WRITERS,
    Handles,
    RoleName,
    route,
    stage_of,
)
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.errors import DrainTimeoutError, RuntimeUnavailableError, StrataGateError
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.store.sql import open_event_store

RAY_NAMESPACE = "stratagate"
DIRECTORY_NAME = "stratagate-directory"
CALL_ATTEMPTS = 3
R = TypeVar("R")
log = logging.getLogger(__name__)


def actor_name(database: str, namespace: str, role: str) -> str:
    """The cluster-wide name of one role actor of one namespace of one database."""
    digest = hashlib.sha256(database.encode()).hexdigest()[:12]
    return f"sg:{digest}:{namespace}:{role}"


@ray.remote(num_cpus=0, max_restarts=0)
class RoleActor:
    """One role of one namespace, with its own store connection and the read models it needs."""

    def __init__(
        self,
        role: RoleName,
        database: str,
        namespace: str,
        options: MemoryOptions,
        recover: bool,
    ) -> None:
        cls = ROLE_CLASSES[role]
        self.role_name: RoleName = role
        self.database = database
        live = LiveState(
            open_event_store(database),
            namespace,
            cls.components,
            snapshot_key=role,
            snapshot_every=options.snapshot_every,
        )
        self.role: Role = cls(namespace, options, live)
        self.reader = Reader(live, self.role) if isinstance(self.role, WeightKeeper) else None
        self.errors: list[BaseException] = []
        if recover and role in WRITERS:
            self.role.recover()

    def handle(self, message: Message[R]) -> R:
        """Answer one message (the weights actor also answers the reader's queries)."""
        target: MessageHandler = self.role
        if route(message) == "reader" and self.reader is not None:
            target = self.reader
        return target.handle(message)

    def pipeline(self, forward: bool = True) -> int:
        """Run this role's stage; on success nudge the next role. Errors wait for ``drain``."""
        stage = stage_of(self.role_name)
        if stage is None:
            return 0
        try:
            produced = len(self.role.handle(stage))
        except Exception as exc:  # the job state is durable; the caller sees it at drain()
            self.errors.append(exc)
            return 0
        following = DOWNSTREAM[self.role_name]
        if forward and following is not None:
            # passivated meanwhile (ValueError): drain or the next activation finishes the work
            with contextlib.suppress(ValueError):
                ray.get_actor(
                    actor_name(self.database, self.role.namespace, following),
                    namespace=RAY_NAMESPACE,
                ).pipeline.remote(True)
        return produced

    def configure(self, options: MemoryOptions) -> None:
        """Adopt another opener's options (callbacks, clock, ids) for later calls."""
        self.role.options = options

    def take_errors(self) -> list[BaseException]:
        errors, self.errors = self.errors, []
        return errors

    def positioned_digests(self) -> tuple[int, dict[str, str]]:
        self.role.refresh()
        state = self.role.state
        return state.position, state.digests()

    def passivate(self) -> int:
        """Snapshot before the directory stops this actor."""
        self.role.live.snapshot()
        return self.role.state.position

    def ping(self) -> str:
        return self.role_name


@ray.remote(num_cpus=0)
class Directory:
    """Keeps the live namespaces of the cluster, at most ``max_live`` of them (LRU)."""

    def __init__(self, max_live: int) -> None:
        self.max_live = max_live
        self.live: OrderedDict[str, dict[str, ActorHandle]] = OrderedDict()
        self.users: Counter[str] = Counter()
        """Open memories per namespace: namespaces nobody has open are passivated first."""
        self.passivations = 0

    def activate(
        self,
        database: str,
        namespace: str,
        options: MemoryOptions,
        recover: bool,
        attach: bool = False,
    ) -> dict[str, ActorHandle]:
        """Handles of a namespace's actors, creating them if needed; passivates beyond the bound
        (``attach``: a memory opens it, and holds it until ``release``)."""
        self.max_live = options.max_live_namespaces  # the latest opener sets the bound
        key = f"{database}|{namespace}"
        if attach:
            self.users[key] += 1
        handles = self.live.get(key)
        if handles is not None:
            try:  # the latest opener's options (callbacks, clock) apply to the shared actors
                ray.get([handle.configure.remote(options) for handle in handles.values()])
            except RayActorError:  # stopped behind our back: start afresh
                del self.live[key]
                handles = None
        if handles is None:
            handles = {
                role: RoleActor.options(  # type: ignore[attr-defined]
                    name=actor_name(database, namespace, role),
                    namespace=RAY_NAMESPACE,
                    get_if_exists=True,
                ).remote(role, database, namespace, options, recover)
                for role in ROLE_CLASSES
            }
            self.live[key] = handles
        self.live.move_to_end(key)
        while len(self.live) > self.max_live:
            self._stop(self.live.pop(self._victim()))
        return handles

    def _victim(self) -> str:
        """The least recently used namespace nobody has open, else the least recently used
        (never the one just activated, which is the most recent)."""
        candidates = list(self.live)[:-1]
        return next((key for key in candidates if self.users[key] <= 0), candidates[0])

    def release(self, database: str, namespace: str) -> None:
        """A memory on the namespace closed; it stays live until the bound needs its place."""
        key = f"{database}|{namespace}"
        if self.users[key] > 0:
            self.users[key] -= 1
        if self.users[key] <= 0:
            del self.users[key]

    def touch(self, database: str, namespace: str) -> None:
        key = f"{database}|{namespace}"
        if key in self.live:
            self.live.move_to_end(key)

    def passivate(self, database: str, namespace: str) -> bool:
        """Passivate one namespace now (snapshot, stop); False if it was not live."""
        handles = self.live.pop(f"{database}|{namespace}", None)
        if handles is None:
            return False
        self._stop(handles)
        return True

    def _stop(self, handles: dict[str, ActorHandle]) -> None:
        try:
            ray.get([handle.passivate.remote() for handle in handles.values()])
        except Exception:  # a dead actor has nothing to snapshot; the log is the truth
            log.warning("passivation snapshot failed", exc_info=True)
        for handle in handles.values():
            ray.kill(handle, no_restart=True)
        self.passivations += 1

    def stats(self) -> dict[str, int]:
        return {
            "live": len(self.live),
            "open": sum(1 for key in self.live if self.users[key] > 0),
            "max_live": self.max_live,
            "passivations": self.passivations,
        }


def ensure_ray(address: str | None = None) -> None:
    """Connect to the given cluster, or start a local Ray when none is running."""
    if ray.is_initialized():
        return
    try:
        ray.init(
            address=address, namespace=RAY_NAMESPACE, include_dashboard=False, log_to_driver=False
        )
    except Exception as exc:
        raise RuntimeUnavailableError(f"cannot start or reach Ray: {exc}") from exc


def directory(max_live: int) -> ActorHandle:
    """The cluster's directory actor (get-or-create)."""
    # Detached: it must outlive the memory that happened to create it, or closing that memory
    # would take the directory down and with it every role actor it owns (fate-sharing).
    handle: ActorHandle = Directory.options(  # type: ignore[attr-defined]
        name=DIRECTORY_NAME, namespace=RAY_NAMESPACE, get_if_exists=True, lifetime="detached"
    ).remote(max_live)
    return handle


def unwrap(exc: RayTaskError) -> BaseException:
    """The exception a role raised inside an actor, as the caller should see it."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return StrataGateError(str(exc))


class RayRuntime:
    """Talks to the namespace's four actors through the directory."""

    name = "ray"

    def __init__(
        self, database: str, namespace: str, options: MemoryOptions, *, recover: bool = True
    ) -> None:
        ensure_ray(options.ray_address)
        self.database = database
        self.namespace = namespace
        self.options = options
        self.recover = recover
        self._pending: list[ray.ObjectRef[Any]] = []
        self._directory = directory(options.max_live_namespaces)
        self._handles = self._activate(attach=True)

    def _activate(self, *, attach: bool = False) -> dict[str, ActorHandle]:
        args = (self.database, self.namespace, self.options, self.recover, attach)
        try:
            handles: Any = ray.get(self._directory.activate.remote(*args))
        except RayActorError:  # the directory was stopped (ray.kill): make a new one
            self._directory = directory(self.options.max_live_namespaces)
            handles = ray.get(self._directory.activate.remote(*args))
        return cast(dict[str, ActorHandle], handles)

    @property
    def handles(self) -> Handles:
        h = self._handles
        return Handles(h["sealer"], h["extractor"], h["projector"], h["weights"])

    def send(self, message: Message[R]) -> R:
        """Deliver a message to its role's actor and wait; rehydrate and retry if passivated."""
        result: R = self._on(HOST[route(message)], lambda actor: actor.handle.remote(message))
        self._directory.touch.remote(self.database, self.namespace)
        return result

    def _on(self, role: RoleName, call: Callable[[ActorHandle], Any]) -> Any:
        """Make one call on a role's actor and wait for it; when the actor was passivated or
        stopped, have the directory rehydrate the namespace and try again."""
        for attempt in range(CALL_ATTEMPTS):
            try:
                return ray.get(call(self._handles[role]))
            except RayTaskError as exc:
                raise unwrap(exc) from None
            except RayActorError:
                if attempt == CALL_ATTEMPTS - 1:
                    raise
                self._handles = self._activate()
        raise RuntimeUnavailableError("unreachable")  # pragma: no cover

    def start_pipeline(self) -> None:
        self._pending.append(self._handles["sealer"].pipeline.remote(True))

    def drain(self, timeout: float | None = None) -> None:
        """Wait for background runs, then run each stage once more and report their errors."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pending, self._pending = self._pending, []
        try:
            ray.get(pending, timeout=timeout)
        except GetTimeoutError as exc:
            self._pending = pending
            raise DrainTimeoutError(f"background work still busy after {timeout} s") from exc
        except RayActorError:
            pass  # passivated mid-run; the stages below finish the work
        for role, _ in STAGES:
            if deadline is None:
                self._on(role, lambda actor: actor.pipeline.remote(False))
            else:
                self._timed(role, max(0.0, deadline - time.monotonic()))
        for role, _ in STAGES:
            errors = self._on(role, lambda actor: actor.take_errors.remote())
            if errors:
                raise errors[0]

    def _timed(self, role: RoleName, timeout: float) -> None:
        try:
            ray.get(self._handles[role].pipeline.remote(False), timeout=timeout)
        except GetTimeoutError as exc:
            raise DrainTimeoutError(f"{role} still busy after the drain timeout") from exc

    def positioned_digests(self) -> list[tuple[int, dict[str, str]]]:
        return [
            self._on(role, lambda actor: actor.positioned_digests.remote()) for role in ROLE_CLASSES
        ]

    def passivate(self) -> bool:
        """Passivate this namespace now (used by tests and operators)."""
        return bool(ray.get(self._directory.passivate.remote(self.database, self.namespace)))

    def directory_stats(self) -> dict[str, int]:
        return cast(dict[str, int], ray.get(self._directory.stats.remote()))

    def close(self, *, snapshot: bool) -> None:
        """Wait for this handle's background runs; the actors stay for other users of the
        namespace until the directory passivates them."""
        if self._pending:
            with contextlib.suppress(RayActorError, RayTaskError):
                ray.get(self._pending)
            self._pending = []
        if snapshot:
            for role in ROLE_CLASSES:
                with contextlib.suppress(RayActorError, StrataGateError):
                    self._on(role, lambda actor: actor.passivate.remote())
        with contextlib.suppress(RayActorError):
            ray.get(self._directory.release.remote(self.database, self.namespace))


__all__ = [
    "DIRECTORY_NAME",
    "RAY_NAMESPACE",
    "Directory",
    "RayRuntime",
    "RoleActor",
    "actor_name",
    "ensure_ray",
]
