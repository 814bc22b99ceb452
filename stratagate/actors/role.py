"""What every role has: handlers registered by message type, its own stream (writers), the
version it expects, and a clock and ids."""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Sequence
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from projections.state import NamespaceState
from stratagate.actors.live import LiveState
from stratagate.actors.pipeline import CONFLICT_ATTEMPTS, pause, retrying_stale
from stratagate.errors import StaleHandleError
from stratagate.events import DomainEvent
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.read.view import MemoryView
from stratagate.store.leases import Holder, claim_abandoned

R = TypeVar("R")
HandlerFn = Callable[[Any, Any], Any]
F = TypeVar("F", bound=HandlerFn)

ID_ATTEMPTS = 1000
"""How many ids a role draws from the factory before giving up on finding an unused one."""

ERASED_MEANWHILE = (
    "erased while the model ran: its result may hold erased content and was not recorded"
)


def handles(*message_types: type[Message[Any]]) -> Callable[[F], F]:
    """Mark a method as the handler of the given message types (one handler per type)."""

    def deco(fn: F) -> F:
        fn.__dict__.setdefault("_handles_messages", []).extend(message_types)
        return fn

    return deco


class MessageHandler:
    """Base of anything that answers messages: dispatches ``handle`` by message type.

    ``name`` names the handler in the registry; ``host`` is the role it runs beside (its own,
    the weight keeper's for the reader: under Ray, in the host actor serving the namespace) or
    ``"runtime"``: the runtime itself, in the caller's process, from its own store connection."""

    name: ClassVar[str]
    host: ClassVar[str]
    _message_handlers: ClassVar[dict[type[Message[Any]], HandlerFn]] = {}
    _resolved: ClassVar[dict[type[Message[Any]], HandlerFn]] = {}
    """``handler_for`` of each message type answered so far."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type[Message[Any]], HandlerFn] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass).values():
                for message_type in getattr(attr, "_handles_messages", ()):
                    table[message_type] = attr
        cls._message_handlers = table
        cls._resolved = {}

    @classmethod
    def handled(cls) -> frozenset[type[Message[Any]]]:
        """The message types this class answers."""
        return frozenset(cls._message_handlers)

    @classmethod
    def handler_for(cls, message_type: type[Message[Any]]) -> HandlerFn | None:
        """The method answering ``message_type``: its own, or that of the nearest base class
        a handler was registered for (``@handles(ViewRead)`` answers every plain read)."""
        table = cls._message_handlers
        return next((table[k] for k in message_type.__mro__ if k in table), None)

    def handle(self, message: Message[R]) -> R:
        """Answer one message with its registered handler (looked up once per type)."""
        kind = type(message)
        handler = self._resolved.get(kind)
        if handler is None:
            handler = self.handler_for(kind)
            if handler is None:
                raise TypeError(f"{type(self).__name__} does not handle {kind.__name__}")
            self._resolved[kind] = handler
        result: R = handler(self, message)
        return result


class Role(MessageHandler):
    """One actor role of a namespace: the only writer of ``stream``.

    ``version`` is the version of its stream the role's state has folded. Another writer (a
    handle in another process) appending to the same stream after the role last refreshed
    makes it stale: the next append raises ``StaleHandleError`` and nothing is overwritten.
    """

    stream: ClassVar[str]
    components: ClassVar[tuple[str, ...]]
    """The read models this role needs when it is hosted on its own (Ray)."""

    def __init__(self, namespace: str, options: MemoryOptions, live: LiveState) -> None:
        self.namespace = namespace
        self.options = options
        self.live = live

    @property
    def version(self) -> int:
        return self.live.version(self.stream)

    @property
    def state(self) -> NamespaceState:
        return self.live.state

    @property
    def view(self) -> MemoryView:
        return self.live.view

    def _append(self, *events: DomainEvent, durable: bool = True) -> None:
        """Append to this role's stream with the expected version, then fold."""
        self.live.append(self.stream, events, command_id=new_command_id(), durable=durable)

    def _append_claimed(
        self,
        result: Callable[[], Sequence[DomainEvent]],
        failed: Callable[[str], DomainEvent],
    ) -> bool:
        """Append the result of a job this handle claimed and called a model for.

        Other writers may have appended to the stream while the model ran: the claim makes the
        job this handle's, so it catches up and appends ``result()`` (built again from the
        caught-up state) — unless an erasure came in between: then the job is recorded as
        ``failed`` and the result, which may hold erased content, is dropped. True when the
        result was appended."""
        erasures = self.live.counters.erasures_seen
        for attempt in range(CONFLICT_ATTEMPTS):
            if self.live.counters.erasures_seen != erasures:
                retrying_stale(lambda: self._append(failed(ERASED_MEANWHILE)), label="claimed")
                return False
            try:
                self._append(*result())
                return True
            except StaleHandleError:
                if attempt == CONFLICT_ATTEMPTS - 1:
                    raise
                pause(attempt)
                self.refresh()
        raise AssertionError("unreachable")

    def worker_token(self) -> str:
        """How this process names itself in the claims it appends."""
        return Holder.current().token()

    def abandoned(self, worker: str | None, claimed_at: datetime | None) -> bool:
        """Whether a running job claimed by ``worker`` at ``claimed_at`` may be recovered."""
        age = (
            float("inf")
            if claimed_at is None
            else (self.options.now() - claimed_at).total_seconds()
        )
        return claim_abandoned(worker, age)

    def new_id(self, prefix: str, taken: Container[str] = ()) -> str:
        """An id from the caller's factory that the namespace does not hold yet.

        Each Ray actor runs its own copy of the factory, so a deterministic one (a counter)
        repeats ids across roles; drawing again until the id is unused keeps ids unique per
        namespace whatever the runtime, and keeps a deterministic factory deterministic.
        """
        for _ in range(ID_ATTEMPTS):
            value = self.options.make_id(prefix)
            if value not in taken:
                return value
        raise RuntimeError(f"id_factory gave {ID_ATTEMPTS} used ids for prefix {prefix!r}")

    def refresh(self) -> int:
        """Fold whatever other roles appended since the last look."""
        return self.live.refresh()

    def recover(self) -> int:
        """Mark running work whose claimer is gone (``abandoned``) as interrupted; returns
        how many jobs."""
        return 0


class Taken:
    """Ids already in use: those of a collection the state holds (not copied) plus those a
    command has drawn so far."""

    def __init__(self, held: Container[str]) -> None:
        self.held = held
        self.drawn: set[str] = set()

    def __contains__(self, item: object) -> bool:
        return item in self.drawn or item in self.held

    def add(self, item: str) -> None:
        self.drawn.add(item)


def new_command_id() -> str:
    """The id of one append (its rows are ``<id>:<index>``): log bookkeeping, not a domain id,
    so it never comes from the caller's ``id_factory`` (a deterministic factory restarted in
    another process would repeat it and make a new append look like a retried one). 128
    random bits as 32 hex digits, like the ``uuid4().hex`` it was, without building a UUID."""
    return f"cmd_{os.urandom(16).hex()}"


def error_text(exc: BaseException) -> str:
    """How a failure is written into a job: the exception type and its message."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


__all__ = ["MessageHandler", "Role", "Taken", "error_text", "handles", "new_command_id"]
