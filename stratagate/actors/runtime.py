"""What a runtime is: something that answers a namespace's messages, applying the pipeline.

``InlineRuntime`` hosts the roles in this process, ``RayRuntime`` each as a Ray actor,
``ReadOnlyRuntime`` only the read side, for audits. The façade speaks only this protocol, so
every runtime answers the same calls the same way; each is also the ``Runner`` the pipeline's
flows use (``stratagate.actors.pipeline``).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from stratagate.actors.pipeline import Runner
from stratagate.actors.registry import Handles
from stratagate.messages import Message

R = TypeVar("R")


class Runtime(Runner, Protocol):
    """Hosts the handlers of one namespace and answers messages."""

    name: str

    @property
    def handles(self) -> Handles:
        """The namespace's actors (role objects inline, ``ActorHandle``s under Ray)."""
        ...

    def send(self, message: Message[R]) -> R:
        """Answer one message: by its flow, or by its handler alone."""
        ...

    def drain(self, timeout: float | None = None) -> None:
        """Wait for background work, then finish what is ready; re-raise a background error."""
        ...

    def close(self, *, snapshot: bool) -> None:
        """Stop background work, (when asked) snapshot the read models, release the store."""
        ...


__all__ = ["Runtime"]
