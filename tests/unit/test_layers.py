"""L3/L4/L5 rules, the length guard and the token estimate."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.core import layers
from stratagate.core.layers import (
    _SENTENCE,
    FILLER_PHRASES,
    REPEATED_MARKER,
    WHITESPACE,
    _is_filler,
    _normalized,
    condense_transcript,
    deterministic_layers,
    readable_transcript,
    render_raw,
)
from stratagate.core.tokens import _HAS_CJK, estimate_tokens
from stratagate.errors import InvalidInputError
from stratagate.models import RawMessage

T0 = datetime(2023, 5, 7, 12, 0, tzinfo=UTC)
LONG = (
    "Here is the deployment checklist we agreed on: build, run the migrations, "
    "restart the workers, then verify the dashboards."
)
CODE = "```python\ndef add(a, b):\n    return a + b\n```"


def msg(role: str, content: str, index: int = 0, **extra: object) -> dict[str, object]:
    return {"id": f"m{index}", "role": role, "content": content, "created_at": T0, **extra}


# --- estimate_tokens -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("abcd", 1),
        ("abcde", 2),
        ("one two", 2),
        ("你好", 2),
        ("こんにちは", 5),
        ("안녕", 2),
        ("abc中def", 3),
        ("hello, 世界!", 5),
    ],
)
def test_estimate_tokens_rule(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


TEXT = st.text(
    alphabet=st.sampled_from(list("ab cd\n\t.,!?{}_") + list("中文好的ひカ한")), max_size=40
)


@given(TEXT, TEXT)
def test_estimate_tokens_is_monotone_under_appending(prefix: str, suffix: str) -> None:
    assert estimate_tokens(prefix + suffix) >= estimate_tokens(prefix)


def by_the_rule(text: str) -> int:
    """The documented rule, spelled out character by character (the oracle)."""
    total, run = 0, 0
    for char in text:
        if char.isspace() or _HAS_CJK.match(char):
            total += -(-run // 4)
            run = 0
            total += 0 if char.isspace() else 1
        else:
            run += 1
    return total + -(-run // 4)


@given(st.text(max_size=80))
def test_estimate_tokens_follows_the_rule_on_any_text(text: str) -> None:
    assert estimate_tokens(text) == by_the_rule(text)


@given(st.lists(st.integers(0, 600), max_size=5), st.sampled_from([" ", "\n", "\u3000"]))
def test_estimate_tokens_follows_the_rule_for_runs_of_any_length(
    lengths: list[int], space: str
) -> None:
    text = space.join("x" * length for length in lengths)
    assert estimate_tokens(text) == by_the_rule(text)


# --- L5 rendering --------------------------------------------------------------------------


def test_render_raw_keeps_everything_including_tool_arguments() -> None:
    messages = [
        msg("system", "You are terse.", 1),
        msg(
            "assistant",
            "  Looking.  ",
            2,
            name="Bot",
            tool_calls=[{"name": "search", "arguments": {"q": "pnpm"}, "result": {"hits": 2}}],
        ),
    ]
    rendered = render_raw(messages)
    assert "system: You are terse." in rendered
    assert "assistant (Bot):   Looking.  " in rendered
    assert '"arguments": {"q": "pnpm"}' in rendered
    assert '"result": {"hits": 2}' in rendered


def test_messages_must_be_a_sequence_of_valid_messages() -> None:
    with pytest.raises(InvalidInputError):
        readable_transcript("not messages")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        readable_transcript([{"id": "x", "role": "robot", "content": "", "created_at": T0}])


# --- L4 ------------------------------------------------------------------------------------


def test_l4_drops_system_trims_and_labels() -> None:
    messages = [
        msg("system", "secret system prompt", 1),
        msg("user", "  Hi!  How  are you?\n", 2, name="Caroline"),
        msg("assistant", "\nFine, thanks. ", 3),
        msg("user", "   ", 4),
    ]
    assert readable_transcript(messages) == (
        "User (Caroline): Hi!  How  are you?\n\nAssistant: Fine, thanks."
    )


def test_l4_reduces_tool_calls_to_name_and_summary_without_arguments() -> None:
    trace = {
        "name": "search_events",
        "arguments": {"query": "ARG-SECRET"},
        "result": {
            "hits": [1, 2, 3],
            "params": {"x": "PARAM-SECRET"},
            "nested": {"request": "REQ-SECRET", "input": "IN-SECRET", "kept": "visible"},
        },
    }
    text = readable_transcript([msg("assistant", "Let me look.", 1, tool_calls=[trace])])
    assert text.startswith("Assistant: Let me look.\n[tool search_events] ")
    assert "visible" in text
    for secret in ("ARG-SECRET", "PARAM-SECRET", "REQ-SECRET", "IN-SECRET"):
        assert secret not in text


def test_l4_tool_summary_is_bounded_to_160_characters() -> None:
    trace = {"name": "fetch", "result": "word " * 200}
    line = readable_transcript([msg("assistant", "", 1, tool_calls=[trace])])
    summary = line.removeprefix("Assistant: [tool fetch] ")
    assert len(summary) <= 160
    assert summary.startswith("word word")


def test_l4_recognises_tool_role_json_records() -> None:
    record = {"name": "weather", "arguments": {"city": "ARG-SECRET"}, "result": "sunny, 21C"}
    fenced = "```json\n" + json.dumps({"tool": "clock", "output": "12:00"}) + "\n```"
    failed = json.dumps({"tool_name": "db", "error": "timeout"})
    text = readable_transcript(
        [
            msg("tool", json.dumps(record), 1),
            msg("tool", fenced, 2),
            msg("tool", failed, 3),
            msg("tool", json.dumps([record, {"name": "x", "result": 1}]), 4),
        ]
    )
    assert text == (
        "Tool: [tool weather] sunny, 21C\n\n"
        "Tool: [tool clock] 12:00\n\n"
        "Tool: [tool db] error: timeout\n\n"
        "Tool: [tool weather] sunny, 21C\n[tool x] 1"
    )


@pytest.mark.parametrize(
    "content",
    [
        "plain tool output, not JSON",
        '{"status": "ok", "rows": 3}',
        '{"name": "no result field"}',
        '[{"name": "a", "result": 1}, "loose"]',
        "{broken json",
    ],
)
def test_l4_keeps_unrecognised_tool_text_unchanged(content: str) -> None:
    assert readable_transcript([msg("tool", f"  {content} ", 1)]) == f"Tool: {content}"


# --- L3 ------------------------------------------------------------------------------------


def test_l3_removes_standalone_english_fillers_only() -> None:
    messages = [
        msg("user", "Ok. Can you check the build?", 1),
        msg("assistant", "Sure! The build is green.\nThanks for asking.", 2),
        msg("user", "  Thank   YOU!!  ", 3),
        msg("assistant", "ok, but the tests are slow.", 4),
    ]
    assert condense_transcript(messages) == (
        "User: Can you check the build?\n\n"
        "Assistant: The build is green.\nThanks for asking.\n\n"
        "Assistant: ok, but the tests are slow."
    )


def test_l3_removes_chinese_fillers_and_empty_messages() -> None:
    messages = [
        msg("user", "好的。谢谢！", 1),
        msg("assistant", "收到。明白了，我会改成 pnpm。", 2),
        msg("user", "可以", 3),
    ]
    assert condense_transcript(messages) == "Assistant: 明白了，我会改成 pnpm。"


def test_l3_keeps_tool_output_that_looks_like_filler() -> None:
    assert condense_transcript([msg("tool", "OK", 1)]) == "Tool: OK"


def test_l3_deduplicates_long_and_code_paragraphs_after_the_first_copy() -> None:
    shouty = LONG.upper().replace(" ", "  ")
    messages = [
        msg("user", f"{LONG}\n\n{CODE}", 1),
        msg("assistant", f"Where is it?\n\n{shouty}", 2),
        msg("user", f"Where is it?\n\n{CODE}", 3),
    ]
    assert condense_transcript(messages) == (
        f"User: {LONG}\n\n{CODE}\n\n"
        f"Assistant: Where is it?\n\n{REPEATED_MARKER}\n\n"
        f"User: Where is it?\n\n{REPEATED_MARKER}"
    )


def test_l3_keeps_unfenced_code_like_paragraph_first_and_marks_the_copy() -> None:
    snippet = "const x = 1;\nconsole.log(x);"
    text = condense_transcript([msg("user", snippet, 1), msg("assistant", snippet, 2)])
    assert text == f"User: {snippet}\n\nAssistant: {REPEATED_MARKER}"


def test_l3_summarises_tool_records_like_l4() -> None:
    messages = [
        msg("tool", json.dumps({"name": "ls", "arguments": {"path": "/SECRET"}, "result": "3"}), 1),
        msg("assistant", "Thanks.", 2, tool_calls=[{"name": "ls", "result": {"files": 3}}]),
    ]
    assert condense_transcript(messages) == (
        'Tool: [tool ls] 3\n\nAssistant: [tool ls] {"files": 3}'
    )


# --- the length guard ----------------------------------------------------------------------


def test_guard_falls_back_to_l5_when_l4_would_be_longer() -> None:
    compact = {"name": "t", "result": {chr(97 + i): i % 10 for i in range(18)}}
    messages = [msg("tool", json.dumps(compact, separators=(",", ":")), 1)]
    readable = readable_transcript(messages)
    assert estimate_tokens(readable) > estimate_tokens(render_raw(messages))
    layers = deterministic_layers(messages)
    assert layers.l4_readable == render_raw(messages)
    assert layers.l3_condensed == layers.l4_readable


def test_guard_falls_back_to_l4_when_l3_would_be_longer() -> None:
    tiny = "```\nx\n```"
    messages = [msg("user", tiny, i) for i in range(4)]
    assert estimate_tokens(condense_transcript(messages)) > estimate_tokens(
        readable_transcript(messages)
    )
    layers = deterministic_layers(messages)
    assert layers.l3_condensed == layers.l4_readable == readable_transcript(messages)


def test_deterministic_layers_keeps_l5_as_validated_messages() -> None:
    messages = [msg("user", "Hello there. We moved to pnpm.", 1), msg("assistant", "Noted.", 2)]
    layers = deterministic_layers(messages)
    assert layers.l5_raw == [RawMessage.model_validate(m) for m in messages]
    assert layers.l3_condensed == "User: We moved to pnpm."
    assert layers.l4_readable == "User: Hello there. We moved to pnpm.\n\nAssistant: Noted."


# --- properties ----------------------------------------------------------------------------

PARAGRAPHS = st.sampled_from(
    [
        "ok",
        "Thanks!",
        "好的。",
        "谢谢",
        "Where is it?",
        "We switched to pnpm because installs were slow.",
        LONG,
        LONG.upper(),
        CODE,
        "```\nx\n```",
        "a = 1;\nb = 2;",
        "卡洛琳上周在学校做了一次关于性别认同的演讲，大家反响很好，她打算下个月再讲一次，并邀请更多的同学来参加。",
        json.dumps({"name": "search", "arguments": {"q": "zzz"}, "result": {"n": 1}}),
        '{"tool":"t","output":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}}',
        json.dumps({"name": "t", "result": dict.fromkeys("abcdefghijklmnopqr", 1)}).replace(
            " ", ""
        ),
    ]
)
CONTENT = st.lists(st.one_of(PARAGRAPHS, st.text(max_size=30)), max_size=4).map(
    lambda parts: "\n\n".join(parts)
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
TRACE = st.fixed_dictionaries(
    {
        "name": st.text(min_size=1, max_size=12),
        "arguments": st.none() | st.dictionaries(st.text(max_size=8), JSONISH, max_size=3),
        "result": JSONISH,
    }
)
MESSAGE = st.builds(
    lambda role, content, name, calls: {
        "id": "m",
        "role": role,
        "content": content,
        "created_at": T0,
        "name": name,
        "tool_calls": calls,
    },
    st.sampled_from(["user", "assistant", "system", "tool"]),
    CONTENT,
    st.none() | st.sampled_from(["Caroline", "Melanie"]),
    st.none() | st.lists(TRACE, max_size=2),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(MESSAGE, max_size=6))
def test_layers_are_ordered_by_tokens(messages: list[dict[str, object]]) -> None:
    layers = deterministic_layers(messages)
    l3, l4 = estimate_tokens(layers.l3_condensed), estimate_tokens(layers.l4_readable)
    assert l3 <= l4 <= estimate_tokens(render_raw(layers.l5_raw))


def _letters(text: str) -> str:
    return "".join(text.split())


def _is_subsequence(small: str, big: str) -> bool:
    remaining = iter(big)
    return all(char in remaining for char in small)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(MESSAGE, max_size=6))
def test_l3_only_deletes_from_l4(messages: list[dict[str, object]]) -> None:
    condensed = _letters(condense_transcript(messages).replace(REPEATED_MARKER, ""))
    assert _is_subsequence(condensed, _letters(readable_transcript(messages)))


# The regex forms the filler rule was first written with: the oracle of the faster str forms.
_REGEX_SPACE = re.compile(r"\s+")
_REGEX_TRAILING = re.compile(r"[\s.!?…。！？,，、~～;；:：]+$")
_LAZY_SENTENCE = re.compile(r".*?(?:[.!?…]+(?=\s|$)|[。！？]+|\n|$)\s*", re.DOTALL)


def test_the_whitespace_list_is_every_character_split_and_regex_treat_as_space() -> None:
    every = (chr(point) for point in range(sys.maxunicode + 1))
    spaces = [c for c in every if c.isspace()]
    assert list(WHITESPACE) == spaces
    assert all(_REGEX_SPACE.fullmatch(c) for c in spaces)
    assert _REGEX_SPACE.sub("", "".join(map(chr, range(0x3100)))) == "".join(
        c for c in map(chr, range(0x3100)) if not c.isspace()
    )


_SENTENCE_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *"okayThanks hiGOT it好的嗯.!?…。！？,，、~～;；:：\n\t\r",
            "\x85",
            "\xa0",
            "\u3000",
            "\u2028",
            "ß",
        ]
    ),
    max_size=30,
)


@given(
    st.one_of(_SENTENCE_TEXT, st.sampled_from(FILLER_PHRASES).map(lambda p: f" {p.upper()} !!\n"))
)
@settings(max_examples=400)
def test_filler_rule_equals_its_regex_form(sentence: str) -> None:
    by_regex = _REGEX_SPACE.sub(" ", _REGEX_TRAILING.sub("", sentence)).strip().casefold()
    assert _is_filler(sentence) == (by_regex in FILLER_PHRASES)
    assert _normalized(sentence) == _REGEX_SPACE.sub(" ", sentence).strip().casefold()


@given(st.text(alphabet=st.sampled_from([*"ab .!?…。！？\n\t\r\x85\u3000"]), max_size=24))
@settings(max_examples=1000)
def test_sentences_split_as_the_lazy_regex_does(text: str) -> None:
    assert _SENTENCE.findall(text) == _LAZY_SENTENCE.findall(text)


def _full_guard(messages: list[dict[str, object]]) -> tuple[str, str]:
    """L3 and L4 as the guard makes them when it always renders L5 (the form before its
    shortcut for text without tools)."""
    rendered = render_raw(messages)
    readable = readable_transcript(messages)
    if estimate_tokens(readable) > estimate_tokens(rendered):
        readable = rendered
    condensed = condense_transcript(messages)
    if estimate_tokens(condensed) > estimate_tokens(readable):
        condensed = readable
    return condensed, readable


@settings(max_examples=150, deadline=None)
@given(st.lists(MESSAGE, max_size=6))
def test_the_guard_decides_as_when_it_always_renders_l5(messages: list[dict[str, object]]) -> None:
    layers = deterministic_layers(messages)
    assert (layers.l3_condensed, layers.l4_readable) == _full_guard(messages)


PLAIN_MESSAGE = st.builds(
    lambda role, content: {"id": "m", "role": role, "content": content, "created_at": T0},
    st.sampled_from(["user", "assistant", "system"]),
    CONTENT,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PLAIN_MESSAGE, max_size=8))
def test_the_guard_on_plain_text_decides_as_the_full_estimates_do(
    messages: list[dict[str, object]],
) -> None:
    """Without tools, the guard counts only the blocks L3 changed (``_both_views``): the same
    decision as estimating both whole texts."""
    layers = deterministic_layers(messages)
    assert (layers.l3_condensed, layers.l4_readable) == _full_guard(messages)


def _every_key_condensed(messages: list[dict[str, object]]) -> str:
    """L3 as it was made when every paragraph's key was normalised (the form before the
    shortcut for short ASCII paragraphs)."""
    seen: set[str] = set()
    blocks = []
    for message in messages:
        parts = []
        for paragraph, fenced in layers._paragraphs(str(message["content"]).strip()):
            code = fenced or layers._looks_like_code(paragraph)
            kept = paragraph if code else layers._without_fillers(paragraph)
            if not kept:
                continue
            key = _normalized(kept)
            if code or len(key) >= layers.LONG_PARAGRAPH_CHARS:
                kept = REPEATED_MARKER if key in seen else kept
                seen.add(key)
            parts.append(kept)
        if parts:
            blocks.append("User: " + "\n\n".join(parts))
    return "\n\n".join(blocks)


_PARAGRAPH = st.builds(
    lambda word, count, spaces: (spaces * " ").join([word] * count),
    st.sampled_from(["ab", "Ab", "ß", "é", "ﬃ", "x."]),
    st.integers(1, 60),
    st.integers(1, 3),
)


@settings(max_examples=300)
@given(st.lists(st.lists(_PARAGRAPH, min_size=1, max_size=3), min_size=1, max_size=4))
def test_l3_keys_only_the_paragraphs_that_may_be_long(paragraphs: list[list[str]]) -> None:
    messages = [msg("user", "\n\n".join(texts), i) for i, texts in enumerate(paragraphs)]
    assert condense_transcript(messages) == _every_key_condensed(messages)
