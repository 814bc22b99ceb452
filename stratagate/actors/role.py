"""What every role has: handlers registered by message type, its own stream (writers), the
version it expects, and a clock and ids."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Container
from typing import Any, ClassVar, TypeVar

from projections.state import NamespaceState
from stratagate.actors.live import LiveState
from stratagate.events import DomainEvent
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.read.view import MemoryView

R = TypeVar("R")
HandlerFn = Callable[[Any, Any], Any]
F = TypeVar("F", bound=HandlerFn)

ID_ATTEMPTS = 1000
"""How many ids a role draws from the factory before giving up on finding an unused one."""


def handles(*message_types: type[Message[Any]]) -> Callable[[F], F]:
    """Mark a method as the handler of the given message types (one handler per type)."""

    def deco(fn: F) -> F:
        fn.__dict__.setdefault("_handles_messages", []).extend(message_types)
        return fn

    return deco


class MessageHandler:
    """Base of anything that answers messages: dispatches ``handle`` by message type.

    ``name`` names the handler in the registry; ``host`` is the actor it runs in under Ray (a
    role's own, the weight keeper's for the reader) or ``"runtime"``: the runtime itself, in
    the caller's process, from its own store connection."""

    name: ClassVar[str]
    host: ClassVar[str]
    _message_handlers: ClassVar[dict[type[Message[Any]], HandlerFn]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type[Message[Any]], HandlerFn] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass).values():
                for message_type in getattr(attr, "_handles_messages", ()):
                    table[message_type] = attr
        cls._message_handlers = table

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
        """Answer one message with its registered handler."""
        handler = self.handler_for(type(message))
        if handler is None:
            raise TypeError(f"{type(self).__name__} does not handle {type(message).__name__}")
        result: R = handler(self, message)
        return result


class Role(MessageHandler):
    """One actor role of a namespace: the only writer of ``stream``.

    ``version`` is the stream version this writer last saw itself write (or found at
    hydration). Another writer appending to the same stream makes it stale: the next append
    raises ``StorageConflictError`` and nothing is overwritten.
    """

    stream: ClassVar[str]
    components: ClassVar[tuple[str, ...]]
    """The read models this role needs when it is hosted on its own (Ray)."""

    def __init__(self, namespace: str, options: MemoryOptions, live: LiveState) -> None:
        self.namespace = namespace
        self.options = options
        self.live = live
        self.version = live.store.stream_version(namespace, self.stream)

    @property
    def state(self) -> NamespaceState:
        return self.live.state

    @property
    def view(self) -> MemoryView:
        return self.live.view

    def _append(self, *events: DomainEvent, durable: bool = True) -> None:
        """Append to this role's stream with the expected version, then fold."""
        rows = self.live.append(
            self.stream,
            events,
            expected_version=self.version,
            command_id=new_command_id(),
            durable=durable,
        )
        self.version = rows[-1].stream_version if rows else self.version

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
        """Mark work found running at hydration as interrupted; returns how many jobs."""
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
    another process would repeat it and make a new append look like a retried one)."""
    return f"cmd_{uuid.uuid4().hex}"


def error_text(exc: BaseException) -> str:
    """How a failure is written into a job: the exception type and its message."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


__all__ = ["MessageHandler", "Role", "Taken", "error_text", "handles", "new_command_id"]
