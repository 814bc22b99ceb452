"""Search text normalisation and tokenisation (jieba words plus Han bigrams)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.errors import InvalidInputError
from stratagate.text import normalize_search_text, search_tokens, weighted_tokens

ROOT = Path(__file__).resolve().parents[2]


def test_normalize_search_text() -> None:
    assert normalize_search_text("  ＡＢＣ　１２３\n\tStraße  ") == "abc 123 strasse"
    assert normalize_search_text("") == ""
    with pytest.raises(InvalidInputError):
        normalize_search_text(None)  # type: ignore[arg-type]


def test_latin_words_split_on_punctuation_apostrophes_and_underscores() -> None:
    assert search_tokens("Caroline's NEW job -- at Google! (2023)") == [
        "caroline",
        "s",
        "new",
        "job",
        "at",
        "google",
        "2023",
    ]
    assert search_tokens("snake_case v2.0") == ["snake", "case", "v2", "0"]


def test_repetitions_are_preserved() -> None:
    assert search_tokens("go Go GO") == ["go", "go", "go"]


def test_han_text_gives_jieba_words_then_overlapping_bigrams() -> None:
    assert search_tokens("我爱北京天安门") == [
        "我",
        "爱",
        "北京",
        "天安门",
        "我爱",
        "爱北",
        "北京",
        "京天",
        "天安",
        "安门",
    ]


def test_one_character_han_run_gives_the_character() -> None:
    assert search_tokens("猫") == ["猫", "猫"]


def test_mixed_scripts_and_chinese_punctuation() -> None:
    assert search_tokens("我们用pnpm，不用npm。") == [
        "我们",
        "用",
        "我们",
        "们用",
        "pnpm",
        "不用",
        "不用",
        "npm",
    ]
    assert search_tokens("，。！？…「」") == []


MIXED = st.text(alphabet=st.sampled_from("我爱北京天安门学校演讲，。！ a_b'c-1\nＰ"))


@settings(deadline=None)  # the first call may pay for loading jieba's dictionary
@given(st.text(max_size=40) | MIXED)
def test_tokens_are_normalised_words_never_punctuation(text: str) -> None:
    for token in search_tokens(text):
        assert token.isalnum()
        assert normalize_search_text(token) == token


def test_weighted_tokens_repeat_fields_by_weight() -> None:
    assert weighted_tokens([("Alpha beta", 2), ("gamma", 1), ("ignored", 0)]) == [
        "alpha",
        "beta",
        "alpha",
        "beta",
        "gamma",
    ]


@pytest.mark.parametrize("field", [("x", -1), ("x", 1.5), ("x", True), (3, 1), ("x",)])
def test_weighted_tokens_rejects_bad_fields(field: object) -> None:
    with pytest.raises(InvalidInputError):
        weighted_tokens([field])  # type: ignore[list-item]


def test_jieba_initialises_quietly() -> None:
    code = "from stratagate.text import search_tokens; print(search_tokens('卡洛琳做了演讲'))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "演讲" in done.stdout
    assert done.stderr == ""
