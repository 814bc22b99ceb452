"""The Ray runtime: each (namespace, role) is a named Ray actor; a directory bounds how many live.

This is the one place ``ray.remote`` is applied. Actors are named
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
from typing import Any

import ray
from ray.actor import ActorHandle
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from stratagate.actors.inline import Handles
from stratagate.actors.live import LiveState
from stratagate.actors.pipeline import DOWNSTREAM, ROLE_CLASSES, STAGES, WRITERS
from stratagate.actors.role import Role
from stratagate.errors import DrainTimeoutError, RuntimeUnavailableError, StrataGateError
from stratagate.events.sql_store import open_event_store
from stratagate.options import MemoryOptions

RAY_NAMESPACE = "stratagate"
DIRECTORY_NAME = "stratagate-directory"
CALL_ATTEMPTS = 3
log = logging.getLogger(__name__)


def actor_name(database: str, namespace: str, role: str) -> str:
    """The cluster-wide name of one role actor of one namespace of one database."""
    digest = hashlib.sha256(database.encode()).hexdigest()[:12]
    return f"sg:{digest}:{namespace}:{role}"


class _Hosted:
    """What a role gains when it runs as a Ray actor: its own store, hydration, forwarding."""

    role_name: str

    def _host(self, database: str, namespace: str, options: MemoryOptions, recover: bool) -> None:
        cls = ROLE_CLASSES[self.role_name]
        store = open_event_store(database)
        live = LiveState(
            store,
            namespace,
            cls.components,
            snapshot_key=self.role_name,
            snapshot_every=options.snapshot_every,
        )
        Role.__init__(self, namespace, options, live)  # type: ignore[arg-type]
        self._database = database
        self._errors: list[BaseException] = []
        if recover and self.role_name in WRITERS:
            self.recover()  # type: ignore[attr-defined]

    def pipeline(self, forward: bool = True) -> int:
        """Run this role's stage; on success nudge the next role. Errors wait for ``drain``."""
        method = dict(STAGES)[self.role_name]
        try:
            produced = len(getattr(self, method)())
        except Exception as exc:  # the job state is durable; the caller sees it at drain()
            self._errors.append(exc)
            return 0
        following = DOWNSTREAM[self.role_name]
        if forward and following is not None:
            # passivated meanwhile (ValueError): drain or the next activation finishes the work
            with contextlib.suppress(ValueError):
                ray.get_actor(
                    actor_name(self._database, self.namespace, following),  # type: ignore[attr-defined]
                    namespace=RAY_NAMESPACE,
                ).pipeline.remote(True)
        return produced

    def configure(self, options: MemoryOptions) -> None:
        """Adopt another opener's options (callbacks, clock, ids) for later calls."""
        self.options = options

    def take_errors(self) -> list[BaseException]:
        errors, self._errors = self._errors, []
        return errors

    def positioned_digests(self) -> tuple[int, dict[str, str]]:
        self.refresh()  # type: ignore[attr-defined]
        state = self.live.state  # type: ignore[attr-defined]
        return state.position, state.digests()

    def passivate(self) -> int:
        """Snapshot before the directory stops this actor."""
        self.live.snapshot()  # type: ignore[attr-defined]
        return int(self.live.state.position)  # type: ignore[attr-defined]

    def ping(self) -> str:
        return self.role_name


def _remote_class(role: str) -> Any:
    base = ROLE_CLASSES[role]

    def __init__(
        self: Any, database: str, namespace: str, options: MemoryOptions, recover: bool
    ) -> None:
        self._host(database, namespace, options, recover)

    cls = type(f"{base.__name__}Actor", (_Hosted, base), {"role_name": role, "__init__": __init__})
    cls.__module__ = __name__
    return ray.remote(num_cpus=0, max_restarts=0)(cls)


ACTOR_CLASSES: dict[str, Any] = {role: _remote_class(role) for role in ROLE_CLASSES}


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
                role: ACTOR_CLASSES[role]
                .options(
                    name=actor_name(database, namespace, role),
                    namespace=RAY_NAMESPACE,
                    get_if_exists=True,
                )
                .remote(database, namespace, options, recover)
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
    return Directory.options(
        name=DIRECTORY_NAME, namespace=RAY_NAMESPACE, get_if_exists=True, lifetime="detached"
    ).remote(max_live)


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
        self._pending: list[ray.ObjectRef] = []
        self._directory = directory(options.max_live_namespaces)
        self._handles = self._activate(attach=True)

    def _activate(self, *, attach: bool = False) -> dict[str, ActorHandle]:
        args = (self.database, self.namespace, self.options, self.recover, attach)
        try:
            return ray.get(self._directory.activate.remote(*args))
        except RayActorError:  # the directory was stopped (ray.kill): make a new one
            self._directory = directory(self.options.max_live_namespaces)
            return ray.get(self._directory.activate.remote(*args))

    @property
    def handles(self) -> Handles:
        return Handles(**self._handles)

    def call(self, role: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call a role method on its actor and wait; rehydrate and retry if it was passivated."""
        for attempt in range(CALL_ATTEMPTS):
            handle = self._handles[role]
            try:
                result = ray.get(getattr(handle, method).remote(*args, **kwargs))
            except RayTaskError as exc:
                raise unwrap(exc) from None
            except RayActorError:
                if attempt == CALL_ATTEMPTS - 1:
                    raise
                self._handles = self._activate()
                continue
            self._directory.touch.remote(self.database, self.namespace)
            return result
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
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            self.call(role, "pipeline", False) if remaining is None else self._timed(
                role, remaining
            )
        for role, _ in STAGES:
            errors = self.call(role, "take_errors")
            if errors:
                raise errors[0]

    def _timed(self, role: str, timeout: float) -> None:
        try:
            ray.get(self._handles[role].pipeline.remote(False), timeout=timeout)
        except GetTimeoutError as exc:
            raise DrainTimeoutError(f"{role} still busy after the drain timeout") from exc

    def positioned_digests(self) -> list[tuple[int, dict[str, str]]]:
        return [self.call(role, "positioned_digests") for role in ROLE_CLASSES]

    def passivate(self) -> bool:
        """Passivate this namespace now (used by tests and operators)."""
        return bool(ray.get(self._directory.passivate.remote(self.database, self.namespace)))

    def directory_stats(self) -> dict[str, int]:
        return ray.get(self._directory.stats.remote())

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
                    self.call(role, "passivate")
        with contextlib.suppress(RayActorError):
            ray.get(self._directory.release.remote(self.database, self.namespace))


__all__ = ["DIRECTORY_NAME", "RAY_NAMESPACE", "Directory", "RayRuntime", "actor_name", "ensure_ray"]
