"""What a runtime is: something that delivers a message to the role that handles it.

``InlineRuntime`` hosts the roles in this process; ``RayRuntime`` hosts each as a Ray actor.
The façade speaks only this protocol, so both runtimes answer the same calls the same way.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from stratagate.actors.routing import Handles
from stratagate.messages import Message

R = TypeVar("R")


class Runtime(Protocol):
    """Hosts the roles of one namespace and delivers messages to them."""

    name: str

    @property
    def handles(self) -> Handles:
        """The namespace's actors (role objects inline, ``ActorHandle``s under Ray)."""
        ...

    def send(self, message: Message[R]) -> R:
        """Deliver one message to the role that handles it and return its answer."""
        ...

    def start_pipeline(self) -> None:
        """Run seal → extract → project in the background."""
        ...

    def drain(self, timeout: float | None = None) -> None:
        """Wait for background work, then finish what is ready; re-raise a background error."""
        ...

    def reload(self) -> None:
        """Have every host drop its cached keys and fold the log again (after an erasure)."""
        ...

    def positioned_digests(self) -> list[tuple[int, dict[str, str]]]:
        """Each live state's position and the digest of each of its read models."""
        ...

    def close(self, *, snapshot: bool) -> None:
        """Stop background work and (when asked) snapshot the read models."""
        ...


__all__ = ["Runtime"]
