"""The agent tool catalogue (stratagate.integrations.tools) on an in-memory memory: schemas a
model can read, typed errors, and history pages that chain into the whole log."""

from __future__ import annotations

import orjson
import pytest

from stratagate.cli.sample import sample_bytes
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


def test_expand_block_takes_level_as_the_cli_does_and_ids_are_one_style() -> None:
    expand = find_tool("expand_block")
    assert "level" in expand.input_schema()["properties"]
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.in_memory(block_turn_size=2, **offline) as memory:
        talk = [
            "Decided: we use npm for the monorepo.",
            "Actually, switch to pnpm instead of npm, npm is too slow.",
            "Decided: Priya reviews the design on Friday.",
            "Plan: the beta ships on March 13.",
            "Decided: we host on Render, not Heroku.",
            "ok thanks",
        ]
        for line in talk:
            memory.append_turn(line, "Noted.")
        block = memory.list_blocks()[0]
        shown = expand.call(memory, {"block_id": block.id, "level": "raw"})
        assert shown["level"] == 5
        assert expand.call(memory, {"block_id": block.id, "target": 3})["level"] == 3  # as before
        with pytest.raises(InvalidInputError, match="level"):
            expand.call(memory, {"block_id": block.id, "level": "L9"})


def test_every_event_id_is_one_style_even_a_model_linked_sibling() -> None:
    """The offline extractor labels a card a sibling supersedes (the sample's Sentry decision,
    replaced in the same block): stored, it is an evt_ id like every other, and the link holds."""
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.in_memory(**offline) as memory:
        for line in sample_bytes().splitlines():
            turn = orjson.loads(line)
            memory.append_turn(turn["user"], turn["assistant"], thread_id=turn["thread_id"])
        cards = memory.list_events()
        ids = {card.id for card in cards}
        assert all(card_id.startswith("evt_") for card_id in ids), sorted(ids)
        links = [
            (other, card.id)
            for card in cards
            for other in (card.temporal.supersedes_event_ids if card.temporal else [])
        ]
        sentry = [c for c in cards if c.title.startswith("We'll use Sentry")]
        assert (
            sentry
            and sentry[0].status == "superseded"
            and (sentry[0].id, sentry[0].superseded_by) in links
        )
        for old, new in links:
            assert old in ids and memory.get_event(old).superseded_by == new
