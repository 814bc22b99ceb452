"""What a hook adds to the model's context: recalled memories and other sessions' messages
within the budget, nothing when nothing bears on the prompt, credentials masked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stratagate.core.tokens import estimate_tokens
from stratagate.integrations.hooks.context import prompt_context, session_context
from stratagate.models import RawMessage
from stratagate.results import BlockContextEntry, RawHit, RecallContext, RecallEntry

AT = datetime(2026, 5, 1, 9, tzinfo=UTC)


def message(id_: str, role: str, content: str, thread: str, minutes: int = 0) -> RawMessage:
    at = AT + timedelta(minutes=minutes)
    return RawMessage(id=id_, role=role, content=content, created_at=at, thread_id=thread)


def hit(
    id_: str, content: str, thread: str, reply: str | None = None, before: str | None = None
) -> RawHit:
    nearby = [] if before is None else [message(f"{id_}-p", "assistant", before, thread, -1)]
    if reply is not None:
        nearby.append(message(f"{id_}-r", "assistant", reply, thread, 1))
    return RawHit(
        id=id_,
        block_id=None,
        thread_id=thread,
        turn_range=(1, 1),
        message=message(id_, "user", content, thread),
        nearby=nearby,
        score=1.0,
    )


def recalled(*events: str, blocks: tuple[BlockContextEntry, ...] = ()) -> RecallContext:
    entries = [
        RecallEntry(kind="event", id=f"evt_{i}", text=text, tokens=estimate_tokens(text),
                    relevance=1.0, weight=1.0)
        for i, text in enumerate(events)
    ]  # fmt: skip
    return RecallContext(
        query="q",
        batch_id="batch_1",
        events=entries,
        blocks=list(blocks),
        tokens=sum(e.tokens for e in entries),
        token_budget=600,
        text="",
    )


def block(id_: str, content: str) -> BlockContextEntry:
    return BlockContextEntry(
        id=id_, thread_id="now", turn_range=(1, 12), level=2, label="L2 summary", content=content
    )


def test_nothing_is_added_when_nothing_bears_on_the_prompt() -> None:
    assert prompt_context("ns", recalled(), [], thread_id="now", token_budget=900) is None
    # a hit in the current session alone is not news to the model
    same = [hit("m1", "we use pnpm", "now")]
    assert prompt_context("ns", recalled(), same, thread_id="now", token_budget=900) is None
    assert session_context("ns", [], token_budget=900) is None


def test_events_then_other_sessions_then_this_sessions_sealed_blocks() -> None:
    text = prompt_context(
        "claude-code/p-1",
        recalled("Switched to pnpm [event evt_0]", blocks=(block("blk_1", "setup talk"),
                                                          block("tail:now", "just now"))),
        [hit("m1", "Let's use pnpm.", "yesterday", reply="Switched to pnpm."),
         hit("m1-r", "Switched to pnpm.", "yesterday"), hit("m2", "here", "now")],
        thread_id="now",
        token_budget=900,
        batch_ids=["batch_1", "batch_2"],
    )  # fmt: skip
    assert text is not None
    assert text.index("Relevant events:") < text.index("From earlier sessions:")
    assert text.index("From earlier sessions:") < text.index("setup talk")
    assert "[message m1]" in text and "assistant: Switched to pnpm." in text
    assert "[message m1-r]" not in text  # the reply is shown once, under its prompt
    assert "just now" not in text and "[message m2]" not in text  # this session's own turns
    assert "claude-code/p-1" in text and "batch_1, batch_2" in text


def test_a_prompt_is_shown_with_its_own_reply_never_the_one_before() -> None:
    hits = [hit("m1", "And we deploy to Fly.io.", "old", before="Switched to pnpm.")]
    text = prompt_context("ns", recalled(), hits, thread_id="now", token_budget=900)
    assert text is not None and "pnpm" not in text
    hits = [hit("m2", "Deploy where?", "old", reply="To Fly.io.", before="Switched to pnpm.")]
    text = prompt_context("ns", recalled(), hits, thread_id="now", token_budget=900)
    assert text is not None and "assistant: To Fly.io." in text and "pnpm" not in text


def test_the_budget_bounds_what_is_added() -> None:
    hits = [hit(f"m{i}", f"pnpm decision number {i} " + "word " * 40, "old") for i in range(20)]
    text = prompt_context("ns", recalled(), hits, thread_id="now", token_budget=200)
    assert text is not None and estimate_tokens(text) <= 200 + 40  # the header and notes
    assert "[message m0]" in text and "[message m19]" not in text


def test_credentials_are_masked_in_what_the_model_sees() -> None:
    hits = [hit("m1", "deploy with api_key=abcd1234efgh5678 please", "old")]
    text = prompt_context("ns", recalled(), hits, thread_id="now", token_budget=900)
    assert text is not None and "abcd1234efgh5678" not in text and "[redacted:" in text
    entries = [block("blk_1", "the token: ghp_abcdefghijklmnopqrstuvwxyz0123")]
    shown = session_context("ns", entries, token_budget=900)
    assert shown is not None and "ghp_abcdefghijkl" not in shown


def test_a_session_start_shows_the_newest_blocks_that_fit() -> None:
    entries = [block(f"blk_{i}", f"block {i} " + "text " * 50) for i in range(10)]
    shown = session_context("ns", entries, token_budget=300)
    assert shown is not None and "block 9" in shown and "block 0" not in shown
    assert shown.index("block 8") < shown.index("block 9")  # oldest of the shown first


def test_security_md_lists_every_redaction_pattern() -> None:
    from pathlib import Path

    from stratagate.core.redaction import PATTERNS

    page = (Path(__file__).resolve().parents[2] / "docs" / "SECURITY.md").read_text()
    section = page.split("## Credentials in captured text", 1)[1]
    listed = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    assert listed == {pattern.kind for pattern in PATTERNS}
