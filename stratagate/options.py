"""The typed options of a memory object, validated once when it is opened."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from stratagate.errors import InvalidInputError
from stratagate.providers import KINDS, Option, resolve
from stratagate.timeutil import ensure_utc, utc_now

Runtime = Literal["inline", "ray"]
OnConflict = Literal["raise", "retry"]
DEFAULT_BLOCK_TURN_SIZE = 12
RAY_LOG_LEVELS = ("error", "warning", "info", "debug")


_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID4_SET = (0x8000 << 48) | (4 << 76)
"""The variant and version bits ``uuid.uuid4`` sets on 128 random bits (RFC 4122, version 4)."""


def new_id(prefix: str) -> str:
    """The default id factory: ``<prefix>_<32 hex digits>``, a random UUID's ``hex`` (version
    4, as ``uuid.uuid4`` makes it, without building the ``UUID`` object: half the cost)."""
    bits = int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET
    return f"{prefix}_{bits:032x}"


@dataclass(frozen=True)
class MemoryOptions:
    """Everything ``StrataGate.open``/``in_memory`` accept besides database and namespace.

    ``block_turn_size`` and ``block_decay_lambda`` left as ``None`` keep what the namespace
    already recorded (defaults ``DEFAULT_BLOCK_TURN_SIZE`` and ``DEFAULT_BLOCK_LAMBDA`` for a new namespace); an explicit value different
    from the recorded one is logged as a settings change.
    """

    block_turn_size: int | None = None
    block_decay_lambda: float | None = None
    summarizer: Option = None
    extractor: Option = None
    element_projector: Option = None
    """Each ``None``, a callable, or a provider name (``"offline"``, ``"openai"``: see
    ``stratagate.providers``; a name's model is built when the options are made, so a provider
    that cannot be configured fails the open)."""
    clock: Callable[[], datetime] = utc_now
    id_factory: Callable[[str], str] = new_id
    runtime: Runtime = "inline"
    persistent: bool = True
    snapshot_every: int = 1000
    """Write a read-model snapshot after at least this many new log events, and at least half
    the log's length since the previous one (0 disables periodic snapshots)."""
    ray_address: str | None = None
    ray_log_level: str = "error"
    """Ray runtime: the lowest level of Ray's own log lines (``"error"``, ``"warning"``,
    ``"info"``, ``"debug"``) when this process starts or joins Ray; the default keeps its
    start-up notices (token authentication, "Started a local Ray instance") quiet."""
    recover_on_open: bool = True
    """Mark jobs found running as interrupted when the memory opens (off for read-only tools)."""
    max_live_namespaces: int = 8
    """Ray runtime: namespaces the pooled hosts may serve at once; beyond it the least recently
    used is passivated and its place reassigned (no process is started per namespace)."""
    ray_prestart: int = 0
    """Ray runtime: start at least this many host actors up front. The directory already starts
    one per CPU of the cluster when it is created (a warm pool by default)."""
    timeline_limit: int = 200
    """Events in the timeline an extractor gets: half the ones most related to the target
    block, the rest the latest (0: every event, so the cost of extraction grows with history)."""
    max_message_chars: int = 65_536
    """The longest message content accepted (characters); a longer one is an
    ``InvalidInputError`` and nothing of its turn is appended."""
    on_conflict: OnConflict = "raise"
    """When another handle (another process) wrote the namespace after this one last looked,
    a command's append is refused with ``StaleHandleError``: ``"raise"`` gives it to the caller
    (nothing appended); ``"retry"`` catches up and decides the command again, up to
    ``pipeline.CONFLICT_ATTEMPTS`` times (servers, the CLI and hooks use it)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        size = self.block_turn_size
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
            raise InvalidInputError(f"block_turn_size must be a positive integer, got {size!r}")
        lam = self.block_decay_lambda
        if lam is not None and (
            not isinstance(lam, int | float)
            or isinstance(lam, bool)
            or not math.isfinite(lam)
            or lam < 0
        ):
            raise InvalidInputError(f"block_decay_lambda must be a finite number >= 0, got {lam!r}")
        if self.ray_log_level not in RAY_LOG_LEVELS:
            raise InvalidInputError(
                f"ray_log_level must be one of {', '.join(RAY_LOG_LEVELS)}, "
                f"got {self.ray_log_level!r}"
            )
        if self.on_conflict not in ("raise", "retry"):
            raise InvalidInputError(
                f"on_conflict must be 'raise' or 'retry', got {self.on_conflict!r}"
            )
        if self.runtime not in ("inline", "ray"):
            raise InvalidInputError(f"runtime must be 'inline' or 'ray', got {self.runtime!r}")
        for kind in KINDS:
            resolve(kind, getattr(self, kind))
        if not callable(self.clock) or not callable(self.id_factory):
            raise InvalidInputError("clock and id_factory must be callables")
        if (
            self.max_live_namespaces < 1
            or self.snapshot_every < 0
            or self.timeline_limit < 0
            or self.ray_prestart < 0
        ):
            raise InvalidInputError(
                "max_live_namespaces must be >= 1; snapshot_every, timeline_limit and "
                "ray_prestart >= 0"
            )
        limit = self.max_message_chars
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 2**31:
            raise InvalidInputError(
                f"max_message_chars must be an integer from 1 to 2**31, got {limit!r}"
            )
        if self.extra:
            raise InvalidInputError(f"unknown options: {', '.join(sorted(self.extra))}")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> MemoryOptions:
        """Options from keyword arguments; unknown names are an ``InvalidInputError``."""
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        extra = {k: v for k, v in kwargs.items() if k not in known}
        return cls(**{k: v for k, v in kwargs.items() if k in known}, extra=extra)

    def with_(self, **changes: Any) -> MemoryOptions:
        return replace(self, **changes)

    def now(self) -> datetime:
        """The clock's time, checked to be a datetime and made aware UTC."""
        value = self.clock()
        if not isinstance(value, datetime):
            raise InvalidInputError(f"clock returned {type(value).__name__}, not a datetime")
        return ensure_utc(value)

    def make_id(self, prefix: str) -> str:
        value = self.id_factory(prefix)
        if not isinstance(value, str) or not value:
            raise InvalidInputError(f"id_factory returned {value!r} for prefix {prefix!r}")
        return value


__all__ = [
    "DEFAULT_BLOCK_TURN_SIZE",
    "RAY_LOG_LEVELS",
    "MemoryOptions",
    "OnConflict",
    "Runtime",
    "new_id",
]
