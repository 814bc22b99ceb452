"""Export a namespace's log to a ``stratagate.log.v1`` file and import it into any store.

The export copies the rows as stored (sealed content stays sealed) and the namespace's data
keys: keys the database keeps wrapped stay wrapped; bare keys are wrapped under
``STRATAGATE_MASTER_KEY`` when it is set, and written bare otherwise (then the file alone
reveals the content); destroyed keys are written as tombstones, so erased content stays
erased. It refuses a log that does not verify, and writes its file whole or not at all.

The import checks every line before the store commits anything: the chain line by line
(``stratagate.log_file``), and that every sealed payload opens with the file's keys, so an
edited key or ciphertext is refused by line number too. Rows keep their positions and hashes
when they can (same namespace name, positions still free): the copy's head hash is then the
original's, and the original's anchors verify against it. Otherwise they are chained anew at
the next free positions; ``recorded_at`` and every other column are kept either way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, NoReturn

import orjson

from stratagate.errors import (
    InvalidInputError,
    LogFileError,
    LogIntegrityError,
    MasterKeyError,
    StorageConflictError,
    UnknownIdError,
)
from stratagate.events.encryption import ENCRYPTED
from stratagate.log_file import (
    CheckedRow,
    KeyLine,
    LogHeader,
    LogReader,
    event_line,
    header_line,
    key_line,
)
from stratagate.results import LogExportReport, LogImportReport
from stratagate.store import DataKey, EventStore, StoredEvent
from stratagate.store.chain import row_fault
from stratagate.store.keys import (
    MASTER_KEY_ENV,
    DataCipher,
    MasterKey,
    keyring_for,
    master_key_from_env,
)
from stratagate.store.records import GENESIS_HASH, ImportedLog
from stratagate.timeutil import format_utc, utc_now

_PAGE = 1000
_SEALED_START = '{"' + ENCRYPTED + '":'
CHECKPOINT_EVENT = "LogCheckpointed"
"""The event that seals the log's own positions and hashes: it cannot move to new ones."""


def export_log(store: EventStore, namespace: str, path: str | os.PathLike[str]) -> LogExportReport:
    """Write ``namespace``'s log and keys to ``path`` (replaced atomically, mode 0600)."""
    store.check_head(namespace)
    head, count = _stable_head(store, namespace)
    if not count:
        raise UnknownIdError(f"namespace {namespace!r} has no log in {store.url}")
    [first] = store.read(namespace, limit=1)
    [last] = store.read(namespace, after=head - 1, limit=1)
    master = keyring_for(store).master
    keys = [_key_for_file(key, master) for key in store.load_keys(namespace)]
    header = LogHeader(
        namespace=namespace,
        keys=len(keys),
        events=count,
        first_position=first.global_position,
        head_position=head,
        head_hash=last.hash,
        exported_at=format_utc(utc_now()),
        exported_by=_exporter(),
    )
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with _private_file(partial) as out:
            out.write(header_line(header))
            for key in keys:
                out.write(key_line(key))
            written = 0
            for row in _rows_up_to(store, namespace, head):
                out.write(event_line(row))
                written += 1
            if written != count:
                raise LogIntegrityError(
                    f"namespace {namespace!r} holds {written} rows up to its head, its heads "
                    f"record counts {count}: run verify (nothing was exported)",
                    head,
                )
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    live = [key for key in keys if key.material is not None]
    return LogExportReport(
        path=str(target),
        namespace=namespace,
        events=count,
        head_position=head,
        head_hash=last.hash,
        keys=len(keys),
        erased_keys=len(keys) - len(live),
        wrapped_by=master.fingerprint if master is not None and live else _wrapped_by(live),
    )


