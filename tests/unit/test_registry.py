"""The registry is read from ``@handles`` alone: every message is answered exactly once, by a
handler or by a pipeline flow, and a second handler for a type is refused at import."""

from __future__ import annotations

import inspect

import pytest

from stratagate import messages
from stratagate.actors.pipeline import FLOWS
from stratagate.actors.reader import Reader
from stratagate.actors.registry import ANSWERED_BY, ROLES, answering, handler_of, host_of
from stratagate.actors.role import MessageHandler, handles
from stratagate.messages import (
    GetEvent,
    LiftBlock,
    Message,
    ResumePending,
    SearchEvents,
    ViewRead,
)
from stratagate.read.view import MemoryView


def message_types() -> list[type[Message[object]]]:
    """Every concrete message class ``stratagate.messages`` defines."""
    return [
        value
        for value in vars(messages).values()
        if inspect.isclass(value)
        and issubclass(value, Message)
        and value not in (Message, messages.Command, messages.Query)
        and value.__module__ == messages.__name__
        and "[" not in value.__name__  # not a parametrised generic (Command[bool])
    ]


def answered(message_type: type[Message[object]]) -> bool:
    """A handler is registered for the type or a base of it, or a flow answers it."""
    return message_type in FLOWS or any(k in ANSWERED_BY for k in message_type.__mro__)


def test_every_message_is_answered_by_a_handler_or_a_flow() -> None:
    unanswered = [m.__name__ for m in message_types() if not answered(m)]
    assert unanswered == []


def test_every_plain_read_names_a_view_method_taking_its_fields() -> None:
    for read in (m for m in message_types() if issubclass(m, ViewRead) and m is not ViewRead):
        method = getattr(MemoryView, read.read)
        assert list(inspect.signature(method).parameters)[1:] == list(read.model_fields), read


def test_a_message_type_answered_twice_is_refused() -> None:
    class SecondReader(MessageHandler):
        name = host = "second"

        @handles(SearchEvents)
        def again(self, query: SearchEvents) -> None: ...

    with pytest.raises(TypeError, match="SearchEvents is handled by both Reader and SecondReader"):
        answering([Reader, SecondReader])


def test_roles_and_hosts_come_from_the_handler_classes() -> None:
    assert set(ROLES) == {"sealer", "extractor", "projector", "weights"}
    assert host_of(LiftBlock(block_id="b")) == "sealer"
    assert host_of(GetEvent(event_id="e")) == "weights"  # the reader lives beside the weights
    assert handler_of(GetEvent(event_id="e")) is Reader
    with pytest.raises(TypeError, match="no handler answers ResumePending"):
        handler_of(ResumePending())  # follow-up work alone: a flow answers it
