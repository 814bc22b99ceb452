"""Calling the model callbacks: sync or async, output validated, named for the log.

A callback (the caller's, or a provider's from ``stratagate.providers``) may be a plain
callable or an ``async def``; it may return the model or a dict. Its output is validated before
anything is appended; an exception it raises propagates unchanged (the caller sees its own
error) after the failed job state is durable.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from stratagate.errors import InvalidInputError, ModelResponseError
from stratagate.models import parse_input

M = TypeVar("M", bound=BaseModel)
Callback = Callable[..., Any]

OFFLINE = "offline"
"""How the log names the bundled offline models (``BlockSealed.summarizer``)."""


def describe(fn: Callback | None) -> str:
    """A short, stable name of a callback for the log (``offline``, the class or function name)."""
    if fn is None:
        return "default"
    module = getattr(fn, "__module__", "") or type(fn).__module__
    if module.startswith("stratagate.offline"):
        return OFFLINE
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}" if module else name


def is_local(fn: Callback | None) -> bool:
    """Whether a model runs in this process, deterministically: none (the default rules) or the
    bundled offline heuristics. Such a call cannot be left half-done by anything but the death
    of the process itself, so its job's start and result may share one commit."""
    return fn is None or describe(fn) == OFFLINE


def invoke(fn: Callable[..., Any], *arguments: Any) -> Any:
    """Call ``fn`` (sync or async) and return its (awaited) result."""
    result = fn(*arguments)
    if inspect.isawaitable(result):
        return _run(result)
    return result


def _run(awaitable: Any) -> Any:
    """Run an async callback's awaitable to its end (asyncio is imported here, when a callback
    is async: a process whose callbacks are not never pays its ~9 MiB)."""
    import asyncio

    async def wrap() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    raise InvalidInputError(
        "an async callback cannot run inside a running event loop; use AsyncStrataGate"
    )


def validate_output(model: type[M], value: Any, role: str) -> M:
    """Validate a callback's output; a malformed result is a ``ModelResponseError``."""
    try:
        return parse_input(model, value, what=f"{role} output")
    except InvalidInputError as exc:
        raise ModelResponseError(str(exc)) from exc


__all__ = ["OFFLINE", "Callback", "describe", "invoke", "is_local", "validate_output"]
