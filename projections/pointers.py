"""Decay pointers: each block's anchor (level, position, lift source) and each thread's latest.

A block's displayed level is computed on read from its anchor and the latest sealed block
position of its thread, so open-tail turns never age a block and a new seal ages every older
block of that thread at once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from projections.blocks import thread_key
from projections.read_model import ReadModel, handles
from stratagate.core.decay import DEFAULT_BLOCK_LAMBDA, decayed_level
from stratagate.events import (
    BlockLifted,
    BlockSealed,
    ExternalImportRecorded,
    Recorded,
    SettingsChanged,
)
from stratagate.models import LiftSource


class Pointer:
    """Where a block's decay is anchored: a slotted row (one per sealed block)."""

    __slots__ = ("anchor_level", "anchor_position", "last_lift_source", "last_lifted_at", "thread")

    def __init__(
        self,
        *,
        thread: str,
        anchor_level: int,
        anchor_position: int,
        last_lifted_at: datetime | None = None,
        last_lift_source: LiftSource | None = None,
    ) -> None:
        self.thread = thread
        self.anchor_level = anchor_level
        self.anchor_position = anchor_position
        self.last_lifted_at = last_lifted_at
        self.last_lift_source: LiftSource | None = last_lift_source

    def data(self) -> list[Any]:
        """The snapshot form: the values in ``__init__``'s order, the time as ISO text."""
        lifted = self.last_lifted_at
        return [
            self.thread,
            self.anchor_level,
            self.anchor_position,
            None if lifted is None else lifted.isoformat(),
            self.last_lift_source,
        ]

    @classmethod
    def of(cls, values: list[Any]) -> Pointer:
        """The inverse of ``data``."""
        thread, level, position, lifted, source = values
        return cls(
            thread=thread,
            anchor_level=level,
            anchor_position=position,
            last_lifted_at=None if lifted is None else datetime.fromisoformat(lifted),
            last_lift_source=source,
        )


class DecayModel(ReadModel):
    """Block pointers and per-thread latest positions."""

    name = "decay"
    version = 2
    """2: pointers as slotted rows, snapshotted as ``[block id, *Pointer.data()]`` (a restore
    built 6,000 pydantic records at 100k events)."""

    def __init__(self) -> None:
        self.lambda_ = DEFAULT_BLOCK_LAMBDA
        self.latest: dict[str, int] = {}
        self.pointers: dict[str, Pointer] = {}

    @handles(SettingsChanged)
    def _settings(self, event: SettingsChanged, _: Recorded) -> None:
        self.lambda_ = event.block_decay_lambda

    @handles(BlockSealed)
    def _sealed(self, event: BlockSealed, _: Recorded) -> None:
        key = thread_key(event.thread_id)
        self.latest[key] = event.position
        self.pointers[event.block_id] = Pointer(
            thread=key, anchor_level=5, anchor_position=event.position
        )

    @handles(ExternalImportRecorded)
    def _imported(self, event: ExternalImportRecorded, _: Recorded) -> None:
        key = f"import:{event.batch_id}"
        self.latest[key] = 1
        self.pointers[event.block_id] = Pointer(thread=key, anchor_level=5, anchor_position=1)

    @handles(BlockLifted)
    def _lifted(self, event: BlockLifted, _: Recorded) -> None:
        pointer = self.pointers[event.block_id]
        pointer.anchor_level = event.level
        pointer.anchor_position = event.anchor_position
        pointer.last_lifted_at = event.at
        pointer.last_lift_source = event.source

    def level(self, block_id: str) -> int:
        """The level a block shows now."""
        pointer = self.pointers[block_id]
        return decayed_level(
            pointer.anchor_level,
            pointer.anchor_position,
            self.latest[pointer.thread],
            self.lambda_,
        )

    def snapshot(self) -> dict[str, Any]:
        return {
            "lambda": self.lambda_,
            "latest": dict(sorted(self.latest.items())),
            "pointers": [[block_id, *p.data()] for block_id, p in self.pointers.items()],
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.lambda_ = data["lambda"]
        model.latest = dict(data["latest"])
        model.pointers = {row[0]: Pointer.of(row[1:]) for row in data["pointers"]}
        return model


__all__ = ["DecayModel", "Pointer"]
