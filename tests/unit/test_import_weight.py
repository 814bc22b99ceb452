"""A memory that keeps its log in this process imports no SQL toolkit and no asyncio: each
is tens of MiB of a namespace's resident memory that such a memory never uses (issue 26)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"]


def test_an_async_callback_still_runs() -> None:
    from stratagate.callbacks import invoke

    async def answer(value: int) -> int:
        return value + 1

    assert invoke(answer, 41) == 42
