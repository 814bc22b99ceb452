"""Credential redaction: every documented shape is masked, prose is left alone, and masking is
idempotent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.redaction import PATTERNS, contains_secret, redact_text, redact_value


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.kind)
def test_every_example_is_masked_with_its_kind(pattern) -> None:
    text = f"config: {pattern.example} (end)"
    masked = redact_text(text)
    assert f"[redacted:{pattern.kind}]" in masked
    secret_part = pattern.regex.search(pattern.example)
    assert secret_part is not None
    hidden = secret_part.groupdict().get("secret") or secret_part.group(0)
    assert hidden not in masked
    assert masked.startswith("config: ") and masked.endswith(" (end)")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abc123def456ghi", "Authorization: Bearer [redacted:bearer]"),
        ("export OPENAI_API_KEY=sk-proj-9f8e7d6c5b4a3210ffee", "OPENAI_API_KEY=[redacted:"),
        ('{"password": "hunter2"}', '{"password": "[redacted:password]"}'),
        ("db_password=correct-horse", "db_password=[redacted:password]"),
        ("client_secret: 0a1b2c3d4e5f6a7b", "client_secret: [redacted:assignment]"),
    ],
)
def test_the_name_of_a_credential_stays_and_its_value_goes(text: str, kept: str) -> None:
    assert kept in redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Let's switch the monorepo to pnpm next week.",
        "We use scikit-learn; sk-learn-is-a-great-library is its nickname.",
        "The bearer of bad news arrived with the token of friendship.",
        "Set max_tokens=1000 and keep the author=Priya field.",
        "The secret: keeping calm.",
        "task-force meeting at 10:00, ghost_town, AKIA is a word",
    ],
)
def test_prose_and_ordinary_settings_are_not_masked(text: str) -> None:
    assert redact_text(text) == text
    assert not contains_secret(text)


def test_values_are_redacted_all_the_way_down_keys_included() -> None:
    value = {
        "tool": "shell",
        "arguments": {"cmd": "curl -H 'Authorization: Bearer tok_12345678abc'"},
        "result": ["ok", {"ghp_abcdefghijklmnopqrstuvwxyz0123": 1}, 3, None, True],
    }
    masked = redact_value(value)
    assert masked["arguments"]["cmd"] == "curl -H 'Authorization: Bearer [redacted:bearer]'"
    assert masked["result"][1] == {"[redacted:github_token]": 1}
    assert masked["result"][2:] == [3, None, True]
    assert value["arguments"]["cmd"].endswith("tok_12345678abc'")  # the input is not changed


@given(st.text())
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


@given(st.lists(st.sampled_from([p.example for p in PATTERNS]), min_size=1), st.text())
def test_no_example_secret_survives_in_any_text(examples: list[str], filler: str) -> None:
    text = f" {filler} ".join(examples)
    masked = redact_text(text)
    assert [p.kind for p in PATTERNS if p.regex.search(masked)] == []


def _every_pattern_scanned(text: str) -> str:
    """The rule without the trigger prefilter: every pattern runs over the whole text."""
    import functools

    from stratagate.core import redaction

    for pattern in PATTERNS:
        text = pattern.regex.sub(functools.partial(redaction._mask, kind=pattern.kind), text)
    return text


@given(
    st.lists(
        st.one_of(
            st.sampled_from([p.example for p in PATTERNS]),
            st.sampled_from(["Bearer", "PASSWORD=", "Api-Key: ", "sk-", "eyJ", "ghp_", "xox"]),
            st.text(),
        ),
        max_size=6,
    )
)
def test_the_trigger_prefilter_never_changes_the_result(parts: list[str]) -> None:
    text = "".join(parts)
    assert redact_text(text) == _every_pattern_scanned(text)
