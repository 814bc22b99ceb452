"""``AsyncStrataGate`` is generated from ``StrataGate`` and stays in step with it."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
from pathlib import Path

import pytest

from stratagate import AsyncStrataGate, StrataGate

SCRIPT = Path(__file__).parents[2] / "scripts" / "generate_async_api.py"


def load_generator() -> object:
    spec = importlib.util.spec_from_file_location("generate_async_api", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_file_is_current() -> None:
    generator = load_generator()
    assert generator.generate() == generator.TARGET.read_text(encoding="utf-8"), (  # type: ignore[attr-defined]
        "stratagate/async_api.py is stale: python scripts/generate_async_api.py"
    )


PUBLIC = sorted(
    name
    for name, member in vars(StrataGate).items()
    if not name.startswith("_") and inspect.isfunction(member) and name not in ("open", "in_memory")
)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_method_is_awaitable_with_the_same_parameters(name: str) -> None:
    sync, twin = (
        inspect.signature(getattr(StrataGate, name)),
        inspect.signature(getattr(AsyncStrataGate, name)),
    )
    assert inspect.iscoroutinefunction(getattr(AsyncStrataGate, name))
    assert list(sync.parameters) == list(twin.parameters)
    assert [p.default for p in sync.parameters.values()] == [
        p.default for p in twin.parameters.values()
    ]
    assert sync.return_annotation == twin.return_annotation


def test_open_is_awaitable_and_an_async_context_manager(tmp_path: Path) -> None:
    database = str(tmp_path / "m.db")

    async def scenario() -> tuple[int, int]:
        async with AsyncStrataGate.open(database, "ns", block_turn_size=1) as memory:
            await memory.append_turns([{"user": "a", "assistant": "b"}])
            first = len(await memory.list_blocks())
        memory = await AsyncStrataGate.open(database, "ns")
        try:
            return first, len(await memory.list_blocks())
        finally:
            await memory.close()

    assert asyncio.run(scenario()) == (1, 1)
