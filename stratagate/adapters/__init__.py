"""Model adapters: the callbacks backed by an OpenAI-compatible chat-completions endpoint."""

from stratagate.adapters.openai_compat import ModelConfig, ModelHTTPError
from stratagate.adapters.openai_models import (
    ModelAssessor,
    ModelCallback,
    ModelElementProjector,
    ModelExtractor,
    ModelSummarizer,
)

__all__ = [
    "ModelAssessor",
    "ModelCallback",
    "ModelConfig",
    "ModelElementProjector",
    "ModelExtractor",
    "ModelHTTPError",
    "ModelSummarizer",
]
