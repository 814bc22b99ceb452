"""The whole memory on PostgreSQL: the same façade, roles and read models as on SQLite."""

from __future__ import annotations

import pytest

from stratagate import StrataGate
from tests.support.fakes import KeywordExtractor, UsesProjector

pytestmark = pytest.mark.postgres


def test_a_namespace_lives_on_postgres(postgres_schema_url: str) -> None:
    options = {
        "block_turn_size": 2,
        "extractor": KeywordExtractor(),
        "element_projector": UsesProjector(),
    }
    with StrataGate.open(postgres_schema_url, "pg", **options) as memory:
        for i, text in enumerate(
            ["we decided the app uses npm", "x", "we decided the app uses pnpm", "y", "z", "w"]
        ):
            memory.append_turn(text, "ok", receipt_id=f"t{i}")
        assert [e.current_state for e in memory.list_elements()] == [{"uses": "pnpm"}]
        hits = memory.search_events("pnpm")
        memory.record_memory_use(event_ids=[hits[0].id], receipt_id="use-1")
        assert memory.verify().ok
        revision = memory.revision
    with StrataGate.open(
        postgres_schema_url, "pg", **options
    ) as again:  # hydrates from the snapshot
        assert again.revision == revision and again.turn == 6
        assert again.get_event(hits[0].id).weight.mention_count == 2
        retry = again.append_turn("we decided the app uses npm", "ok", receipt_id="t0")
        assert retry.duplicate  # a retry of the same turn; other content would be a conflict
        with StrataGate.open(postgres_schema_url, "pg") as beside:  # a second handle writes too
            beside.append_turn("from beside", "ok", thread_id="beside")
            assert beside.turn == 7
        again.append_turn("from again", "ok")
        assert again.turn == 8 and again.verify().ok
