"""Model providers by name: what ``summarizer=``, ``extractor=`` and ``element_projector=`` take.

An option is ``None`` (no model: deterministic block views, no extraction, projection jobs wait
for the manual claim API), a callable the caller wrote (plain or ``async def``, returning the
model or a dict; picklable for Ray), or a provider name this registry resolves:

- ``"offline"``: the bundled deterministic heuristics (no model, no network);
- ``"openai"``: the OpenAI-compatible chat-completions adapters, configured from the
  environment (``STRATAGATE_MODEL_BASE_URL``, ``STRATAGATE_MODEL`` …, see
  ``stratagate.adapters.ModelConfig.from_env``).

A name maps to a lazy dotted path (``module:factory``): nothing is imported until a memory with
that name opens. ``resolve`` builds the model each time a role needs it (cheap: a provider's
model holds its configuration, read from the environment then, not a connection), so the
option that travels to a Ray actor is the name and the actor builds the model itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol, get_args

from stratagate.errors import InvalidInputError
from stratagate.models import (
    BlockSummary,
    ElementProjectionContext,
    ElementProjectionResult,
    ExtractionContext,
    ExtractionResult,
    RawMessage,
)

Kind = Literal["summarizer", "extractor", "element_projector"]
KINDS: tuple[Kind, ...] = get_args(Kind)

Answer = Any
"""A callback's answer: the model, a mapping with its fields, or an awaitable of either."""


class Summarizer(Protocol):
    """``summarizer(messages) -> BlockSummary``: a block's L0–L2 views, and whether to extract."""

    def __call__(
        self, messages: list[RawMessage], /
    ) -> BlockSummary | Mapping[str, Any] | Awaitable[Answer]: ...


class Extractor(Protocol):
    """``extractor(context) -> ExtractionResult``: the event cards of one target block."""

    def __call__(
        self, context: ExtractionContext, /
    ) -> ExtractionResult | Mapping[str, Any] | Awaitable[Answer]: ...


class ElementProjector(Protocol):
    """``element_projector(context) -> ElementProjectionResult``: element facts from events."""

    def __call__(
        self, context: ElementProjectionContext, /
    ) -> ElementProjectionResult | Mapping[str, Any] | Awaitable[Answer]: ...


Model = Summarizer | Extractor | ElementProjector
Option = Callable[..., Any] | str | None
"""What a model option accepts: a callable, a provider name, or ``None``."""

PROVIDERS: dict[str, dict[Kind, str]] = {
    "offline": {
        "summarizer": "stratagate.offline.summarizer:OfflineSummarizer",
        "extractor": "stratagate.offline.event_extractor:OfflineExtractor",
        "element_projector": "stratagate.offline.element_projector:OfflineElementProjector",
    },
    "openai": {
        "summarizer": "stratagate.adapters.openai_models:ModelSummarizer",
        "extractor": "stratagate.adapters.openai_models:ModelExtractor",
        "element_projector": "stratagate.adapters.openai_models:ModelElementProjector",
    },
}
"""Provider name → for each kind of model, the zero-argument factory that builds it."""

OFFLINE = "offline"


def check_option(kind: Kind, value: object) -> None:
    """``value`` is a callable, a known provider name or ``None`` (else ``InvalidInputError``)."""
    if value is None or callable(value) or (isinstance(value, str) and value in PROVIDERS):
        return
    names = ", ".join(repr(name) for name in PROVIDERS)
    raise InvalidInputError(f"{kind}: expected a callable, {names} or None, got {value!r}")


def resolve(kind: Kind, value: Option) -> Callable[..., Any] | None:
    """The model an option names: ``None``, the caller's callable, or the provider's model."""
    check_option(kind, value)
    if value is None or callable(value):
        return value
    assert isinstance(value, str)
    module, _, factory = PROVIDERS[value][kind].partition(":")
    model: Callable[..., Any] = getattr(importlib.import_module(module), factory)()
    return model


__all__ = [
    "KINDS",
    "OFFLINE",
    "PROVIDERS",
    "ElementProjector",
    "Extractor",
    "Kind",
    "Model",
    "Option",
    "Summarizer",
    "check_option",
    "resolve",
]
