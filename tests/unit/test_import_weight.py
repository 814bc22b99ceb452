"""A memory that keeps its log in this process imports no SQL toolkit and no asyncio: each
is tens of MiB of a namespace's resident memory that such a memory never uses (issue 26). A
SQLite memory imports no PostgreSQL dialect: every Ray host imports what it needs on a fresh
cluster, inside the first open."""

from __future__ import annotations

from tests.support.fresh_python import printed_by

CODE = """
import sys
from stratagate import StrataGate

with StrataGate.in_memory(block_turn_size=2) as memory:
    memory.append_turn("we pick a database", "noted")
    memory.append_turn("postgres it is", "ok")
    block = memory.list_blocks()[0].id
    memory.add_event({"title": "database chosen", "summary": "postgres", "source_block_id": block})
    memory.search_events("database")
print(sorted({name.split(".")[0] for name in sys.modules} & {"sqlalchemy", "asyncio"}))
"""


def test_an_in_memory_namespace_imports_neither_sqlalchemy_nor_asyncio() -> None:
    assert printed_by(CODE).split() == ["[]"]


SQLITE = """
import os
import sys
import tempfile
from stratagate import StrataGate

path = os.path.join(tempfile.mkdtemp(), "memory.db")
with StrataGate.open(path, "ns", block_turn_size=2) as memory:
    memory.append_turn("we pick a database", "noted")
    memory.append_turn("sqlite it is", "ok")
    memory.drain()
    memory.search_raw_memory("database")
print(sorted(name for name in sys.modules if name.startswith("sqlalchemy.dialects.postgresql")))
"""


def test_a_sqlite_memory_imports_no_postgresql_dialect() -> None:
    assert printed_by(SQLITE).split() == ["[]"]


def test_an_async_callback_still_runs() -> None:
    from stratagate.callbacks import invoke

    async def answer(value: int) -> int:
        return value + 1

    assert invoke(answer, 41) == 42
