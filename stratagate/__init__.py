"""stratagate: long-term memory for AI agents, as an event-sourced actor system.

Everything docs/API.md names is importable from here. Names load on first use (PEP 562), so a Ray
worker that imports one actor module does not pay for the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Anchor": "stratagate.anchors",
    "AppendTurnResult": "stratagate.results",
    "AppendTurnsResult": "stratagate.results",
    "AsyncStrataGate": "stratagate.async_api",
    "BlockContextEntry": "stratagate.results",
    "BlockSummary": "stratagate.models",
    "ChainVerificationError": "stratagate.errors",
    "DeterministicLayers": "stratagate.core.layers",
    "DrainTimeoutError": "stratagate.errors",
    "ElementCard": "stratagate.models",
    "ElementFact": "stratagate.models",
    "ElementHit": "stratagate.results",
    "ElementProjectionChange": "stratagate.models",
    "ElementProjectionContext": "stratagate.models",
    "ElementProjectionJob": "stratagate.models",
    "ElementProjectionResult": "stratagate.models",
    "ElementRef": "stratagate.models",
    "EventCard": "stratagate.models",
    "EventCardInput": "stratagate.models",
    "EventHit": "stratagate.results",
    "EventTemporal": "stratagate.models",
    "ExpandedEvent": "stratagate.results",
    "ExtractionContext": "stratagate.models",
    "ExtractionJob": "stratagate.models",
    "ExtractionResult": "stratagate.models",
    "HistoryRecord": "stratagate.results",
    "HitList": "stratagate.results",
    "ImportResult": "stratagate.results",
    "InvalidInputError": "stratagate.errors",
    "WriterBusyError": "stratagate.errors",
    "LogIntegrityError": "stratagate.errors",
    "ReadOnlyError": "stratagate.errors",
    "FencedWriterError": "stratagate.errors",
    "MemoryBlock": "stratagate.models",
    "MemoryView": "stratagate.read.view",
    "MemoryWeight": "stratagate.models",
    "ModelError": "stratagate.errors",
    "ModelResponseError": "stratagate.errors",
    "ModelTimeoutError": "stratagate.errors",
    "NamespaceStats": "stratagate.results",
    "RankedHit": "stratagate.core.ranking",
    "RawHit": "stratagate.results",
    "RawMessage": "stratagate.models",
    "RecallContext": "stratagate.results",
    "RecallEntry": "stratagate.results",
    "RejectedEvidenceRef": "stratagate.models",
    "ResumePendingResult": "stratagate.results",
    "RetrievalAssessment": "stratagate.models",
    "RuntimeUnavailableError": "stratagate.errors",
    "SchemaVersionError": "stratagate.errors",
    "StorageConflictError": "stratagate.errors",
    "StorageError": "stratagate.errors",
    "StrataGate": "stratagate.memory",
    "StrataGateError": "stratagate.errors",
    "TimelineEntry": "stratagate.models",
    "ToolTrace": "stratagate.models",
    "TurnInput": "stratagate.models",
    "UnknownIdError": "stratagate.errors",
    "UsageAudit": "stratagate.models",
    "UsageReceipt": "stratagate.models",
    "VerifyReport": "stratagate.results",
    "block_weight": "stratagate.core.decay",
    "bm25_rank": "stratagate.core.ranking",
    "condense_transcript": "stratagate.core.layers",
    "criticality_floor": "stratagate.core.memory_weight",
    "decayed_level": "stratagate.core.decay",
    "deterministic_layers": "stratagate.core.layers",
    "estimate_tokens": "stratagate.core.tokens",
    "memory_weight": "stratagate.core.memory_weight",
    "normalize_assessment": "stratagate.core.gate",
    "normalize_level": "stratagate.core.decay",
    "readable_transcript": "stratagate.core.layers",
    "render_raw": "stratagate.core.layers",
    "rrf_rank": "stratagate.core.ranking",
    "search_tokens": "stratagate.core.search_text",
}

if TYPE_CHECKING:
    from stratagate.anchors import Anchor
    from stratagate.async_api import AsyncStrataGate
    from stratagate.core.decay import block_weight, decayed_level, normalize_level
    from stratagate.core.gate import normalize_assessment
    from stratagate.core.layers import (
        DeterministicLayers,
        condense_transcript,
        deterministic_layers,
        readable_transcript,
        render_raw,
    )
    from stratagate.core.memory_weight import criticality_floor, memory_weight
    from stratagate.core.ranking import RankedHit, bm25_rank, rrf_rank
    from stratagate.core.search_text import search_tokens
    from stratagate.core.tokens import estimate_tokens
    from stratagate.errors import (
        ChainVerificationError,
        DrainTimeoutError,
        FencedWriterError,
        InvalidInputError,
        LogIntegrityError,
        ModelError,
        ModelResponseError,
        ModelTimeoutError,
        ReadOnlyError,
        RuntimeUnavailableError,
        SchemaVersionError,
        StorageConflictError,
        StorageError,
        StrataGateError,
        UnknownIdError,
        WriterBusyError,
    )
    from stratagate.memory import StrataGate
    from stratagate.models import (
        BlockSummary,
        ElementCard,
        ElementFact,
        ElementProjectionChange,
        ElementProjectionContext,
        ElementProjectionJob,
        ElementProjectionResult,
        ElementRef,
        EventCard,
        EventCardInput,
        EventTemporal,
        ExtractionContext,
        ExtractionJob,
        ExtractionResult,
        MemoryBlock,
        MemoryWeight,
        RawMessage,
        RejectedEvidenceRef,
        RetrievalAssessment,
        TimelineEntry,
        ToolTrace,
        TurnInput,
        UsageAudit,
        UsageReceipt,
    )
    from stratagate.read.view import MemoryView
    from stratagate.results import (
        AppendTurnResult,
        AppendTurnsResult,
        BlockContextEntry,
        ElementHit,
        EventHit,
        ExpandedEvent,
        HistoryRecord,
        HitList,
        ImportResult,
        NamespaceStats,
        RawHit,
        RecallContext,
        RecallEntry,
        ResumePendingResult,
        VerifyReport,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stratagate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Anchor",
    "AppendTurnResult",
    "AppendTurnsResult",
    "AsyncStrataGate",
    "BlockContextEntry",
    "BlockSummary",
    "ChainVerificationError",
    "DeterministicLayers",
    "DrainTimeoutError",
    "ElementCard",
    "ElementFact",
    "ElementHit",
    "ElementProjectionChange",
    "ElementProjectionContext",
    "ElementProjectionJob",
    "ElementProjectionResult",
    "ElementRef",
    "EventCard",
    "EventCardInput",
    "EventHit",
    "EventTemporal",
    "ExpandedEvent",
    "ExtractionContext",
    "ExtractionJob",
    "ExtractionResult",
    "FencedWriterError",
    "HistoryRecord",
    "HitList",
    "ImportResult",
    "InvalidInputError",
    "LogIntegrityError",
    "MemoryBlock",
    "MemoryView",
    "MemoryWeight",
    "ModelError",
    "ModelResponseError",
    "ModelTimeoutError",
    "NamespaceStats",
    "RankedHit",
    "RawHit",
    "RawMessage",
    "ReadOnlyError",
    "RecallContext",
    "RecallEntry",
    "RejectedEvidenceRef",
    "ResumePendingResult",
    "RetrievalAssessment",
    "RuntimeUnavailableError",
    "SchemaVersionError",
    "StorageConflictError",
    "StorageError",
    "StrataGate",
    "StrataGateError",
    "TimelineEntry",
    "ToolTrace",
    "TurnInput",
    "UnknownIdError",
    "UsageAudit",
    "UsageReceipt",
    "VerifyReport",
    "WriterBusyError",
    "__version__",
    "block_weight",
    "bm25_rank",
    "condense_transcript",
    "criticality_floor",
    "decayed_level",
    "deterministic_layers",
    "estimate_tokens",
    "memory_weight",
    "normalize_assessment",
    "normalize_level",
    "readable_transcript",
    "render_raw",
    "rrf_rank",
    "search_tokens",
]
