"""The text a hook adds to the model's context (pure: recalled memories in, text out).

For a prompt: the events and facts ``recall_context`` packed, then the best raw messages of
*other* sessions (turns are searchable as soon as they are stored; events come a block later),
then this session's sealed blocks at their decayed levels, all within one token budget and
nothing at all when no event, fact or message bears on the prompt. At a session start: the
session's block context, newest first within the budget. Every string passes through the
credential redaction before it is shown (the stored text stays verbatim).
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagate.core.redaction import redact_text
from stratagate.core.tokens import estimate_tokens
from stratagate.read.recall import render
from stratagate.results import BlockContextEntry, RawHit, RecallContext

RAW_CHARS = 400
"""The longest raw message shown (a hit is a pointer to the message, not the message)."""
REPLY_CHARS = 300
TAIL_PREFIX = "tail:"
"""The id prefix of the open-tail entry of a block context (turns not yet sealed)."""


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


def raw_hit_text(hit: RawHit, shown: set[str]) -> str:
    """One raw hit as a context line (when, who, in which session, what, its id), a user
    message followed by the reply to it unless that is among ``shown`` (the ids of messages
    already shown, which this extends)."""
    message = hit.message
    session = (hit.thread_id or "-")[:8]
    lines = [
        f"- {message.created_at:%Y-%m-%d} {message.role} in session {session}: "
        f"{clip(message.content, RAW_CHARS)} [message {message.id}]"
    ]
    shown.add(message.id)
    reply = next(
        (
            m
            for m in hit.nearby
            if m.role == "assistant" and m.created_at > message.created_at and m.content.strip()
        ),
        None,
    )
    if message.role == "user" and reply is not None and reply.id not in shown:
        lines.append(f"  {reply.role}: {clip(reply.content, REPLY_CHARS)}")
        shown.add(reply.id)
    return "\n".join(lines)


def raw_texts(hits: Sequence[RawHit]) -> list[str]:
    """The hits' lines, each message shown once (a reply shown under its prompt is not
    repeated as a hit of its own, nor under another prompt)."""
    shown: set[str] = set()
    return [raw_hit_text(hit, shown) for hit in hits if hit.message.id not in shown]


def block_text(entry: BlockContextEntry) -> str:
    return f"[{entry.label}, turns {entry.turn_range[0]}-{entry.turn_range[1]}]\n{entry.content}"


def _pack(texts: Sequence[str], budget: int) -> tuple[list[str], int]:
    """The texts, in order, that fit in ``budget`` tokens, and the tokens they take."""
    chosen, used = [], 0
    for text in texts:
        cost = estimate_tokens(text)
        if used + cost <= budget:
            chosen.append(text)
            used += cost
    return chosen, used


def prompt_context(
    namespace: str,
    recalled: RecallContext,
    raw_hits: Sequence[RawHit],
    *,
    thread_id: str,
    token_budget: int,
    batch_ids: Sequence[str] = (),
) -> str | None:
    """What the model sees before it answers a prompt, or ``None`` when nothing bears on it."""
    others = [hit for hit in raw_hits if hit.thread_id != thread_id]
    if not recalled.events and not recalled.elements and not others:
        return None
    shown = [*recalled.events, *recalled.elements]  # its matching turns: the raw hits below
    left = max(0, token_budget - sum(entry.tokens for entry in shown))
    raw, used = _pack(raw_texts(others), left)
    left -= used
    sealed = [e for e in recalled.blocks if not e.id.startswith(TAIL_PREFIX)]
    blocks, _ = _pack([block_text(e) for e in reversed(sealed)], left)
    parts = [
        f"Long-term memory (stratagate, namespace {namespace}) recalled for this prompt; "
        "cite the ids you use."
    ]
    recalled_text = render(recalled.events, recalled.elements, [])
    if recalled_text:
        parts.append(recalled_text)
    if raw:
        parts.append("From earlier sessions:\n" + "\n".join(raw))
    if blocks:
        parts.append("This session, sealed so far:\n\n" + "\n\n".join(reversed(blocks)))
    if batch_ids:
        parts.append(
            f"(Logged as retrieval batches {', '.join(batch_ids)}: assess_retrieval can cite them.)"
        )
    return redact_text("\n\n".join(parts))


def session_context(
    namespace: str, entries: Sequence[BlockContextEntry], *, token_budget: int
) -> str | None:
    """The session's block context for a session start, newest first within the budget, or
    ``None`` when the session has nothing stored yet."""
    chosen, _ = _pack([block_text(e) for e in reversed(entries)], token_budget)
    if not chosen:
        return None
    header = (
        f"Long-term memory (stratagate, namespace {namespace}): this session so far, older "
        "blocks at their decayed levels."
    )
    return redact_text("\n\n".join([header, *reversed(chosen)]))


__all__ = [
    "block_text",
    "clip",
    "prompt_context",
    "raw_hit_text",
    "raw_texts",
    "session_context",
]
