"""A role folds its own appends from the events in hand; that must equal replaying the log.

What the log stores is canonical JSON (sorted keys), so anything an event holds in another
order — tool-call arguments and results, search options — must already be canonical when the
event is built, or the live read models would differ from the replayed ones.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.replay import replay
from stratagate import StrataGate

KEYS = st.sampled_from(["zeta", "alpha", "mid", "beta", "omega"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=6,
)


@settings(max_examples=30)
@given(
    arguments=st.dictionaries(KEYS, JSON, max_size=5),
    result=JSON,
    limit=st.integers(1, 9),
)
def test_live_state_equals_replay_whatever_the_key_order(
    arguments: dict[str, Any], result: Any, limit: int
) -> None:
    with StrataGate.in_memory(block_turn_size=1) as memory:
        memory.append_turn(
            "run the tool",
            "done",
            assistant_tool_calls=[{"name": "probe", "arguments": arguments, "result": result}],
        )
        memory.search_events("tool", limit=limit, participants=["b", "a"])
        memory.recall_context("tool", token_budget=limit * 100)
        live = memory._runtime.live.state
        assert replay(memory._runtime.store, live.namespace).digests() == live.digests()
