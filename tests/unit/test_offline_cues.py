"""Offline cue rules: what a switch or usage sentence moves from and to (EN + ZH)."""

from __future__ import annotations

import pytest

from stratagate.offline.cues import is_cancelled, kinds, switch_targets, usage_target


@pytest.mark.parametrize(
    ("sentence", "old", "new"),
    [
        ("We switched from npm to pnpm last week.", "npm", "pnpm"),
        ("Let's switch to pnpm then.", None, "pnpm"),
        ("For hosting, we moved to Fly.io in Tokyo.", None, "Fly.io"),
        ("决定了：服务器改用阿里云上海区域，不用 Fly.io 了。", "Fly.io", "阿里云上海区域"),
        ("我们从 npm 改用 pnpm 了。", "npm", "pnpm"),
        ("Then no hosted Sentry: we send logs to our endpoint.", "Sentry", None),
        ("No hosted Sentry: we send logs to our endpoint.", "Sentry", None),
        ("Crash logs go to our endpoint instead of hosted Sentry.", "hosted Sentry", None),
    ],
)
def test_switch_targets(sentence: str, old: str | None, new: str | None) -> None:
    found_old, found_new = switch_targets(sentence)
    assert found_old == old
    if new is not None:
        assert found_new == new


@pytest.mark.parametrize(
    ("sentence", "target"),
    [
        ("We'll use npm for packages.", "npm"),
        ("Good point. Let's keep PostgreSQL.", "PostgreSQL"),
        ("Stack: React Native with Expo for the app.", "React Native"),
        ("CI: let's set up GitHub Actions to run tests.", "GitHub Actions"),
        ("就用 PostgreSQL，不换了。", "PostgreSQL"),
    ],
)
def test_usage_targets(sentence: str, target: str) -> None:
    assert usage_target(sentence) == target


def test_then_no_capitalised_product_is_a_change_but_a_capital_no_alone_is_not() -> None:
    assert kinds("Then no hosted Sentry: we'll send crash logs to our own endpoint.")[0] == "change"
    assert "change" not in kinds("No Problem at all, see you.")


def test_cancellation_wording_in_both_languages() -> None:
    assert is_cancelled("The Hangzhou offsite is called off.")
    assert is_cancelled("团建取消了。")
    assert not is_cancelled("The offsite is on March 27.")
