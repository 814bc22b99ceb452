"""The bad-input campaign of issue 21, repeatable: every public method of ``StrataGate``, each
argument in turn given each hostile value (wrong types, None, scalars where lists go, huge
and negative numbers, NaN, lone surrogates, NUL, 100,000-character ids, 5,000-deep nesting,
bytes, objects), the other arguments valid. Each call ends ``ok`` (a result), ``typed`` (a
``StrataGateError``) or ``raw`` (anything else: a bug); a refused call must leave the revision
as it was. Prints the counts and every raw one; writes JSON; exits 1 on a raw error.

    python scripts/bad_inputs.py [--out bad_inputs.json]
    PYTHONPATH=/path/to/other/checkout python scripts/bad_inputs.py   # another version's counts
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchkit import write_report

from stratagate import StrataGate, StrataGateError


def deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


HOSTILE: dict[str, Any] = {
    "None": None,
    "True": True,
    "0": 0,
    "-1": -1,
    "2**70": 2**70,
    "1.5": 1.5,
    "nan": math.nan,
    "inf": math.inf,
    "empty": "",
    "space": " ",
    "NUL": "a\x00b",
    "surrogate": "x\ud800y",
    "100k chars": "x" * 100_000,
    "bytes": b"bytes",
    "list": ["a", 1],
    "dict": {"a": 1},
    "deep list": deep(5000),
    "deep dict": deep_dict(5000),
    "object": object(),
    "set": {"a"},
}


def calls(ids: dict[str, str]) -> dict[str, tuple[Callable[..., Any], dict[str, Any]]]:
    """Each public method with valid arguments (by name) to vary one at a time."""
    event, block, element = ids["event"], ids["block"], ids["element"]
    turn = {"user": "u", "assistant": "a"}
    card = {"title": "t", "summary": "s", "source_block_id": block, "source_message_ids": []}
    return {
        "append_turn": (
            lambda m, **k: m.append_turn(**k),
            {"user": "hello", "assistant": "hi", "created_at": None, "thread_id": "t",
             "user_tool_calls": None, "assistant_tool_calls": None, "receipt_id": None,
             "defer_processing": True, "wait": True},
        ),
        "append_turns": (
            lambda m, **k: m.append_turns(**k),
            {"turns": [turn], "defer_processing": True, "wait": True},
        ),
        "drain": (lambda m, **k: m.drain(**k), {"timeout": 5.0}),
        "resume_pending_work": (lambda m, **k: m.resume_pending_work(**k), {"retry_skipped": False}),
        "list_blocks": (lambda m, **k: m.list_blocks(**k), {"thread_id": "t"}),
        "list_open_tail": (lambda m, **k: m.list_open_tail(**k), {"thread_id": "t"}),
        "has_ingestion_receipt": (lambda m, **k: m.has_ingestion_receipt(**k), {"receipt_id": "r"}),
        "get_event": (lambda m, **k: m.get_event(**k), {"event_id": event}),
        "get_block": (lambda m, **k: m.get_block(**k), {"block_id": block}),
        "add_event": (lambda m, **k: m.add_event(**k), {"event": card}),
        "add_events": (lambda m, **k: m.add_events(**k), {"events": [card]}),
        "event_weight": (lambda m, **k: m.event_weight(**k), {"event_id": event}),
        "pin_event": (lambda m, **k: m.pin_event(**k), {"event_id": event, "pinned": True}),
        "forget_event": (lambda m, **k: m.forget_event(**k), {"event_id": event}),
        "restore_event": (lambda m, **k: m.restore_event(**k), {"event_id": event}),
        "archive_event": (lambda m, **k: m.archive_event(**k), {"event_id": event}),
        "search_events": (
            lambda m, **k: m.search_events(**k),
            {"query": "hello", "limit": 3, "temporal_intent": None, "participants": None,
             "event_type": None, "happened_from": None, "happened_to": None},
        ),
        "search_elements": (
            lambda m, **k: m.search_elements(**k),
            {"query": "hello", "limit": 3, "name": None, "type": None},
        ),
        "search_raw_memory": (
            lambda m, **k: m.search_raw_memory(**k), {"query": "hello", "limit": 3, "thread_id": None}
        ),
        "expand_event": (lambda m, **k: m.expand_event(**k), {"event_id": event}),
        "expand_element": (lambda m, **k: m.expand_element(**k), {"element_id": element, "at": None}),
        "get_block_context": (lambda m, **k: m.get_block_context(**k), {"thread_id": "t"}),
        "expand_block": (
            lambda m, **k: m.expand_block(**k), {"block_id": block, "target": "next", "source": "agent"}
        ),
        "assess_retrieval": (
            lambda m, **k: m.assess_retrieval(**k),
            {"raw": {"verdict": "insufficient"}, "batch": [event]},
        ),
        "record_memory_use": (
            lambda m, **k: m.record_memory_use(**k),
            {"event_ids": [event], "element_ids": [], "receipt_id": "use-1", "audit": None},
        ),
        "recall_context": (
            lambda m, **k: m.recall_context(**k),
            {"query": "hello", "thread_id": None, "max_events": 4, "max_elements": 4,
             "token_budget": 900},
        ),
        "complete_element_projection": (
            lambda m, **k: m.complete_element_projection(**k),
            {"job_id": "proj_x", "result": {"reason": "r", "changes": []}},
        ),
        "fail_element_projection": (
            lambda m, **k: m.fail_element_projection(**k), {"job_id": "proj_x", "error": "e"}
        ),
        "import_external_memory": (
            lambda m, **k: m.import_external_memory(**k),
            {"document": {"format": "stratagate.external-memory.v2", "source": "s",
                          "items": [{"text": "a note"}]}, "decide": None, "top_k": 5},
        ),
        "undo_import": (lambda m, **k: m.undo_import(**k), {"batch_id": "import_x"}),
        "history": (lambda m, **k: m.history(**k), {"since": 0}),
        "verify": (lambda m, **k: m.verify(**k), {"anchor": None}),
        "state_at": (lambda m, **k: m.state_at(**k), {"position": 1, "search": True}),
        "erase_event": (lambda m, **k: m.erase_event(**k), {"event_id": "evt_none", "reason": "r"}),
        "erase_thread": (lambda m, **k: m.erase_thread(**k), {"thread_id": "nope", "reason": "r"}),
    }  # fmt: skip


def outcome(memory: StrataGate, call: Callable[..., Any], kwargs: dict[str, Any]) -> str:
    before = memory.revision
    try:
        call(memory, **kwargs)
    except StrataGateError:
        if memory.revision != before:
            return "moved"  # refused, yet the log changed: a bug too
        return "typed"
    except Exception as exc:  # what this campaign hunts
        return f"raw {type(exc).__name__}: {' '.join(str(exc).split())[:80]}"
    return "ok"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="bad_inputs.json")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    raw: list[str] = []
    with tempfile.TemporaryDirectory() as root:
        memory = StrataGate.open(Path(root) / "bad.db", "bad", block_turn_size=1,
                                 summarizer="offline", extractor="offline",
                                 element_projector="offline")  # fmt: skip
        try:
            for text in (
                "We decided to move hosting to Render on Tuesday.",
                "Marta owns the beta.",
            ):
                memory.append_turn(text, "Noted: Render it is.", thread_id="t")
            block = memory.list_blocks()[0].id
            if not memory.list_events():
                memory.add_event({"title": "Render", "summary": "hosting moves to Render",
                                  "source_block_id": block, "source_message_ids": []})  # fmt: skip
            memory.drain()
            elements = memory.list_elements()
            ids = {
                "event": memory.list_events()[0].id,
                "block": block,
                "element": elements[0].id if elements else "elem_none",
            }
            for name, (call, valid) in calls(ids).items():
                for argument in valid:
                    for label, value in HOSTILE.items():
                        result = outcome(memory, call, {**valid, argument: value})
                        kind = result.split(" ")[0]
                        totals[kind] += 1
                        if kind in ("raw", "moved"):
                            raw.append(f"{name}({argument}={label}): {result}")
        finally:
            try:
                memory.close()
            except Exception as exc:  # a campaign that broke the memory says so
                raw.append(f"close: raw {type(exc).__name__}: {exc}")
    print(
        f"calls: {sum(totals.values())}  "
        + "  ".join(f"{k}: {v}" for k, v in sorted(totals.items()))
    )
    for line in raw:
        print("  " + line)
    path = write_report("bad_inputs", args.out, totals=dict(totals), raw=raw)
    print(f"wrote {path}")
    return 1 if raw else 0


if __name__ == "__main__":
    sys.exit(main())
