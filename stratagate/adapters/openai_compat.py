"""A client for OpenAI-compatible chat-completion endpoints (Ollama, vLLM, DeepSeek, OpenAI).

Standard library HTTP only. The client retries what may pass (timeouts, refused or dropped
connections, 429, 5xx) with bounded exponential backoff, never other 4xx answers, and turns
every failure into a typed ``ModelError``: a model failure must never look like an empty answer.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stratagate.errors import (
    InvalidInputError,
    ModelError,
    ModelResponseError,
    ModelTimeoutError,
)
from stratagate.models import parse_input

T = TypeVar("T")
Message = dict[str, str]
"""One chat message as the endpoint takes it: ``{"role": ..., "content": ...}``."""

_log = logging.getLogger(__name__)

_EXCERPT_CHARS = 300
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
"""A fenced code block (any info string); group 1 is its body."""
_ENV_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base_url", ("STRATAGATE_MODEL_BASE_URL", "OPENAI_BASE_URL")),
    ("model", ("STRATAGATE_MODEL",)),
    ("api_key", ("STRATAGATE_MODEL_API_KEY", "OPENAI_API_KEY")),
    ("timeout", ("STRATAGATE_MODEL_TIMEOUT",)),
)


class ModelConfig(BaseModel):
    """Where and how to call the model; a frozen value, so callbacks holding it pickle cleanly.

    ``timeout`` bounds the connect and each socket read (seconds). ``max_retries`` counts the
    retries after the first attempt. ``max_corrections`` bounds the re-asks after unusable output.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key: str | None = Field(default=None, repr=False)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    backoff_base: float = Field(default=0.5, ge=0)
    backoff_cap: float = Field(default=8.0, ge=0)
    retry_after_cap: float = Field(default=30.0, ge=0)
    temperature: float = Field(default=0.0, ge=0, le=2)
    json_mode: bool = False
    """Send ``response_format={"type": "json_object"}`` (for endpoints that support it)."""
    max_corrections: int = Field(default=1, ge=0, le=3)
    extra_headers: dict[str, str] = Field(default_factory=dict, repr=False)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = value.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return url

    @property
    def endpoint(self) -> str:
        """The chat-completions URL."""
        return f"{self.base_url}/chat/completions"

    @classmethod
    def from_env(cls, **overrides: Any) -> ModelConfig:
        """Build a config from ``STRATAGATE_MODEL_*`` variables (``OPENAI_*`` as fallback).

        Keyword overrides win over the environment. Raises ``InvalidInputError`` when the base
        URL or the model name is missing, or when a value does not validate.
        """
        values: dict[str, Any] = {}
        for field, names in _ENV_FIELDS:
            found = next((os.environ[n] for n in names if os.environ.get(n, "").strip()), None)
            if found is not None:
                values[field] = found.strip()
        values.update(overrides)
        if not values.get("base_url"):
            raise InvalidInputError(
                "model base URL missing: set STRATAGATE_MODEL_BASE_URL (or OPENAI_BASE_URL) or "
                "pass base_url=..., e.g. http://localhost:11434/v1 for Ollama"
            )
        if not values.get("model"):
            raise InvalidInputError(
                "model name missing: set STRATAGATE_MODEL or pass model=..., e.g. qwen2.5:7b"
            )
        return parse_input(cls, values, what="model config")


