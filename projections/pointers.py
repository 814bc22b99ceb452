"""Decay pointers: each block's anchor (level, position, lift source) and each thread's latest.

A block's displayed level is computed on read from its anchor and the latest sealed block
position of its thread, so open-tail turns never age a block and a new seal ages every older
block of that thread at once.
"""

from __future__ import annotations

from typing import Any, Self

from projections.blocks import thread_key
from projections.read_model import ReadModel, Record, dump_records, handles, load_records
from stratagate.core.decay import DEFAULT_BLOCK_LAMBDA, decayed_level
from stratagate.events import (
    BlockLifted,
    BlockSealed,
    ExternalImportRecorded,
    Recorded,
    SettingsChanged,
)
from stratagate.models import LiftSource, UtcDatetime


class Pointer(Record):
    """Where a block's decay is anchored."""

    thread: str
    anchor_level: int
    anchor_position: int
    last_lifted_at: UtcDatetime | None = None
    last_lift_source: LiftSource | None = None


class DecayModel(ReadModel):
    """Block pointers and per-thread latest positions."""

    name = "decay"

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
            "pointers": dump_records(self.pointers, Pointer),
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.lambda_ = data["lambda"]
        model.latest = dict(data["latest"])
        model.pointers = load_records(Pointer, data["pointers"])
        return model


__all__ = ["DecayModel", "Pointer"]
