"""The exported log file, ``stratagate.log.v1``: one namespace's log as self-describing JSONL.

Line 1 is the header (``kind: "header"``): the format, the namespace, how many key and event
lines follow, the first and last global position and the chain hash of the last row (the head
hash, the value an anchor of the namespace records). Then one line per data key
(``kind: "key"``: its id, its material as base64 — wrapped under a master key, whose
fingerprint ``wrapped`` names, or bare — or ``null`` for a destroyed key), then one line per
event (``kind: "event"``): every column of its ``stratagate_events`` row as stored, ``payload``
being the exact canonical JSON text the chain hashed (sealed content stays sealed).

Reading checks the file line by line, as ``stratagate.store.chain`` checks a stored log: each
event line must chain onto the one before it, carry the header's namespace, a rising position
and its stream's next version, and the last one must be the header's head. The first line that
does not is reported by number (``LogFileError``). Everything here but the file access is pure.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, NoReturn

import orjson
from pydantic import ConfigDict, ValidationError

from stratagate.errors import LogFileError
from stratagate.formats.input_files import InputFileError, open_input_file
from stratagate.models import Model
from stratagate.store.chain import row_fault
from stratagate.store.records import GENESIS_HASH, DataKey, StoredEvent

LOG_FORMAT: Literal["stratagate.log.v1"] = "stratagate.log.v1"


class _Line(Model):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class LogHeader(_Line):
    """Line 1: what the file holds and where the log it copies ends."""

    kind: Literal["header"] = "header"
    format: Literal["stratagate.log.v1"] = LOG_FORMAT
    namespace: str
    keys: int
    events: int
    first_position: int
    head_position: int
    head_hash: str
    exported_at: str
    exported_by: str
    """The stratagate version that wrote the file."""


class KeyLine(_Line):
    """One data key of the namespace (``material`` ``None``: destroyed, its content erased)."""

    kind: Literal["key"] = "key"
    key_id: str
    material: str | None
    wrapped: str | None
    created_at: str
    destroyed_at: str | None = None

    @classmethod
    def of(cls, key: DataKey) -> KeyLine:
        material = None if key.material is None else base64.b64encode(key.material).decode()
        return cls(
            key_id=key.key_id,
            material=material,
            wrapped=key.wrapped,
            created_at=key.created_at,
            destroyed_at=key.destroyed_at,
        )

    def data_key(self, namespace: str) -> DataKey:
        """The key as a row of ``namespace`` (material decoded)."""
        material = None
        if self.material is not None:
            try:
                material = base64.b64decode(self.material, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(f"the material of key {self.key_id!r} is not base64") from exc
        return DataKey(
            namespace, self.key_id, material, self.wrapped, self.created_at, self.destroyed_at
        )


class EventLine(_Line):
    """One row of ``stratagate_events``, every column as stored."""

    kind: Literal["event"] = "event"
    global_position: int
    namespace: str
    stream: str
    stream_version: int
    event_id: str
    event_type: str
    schema_version: int
    recorded_at: str
    payload: str
    prev_hash: str
    hash: str

    def row(self) -> StoredEvent:
        return StoredEvent(
            self.global_position,
            self.namespace,
            self.stream,
            self.stream_version,
            self.event_id,
            self.event_type,
            self.schema_version,
            self.recorded_at,
            self.payload,
            self.prev_hash,
            self.hash,
        )


def header_line(header: LogHeader) -> bytes:
    """The header as one line of the file."""
    return _line(header)


def key_line(key: DataKey) -> bytes:
    """A data key as one line of the file."""
    return _line(KeyLine.of(key))


def event_line(row: StoredEvent) -> bytes:
    """A stored row as one line of the file (``kind`` first, then its columns in order)."""
    return orjson.dumps({"kind": "event", **{name: getattr(row, name) for name in _COLUMNS}}) + (
        b"\n"
    )


_COLUMNS = tuple(StoredEvent.__dataclass_fields__)


def _line(model: _Line) -> bytes:
    return orjson.dumps(model.model_dump()) + b"\n"


@dataclass(frozen=True, slots=True)
class CheckedRow:
    """An event line that chains onto the lines before it, with its line number."""

    line: int
    row: StoredEvent


MAX_LOG_BYTES = 1 << 40
"""A log file is read line by line (streamed): only absurd sizes are refused unread."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""One event's line: far above any payload the store accepts."""


