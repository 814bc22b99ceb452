"""A SQLite file's snapshot payloads, kept in files beside it, out of the turns' write-ahead log.

A snapshot's payload (megabytes) stored in its row went through the write-ahead log the turns
commit to, inside the writers' queue: every append waited for its write and its flush
(docs/BENCHMARKS.md, "Round 3, session 8"). Here the payload goes to a file of its own in
``<database>.snapshots/``, written and flushed beside the writers, and the row keeps position,
digest and a reference naming the file by the payload's SHA-256. A file that is missing, or no
longer has that hash, reads as no snapshot at all (a cache: the next open replays the log),
never as other data. A file is overwritten with zeros and flushed before it is removed, as
``secure_delete`` does for the database's freed pages, so neither a replaced nor an erased
snapshot leaves a copy behind. Rows written before (a payload in the row) are read as they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path

from stratagate.errors import StorageError
from stratagate.store.engines import make_private_dirs

REFERENCE = b"stratagate-snapshot-file/1 "
"""How a row's payload that names a file begins (a payload itself begins with its hash line
or with the sealed-blob magic, never with this)."""

_ZEROS = bytes(1 << 20)


def _tag(text: str, size: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:size]


class SnapshotFiles:
    """The files of ``<database>.snapshots/``: one per stored snapshot, named
    ``<namespace tag>-<key tag>-<payload SHA-256>``."""

    def __init__(self, database: str) -> None:
        self.directory = Path(f"{database}.snapshots")

    def write(self, namespace: str, key: str, payload: bytes) -> bytes:
        """Write ``payload`` to its file and flush it (a temporary name, renamed once on
        disk); the reference the row keeps."""
        name = f"{_prefix(namespace, key)}{hashlib.sha256(payload).hexdigest()}"
        temporary = self.directory / f"{_prefix(namespace, key)}{uuid.uuid4().hex}.tmp"
        try:
            make_private_dirs(self.directory)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with memoryview(payload) as view:
                    written = 0
                    while written < len(view):
                        written += os.write(descriptor, view[written:])
                os.fdatasync(descriptor)
            finally:
                os.close(descriptor)
            os.replace(temporary, self.directory / name)
            self._flush_directory()
        except OSError as exc:
            with contextlib.suppress(StorageError):
                _remove(temporary)
            raise StorageError(f"cannot write a snapshot file in {self.directory}: {exc}") from exc
        return REFERENCE + name.encode()

    def read(self, stored: bytes) -> bytes | None:
        """The payload a row's ``stored`` bytes hold or name; ``None`` when the file named is
        missing, unreadable or no longer has its hash."""
        if not stored.startswith(REFERENCE):
            return stored
        path = self._named(stored)
        if path is None:
            return None
        try:
            payload = path.read_bytes()
        except OSError:
            return None
        if hashlib.sha256(payload).hexdigest() != path.name.rpartition("-")[2]:
            return None
        return payload

    def discard(self, namespace: str, key: str | None = None, *, keep: bytes = b"") -> None:
        """Zero and remove the files of ``namespace`` (of its snapshot ``key`` alone when
        given, unfinished ones left to their writer) but the one ``keep`` names."""
        prefix = _prefix(namespace, key) if key is not None else f"{_tag(namespace, 32)}-"
        kept = keep[len(REFERENCE) :].decode("ascii", "replace")
        try:
            names = [entry.name for entry in os.scandir(self.directory)]
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(
                f"cannot list the snapshot files in {self.directory}: {exc}"
            ) from exc
        for name in names:
            if name.startswith(prefix) and name != kept and (key is None or "." not in name):
                _remove(self.directory / name)

    def remove(self, stored: bytes) -> None:
        """Zero and remove the file ``stored`` names, if it names one."""
        path = self._named(stored)
        if path is not None:
            _remove(path)

    def _named(self, stored: bytes) -> Path | None:
        """The file a reference names (``None``: not a reference, or not a file's name)."""
        if not stored.startswith(REFERENCE):
            return None
        name = stored[len(REFERENCE) :].decode("ascii", "replace")
        if not name or "/" in name or name.startswith("."):
            return None
        return self.directory / name

    def _flush_directory(self) -> None:
        descriptor = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _prefix(namespace: str, key: str) -> str:
    return f"{_tag(namespace, 32)}-{_tag(key, 16)}-"


def _remove(path: Path) -> None:
    """Overwrite ``path`` with zeros, flush, and unlink it (gone already: nothing to do)."""
    try:
        descriptor = os.open(path, os.O_WRONLY)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot remove the snapshot file {path}: {exc}") from exc
    try:
        left = os.fstat(descriptor).st_size
        while left > 0:
            left -= os.write(descriptor, _ZEROS[: min(left, len(_ZEROS))])
        os.fdatasync(descriptor)
    finally:
        os.close(descriptor)
    path.unlink(missing_ok=True)


__all__ = ["REFERENCE", "SnapshotFiles"]
