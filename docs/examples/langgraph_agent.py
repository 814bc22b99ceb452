"""A LangChain agent with StrataGate long-term memory, offline (docs/AGENTS.md).

``langchain.agents.create_agent`` with ``StrataGateMiddleware``: before every model call the
middleware recalls memory into the system message, the memory's tools are the agent's tools,
and after every answer the finished turn is stored. (The older ``recall_hook`` /
``remember_hook`` pair does the same for ``create_react_agent`` or a hand-built graph.) The chat
model is a scripted stand-in built on langchain-core's ``BaseChatModel`` (no network, no key):
it answers plain turns with a fixed line and runs the evidence gate for a question —
search_events, then assess_retrieval with the search's batch id, then record_memory_use, then
the answer.

    pip install 'stratagate[langgraph]'
    python docs/examples/langgraph_agent.py --database agent-memory.db
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import orjson
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from stratagate import StrataGate
from stratagate.integrations.langgraph.middleware import StrataGateMiddleware

CONVERSATION = [
    "We're building Fieldnotes, an offline field-notes app for ecologists.",
    "Decided: the monorepo moves from npm to pnpm, starting March 3.",
    "Priya Raman designs the sync screen; Tomás Ortega owns the backend.",
    "We'll demo the beta to Dr. Helen Okafor on March 13.",
    "The CI runs on GitHub Actions with a pnpm cache.",
    "ok, thanks",
]
QUESTION = "Which package manager did we pick for the monorepo?"


class ScriptedModel(BaseChatModel):
    """A stand-in for a chat model that follows the evidence gate by rule."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.next_message(messages))])

    def next_message(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        step = len(messages)
        if isinstance(last, HumanMessage):
            if str(last.content).endswith("?"):
                return call("search_events", {"query": str(last.content), "limit": 3}, step)
            return AIMessage(content="Noted.")
        assert isinstance(last, ToolMessage)
        result = orjson.loads(str(last.content))
        if last.name == "search_events":
            top = result["hits"][0]["id"]
            verdict = {
                "batch_id": result["batch_id"], "verdict": "sufficient",
                "evidence_refs": [top], "fit": "the decision itself", "next_strategy": "answer",
            }  # fmt: skip
            return call("assess_retrieval", verdict, step)
        if last.name == "assess_retrieval":
            used = {
                "receipt_id": f"answer-{result['batch_id']}", "event_ids": result["evidence_refs"],
                "batch_id": result["batch_id"], "evidence_refs": result["evidence_refs"],
            }  # fmt: skip
            return call("record_memory_use", used, step)
        search = next(m for m in messages if isinstance(m, ToolMessage) and m.artifact)
        title = search.artifact["hits"][0]["event"]["title"]
        return AIMessage(content=f"From memory: {title}")


def call(name: str, args: dict[str, Any], step: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{step}"}])


def build_agent(memory: StrataGate, model: BaseChatModel) -> Any:
    """The agent, with the memory as its middleware and tools, checkpointed per thread."""
    middleware = StrataGateMiddleware(memory, tools=True)
    return create_agent(model, tools=[], middleware=[middleware], checkpointer=InMemorySaver())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="agent-memory.db", help="SQLite file")
    args = parser.parse_args(argv)
    offline = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    with StrataGate.open(args.database, "agent", block_turn_size=2, **offline) as memory:
        agent = build_agent(memory, ScriptedModel())
        config: Any = {"configurable": {"thread_id": "fieldnotes"}}
        for line in [*CONVERSATION, QUESTION]:
            state = agent.invoke({"messages": [HumanMessage(content=line)]}, config)
        print(state["messages"][-1].content)
        receipts = memory.list_usage_receipts()
        print(f"turns stored: {memory.turn}; receipts: {[r.id for r in receipts]}")
        print(f"reinforced: {receipts[-1].reinforced_event_ids}")
        report = memory.verify()
        print(f"verify: {'ok' if report.ok else report.detail}")
        return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
