"""StrataGate for LangGraph and LangChain (extra ``langgraph``): the memory's tools as LangChain
tools, a pre-model hook that puts ``recall_context`` in front of the model, and a post-model hook
that stores each finished turn. They fit ``create_react_agent(pre_model_hook=...,
post_model_hook=...)`` or any graph with a ``messages`` state (docs/AGENTS.md); the same two
steps as middleware for ``langchain.agents.create_agent`` are in ``.middleware``, and
LangGraph's long-term store (``BaseStore``) is in ``.store``.

The LangGraph thread id (``config["configurable"]["thread_id"]``) is the memory's thread; a stored
turn's receipt id is that thread id with the index of the answering message, so a replayed or
retried step never stores the turn twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException

from stratagate.errors import StrataGateError
from stratagate.integrations.tools import TOOLS, Tool, find_tool
from stratagate.memory import StrataGate

MEMORY_PREAMBLE = (
    "Long-term memory recalled for this question (cite ids when you use them; search for "
    "more when it is not enough):\n\n"
)
DEFAULT_THREAD = "langgraph"


def memory_tool(memory: StrataGate, tool: Tool[Any]) -> StructuredTool:
    """One tool of the catalogue as a LangChain tool bound to ``memory``: its content is the
    JSON result (the dict is the artifact); a typed error comes back as the tool's text."""

    def run(**arguments: Any) -> tuple[str, dict[str, Any]]:
        try:
            result = tool.call(memory, arguments)
        except StrataGateError as exc:
            raise ToolException(f"{type(exc).__name__}: {' '.join(str(exc).split())}") from exc
        return orjson.dumps(result).decode(), result

    return StructuredTool.from_function(
        func=run,
        name=tool.name,
        description=tool.description,
        args_schema=tool.input,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def memory_tools(memory: StrataGate, names: Iterable[str] | None = None) -> list[StructuredTool]:
    """The memory's tools (all, or those named) as LangChain tools."""
    chosen = TOOLS if names is None else tuple(find_tool(name) for name in names)
    return [memory_tool(memory, tool) for tool in chosen]


def thread_of(config: RunnableConfig | None) -> str:
    """The LangGraph thread id of a run (the memory's thread)."""
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    return str(configurable.get("thread_id") or DEFAULT_THREAD)


def text_of(message: AnyMessage) -> str:
    """A message's text (the text parts of a multi-part content)."""
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str) or part.get("type") == "text"
    )


def last_human(messages: Sequence[AnyMessage]) -> tuple[int, HumanMessage] | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage):
            return index, message
    return None


def recall_hook(
    memory: StrataGate, *, max_events: int = 4, max_elements: int = 4, token_budget: int = 900
) -> Callable[[Mapping[str, Any], RunnableConfig], dict[str, Any]]:
    """A pre-model hook: the model sees a system message with what memory recalls for the
    latest user message, ahead of the conversation (``llm_input_messages``; the state's
    messages are not changed)."""

    def hook(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages: list[AnyMessage] = list(state["messages"])
        note = recalled_note(
            memory, messages, thread_of(config), max_events=max_events,
            max_elements=max_elements, token_budget=token_budget,
        )  # fmt: skip
        return {"llm_input_messages": messages if note is None else [note, *messages]}

    return hook


def recalled_note(
    memory: StrataGate,
    messages: Sequence[AnyMessage],
    thread: str,
    *,
    max_events: int = 4,
    max_elements: int = 4,
    token_budget: int = 900,
) -> SystemMessage | None:
    """What memory recalls for the latest user message, as a system message (``None`` when
    there is no user text or nothing is recalled)."""
    found = last_human(messages)
    if found is None or not text_of(found[1]).strip():
        return None
    recalled = memory.recall_context(
        text_of(found[1]), thread_id=thread, max_events=max_events,
        max_elements=max_elements, token_budget=token_budget,
    )  # fmt: skip
    if not recalled.text.strip():
        return None
    return SystemMessage(content=MEMORY_PREAMBLE + recalled.text)


def remember_hook(
    memory: StrataGate,
) -> Callable[[Mapping[str, Any], RunnableConfig], dict[str, Any]]:
    """A post-model hook: once the model answers (an AI message without tool calls), store the
    turn — the latest user message and that answer — with receipt id ``THREAD:INDEX``."""

    def hook(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        remember_turn(memory, list(state["messages"]), thread_of(config))
        return {}

    return hook


def remember_turn(memory: StrataGate, messages: Sequence[AnyMessage], thread: str) -> bool:
    """Store the finished turn at the end of ``messages`` — the latest user message and the
    answer (an AI message without tool calls) — with receipt id ``THREAD:INDEX``, so a replayed
    step stores it once; False when the last message is no answer."""
    answer = messages[-1] if messages else None
    if not isinstance(answer, AIMessage) or answer.tool_calls:
        return False
    found = last_human(messages)
    if found is None:
        return False
    memory.append_turn(
        text_of(found[1]), text_of(answer), thread_id=thread,
        receipt_id=f"{thread}:{len(messages) - 1}",
    )  # fmt: skip
    return True


__all__ = [
    "MEMORY_PREAMBLE",
    "memory_tool",
    "memory_tools",
    "recall_hook",
    "recalled_note",
    "remember_hook",
    "remember_turn",
    "thread_of",
]
