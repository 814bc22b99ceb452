"""A replay's turns with their messages' content left sealed until something reads it.

Three events in four of a log are ``TurnAppended``, and the fold needs little of a turn's
content: the blocks model keeps its rows for readers, the search index tokenises them on its
first raw search. ``sealed_turn`` reads a stored turn's clear members (numbers, ids, roles,
times, names) straight from its payload and keeps the encrypted ``$sealed`` text with the
cipher that opens it; ``SealedTurn.contents`` opens it on first read. The blocks model holds
such a turn's rows as ``projections.blocks.LazyRows``.

The fast reading accepts only the shape the current code writes (every member present, plain
JSON types, instants as ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``, no receipt id, no tool calls, the
content under the one key the row sealed with); any other row is declined (``None``) and
decoded by ``stratagate.events.decode`` as before, so what it accepts folds to the very values
the pydantic models would give. Holding the cipher opens the same text later as at fold time,
even after an erasure destroys the key, as the decoded text held by an eager fold did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast, get_args

import orjson

from stratagate.errors import LogIntegrityError
from stratagate.events import DomainEvent, Recorded, TurnAppended
from stratagate.events.payloads import StoredRole
from stratagate.store import StoredEvent
from stratagate.store.keys import DataCipher, NamespaceKeys

TURN = "TurnAppended"
_VERSION = TurnAppended.schema_version
_SEALED_START = '{"$sealed":{'
_TURN_MEMBERS = frozenset(
    {
        "$sealed",
        "at",
        "command_id",
        "messages",
        "receipt_id",
        "thread_id",
        "thread_turn",
        "turn",
        "type",
    }
)
"""The members read here, written out: a member the model gains makes its rows decline."""
_MESSAGE_MEMBERS = frozenset(
    {"content", "created_at", "id", "name", "role", "thread_id", "tool_calls"}
)
_ROLES = frozenset(get_args(StoredRole))
_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC) - _EPOCH

MessagePart = tuple[str, str, int, str | None, str | None, int]
"""A message's clear members: id, role, ``created_at`` as microseconds since the epoch, thread
id, speaker name, and the index of its content among the sealed values."""


@dataclass(frozen=True, slots=True)
class SealedTurn:
    """A ``TurnAppended`` whose messages' content is still sealed (see the module)."""

    at: datetime
    turn: int
    thread_id: str | None
    thread_turn: int
    command_id: str | None
    parts: tuple[MessagePart, ...]
    sealed: str
    """The base64 text the cipher made of the content values."""
    cipher: DataCipher
    position: int
    receipt_id: None = None
    type: str = TURN

    def contents(self) -> list[str]:
        """Each message's content, in order; damage raises ``LogIntegrityError``."""
        try:
            texts = self.cipher.open_texts(self.sealed)
            values = [orjson.loads(texts[part[5]]) for part in self.parts]
        except LogIntegrityError as exc:
            raise self._damage(str(exc)) from exc
        except (IndexError, orjson.JSONDecodeError) as exc:
            raise self._damage(f"its sealed content does not hold the messages' ({exc})") from exc
        if not all(type(value) is str for value in values):
            raise self._damage("a message's content is not text")
        return values

    def _damage(self, what: str) -> LogIntegrityError:
        return LogIntegrityError(
            f"the {TURN} event at global position {self.position} cannot be decoded: {what}",
            self.position,
        )


def sealed_turn(row: StoredEvent, keys: NamespaceKeys, strings: dict[str, str]) -> Recorded | None:
    """``row`` as a ``SealedTurn`` when it is a current turn in the shape the module names,
    else ``None``; repeated names and ids are the objects of ``strings``."""
    payload = row.payload
    if (
        row.event_type != TURN
        or row.schema_version != _VERSION
        or not isinstance(payload, str)
        or not payload.startswith(_SEALED_START)
    ):
        return None
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    event = _turn_of(data, keys, strings, row.global_position)
    if event is None:
        return None
    # folded like a TurnAppended (``ReadModel`` maps its handlers), though not a pydantic event
    stands_for = cast("DomainEvent", event)
    return Recorded(row.global_position, row.namespace, row.stream, row.stream_version, stands_for)


def _turn_of(
    data: dict[str, Any], keys: NamespaceKeys, strings: dict[str, str], position: int
) -> SealedTurn | None:
    if data.keys() != _TURN_MEMBERS or data["type"] != TURN or data["receipt_id"] is not None:
        return None
    sealed, at = data["$sealed"], _instant(data["at"])
    turn, thread_turn = data["turn"], data["thread_turn"]
    thread_id, command_id = data["thread_id"], data["command_id"]
    if (
        type(sealed) is not dict
        or len(sealed) != 1
        or at is None
        or type(turn) is not int
        or type(thread_turn) is not int
        or turn < 1
        or thread_turn < 1
        or not _text_or_none(thread_id)
        or not _text_or_none(command_id)
        or type(data["messages"]) is not list
    ):
        return None
    ((key_id, text),) = sealed.items()
    parts = _parts(data["messages"], key_id, strings)
    if parts is None or type(text) is not str:
        return None
    with keys.lock:
        cipher = keys.opener(key_id)
    if cipher is None:  # a destroyed key: the eager decode reads the redaction
        return None
    thread_id = None if thread_id is None else strings.setdefault(thread_id, thread_id)
    return SealedTurn(at, turn, thread_id, thread_turn, command_id, parts, text, cipher, position)


def _parts(
    messages: list[Any], key_id: str, strings: dict[str, str]
) -> tuple[MessagePart, ...] | None:
    parts: list[MessagePart] = []
    for message in messages:
        if type(message) is not dict or message.keys() != _MESSAGE_MEMBERS:
            return None
        message_id, role, created = message["id"], message["role"], message["created_at"]
        thread_id, name, ref = message["thread_id"], message["name"], message["content"]
        created_at = _instant(created)
        if (
            type(message_id) is not str
            or not message_id
            or role not in _ROLES
            or created_at is None
            or not _text_or_none(thread_id)
            or not _text_or_none(name)
            or message["tool_calls"] is not None
            or type(ref) is not dict
            or ref.keys() != {"$enc", "i"}
            or ref["$enc"] != key_id
            or type(ref["i"]) is not int
            or ref["i"] < 0
        ):
            return None
        parts.append(
            (
                message_id,
                strings.setdefault(role, role),
                (created_at - _EPOCH) // _MICROSECOND,
                None if thread_id is None else strings.setdefault(thread_id, thread_id),
                None if name is None else strings.setdefault(name, name),
                ref["i"],
            )
        )
    return tuple(parts)


def _instant(value: Any) -> datetime | None:
    """A stored instant as the aware UTC datetime pydantic makes of it; ``None`` for any text
    not in the one form the code writes."""
    if type(value) is not str or not _INSTANT.fullmatch(value):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


__all__ = ["TURN", "MessagePart", "SealedTurn", "sealed_turn"]
