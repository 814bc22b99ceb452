"""The evidence gate: normalise a model's five-field retrieval assessment and check its refs.

The model judges semantic sufficiency; this code enforces the protocol. ``sufficient`` survives
only with at least one accepted ref of the batch and ``next_strategy == "answer"``; otherwise it
becomes ``partial``. A verdict that is not sufficient never keeps ``answer``: it gets
``FALLBACK_STRATEGY`` (``search_raw_memory``, returning to the source messages), which is also
what an unknown or missing strategy becomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from stratagate.errors import InvalidInputError
from stratagate.models import (
    RejectedEvidenceRef,
    RetrievalAssessment,
    Strategy,
    Verdict,
)

MAX_EVIDENCE_REFS = 8
MAX_TEXT_CHARS = 160
FALLBACK_VERDICT: Verdict = "partial"
FALLBACK_STRATEGY: Strategy = "search_raw_memory"
_VERDICTS = frozenset(get_args(Verdict))
_STRATEGIES = frozenset(get_args(Strategy))
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _field(raw: Mapping[Any, Any], snake: str, camel: str) -> Any:
    return raw[snake] if snake in raw else raw.get(camel)


def _verdict(value: Any) -> Verdict:
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if text in _VERDICTS else FALLBACK_VERDICT  # type: ignore[return-value]


def _strategy(value: Any) -> Strategy:
    """A known strategy; camelCase, hyphens and spaces are accepted (``searchRawMemory``)."""
    if not isinstance(value, str):
        return FALLBACK_STRATEGY
    text = _CAMEL_BOUNDARY.sub("_", value.strip())
    text = re.sub(r"[\s-]+", "_", text).lower()
    return text if text in _STRATEGIES else FALLBACK_STRATEGY  # type: ignore[return-value]


def _bounded_text(value: Any) -> str:
    """Free text trimmed to at most ``MAX_TEXT_CHARS``; a list of strings is joined with ``; ``."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        text = "; ".join(str(part).strip() for part in value)
    else:
        text = str(value)
    text = text.strip()
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[: MAX_TEXT_CHARS - 1].rstrip() + "…"


def _ref_items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        return [value]
    return list(value)


def _check_refs(
    items: list[Any], batch: frozenset[str]
) -> tuple[list[str], list[RejectedEvidenceRef]]:
    accepted: list[str] = []
    rejected: list[RejectedEvidenceRef] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        ref = item.strip() if isinstance(item, str) else ""
        if not ref:
            reason, detail = "invalid_ref", "an evidence ref must be a non-empty string"
        elif ref in seen:
            reason, detail = "duplicate", f"{ref!r} was already cited"
        elif ref not in batch:
            reason, detail = "not_in_batch", f"{ref!r} is not in the selected retrieval batch"
        elif len(accepted) >= MAX_EVIDENCE_REFS:
            reason, detail = "limit_exceeded", f"at most {MAX_EVIDENCE_REFS} refs are accepted"
        else:
            reason = ""
        if ref:
            seen.add(ref)
        if reason:
            rejected.append(
                RejectedEvidenceRef(input_index=index, ref=str(item), reason=reason, detail=detail)
            )
        else:
            accepted.append(ref)
    return accepted, rejected


def normalize_assessment(
    raw: Mapping[str, Any], batch_refs: Iterable[str], *, batch_id: str | None = None
) -> RetrievalAssessment:
    """Normalise ``raw`` (snake_case or camelCase keys) against the refs of one retrieval batch.

    Refs are checked in input order (stripped of outer whitespace): not a non-empty string →
    ``invalid_ref``; cited before → ``duplicate``; outside the batch → ``not_in_batch``; beyond
    ``MAX_EVIDENCE_REFS`` accepted → ``limit_exceeded``. ``fit``/``missing`` are cut to 160 chars.
    """
    if not isinstance(raw, Mapping):
        raise InvalidInputError(f"an assessment must be a mapping, got {type(raw).__name__}")
    if isinstance(batch_refs, str) or not isinstance(batch_refs, Iterable):
        raise InvalidInputError("batch_refs must be a collection of ref strings")
    batch = frozenset(ref for ref in batch_refs if isinstance(ref, str))
    refs = _ref_items(_field(raw, "evidence_refs", "evidenceRefs"))
    accepted, rejected = _check_refs(refs, batch)
    verdict = _verdict(raw.get("verdict"))
    strategy = _strategy(_field(raw, "next_strategy", "nextStrategy"))
    if verdict == "sufficient" and not (accepted and strategy == "answer"):
        verdict = FALLBACK_VERDICT
    if verdict != "sufficient" and strategy == "answer":
        strategy = FALLBACK_STRATEGY
    return RetrievalAssessment(
        verdict=verdict,
        evidence_refs=accepted,
        rejected_evidence_refs=rejected,
        fit=_bounded_text(raw.get("fit")),
        missing=_bounded_text(raw.get("missing")),
        next_strategy=strategy,
        batch_id=batch_id,
    )


__all__ = [
    "FALLBACK_STRATEGY",
    "FALLBACK_VERDICT",
    "MAX_EVIDENCE_REFS",
    "MAX_TEXT_CHARS",
    "normalize_assessment",
]
