"""A seal does not store its messages again (``BlockSealed`` v2): a block's L5 is its sealed
turns' messages; a v1 seal keeps the list it stored, and old logs fold as they always did."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from projections.state import NamespaceState
from stratagate import StrataGate
from stratagate.errors import LogIntegrityError
from stratagate.events import BlockSealed, TurnAppended, decode_payload
from stratagate.events.payloads import MessageData
from stratagate.models import RawMessage
from tests.support.folding import FIXTURES, fold_events, fold_rows, frozen_log_rows


def test_a_seal_stores_no_messages_and_its_block_reads_the_sealed_turns(tmp_path: Path) -> None:
    with StrataGate.open(
        tmp_path / "m.db", "ns", block_turn_size=2, summarizer="offline"
    ) as memory:
        for i in range(7):
            memory.append_turn(
                {"content": f"Shall we ship build {i}?", "name": "Caroline"},
                f"Build {i} is out.",
                thread_id="release" if i % 2 else None,
                assistant_tool_calls=[{"name": "deploy", "arguments": {"build": i}}],
            )
        seals = memory.history(type="BlockSealed")
        turns = memory.history(type="TurnAppended")
        blocks = {block.id: block for block in memory.list_blocks()}
        blocks.update({block.id: block for block in memory.list_blocks("release")})
    assert len(seals) == 3 and len(blocks) == 3
    for seal in seals:
        assert seal.schema_version == 2 and seal.data["l5_raw"] is None
        sealed = [
            RawMessage.model_validate(message)
            for turn in turns
            if turn.data["thread_id"] == seal.data["thread_id"]
            and seal.data["start_turn"] <= turn.data["thread_turn"] <= seal.data["end_turn"]
            for message in turn.data["messages"]
        ]
        assert len(sealed) == 4
        assert blocks[seal.data["block_id"]].l5_raw == sealed


def test_a_v1_seal_keeps_the_messages_it_stored() -> None:
    """The frozen v1 seal stored ``msg_1`` reading "hello"; its turn here reads otherwise,
    and the block still reads what the seal stored, as before v2."""
    frozen = orjson.loads((FIXTURES / "BlockSealed.v1.json").read_bytes())
    seal = decode_payload("BlockSealed", 1, frozen["payload"])
    assert isinstance(seal, BlockSealed) and seal.l5_raw is not None
    stored = seal.l5_raw[0]
    turn = TurnAppended(
        turn=1,
        thread_id=None,
        thread_turn=1,
        messages=[MessageData.model_validate({**stored.model_dump(), "content": "elsewise"})],
        at=seal.at,
    )
    state = NamespaceState("ns")
    fold_events(state, [turn, seal.model_copy(update={"end_turn": 1})], last_position=2)
    (message,) = state.blocks.blocks["blk_1"].l5_raw
    assert (message.id, message.content) == ("msg_1", "hello")


@pytest.mark.parametrize("turns_before", [0, 1, 2])
def test_a_v2_seal_whose_turns_are_not_the_open_tail_is_log_damage(turns_before: int) -> None:
    """A v2 seal stores no messages, so it cannot fall back on them: a seal of turn 2 after
    no turn, after turn 1 only (the tail's first turn is another), or after turns 1 and 2
    (its turn is not the tail's first) is damage named by the seal's position, never a block
    with missing or wrong rows."""
    frozen = orjson.loads((FIXTURES / "BlockSealed.v1.json").read_bytes())
    seal = decode_payload("BlockSealed", 1, frozen["payload"])
    assert isinstance(seal, BlockSealed) and seal.l5_raw is not None
    turns = [
        TurnAppended(turn=n, thread_id=None, thread_turn=n, messages=seal.l5_raw, at=seal.at)
        for n in range(1, turns_before + 1)
    ]
    v2 = seal.model_copy(update={"l5_raw": None, "start_turn": 2, "end_turn": 2})
    with pytest.raises(LogIntegrityError, match="global position 9") as caught:
        fold_events(NamespaceState("ns"), [*turns, v2], last_position=9)
    assert caught.value.position == 9


def test_the_frozen_v1_log_folds_as_its_v2_shape_does() -> None:
    """A real v1 session (its seals storing their messages) folds to the same state, digest
    for digest, as the same log with every seal in the v2 shape (storing none)."""
    rows = frozen_log_rows()
    seals = [row for row in rows if row["event_type"] == "BlockSealed"]
    assert seals and all(row["schema_version"] == 1 for row in seals)
    v2 = [
        {**row, "schema_version": 2, "payload": _without_messages(row["payload"])}
        if row["event_type"] == "BlockSealed"
        else row
        for row in rows
    ]
    v1_state, v2_state = fold_rows(rows), fold_rows(v2)
    assert v1_state.digests() == v2_state.digests()
    for row in seals:
        data = orjson.loads(row["payload"])
        block = v1_state.blocks.blocks[data["block_id"]]
        kept = [(m.id, m.role, m.content, m.name) for m in block.l5_raw]
        assert kept == [(m["id"], m["role"], m["content"], m["name"]) for m in data["l5_raw"]]


def _without_messages(payload: str) -> str:
    return orjson.dumps({**orjson.loads(payload), "l5_raw": None}).decode()
