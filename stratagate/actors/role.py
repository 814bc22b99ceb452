"""What every role has: its own stream, the version it expects, and a clock and ids."""

from __future__ import annotations

from typing import ClassVar

from projections.state import NamespaceState
from stratagate.actors.live import LiveState
from stratagate.events import DomainEvent
from stratagate.options import MemoryOptions
from stratagate.view import MemoryView


class Role:
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

    def _append(self, *events: DomainEvent) -> None:
        """Append to this role's stream with the expected version, then fold."""
        rows = self.live.append(
            self.stream,
            events,
            expected_version=self.version,
            command_id=self.options.make_id("cmd"),
        )
        self.version = rows[-1].stream_version if rows else self.version

    def refresh(self) -> int:
        """Fold whatever other roles appended since the last look."""
        return self.live.refresh()

    def recover(self) -> int:
        """Mark work found running at hydration as interrupted; returns how many jobs."""
        return 0

    def snapshot(self) -> int:
        """Write a snapshot of this role's read models; returns the position it covers."""
        self.live.snapshot()
        return self.state.position

    def digest(self) -> str:
        """Digest of this role's read models (for verify)."""
        self.refresh()
        return self.state.digest()


def error_text(exc: BaseException) -> str:
    """How a failure is written into a job: the exception type and its message."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


__all__ = ["Role", "error_text"]
