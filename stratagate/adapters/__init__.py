"""Model adapters: the callbacks backed by an OpenAI-compatible chat-completions endpoint."""

from stratagate.adapters.callbacks import (
    ModelAssessor,
    ModelCallback,
    ModelElementProjector,
    ModelExtractor,
    ModelSummarizer,
)
from stratagate.adapters.openai_compat import ModelConfig, ModelHTTPError

__all__ = [
    "ModelAssessor",
    "ModelCallback",
    "ModelConfig",
    "ModelElementProjector",
    "ModelExtractor",
    "ModelHTTPError",
    "ModelSummarizer",
]
