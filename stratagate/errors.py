"""The StrataGateError family: every failure a caller can meet, typed, with its cause kept."""

from __future__ import annotations


class StrataGateError(Exception):
    """Base of every error stratagate raises on purpose."""


class InvalidInputError(StrataGateError, ValueError):
    """Input failed validation; nothing was appended."""


class LogFileError(InvalidInputError):
    """An exported log file (``stratagate.log.v1``) is malformed or does not verify; ``line``
    is the first bad line (1 is the header) when known. Nothing was imported."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class UnknownIdError(StrataGateError, KeyError):
    """An id names nothing in this namespace."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown id"


class StorageConflictError(StrataGateError):
    """A writer's expected stream version is stale; nothing was overwritten."""


class StaleHandleError(StorageConflictError):
    """This handle decided on a state the log has moved past: another writer appended to the
    same stream (``actual_version`` is past ``expected_version``), or erased content, after the
    handle last looked (``position``). Nothing was appended; ``refresh()`` and decide again
    (``on_conflict="retry"`` does both)."""

    def __init__(
        self,
        message: str,
        *,
        namespace: str = "",
        stream: str = "",
        expected_version: int | None = None,
        actual_version: int | None = None,
        position: int | None = None,
    ) -> None:
        super().__init__(message)
        self.namespace = namespace
        self.stream = stream
        self.expected_version = expected_version
        self.actual_version = actual_version
        self.position = position

    def __reduce__(self) -> tuple[object, ...]:  # keyword-only fields survive pickling (Ray)
        return (_stale, (str(self), vars(self)))


def _stale(message: str, fields: dict[str, object]) -> StaleHandleError:
    error = StaleHandleError(message)
    vars(error).update(fields)
    return error


class KeyRaceError(StorageConflictError):
    """Another process stored a data key of the same name first: encode again with its key
    (internal; the append that needed the key retries and never reaches the caller)."""


class WriterBusyError(StorageConflictError):
    """Another live holder keeps the namespace's Ray writer lease (the Ray directory's fence
    for recycled actors); handles without Ray never raise it."""


class FencedWriterError(StorageConflictError):
    """This writer's lease was taken over (a newer epoch): its append did not land."""


class ReceiptConflictError(StorageConflictError):
    """A receipt id already names a different turn: the new turn was not appended (the same id
    with the same content is a duplicate, a no-op)."""


class StorageError(StrataGateError):
    """The event store failed (connection, integrity, I/O); the cause is chained."""


class LogIntegrityError(StorageError):
    """The stored log is damaged (a broken chain, a head that does not match its last row,
    an undecodable row); ``position`` is the first bad global position when known. Nothing is
    appended to a damaged log."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class ReadOnlyError(StorageError):
    """A write was asked of a memory or store opened read-only; nothing was written."""


class MasterKeyError(StorageError):
    """The data keys are wrapped by a master key (``STRATAGATE_MASTER_KEY``) that is missing,
    malformed or not the one they were wrapped with: no content is decrypted."""


class SchemaVersionError(StorageError):
    """The database was written by a newer table layout than this code understands."""


class ChainVerificationError(StrataGateError):
    """The hash chain or a replay does not match; carries the first bad global position."""

    def __init__(self, message: str, first_bad_position: int | None = None) -> None:
        super().__init__(message)
        self.first_bad_position = first_bad_position


class ModelError(StrataGateError):
    """A model call (summarizer, extractor, projector, assessor) failed.

    A model failure never looks like "nothing to remember": the job that called the model is
    marked failed and this error (or the callback's own exception) reaches the caller.
    """


class ModelTimeoutError(ModelError):
    """The model endpoint did not answer within the configured timeout."""


class ModelResponseError(ModelError):
    """The model answered, but not with output that validates against the expected schema."""


class DrainTimeoutError(StrataGateError, TimeoutError):
    """Background work did not become idle within the timeout given to ``drain``."""


class RuntimeUnavailableError(StrataGateError):
    """The requested runtime (for example Ray) cannot be started or reached."""


class AccessDeniedError(StrataGateError, PermissionError):
    """A server refused the request: a namespace outside its allow-list (nothing was read)."""


__all__ = [
    "AccessDeniedError",
    "ChainVerificationError",
    "DrainTimeoutError",
    "InvalidInputError",
    "KeyRaceError",
    "LogFileError",
    "MasterKeyError",
    "ModelError",
    "ModelResponseError",
    "ModelTimeoutError",
    "ReadOnlyError",
    "ReceiptConflictError",
    "RuntimeUnavailableError",
    "SchemaVersionError",
    "StaleHandleError",
    "StorageConflictError",
    "StorageError",
    "StrataGateError",
    "UnknownIdError",
]
