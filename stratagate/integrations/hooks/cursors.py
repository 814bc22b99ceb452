"""Where each transcript was last read to: a disposable cache beside the memory.

A cursor records, per namespace and transcript, the offset of the first line not yet stored
(the start of a turn still open), the stop points still ahead of it, a digest of the bytes
before the offset (a transcript rewritten or truncated since is read again from the start) and
whether turns are known to wait (a run could not store them). The receipts in the memory, not
the cursor, keep a turn from being stored twice: a lost or stale cursor only costs a re-read.
Files are written whole (temporary file, then rename) in a private directory.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from stratagate.integrations.hooks.places import database_key, private_dir

TAIL_BYTES = 256
"""How many bytes before the offset the digest covers."""


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far one transcript has been stored into one namespace."""

    namespace: str
    transcript: str
    session_id: str
    offset: int = 0
    stops: tuple[int, ...] = ()
    tail: str = ""
    waiting: bool = False
    """A run could not store this transcript's turns (the memory was busy): a later run of any
    session of the namespace stores them."""

    def moved(self, **changes: Any) -> Cursor:
        return replace(self, **changes)


def tail_digest(data: bytes) -> str:
    """The digest of the bytes that end at a cursor's offset."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class CursorStore:
    """The cursors of one database's namespaces, one small JSON file each."""

    directory: Path
    database: str

    @property
    def root(self) -> Path:
        return self.directory / "cursors" / database_key(self.database)

    def _file(self, namespace: str, transcript: str) -> Path:
        name = hashlib.sha256(f"{namespace}\0{transcript}".encode("utf-8", "surrogatepass"))
        return self.root / f"{name.hexdigest()[:32]}.json"

    def load(self, namespace: str, transcript: str, session_id: str) -> Cursor:
        """The transcript's cursor (a fresh one when none was kept or it cannot be read)."""
        fresh = Cursor(namespace, transcript, session_id)
        try:
            value = json.loads(self._file(namespace, transcript).read_bytes())
            stops = value["stops"]
            cursor = Cursor(
                namespace=namespace,
                transcript=transcript,
                session_id=str(value["session_id"]),
                offset=int(value["offset"]),
                stops=tuple(int(s) for s in stops),
                tail=str(value["tail"]),
                waiting=value["waiting"] is True,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return fresh
        return cursor if cursor.offset >= 0 else fresh

    def save(self, cursor: Cursor) -> None:
        """Keep ``cursor`` (atomically: a reader sees the old file or the new one)."""
        private_dir(self.root)  # each time: the directory may have been cleaned away meanwhile
        path = self._file(cursor.namespace, cursor.transcript)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(cursor), ensure_ascii=False))
        os.replace(temporary, path)

    def waiting(self, namespace: str) -> list[Cursor]:
        """The namespace's transcripts whose turns wait for a run that can store them."""
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob("*.json")):
            try:
                value = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if (
                isinstance(value, dict)
                and value.get("namespace") == namespace
                and value.get("waiting") is True
                and isinstance(value.get("transcript"), str)
            ):
                found.append(self.load(namespace, value["transcript"], str(value["session_id"])))
        return found


__all__ = ["TAIL_BYTES", "Cursor", "CursorStore", "tail_digest"]
