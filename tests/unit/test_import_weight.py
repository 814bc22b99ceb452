"""A memory that keeps its log in this process imports no SQL toolkit and no asyncio: each
is tens of MiB of a namespace's resident memory that such a memory never uses (issue 26)."""

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


def test_an_async_callback_still_runs() -> None:
    from stratagate.callbacks import invoke

    async def answer(value: int) -> int:
        return value + 1

    assert invoke(answer, 41) == 42