class ModelHTTPError(ModelError):
    """The endpoint answered with an HTTP error status; carries the status and attempt count."""

    def __init__(self, message: str, *, status: int, attempts: int) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class _Transient(Exception):
    """One failed attempt that may pass on retry; ``__cause__`` holds the transport error."""

    def __init__(
        self, kind: str, detail: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(detail)
        self.kind = kind  # "timeout", "connection" or "http"
        self.detail = detail
        self.status = status
        self.retry_after = retry_after


def chat_completion(config: ModelConfig, messages: list[Message]) -> str:
    """POST ``messages`` and return ``choices[0].message.content`` (``""`` when null).

    Raises ``ModelTimeoutError``, ``ModelHTTPError``, ``ModelError`` (unreachable) or
    ``ModelResponseError`` (no usable completion envelope); the transport error is the cause.
    """
    body = json.dumps(_request_body(config, messages), ensure_ascii=False).encode("utf-8")
    attempt = 1
    while True:
        try:
            return _completion_content(_post(config, body, attempt))
        except _Transient as failure:
            if attempt > config.max_retries:
                raise _final_error(config, failure, attempt) from failure.__cause__
            delay = _retry_delay(config, attempt, failure.retry_after)
            _log.warning(
                "model call %s failed (%s), retry %d/%d in %.2fs",
                config.endpoint,
                failure.detail,
                attempt,
                config.max_retries,
                delay,
            )
            time.sleep(delay)
            attempt += 1


def complete_json(config: ModelConfig, messages: list[Message], parse: Callable[[dict], T]) -> T:
    """Ask for one JSON object and return ``parse(obj)``; re-ask on unusable output.

    ``parse`` raises ``ValueError`` (pydantic's ``ValidationError`` is one) on a schema
    mismatch. Each unusable answer is fed back with its error, at most ``max_corrections``
    times; then ``ModelResponseError`` is raised with the last error as its cause.
    """
    conversation = list(messages)
    answers = 0
    while True:
        reply = chat_completion(config, conversation)
        answers += 1
        try:
            return parse(extract_json_object(reply))
        except ValueError as exc:
            problem = describe_error(exc)
            if answers > config.max_corrections:
                raise ModelResponseError(
                    f"{config.model}: unusable output after {answers} answer(s): "
                    f"{problem}; last reply began {_excerpt(reply)!r}"
                ) from exc
            conversation += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": _correction_note(problem)},
            ]


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model reply, after dropping reasoning and code fences.

    Raises ``ValueError`` when the reply holds no JSON object.
    """
    answer = strip_reasoning(text)
    candidates = [*_FENCE.findall(answer), answer]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for match in re.finditer(r"\{", candidate):
            try:
                value, _ = decoder.raw_decode(candidate, match.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ValueError("the reply contains no JSON object")


def strip_reasoning(text: str) -> str:
    """Drop the reasoning before the answer: a leading ``<think>…</think>`` section, or all
    text up to the last ``</think>`` when the opening tag is missing.

    An unterminated ``<think>`` means the reply is all reasoning, so nothing is left.
    """
    stripped = text.lstrip()
    if stripped.startswith(_THINK_OPEN):
        close = stripped.find(_THINK_CLOSE)
        return "" if close == -1 else strip_reasoning(stripped[close + len(_THINK_CLOSE) :])
    close = stripped.rfind(_THINK_CLOSE)
    return stripped if close == -1 else stripped[close + len(_THINK_CLOSE) :].lstrip()


def describe_error(exc: ValueError) -> str:
    """A short, model-readable account of why output was rejected."""
    if isinstance(exc, ValidationError):
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}"
            for error in exc.errors()[:6]
        ]
        more = exc.error_count() - len(problems)
        return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")
    return str(exc)


def _request_body(config: ModelConfig, messages: list[Message]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        "temperature": config.temperature,
        "stream": False,
    }
    if config.json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


def _headers(config: ModelConfig) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "stratagate",
    }
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    headers.update(config.extra_headers)
    return headers


def _post(config: ModelConfig, body: bytes, attempt: int) -> bytes:
    """One attempt. Raises ``_Transient`` for what may pass, ``ModelHTTPError`` otherwise."""
    request = urllib.request.Request(
        config.endpoint, data=body, headers=_headers(config), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=config.timeout) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            excerpt = _excerpt(_read_quietly(exc))
        detail = f"HTTP {exc.code}: {excerpt}"
        if exc.code == 429 or exc.code >= 500:
            retry_after = _parse_retry_after(exc.headers.get("Retry-After"))
            raise _Transient("http", detail, exc.code, retry_after) from exc
        raise ModelHTTPError(
            f"{config.endpoint}: {detail} (attempt {attempt}, not retried)",
            status=exc.code,
            attempts=attempt,
        ) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _Transient("timeout", f"timed out after {config.timeout}s") from exc
        raise _Transient("connection", f"cannot connect: {exc.reason}") from exc
    except TimeoutError as exc:
        raise _Transient("timeout", f"timed out after {config.timeout}s") from exc
    except (OSError, http.client.HTTPException) as exc:  # reset, dropped or garbled connection
        raise _Transient("connection", f"connection failed: {exc!r}") from exc


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except OSError:
        return b""


def _final_error(config: ModelConfig, failure: _Transient, attempts: int) -> ModelError:
    message = f"{config.endpoint}: {failure.detail} after {attempts} attempt(s)"
    if failure.kind == "timeout":
        return ModelTimeoutError(message)
    if failure.kind == "http" and failure.status is not None:
        return ModelHTTPError(message, status=failure.status, attempts=attempts)
    return ModelError(message)


def _retry_delay(config: ModelConfig, attempt: int, retry_after: float | None) -> float:
    """Exponential backoff capped at ``backoff_cap``; a ``Retry-After`` wins, capped."""
    if retry_after is not None:
        return min(retry_after, config.retry_after_cap)
    return min(config.backoff_cap, config.backoff_base * 2 ** (attempt - 1))


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header; the HTTP-date form is ignored (backoff applies)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _completion_content(raw: bytes) -> str:
    try:
        envelope = json.loads(raw)
        content = envelope["choices"][0]["message"].get("content")
    except (ValueError, LookupError, TypeError, AttributeError) as exc:
        raise ModelResponseError(f"not a chat-completion response: {_excerpt(raw)!r}") from exc
    if content is not None and not isinstance(content, str):
        raise ModelResponseError(f"message content is not text: {_excerpt(repr(content))!r}")
    return content or ""


def _correction_note(problem: str) -> str:
    return (
        f"Your previous reply could not be used: {problem}. Reply again with exactly one JSON "
        "object that follows the schema in the instructions: no prose, no markdown."
    )


def _excerpt(value: bytes | str) -> str:
    text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…"


__all__ = [
    "Message",
    "ModelConfig",
    "ModelHTTPError",
    "chat_completion",
    "complete_json",
    "describe_error",
    "extract_json_object",
    "strip_reasoning",
]
