"""recall_context shows the conversation turns that match the question (issue 25)."""

from __future__ import annotations

from stratagate import StrataGate

TURNS = [
    ("What did you do last weekend?", "I went to a pottery class with my sister."),
    ("Nice. Anything else?", "We also watched a film."),
    ("How is the garden?", "The tomatoes are finally red."),
    ("Any plans?", "Not yet."),
    ("Bye", "Bye"),
]


def _memory() -> StrataGate:
    return StrataGate.in_memory(
        block_turn_size=2, summarizer="offline", extractor="offline", element_projector="offline"
    )


def test_recall_shows_the_matching_message_and_the_reply_after_it() -> None:
    with _memory() as memory:
        for user, assistant in TURNS:
            memory.append_turn(user, assistant)
        context = memory.recall_context("what did you do last weekend")
        shown = [entry.content for entry in (memory.list_blocks()[0].l5_raw)]
        texts = [entry.text for entry in context.messages]
        assert all(entry.kind == "message" for entry in context.messages)
        assert any(shown[0] in text for text in texts)
        assert any("pottery class" in text for text in texts)  # the reply, matched by no word
        assert context.text.startswith("Matching conversation turns:")
        assert len({entry.id for entry in context.messages}) == len(context.messages)
        assert context.tokens == sum(
            e.tokens for e in [*context.events, *context.elements, *context.messages]
        )
        assert context.tokens <= context.token_budget


def test_matching_turns_stay_inside_the_budget_and_skip_the_shown_tail() -> None:
    with _memory() as memory:
        for user, assistant in TURNS:
            memory.append_turn(user, assistant)
        tight = memory.recall_context("pottery class weekend", token_budget=30)
        assert tight.tokens <= 30
        assert sum(entry.tokens for entry in tight.messages) <= 30
        tail = {m.id for m in memory.list_open_tail()}
        assert tail  # the last turn is in the open tail, which the context shows whole
        context = memory.recall_context("bye")
        assert not tail & {entry.id for entry in context.messages}
