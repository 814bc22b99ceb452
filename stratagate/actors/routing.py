"""Which role answers which message: ARCHITECTURE.md's role table, as code.

Each writer role is the only writer of one stream; the reader answers queries from the read
models and is hosted beside the weight keeper (same process, same state), which logs the
batches its searches produce. ``STAGES`` is the pipeline a turn sets off: seal → extract →
project; each stage is idempotent ("do whatever is ready"), so running it twice, or after a
crash, is safe.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from stratagate.actors.extractor import Extractor
from stratagate.actors.projector import Projector
from stratagate.actors.reader import Reader
from stratagate.actors.role import MessageHandler, Role
from stratagate.actors.sealer import Sealer
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.messages import (
    AddEvents,
    AppendTurn,
    AppendTurns,
    ApplySettings,
    Assess,
    ClaimProjection,
    CompleteProjection,
    CurrentTurn,
    EraseEvent,
    EraseNamespace,
    EraseThread,
    EventWeight,
    ExpandEvent,
    ExtractReady,
    FailProjection,
    GetBlock,
    GetBlockContext,
    GetElement,
    GetEvent,
    GetStats,
    Govern,
    HasReceipt,
    ImportExternal,
    LiftBlock,
    ListBlocks,
    ListElements,
    ListEvents,
    ListExtractionJobs,
    ListOpenTail,
    ListProjectionJobs,
    ListUsageReceipts,
    Message,
    PlanImport,
    QueueProjections,
    Recall,
    RecordBatch,
    RecordUse,
    RunProjections,
    SealCheckpoint,
    SealReady,
    SearchElements,
    SearchEvents,
    SearchRaw,
    UndoImport,
)

RoleName = Literal["sealer", "extractor", "projector", "weights"]
Target = Literal["sealer", "extractor", "projector", "weights", "reader"]

ROLE_CLASSES: dict[RoleName, type[Role]] = {
    "sealer": Sealer,
    "extractor": Extractor,
    "projector": Projector,
    "weights": WeightKeeper,
}
"""The four actor roles of a namespace (each an actor of its own under Ray)."""

HOST: dict[Target, RoleName] = {
    "sealer": "sealer",
    "extractor": "extractor",
    "projector": "projector",
    "weights": "weights",
    "reader": "weights",
}
"""Where each target runs: the reader shares the weight keeper's process and read models."""

ROUTES: dict[type[Message[Any]], Target] = {
    # ingest stream
    ApplySettings: "sealer",
    AppendTurn: "sealer",
    AppendTurns: "sealer",
    SealReady: "sealer",
    LiftBlock: "sealer",
    # extraction stream
    ExtractReady: "extractor",
    AddEvents: "extractor",
    ImportExternal: "extractor",
    UndoImport: "extractor",
    # elements stream
    QueueProjections: "projector",
    RunProjections: "projector",
    ClaimProjection: "projector",
    CompleteProjection: "projector",
    FailProjection: "projector",
    # weights stream
    RecordBatch: "weights",
    Assess: "weights",
    RecordUse: "weights",
    Govern: "weights",
    SealCheckpoint: "weights",
    EraseThread: "weights",
    EraseEvent: "weights",
    EraseNamespace: "weights",
    # the read side
    CurrentTurn: "reader",
    GetBlock: "reader",
    ListBlocks: "reader",
    ListOpenTail: "reader",
    GetBlockContext: "reader",
    GetEvent: "reader",
    ListEvents: "reader",
    EventWeight: "reader",
    ExpandEvent: "reader",
    GetElement: "reader",
    ListElements: "reader",
    ListExtractionJobs: "reader",
    ListProjectionJobs: "reader",
    ListUsageReceipts: "reader",
    HasReceipt: "reader",
    GetStats: "reader",
    SearchEvents: "reader",
    SearchElements: "reader",
    SearchRaw: "reader",
    Recall: "reader",
    PlanImport: "reader",
}

HANDLER_CLASSES: dict[Target, type[MessageHandler]] = {
    "sealer": Sealer,
    "extractor": Extractor,
    "projector": Projector,
    "weights": WeightKeeper,
    "reader": Reader,
}

STAGES: tuple[tuple[RoleName, Message[Any]], ...] = (
    ("sealer", SealReady()),
    ("extractor", ExtractReady()),
    ("projector", RunProjections()),
)
"""The pipeline of derived work, in order."""

DOWNSTREAM: dict[RoleName, RoleName | None] = {
    "sealer": "extractor",
    "extractor": "projector",
    "projector": None,
    "weights": None,
}
WRITERS: tuple[RoleName, ...] = ("sealer", "extractor", "projector")
"""Roles that may own running jobs, and so recover at hydration."""


class Handles(NamedTuple):
    """The namespace's four actors (plain role objects inline, ``ActorHandle``s under Ray)."""

    sealer: Any
    extractor: Any
    projector: Any
    weights: Any


def route(message: Message[Any]) -> Target:
    """The target that answers ``message``."""
    target = ROUTES.get(type(message))
    if target is None:
        raise TypeError(f"no role handles {type(message).__name__}")
    return target


def stage_of(role: RoleName) -> Message[Any] | None:
    """The pipeline stage a role runs, if any."""
    return next((message for name, message in STAGES if name == role), None)


def _check_routes() -> None:
    """Every routed message has a handler in its target class, and nothing is left unrouted."""
    for message_type, target in ROUTES.items():
        if message_type not in HANDLER_CLASSES[target].handled():
            raise TypeError(f"{target} has no handler for {message_type.__name__}")
    for target, cls in HANDLER_CLASSES.items():
        for message_type in cls.handled():
            if ROUTES.get(message_type) != target:
                raise TypeError(f"{cls.__name__} handles {message_type.__name__}, routed elsewhere")


_check_routes()

__all__ = [
    "DOWNSTREAM",
    "HANDLER_CLASSES",
    "HOST",
    "ROLE_CLASSES",
    "ROUTES",
    "STAGES",
    "WRITERS",
    "Handles",
    "RoleName",
    "Target",
    "route",
    "stage_of",
]
