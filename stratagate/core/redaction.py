"""Credential redaction: the patterns a surface masks before text leaves it.

Stored L5 text stays verbatim (it is the provenance); the surfaces that show memory to people or
to other programs (the Memory UI, captured hook text when the user opts in) pass every string
through ``redact_text``. Each pattern replaces the secret part with ``[redacted:<kind>]`` and
keeps what names it (``api_key=``, ``Bearer``), so a reader sees that a credential was there and
of what kind. Redacting redacted text changes nothing (the markers match no pattern).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any


@dataclass(frozen=True, slots=True)
class Pattern:
    """One credential shape: ``regex`` finds it; group ``secret`` (or the whole match) is masked.

    A pattern that keeps a name (``db_password=``) matches from its keyword on and masks only
    the value: the rest of the name stays as it was, and no pattern starts with a scan over
    every word (which made a megabyte of prose take most of a second)."""

    kind: str
    regex: re.Pattern[str]
    example: str
    """A made-up value of this shape, for the docs and the tests (never a real credential)."""
    triggers: tuple[str, ...]
    """Lower-case literals one of which every match holds: text holding none is not scanned."""


def _p(kind: str, regex: str, example: str, triggers: tuple[str, ...], flags: int = 0) -> Pattern:
    return Pattern(kind, re.compile(regex, flags), example, triggers)


PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        ("-----begin",),
        re.DOTALL,
    ),
    _p(
        "openai_key",
        r"\bsk-(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{16,}",
        "sk-proj-abcdefghijklmnop1234",
        ("sk-",),
    ),
    _p(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _p(
        "aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "AKIAABCDEFGHIJKLMNOP", ("akia", "asia")
    ),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "xoxb-1234567890-abcdefghij", ("xox",)),
    _p(
        "google_api_key",
        r"\bAIza[0-9A-Za-z_\-]{35}\b",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        ("aiza",),
    ),
    _p(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlXzEy",
        ("eyj",),
    ),
    _p(
        "bearer",
        r"\bBearer\s+(?P<secret>(?=[A-Za-z0-9_\-\.=+/~]*\d)[A-Za-z0-9_\-\.=+/~]{8,})",
        "Bearer abcdef0123456789",
        ("bearer",),
        re.IGNORECASE,
    ),
    _p(
        "password",
        r"""(?:password|passwd|passphrase|pwd)(?![A-Za-z0-9])"""
        r"""(?P<sep>["']?\s*[:=]\s*["']?)(?P<secret>[^\s"',;&}{\]\[]{3,})""",
        "password=hunter2",
        ("password", "passwd", "passphrase", "pwd"),
        re.IGNORECASE,
    ),
    _p(
        "assignment",
        r"""(?:api[_\-]?key|secret|token|access[_\-]?key)(?![A-Za-z0-9])"""
        r"""(?P<sep>["']?\s*[:=]\s*["']?)(?P<secret>[^\s"',;&}{\]\[]{8,})""",
        "api_key=abcd1234efgh",
        (
            "api_key",
            "api-key",
            "apikey",
            "secret",
            "token",
            "access_key",
            "access-key",
            "accesskey",
        ),
        re.IGNORECASE,
    ),
)
"""Every pattern, most specific first (a key inside ``api_key=sk-…`` is named by its shape)."""


def redact_text(text: str) -> str:
    """``text`` with every credential pattern's secret replaced by ``[redacted:<kind>]``."""
    if not text:
        return text
    lowered = text.lower()
    for pattern in PATTERNS:
        if any(trigger in lowered for trigger in pattern.triggers):
            text = pattern.regex.sub(partial(_mask, kind=pattern.kind), text)
    return text


def _mask(match: re.Match[str], kind: str) -> str:
    groups = match.groupdict()
    secret = groups.get("secret")
    if secret is None:
        return f"[redacted:{kind}]"
    start, end = match.span("secret")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + f"[redacted:{kind}]" + whole[end - offset :]


def redact_value(value: Any) -> Any:
    """A JSON-like value with every string in it (keys included) passed through ``redact_text``."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds anything a pattern would mask."""
    return redact_text(text) != text


__all__ = ["PATTERNS", "Pattern", "contains_secret", "redact_text", "redact_value"]