def import_log(
    path: str | os.PathLike[str], store: EventStore, namespace: str | None = None
) -> LogImportReport:
    """Check the file at ``path`` and write its log into ``store`` as ``namespace`` (default:
    the namespace it was exported from), which must be empty there. Nothing is written unless
    every line checks."""
    with LogReader(path) as reader:
        header, key_lines = reader.header, reader.keys
    target = header.namespace if namespace is None else namespace
    if not isinstance(target, str) or not target.strip() or not target.isprintable():
        raise InvalidInputError(f"namespace must be a non-empty printable string, got {target!r}")
    keyring = keyring_for(store)
    openers, keys = _keys_for_store(Path(path), key_lines, target, keyring.master)
    keep = target == header.namespace and header.first_position > store.global_head()
    try:
        imported = _write(Path(path), header, store, target, keys, openers, keep=keep)
    except StorageConflictError:
        if not keep:
            raise
        # the positions were handed out meanwhile (or a sequence is ahead of the rows)
        imported = _write(Path(path), header, store, target, keys, openers, keep=False)
    keyring.of(target).forget()
    return LogImportReport(
        namespace=target,
        source_namespace=header.namespace,
        events=imported.rows,
        keys=len(keys),
        head_position=imported.head_position,
        head_hash=imported.head_hash,
        source_head_hash=header.head_hash,
        positions_kept=imported.positions_kept,
    )


def check_log(path: str | os.PathLike[str], namespace: str | None = None) -> int:
    """Check the file at ``path`` as ``import_log`` does (chain, keys, sealed content, with the
    master key of ``STRATAGATE_MASTER_KEY``), writing nothing; returns its event count."""
    with LogReader(path) as reader:
        target = reader.header.namespace if namespace is None else namespace
        openers, _ = _keys_for_store(Path(path), reader.keys, target, master_key_from_env())
        rebasing = target != reader.header.namespace
        return sum(1 for _ in _opened(reader, openers, rebasing=rebasing))


def _write(
    path: Path,
    header: LogHeader,
    store: EventStore,
    namespace: str,
    keys: list[DataKey],
    openers: Mapping[str, DataCipher | None],
    *,
    keep: bool,
) -> ImportedLog:
    with LogReader(path) as reader:
        if reader.header != header:
            raise LogFileError(f"line 1 of {path}: the file changed while it was imported", 1)
        rows = _opened(reader, openers, rebasing=not keep)
        return store.import_log(namespace, rows, keys, keep_positions=keep)


def _opened(
    reader: LogReader, openers: Mapping[str, DataCipher | None], *, rebasing: bool
) -> Iterator[StoredEvent]:
    """The file's checked rows, each of whose sealed content opens with the file's keys."""
    for checked in reader.rows():
        if rebasing and checked.row.event_type == CHECKPOINT_EVENT:
            _refuse(
                reader.path,
                checked,
                "it is a sealed checkpoint of the log's own positions and hashes, which an "
                "import under another namespace name, or at other positions, cannot keep: "
                "import it under its own name into a database that has not used its positions",
            )
        if checked.row.payload.startswith(_SEALED_START):
            _check_sealed(reader.path, checked, openers)
        yield checked.row


def _check_sealed(
    path: Path, checked: CheckedRow, openers: Mapping[str, DataCipher | None]
) -> None:
    try:
        sealed = orjson.loads(checked.row.payload)[ENCRYPTED]
    except (orjson.JSONDecodeError, TypeError, KeyError):
        _refuse(path, checked, "its payload is not the JSON its hash covers")
    for key_id, text in sealed.items():
        if key_id not in openers:
            _refuse(path, checked, f"its content is sealed with key {key_id!r}, not in the file")
        cipher = openers[key_id]
        if cipher is None:
            continue  # destroyed: the content reads as erased, as in the original
        try:
            cipher.open_texts(text)
        except LogIntegrityError:
            _refuse(
                path,
                checked,
                f"its content does not decrypt with the file's key {key_id!r} (the key line or "
                "the payload was edited)",
            )


