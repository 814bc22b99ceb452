"""Ray-only behaviour: shared named actors, passivation under a bound, rehydration."""

from __future__ import annotations

from pathlib import Path

import pytest
import ray

from stratagate import StrataGate

pytestmark = pytest.mark.ray


def test_two_opens_share_actors_and_passivation_rehydrates(
    ray_cluster: None, tmp_path: Path
) -> None:
    database = str(tmp_path / "shared.db")
    first = StrataGate.open(
        database, "alpha", runtime="ray", block_turn_size=2, max_live_namespaces=1
    )
    second = StrataGate.open(database, "alpha", runtime="ray", max_live_namespaces=1)
    try:
        assert first.handles.sealer._actor_id == second.handles.sealer._actor_id
        for i in range(3):
            first.append_turn(f"alpha note {i}", "ok")
        assert second.turn == 3 and len(second.list_blocks()) == 1  # one set of actors, one state
        before = first.verify()
        assert before.ok

        other = StrataGate.open(database, "beta", runtime="ray", max_live_namespaces=1)
        other.append_turn("beta note", "ok")  # activating beta passivates alpha (bound 1)
        stats = other._runtime.directory_stats()
        assert stats["live"] == 1 and stats["passivations"] >= 1
        old_sealer = first.handles.sealer
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(old_sealer.ping.remote())

        # the next call rehydrates alpha from snapshot + log tail, with the same content
        first.append_turn("alpha note 3", "ok")
        assert first.turn == 4 and [b.start_turn for b in first.list_blocks()] == [1, 3]
        assert first.handles.sealer._actor_id != old_sealer._actor_id
        assert first.verify().ok
        other.close()
    finally:
        first.close()
        second.close()


def test_the_directory_outlives_the_memory_that_created_it(
    ray_cluster: None, tmp_path: Path
) -> None:
    """Sequential opens and closes (a platform working through namespaces) share one directory:
    the bound and the passivation count carry over, and a closed namespace's actors stay up."""
    database = str(tmp_path / "sequential.db")
    names = ["one", "two", "three"]
    for name in names:
        with StrataGate.open(database, name, runtime="ray", max_live_namespaces=2) as memory:
            memory.append_turn(f"{name} note", "ok")
            stats = memory._runtime.directory_stats()
    assert stats["live"] == 2 and stats["passivations"] >= 1
    with StrataGate.open(database, "three", runtime="ray", max_live_namespaces=2) as memory:
        assert memory.turn == 1
        assert ray.get(memory.handles.sealer.ping.remote()) is not None


def test_namespaces_nobody_has_open_are_passivated_first(ray_cluster: None, tmp_path: Path) -> None:
    """Under the bound, a closed namespace gives up its place before one a memory still holds,
    even if the held one was used less recently (no thrashing of work in progress)."""
    database = str(tmp_path / "users.db")
    held = StrataGate.open(database, "held", runtime="ray", max_live_namespaces=2)
    try:
        held.append_turn("held note", "ok")
        with StrataGate.open(database, "closed", runtime="ray", max_live_namespaces=2) as closed:
            closed.append_turn("closed note", "ok")
            closed_sealer = closed.handles.sealer
        with StrataGate.open(database, "new", runtime="ray", max_live_namespaces=2) as new:
            new.append_turn("new note", "ok")  # the bound needs a place: 'closed' gives it
            stats = new._runtime.directory_stats()
        assert ray.get(held.handles.sealer.ping.remote()) is not None
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(closed_sealer.ping.remote())
        assert stats["live"] == 2 and stats["open"] == 2  # held, and new while it was open
    finally:
        held.close()
