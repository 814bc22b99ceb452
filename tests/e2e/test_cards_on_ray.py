"""Cards added on Ray: the batch and its projection job are one commit of the extractor's
actor, and the projector's actor (another process) finds the job to hand out."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagate import StrataGate

pytestmark = pytest.mark.ray


def test_a_batch_added_on_ray_is_one_job_the_projector_hands_out(
    ray_cluster: None, tmp_path: Path
) -> None:
    database = str(tmp_path / "cards.db")
    with StrataGate.open(database, "cards", runtime="ray", block_turn_size=2) as memory:
        memory.append_turn("we compare options", "noted")
        memory.append_turn("and record each decision", "ok")
        block_id = memory.list_blocks()[0].id
        batch = memory.add_events(
            [
                {"title": f"note {i}", "summary": f"decision {i}", "source_block_id": block_id}
                for i in range(5)
            ]
        )
        [job] = memory.list_element_projection_jobs()
        assert job.source_event_ids == [card.id for card in batch]
        claimed = memory.claim_next_element_projection()
        assert claimed is not None and claimed.job_id == job.id
        assert [event.id for event in claimed.events] == job.source_event_ids
        assert memory.claim_next_element_projection() is None  # one job, already claimed
    with StrataGate.open(database, "cards") as again:  # inline, replaying the log
        [replayed] = again.list_element_projection_jobs()
        assert replayed.id == job.id and replayed.status == "running"
        assert again.verify().ok
