"""The Ray driver's memories share one store per database: counted per user, the most recently
idle ones kept open for the next memory, older idle ones closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagate.actors.ray_runtime import SharedStores
from stratagate.errors import StorageError


def test_memories_of_one_database_share_a_store_and_idle_ones_beyond_the_limit_close(
    tmp_path: Path,
) -> None:
    stores = SharedStores(idle=1)
    first, second = str(tmp_path / "first.db"), str(tmp_path / "second.db")
    one = stores.take(first)
    assert stores.take(first) is one  # a second memory of the same database: the same store
    stores.give_back(first)
    stores.give_back(first)
    assert stores.take(first) is one  # kept open while idle, reused by the next memory
    stores.give_back(first)

    other = stores.take(second)
    stores.give_back(second)  # two idle stores, one kept: the older one closes
    with pytest.raises(StorageError):
        one.head("ns")
    assert other.head("ns") == 0
    assert stores.take(first) is not one
