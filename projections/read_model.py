"""What every read model is: a fold over recorded domain events with a digest and snapshots.

A read model applies events in log order (``apply``), answers queries, and can be captured
(``snapshot``) and rebuilt (``restore``) exactly. ``digest`` is a SHA-256 over the canonical
JSON of its snapshot, so two models with the same digest hold the same content: that is how
live == replay == snapshot + tail is checked.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter

from projections.sealed_turns import SealedTurn
from stratagate.events import DomainEvent, Recorded, TurnAppended, canonical_json

Handler = Callable[..., None]
H = TypeVar("H", bound=Handler)
R = TypeVar("R", bound=BaseModel)


def handles(*event_types: type[DomainEvent]) -> Callable[[H], H]:
    """Mark a method as the fold step of the given event types."""

    def deco(fn: H) -> H:
        fn.__dict__.setdefault("_handles", []).extend(event_types)
        return fn

    return deco


class ReadModel:
    """Base of the read models: dispatches ``apply`` to the ``@handles`` methods."""

    name: ClassVar[str]
    version: ClassVar[int] = 1
    """Bumped whenever the snapshot shape changes: older snapshots are then ignored."""
    keyed_sections: ClassVar[frozenset[str]] = frozenset()
    """Keys of ``snapshot`` whose value is a list of ``[key, ...]`` rows that ``restore`` may
    read a chunk at a time (``projections.lazy.Sections.keyed``): their keys are stored too."""

    _handlers: ClassVar[dict[type, list[Handler]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        methods: dict[str, Any] = {}  # by name, so a subclass's override replaces the base's
        for klass in reversed(cls.__mro__):
            methods.update(vars(klass))
        table: dict[type, list[Handler]] = {}
        for attr in methods.values():
            for event_type in getattr(attr, "_handles", ()):
                table.setdefault(event_type, []).append(attr)
        if TurnAppended in table:  # a replay's turn with its content sealed folds the same way
            table[SealedTurn] = table[TurnAppended]
        cls._handlers = table

    def bind(self, models: dict[str, ReadModel]) -> None:
        """Give the model read access to the models folded before it (the default: none)."""

    def apply(self, recorded: Recorded) -> None:
        """Fold one recorded event into the model (events it does not handle are ignored)."""
        for handler in self._handlers.get(type(recorded.event), ()):
            handler(self, recorded.event, recorded)

    def index_some(self, limit: int) -> bool:
        """Do up to ``limit`` items of the work the model defers to its first read, as that
        read would; whether any is left (the default: none deferred). A background snapshot
        job calls it between short pauses, so ``snapshot`` does not do it all at once."""
        return False

    def snapshot(self) -> dict[str, Any]:
        """The model's full content as JSON-able data (canonical: stable order)."""
        raise NotImplementedError

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        """A model equal to the one ``data`` was taken from."""
        raise NotImplementedError

    def digest(self) -> str:
        """SHA-256 of the canonical snapshot text."""
        return data_digest(self.snapshot())


class Record(BaseModel):
    """Mutable state record of a read model; dumps to and restores from canonical JSON."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)


def data_digest(data: Any) -> str:
    """SHA-256 of the canonical JSON of a model's snapshot data."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


@functools.cache
def _pairs(model: type[BaseModel]) -> TypeAdapter[list[tuple[str, Any]]]:
    return TypeAdapter(list[tuple[str, model]])  # type: ignore[valid-type]


def dump_records(records: Mapping[str, R], model: type[R]) -> str:
    """An id → record map as JSON text of ``[key, record]`` pairs, in its order.

    Text, not Python lists: pydantic writes and (in ``load_records``) reads it in one pass of
    its compiled core, which is what makes snapshots much cheaper than replaying the log."""
    return _pairs(model).dump_json(list(records.items())).decode()


def load_records(model: type[R], text: str) -> dict[str, R]:
    """The inverse of ``dump_records``."""
    return dict(_pairs(model).validate_json(text))


__all__ = [
    "ReadModel",
    "Record",
    "data_digest",
    "dump_records",
    "handles",
    "load_records",
]
