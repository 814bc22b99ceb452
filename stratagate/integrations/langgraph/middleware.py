"""StrataGate as middleware for ``langchain.agents.create_agent`` (extra ``langgraph``).

``StrataGateMiddleware(memory)`` recalls before every model call — what ``recall_context``
finds for the latest user message joins the system message of that call only (the agent's
state is not changed) — and captures after every model call that answers (an AI message
without tool calls): the turn is appended with receipt id ``THREAD:INDEX``, so a replayed step
stores it once. The thread is the LangGraph thread id (``config["configurable"]["thread_id"]``).
With ``tools=True`` (or a list of names) the memory's tools join the agent's tools. The older
``pre_model_hook``/``post_model_hook`` pair for ``create_react_agent`` is in this package.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from stratagate.integrations.langgraph import (
    memory_tools,
    recalled_note,
    remember_turn,
    thread_of,
)
from stratagate.memory import StrataGate


class StrataGateMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Long-term memory for an agent: recall before the model, capture after its answer."""

    def __init__(
        self,
        memory: StrataGate,
        *,
        tools: bool | Iterable[str] = False,
        max_events: int = 4,
        max_elements: int = 4,
        token_budget: int = 900,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.budget = {
            "max_events": max_events,
            "max_elements": max_elements,
            "token_budget": token_budget,
        }
        names = None if tools is True else [] if tools is False else list(tools)
        self.tools = [] if names == [] else memory_tools(memory, names)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """Call the model with what memory recalls in its system message."""
        return handler(self._recalled(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """``wrap_model_call`` for async agents (recall runs on a worker thread)."""
        return await handler(await asyncio.to_thread(self._recalled, request))

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the turn once the model has answered."""
        remember_turn(self.memory, list(state["messages"]), _thread())
        return None

    async def aafter_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """``after_model`` for async agents."""
        thread = _thread()
        await asyncio.to_thread(remember_turn, self.memory, list(state["messages"]), thread)
        return None

    def _recalled(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        note = recalled_note(self.memory, request.messages, _thread(), **self.budget)
        if note is None:
            return request
        return request.override(system_message=_joined(request.system_message, note))


def _thread() -> str:
    """The LangGraph thread id of the running agent step."""
    try:
        return thread_of(get_config())
    except RuntimeError:  # called outside a graph run
        return thread_of(None)


def _joined(system: SystemMessage | None, note: SystemMessage) -> SystemMessage:
    """The agent's own system message with the recalled memory after it."""
    if system is None:
        return note
    if isinstance(system.content, str):
        return SystemMessage(content=f"{system.content}\n\n{note.content}")
    return SystemMessage(content=[*system.content, {"type": "text", "text": str(note.content)}])


__all__ = ["StrataGateMiddleware"]
