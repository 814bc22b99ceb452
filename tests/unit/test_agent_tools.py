"""The agent tool catalogue (stratagate.integrations.tools) on an in-memory memory: schemas a
model can read, typed errors, and history pages that chain into the whole log."""

from __future__ import annotations

import pytest

from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.integrations.tools import TOOLS, find_tool
from stratagate.memory import StrataGate


def test_every_tool_and_argument_is_described_for_a_model() -> None:
    for tool in TOOLS:
        schema = tool.input_schema()
        assert len(tool.description) > 40 and schema["type"] == "object"
        assert schema.get("additionalProperties") is False
        for name, spec in schema["properties"].items():
            assert spec.get("description"), (tool.name, name)


def test_bad_arguments_and_unknown_ids_are_typed() -> None:
    with StrataGate.in_memory() as memory:
        with pytest.raises(InvalidInputError, match=r"^search_events: limit: "):
            find_tool("search_events").call(memory, {"query": "x", "limit": 51})
        with pytest.raises(InvalidInputError, match=r"^pin_event: event_id: Field required"):
            find_tool("pin_event").call(memory, {})
        with pytest.raises(UnknownIdError, match="unknown event id"):
            find_tool("forget_event").call(memory, {"event_id": "evt_x"})
        with pytest.raises(UnknownIdError, match="no tool named 'rm'"):
            find_tool("rm")
        with pytest.raises(InvalidInputError, match="limit must be a positive integer"):
            memory.history(0, limit=0)


def test_history_pages_chain_into_the_whole_log() -> None:
    with StrataGate.in_memory(block_turn_size=2) as memory:
        for i in range(7):
            memory.append_turn(f"turn {i}", "ok")
        whole = memory.history()
        seen, since = [], 0
        while True:
            page = find_tool("history").call(memory, {"since": since, "limit": 3})
            seen += [record["position"] for record in page["records"]]
            assert len(page["records"]) <= 3
            if page["next_since"] is None:
                break
            since = page["next_since"]
        assert seen == [record.position for record in whole] and len(whole) > 6
        assert memory.history(whole[1].position, limit=2) == whole[2:4]


def test_what_the_tools_say_about_delayed_extraction_holds() -> None:
    """append_turn and search_events tell an agent when events appear: check the numbers."""
    append, search = find_tool("append_turn"), find_tool("search_events")
    assert "after 24 turns" in append.description and "12 turns" in append.description
    assert "search_raw_memory" in append.description and "search_raw_memory" in search.description
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.in_memory(**offline) as memory:
        for turn in range(23):
            said = {
                "user": f"Decided: we ship build {turn} with pnpm on Friday.",
                "assistant": "ok",
            }
            assert append.call(memory, said)["extracted_event_ids"] == []
        assert find_tool("search_raw_memory").call(memory, {"query": "build 0"})["hits"]
        assert search.call(memory, {"query": "pnpm"})["hits"] == []
        last = append.call(memory, {"user": "Decided: pnpm it is.", "assistant": "ok"})
        assert last["extracted_event_ids"]  # the 24th turn seals block 2: block 1 is extracted
        assert search.call(memory, {"query": "pnpm"})["hits"]
