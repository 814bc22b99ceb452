"""The LangGraph integration: the example graph runs offline (a scripted model) and its memory
verifies; the tools keep the typed errors; the hooks recall and store with run-derived receipts."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from stratagate.integrations.langgraph import memory_tools, recall_hook, remember_hook
from stratagate.integrations.langgraph.middleware import StrataGateMiddleware
from stratagate.integrations.tools import TOOLS
from stratagate.memory import StrataGate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "langgraph_agent.py"


@pytest.mark.slow
def test_the_example_graph_runs_offline_and_its_memory_verifies(tmp_path: Path) -> None:
    database = tmp_path / "agent.db"

    def run() -> str:
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), "--database", str(database)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), "PATH": ""},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    first = run()
    assert "From memory: Decided: the monorepo moves from npm to pnpm" in first
    assert "turns stored: 7" in first and "verify: ok" in first
    second = run()  # the same thread again: every turn's receipt is known, nothing doubles
    assert "turns stored: 7" in second and "verify: ok" in second
    with StrataGate.open(database, "agent") as memory:
        assert memory.verify().ok
        assert memory.has_ingestion_receipt("fieldnotes:1")
        receipts = memory.list_usage_receipts()
        assert len(receipts) == 2 and all(r.reinforced_event_ids for r in receipts)


def test_the_tools_are_the_catalogue_and_keep_typed_errors() -> None:
    with StrataGate.in_memory() as memory:
        tools = {tool.name: tool for tool in memory_tools(memory)}
        assert list(tools) == [tool.name for tool in TOOLS]
        search = tools["search_raw_memory"]
        assert search.args_schema is not None
        assert set(search.args) == {"query", "limit", "thread_id"}
        message = search.invoke(
            {"type": "tool_call", "id": "c1", "name": "search_raw_memory",
             "args": {"query": "pnpm"}}
        )  # fmt: skip
        assert orjson.loads(message.content)["batch_id"] == message.artifact["batch_id"]
        assert tools["expand_event"].invoke({"event_id": "evt_x"}) == (
            "UnknownIdError: unknown event id 'evt_x'"
        )


def test_the_hooks_recall_before_and_store_after_the_model() -> None:
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.in_memory(**offline) as memory:
        memory.append_turn("We picked pnpm for the monorepo.", "Noted: pnpm.", thread_id="t1")
        config = {"configurable": {"thread_id": "t1"}}
        question = HumanMessage(content="Which package manager do we use?")
        seen = recall_hook(memory)({"messages": [question]}, config)["llm_input_messages"]
        assert isinstance(seen[0], SystemMessage) and "pnpm" in seen[0].content
        assert seen[1:] == [question]
        remember = remember_hook(memory)
        calling = AIMessage(content="", tool_calls=[{"name": "verify", "args": {}, "id": "c"}])
        assert remember({"messages": [question, calling]}, config) == {}
        assert memory.turn == 1  # a tool call is not an answer
        answer = AIMessage(content="pnpm.")
        for _ in range(2):  # a replayed step stores the turn once
            remember({"messages": [question, answer]}, config)
        assert memory.turn == 2 and memory.has_ingestion_receipt("t1:1")


class Recorder(BaseChatModel):
    """A chat model stand-in that records what it is sent: first a memory tool call when the
    question asks for it, then an answer."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recorder"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Recorder:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        last = messages[-1]
        if isinstance(last, HumanMessage) and "search" in str(last.content):
            call = {"name": "search_events", "args": {"query": "pnpm"}, "id": "call-1"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"answered after {len(messages)} messages")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def test_the_middleware_recalls_into_the_system_message_and_stores_answers() -> None:
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.in_memory(**offline) as memory:
        memory.append_turn("We picked pnpm for the monorepo.", "Noted: pnpm.", thread_id="t1")
        model = Recorder()
        agent = create_agent(
            model, tools=[], middleware=[StrataGateMiddleware(memory, tools=["search_events"])],
            system_prompt="You help the team.", checkpointer=InMemorySaver(),
        )  # fmt: skip
        config = {"configurable": {"thread_id": "t1"}}
        out = agent.invoke({"messages": [HumanMessage("Which package manager do we use?")]}, config)
        [sent] = model.calls
        assert isinstance(sent[0], SystemMessage)
        assert sent[0].content.startswith("You help the team.") and "pnpm" in sent[0].content
        assert not any(isinstance(m, SystemMessage) for m in out["messages"])  # state unchanged
        assert memory.turn == 2 and memory.has_ingestion_receipt("t1:1")
        out = agent.invoke({"messages": [HumanMessage("please search memory")]}, config)
        assert [m.type for m in out["messages"][-3:]] == ["ai", "tool", "ai"]
        assert out["messages"][-2].name == "search_events"  # the memory's tool, registered
        assert memory.turn == 3  # the tool call step stored nothing, the answer once
        asyncio.run(agent.ainvoke({"messages": [HumanMessage("and now?")]}, config))
        assert memory.turn == 4 and memory.verify().ok
