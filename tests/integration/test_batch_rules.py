"""Rules inside one batch: a card may supersede an earlier card of its own extraction, and a
projection may add and replace a fact in one plan."""

from __future__ import annotations

from typing import Any

from stratagate import StrataGate


def two_step_extractor(ctx: Any) -> dict[str, Any]:
    target = ctx.target
    first = f"{target.id}-first"
    return {
        "should_extract": True,
        "reason": "a decision and its reversal",
        "events": [
            {
                "id": first,
                "title": "use Sentry",
                "summary": "crash reports go to Sentry",
                "source_block_id": target.id,
            },
            {
                "title": "own endpoint",
                "summary": "crash reports stay on our own endpoint",
                "source_block_id": target.id,
                "temporal": {"supersedes_event_ids": [first]},
            },
        ],
    }


def test_a_card_supersedes_an_earlier_card_of_its_batch() -> None:
    with StrataGate.in_memory(block_turn_size=1, extractor=two_step_extractor) as memory:
        memory.append_turn("Sentry? no, our own endpoint", "ok")
        memory.append_turn("next", "ok")
        statuses = {e.title: (e.status, e.superseded_by) for e in memory.list_events()}
        (newer,) = [e.id for e in memory.list_events() if e.title == "own endpoint"]
        assert statuses["use Sentry"] == ("superseded", newer)
        assert statuses["own endpoint"] == ("active", None)
        assert memory.verify().ok


def test_a_plan_may_add_and_replace_a_fact_in_one_batch() -> None:
    with StrataGate.in_memory(block_turn_size=1) as memory:
        memory.append_turn("crash reports", "ok")
        block = memory.list_blocks()[0]
        event = memory.add_event(
            {"title": "crash", "summary": "reports", "source_block_id": block.id}
        )
        claim = memory.claim_next_element_projection()

        def change(value: str, since: str) -> dict[str, Any]:
            return {
                "element": {"name": "app", "type": "project"},
                "operation": "set_state",
                "key": "crash_reporting",
                "value": value,
                "valid_from": since,
                "source_event_ids": [event.id],
            }

        memory.complete_element_projection(
            claim.job_id,
            {"changes": [change("Sentry", "2026-03-20"), change("own endpoint", "2026-03-21")]},
        )
        (element,) = memory.list_elements()
        assert element.current_state == {"crash_reporting": "own endpoint"}
        assert [(f.value, f.status) for f in element.facts] == [
            ("Sentry", "superseded"),
            ("own endpoint", "active"),
        ]
        assert element.facts[0].valid_to == element.facts[1].valid_from