class LogReader:
    """An exported log being read: the header and keys at once, the events as they are
    checked (``rows``). Use it as a context manager; it owns the open file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:  # a regular file only: a FIFO or /dev/zero would hang or never end a line
            self._file: IO[bytes] = open_input_file(self.path, "log file", limit=MAX_LOG_BYTES)
        except InputFileError as exc:
            raise LogFileError(str(exc), line=None) from exc
        self._line = 0
        try:
            self.header = self._parse(LogHeader, "the header")
            self.keys = [self._key() for _ in range(self.header.keys)]
        except BaseException:
            self._file.close()
            raise

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def rows(self) -> Iterator[CheckedRow]:
        """Every event line, each checked against the ones before it; at the end, the last
        one must be the header's head. Raises ``LogFileError`` at the first line that fails."""
        header = self.header
        prev_hash, last_position, count = GENESIS_HASH, 0, 0
        versions: dict[str, int] = {}
        for _ in range(header.events):
            number, event = self._next(EventLine, "an event")
            row = event.row()
            where = f"event {count + 1} (global position {row.global_position})"
            if row.namespace != header.namespace:
                self._fail(number, f"{where} is of namespace {row.namespace!r}, not the header's")
            if row.global_position <= last_position:
                self._fail(number, f"{where} does not follow position {last_position}")
            expected = versions.get(row.stream, 0) + 1
            if row.stream_version != expected:
                self._fail(
                    number,
                    f"{where} is version {row.stream_version} of stream {row.stream!r}, "
                    f"not its next one ({expected})",
                )
            reason = row_fault(prev_hash, row)
            if reason:
                self._fail(number, f"{where}: {reason}")
            prev_hash, last_position, count = row.hash, row.global_position, count + 1
            versions[row.stream] = expected
            if count == 1 and row.global_position != header.first_position:
                self._fail(number, f"{where} is not the header's first position")
            yield CheckedRow(number, row)
        if (last_position, prev_hash) != (header.head_position, header.head_hash):
            self._fail(
                1,
                f"the last event (global position {last_position}) is not the header's head "
                f"(position {header.head_position}, hash {header.head_hash[:12]}…)",
            )
        if self._read_line().strip():
            self._fail(self._line, f"the header counts {header.events} events; more lines follow")

    def _key(self) -> KeyLine:
        number, key = self._next(KeyLine, "a data key")
        try:
            key.data_key(self.header.namespace)
        except ValueError as exc:
            self._fail(number, str(exc))
        return key

    def _parse(self, model: type[Any], what: str) -> Any:
        return self._next(model, what)[1]

    def _read_line(self) -> bytes:
        self._line += 1
        line = self._file.readline(MAX_LINE_BYTES + 1)
        if len(line) > MAX_LINE_BYTES:
            self._fail(self._line, f"the line is longer than {MAX_LINE_BYTES} bytes")
        return line

    def _next(self, model: type[Any], what: str) -> tuple[int, Any]:
        text = self._read_line()
        number = self._line
        if not text:
            self._fail(number, f"the file ends where {what} line was due (truncated)")
        try:
            return number, model.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            place = ".".join(str(part) for part in first["loc"]) or "the line"
            if number == 1 and model is LogHeader:
                detail = f"not a {LOG_FORMAT} header ({place}: {first['msg']})"
            else:
                detail = f"not {what} line ({place}: {first['msg']})"
            self._fail(number, detail)

    def _fail(self, line: int, reason: str) -> NoReturn:
        raise LogFileError(f"line {line} of {self.path}: {reason}; nothing was imported", line=line)


__all__ = [
    "LOG_FORMAT",
    "CheckedRow",
    "EventLine",
    "KeyLine",
    "LogHeader",
    "LogReader",
    "event_line",
    "header_line",
    "key_line",
]
