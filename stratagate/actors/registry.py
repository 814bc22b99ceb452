"""Which handler answers which message: read from the handlers' own ``@handles`` marks.

Nothing else lists message types. Each writer role is the only writer of one stream; under
Ray the four roles of a namespace run in the host actor serving it, over one state; the reader
answers the read models' queries beside the weight keeper (same state), which logs the batches
its searches produce; the auditor answers the log's own queries (history, verify, time travel, revision, anchors) in the
runtime itself. A message type answered twice is an error at import; the pipeline
(``stratagate.actors.pipeline``) says what follows a command once it is answered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from stratagate.actors.auditor import Auditor
from stratagate.actors.extractor import Extractor
from stratagate.actors.projector import Projector
from stratagate.actors.reader import Reader
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.sealer import Sealer
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.messages import Message

RoleName = Literal["sealer", "extractor", "projector", "weights"]

HANDLERS: tuple[type[MessageHandler], ...] = (
    Sealer,
    Extractor,
    Projector,
    WeightKeeper,
    Reader,
    Auditor,
)
"""Every handler of a namespace's messages."""

ROLES: dict[RoleName, type[Role]] = {
    cls.name: cls  # type: ignore[misc]
    for cls in HANDLERS
    if issubclass(cls, Role)
}
"""The four roles of a namespace (each the only writer of its stream)."""


def answering(
    classes: Iterable[type[MessageHandler]],
) -> dict[type[Message[Any]], type[MessageHandler]]:
    """Message type → the one class of ``classes`` that answers it (two is a ``TypeError``)."""
    table: dict[type[Message[Any]], type[MessageHandler]] = {}
    for cls in classes:
        for message_type in cls.handled():
            if message_type in table:
                raise TypeError(
                    f"{message_type.__name__} is handled by both "
                    f"{table[message_type].__name__} and {cls.__name__}"
                )
            table[message_type] = cls
    return table


ANSWERED_BY: dict[type[Message[Any]], type[MessageHandler]] = answering(HANDLERS)
"""Message type → the handler class that answers it."""


_RESOLVED: dict[type[Message[Any]], type[MessageHandler]] = {}
"""``handler_of`` of each message type seen so far."""


def handler_of(message: Message[Any]) -> type[MessageHandler]:
    """The handler class that answers ``message`` (registered for its type or a base of it)."""
    kind = type(message)
    cls = _RESOLVED.get(kind)
    if cls is None:
        cls = next((ANSWERED_BY[k] for k in kind.__mro__ if k in ANSWERED_BY), None)
        if cls is None:
            raise TypeError(f"no handler answers {kind.__name__}")
        _RESOLVED[kind] = cls
    return cls


def host_of(message: Message[Any]) -> str:
    """Where ``message`` is answered: a role's actor, or ``"runtime"`` (the runtime itself)."""
    return handler_of(message).host


class Handles(NamedTuple):
    """The namespace's four roles (plain role objects inline; under Ray the ``ActorHandle`` of
    the host serving them, the same for all four)."""

    sealer: Any
    extractor: Any
    projector: Any
    weights: Any


__all__ = [
    "ANSWERED_BY",
    "HANDLERS",
    "ROLES",
    "Handles",
    "RoleName",
    "answering",
    "handler_of",
    "host_of",
]
