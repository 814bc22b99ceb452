"""The four model callbacks backed by an OpenAI-compatible endpoint.

Each is a plain class holding only its ``ModelConfig`` (no open connection), so it pickles with
cloudpickle and runs inside a Ray actor. Every call either returns validated output or raises a
``ModelError``; a failure is never turned into an empty result.
"""

from __future__ import annotations

from typing import Any

from stratagate.adapters.openai_compat import ModelConfig, complete_json
from stratagate.adapters.prompts import (
    assessment_messages,
    extraction_messages,
    projection_messages,
    summary_messages,
)
from stratagate.models import (
    BlockSummary,
    ElementProjectionContext,
    ElementProjectionResult,
    ExtractionContext,
    ExtractionResult,
    RawMessage,
    parse_input,
)

ASSESSMENT_KEYS = frozenset({"verdict", "evidence_refs", "fit", "missing", "next_strategy"})
"""The bounded schema of a raw assessment: exactly these keys, nothing else."""


class ModelCallback:
    """Base of the callbacks: holds the config; without one, reads it from the environment now."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        self.config = config if config is not None else ModelConfig.from_env()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.config.model!r}, url={self.config.base_url!r})"


class ModelSummarizer(ModelCallback):
    """``summarizer(messages) -> BlockSummary``: a block's L0-L2 views and extraction decision."""

    def __call__(self, messages: list[RawMessage]) -> BlockSummary:
        parsed = [parse_input(RawMessage, m, what="message") for m in messages]
        return complete_json(self.config, summary_messages(parsed), BlockSummary.model_validate)


class ModelExtractor(ModelCallback):
    """``extractor(ctx) -> ExtractionResult`` from a target-first payload.

    Every returned card has ``source_block_id`` set to the target block and no ``id`` (ids are
    the platform's to assign); the platform still checks the cited message ids.
    """

    def __call__(self, ctx: ExtractionContext) -> ExtractionResult:
        context = parse_input(ExtractionContext, ctx, what="extraction context")
        target_id = context.target.id

        def parse(answer: dict[str, Any]) -> ExtractionResult:
            return ExtractionResult.model_validate(anchor_cards(answer, target_id))

        return complete_json(self.config, extraction_messages(context), parse)


class ModelElementProjector(ModelCallback):
    """``element_projector(ctx) -> ElementProjectionResult`` for one claimed batch of events."""

    def __call__(self, ctx: ElementProjectionContext) -> ElementProjectionResult:
        context = parse_input(ElementProjectionContext, ctx, what="projection context")
        return complete_json(
            self.config, projection_messages(context), ElementProjectionResult.model_validate
        )


class ModelAssessor(ModelCallback):
    """``assessor(question, hits) -> dict``: the raw five-field assessment, to be normalised.

    Only the key set is checked here; values are judged by ``normalize_assessment``.
    """

    def __call__(self, question: str, hits: list[dict[str, Any]]) -> dict[str, Any]:
        return complete_json(self.config, assessment_messages(question, hits), check_assessment)


def anchor_cards(answer: dict[str, Any], target_id: str) -> dict[str, Any]:
    """The answer with each card bound to the target block and stripped of model-chosen ids."""
    events = answer.get("events")
    if not isinstance(events, list):
        return answer
    anchored = [
        {**{k: v for k, v in card.items() if k != "id"}, "source_block_id": target_id}
        if isinstance(card, dict)
        else card
        for card in events
    ]
    return {**answer, "events": anchored}


def check_assessment(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` when it has exactly the five assessment keys; ``ValueError`` otherwise."""
    missing = sorted(ASSESSMENT_KEYS - answer.keys())
    extra = sorted(answer.keys() - ASSESSMENT_KEYS)
    if missing or extra:
        raise ValueError(
            "an assessment has exactly the keys "
            f"{sorted(ASSESSMENT_KEYS)}; missing {missing}, unexpected {extra}"
        )
    return answer


__all__ = [
    "ASSESSMENT_KEYS",
    "ModelAssessor",
    "ModelCallback",
    "ModelElementProjector",
    "ModelExtractor",
    "ModelSummarizer",
    "anchor_cards",
    "check_assessment",
]
