"""The public contract of docs/API.md: every name importable from ``stratagate``, every method with
the parameters API.md gives it (a rename here breaks users; this test says so first)."""

from __future__ import annotations

import inspect

import pytest

import stratagate
from stratagate import StrataGate

MODELS = [
    "ToolTrace",
    "RawMessage",
    "BlockSummary",
    "MemoryBlock",
    "EventTemporal",
    "MemoryWeight",
    "EventCardInput",
    "EventCard",
    "ExtractionContext",
    "ExtractionResult",
    "ElementFact",
    "ElementCard",
    "ElementProjectionChange",
    "ElementProjectionResult",
    "ElementProjectionContext",
    "ExtractionJob",
    "ElementProjectionJob",
    "RetrievalAssessment",
    "UsageReceipt",
]
FUNCTIONS = [
    "estimate_tokens",
    "condense_transcript",
    "readable_transcript",
    "deterministic_layers",
    "block_weight",
    "decayed_level",
    "normalize_level",
    "criticality_floor",
    "memory_weight",
    "search_tokens",
    "bm25_rank",
    "rrf_rank",
    "normalize_assessment",
]
ERRORS = {
    "StrataGateError": Exception,
    "StorageConflictError": Exception,
    "InvalidInputError": ValueError,
    "UnknownIdError": KeyError,
}
METHODS = {
    "append_turn": "user assistant created_at thread_id user_tool_calls assistant_tool_calls receipt_id defer_processing wait",
    "drain": "timeout",
    "resume_pending_work": "retry_skipped",
    "list_blocks": "thread_id",
    "list_events": "",
    "list_elements": "",
    "list_open_tail": "thread_id",
    "list_extraction_jobs": "",
    "list_element_projection_jobs": "",
    "list_usage_receipts": "",
    "has_ingestion_receipt": "receipt_id",
    "get_event": "event_id",
    "get_block": "block_id",
    "add_event": "event",
    "search_events": "query limit temporal_intent participants event_type happened_from happened_to",
    "search_elements": "query limit name type",
    "search_raw_memory": "query limit thread_id",
    "expand_event": "event_id",
    "expand_element": "element_id at",
    "get_block_context": "thread_id",
    "expand_block": "block_id target source",
    "assess_retrieval": "raw batch",
    "record_memory_use": "event_ids element_ids receipt_id audit",
    "event_weight": "event_id",
    "pin_event": "event_id pinned",
    "forget_event": "event_id",
    "restore_event": "event_id",
    "archive_event": "event_id",
    "erase_thread": "thread_id reason",
    "erase_event": "event_id reason",
    "erase_namespace": "reason",
    "claim_next_element_projection": "",
    "complete_element_projection": "job_id result",
    "fail_element_projection": "job_id error",
    "recall_context": "query thread_id max_events max_elements token_budget",
    "history": "since limit type",
    "verify": "anchor",
    "checkpoint": "",
    "state_at": "position search",
    "view": "",
    "import_external_memory": "document decide top_k",
    "undo_import": "batch_id",
    "close": "",
}
DEFAULTS = {
    ("search_events", "limit"): 6,
    ("search_elements", "limit"): 8,
    ("search_raw_memory", "limit"): 6,
    ("recall_context", "max_events"): 4,
    ("recall_context", "max_elements"): 4,
    ("recall_context", "token_budget"): 900,
    ("expand_block", "target"): "next",
    ("expand_block", "source"): "agent",
    ("import_external_memory", "top_k"): 5,
    ("append_turn", "wait"): True,
    ("history", "since"): 0,
    ("history", "limit"): None,
    ("history", "type"): None,
    ("verify", "anchor"): None,
}


@pytest.mark.parametrize("name", [*MODELS, *FUNCTIONS, *ERRORS, "StrataGate", "AsyncStrataGate"])
def test_importable_from_the_package(name: str) -> None:
    assert name in stratagate.__all__
    assert getattr(stratagate, name) is not None


def test_error_family() -> None:
    for name, base in ERRORS.items():
        error = getattr(stratagate, name)
        assert issubclass(error, stratagate.StrataGateError) and issubclass(error, base)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_parameters(method: str) -> None:
    parameters = list(inspect.signature(getattr(StrataGate, method)).parameters)[1:]
    assert parameters == METHODS[method].split()
    for (name, parameter), default in DEFAULTS.items():
        if name == method:
            assert (
                inspect.signature(getattr(StrataGate, method)).parameters[parameter].default
                == default
            )


def test_construction_and_properties() -> None:
    assert {"namespace", "turn", "revision", "handles"} <= {
        name for name, value in vars(StrataGate).items() if isinstance(value, property)
    }
    assert list(inspect.signature(StrataGate.open).parameters)[:2] == ["database", "namespace"]
    assert inspect.signature(StrataGate.in_memory).parameters["namespace"].default == "default"
    assert hasattr(StrataGate, "__enter__") and hasattr(StrataGate, "__exit__")