def _refuse(path: Path, checked: CheckedRow, reason: str) -> NoReturn:
    raise LogFileError(
        f"line {checked.line} of {path}: event (global position {checked.row.global_position}) "
        f"{reason}; nothing was imported",
        checked.line,
    )


def _keys_for_store(
    path: Path, lines: list[KeyLine], namespace: str, master: MasterKey | None
) -> tuple[dict[str, DataCipher | None], list[DataKey]]:
    """Each key of the file as the importer opens it and as the store keeps it: bare keys are
    wrapped under this process's master key when it is set; wrapped keys need that very key."""
    openers: dict[str, DataCipher | None] = {}
    keys: list[DataKey] = []
    for number, line in enumerate(lines, start=2):
        key = line.data_key(namespace)
        if key.material is None:
            openers[key.key_id] = None
            keys.append(replace(key, wrapped=None))
            continue
        material = key.material
        if key.wrapped is not None:
            if master is None or master.fingerprint != key.wrapped:
                given = "none is set" if master is None else f"it is {master.fingerprint}"
                raise MasterKeyError(
                    f"the keys in {path} are wrapped by master key {key.wrapped}: set "
                    f"{MASTER_KEY_ENV} to that key to import them ({given}); nothing was imported"
                )
            try:
                material = master.unwrap(material, key.key_id)
            except MasterKeyError as exc:
                raise LogFileError(
                    f"line {number} of {path}: key {key.key_id!r} does not unwrap with the "
                    "master key it names (the line was edited); nothing was imported",
                    number,
                ) from exc
        elif master is not None:
            key = replace(
                key, material=master.wrap(material, key.key_id), wrapped=master.fingerprint
            )
        try:
            openers[key.key_id] = DataCipher(key.key_id, material)
        except ValueError as exc:
            raise LogFileError(
                f"line {number} of {path}: key {key.key_id!r} is not an AES key ({exc}); "
                "nothing was imported",
                number,
            ) from exc
        keys.append(key)
    return openers, keys


def _key_for_file(key: DataKey, master: MasterKey | None) -> DataKey:
    """A stored key as the file carries it: wrapped keys as they are, bare ones wrapped under
    ``master`` when there is one."""
    if key.material is None or key.wrapped is not None or master is None:
        return key
    return replace(key, material=master.wrap(key.material, key.key_id), wrapped=master.fingerprint)


def _wrapped_by(live: list[DataKey]) -> str | None:
    marks = {key.wrapped for key in live}
    return marks.pop() if len(marks) == 1 else None


def _exporter() -> str:
    """What wrote the file: this package and its version."""
    try:
        return f"stratagate {version('stratagate')}"
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "stratagate"


def _stable_head(store: EventStore, namespace: str) -> tuple[int, int]:
    """The namespace's head position and row count, read while no append landed between."""
    while True:
        head = store.head(namespace)
        count = store.count(namespace)
        if store.head(namespace) == head:
            return head, count


def _rows_up_to(store: EventStore, namespace: str, head: int) -> Iterator[StoredEvent]:
    """The namespace's rows up to ``head``, each checked to chain onto the one before."""
    prev_hash, after = GENESIS_HASH, 0
    while True:
        rows = store.read(namespace, after=after, limit=_PAGE)
        for row in rows:
            if row.global_position > head:
                return
            reason = row_fault(prev_hash, row)
            if reason:
                raise LogIntegrityError(
                    f"the log of namespace {namespace!r} breaks at global position "
                    f"{row.global_position}: {reason}; nothing was exported — run verify",
                    row.global_position,
                )
            prev_hash = row.hash
            yield row
        if len(rows) < _PAGE:
            return
        after = rows[-1].global_position


def _private_file(path: Path) -> IO[bytes]:
    """A new file only its owner can read (it holds keys), opened for binary writing."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    except OSError as exc:
        raise InvalidInputError(f"cannot write the log file {path}: {exc.strerror or exc}") from exc
    return os.fdopen(descriptor, "wb")


__all__ = ["check_log", "export_log", "import_log"]
