"""Search text normalisation and tokenisation (jieba words plus Han bigrams)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.core.search_text import (
    normalize_search_text,
    search_tokens,
    stem,
    weighted_tokens,
    word_tokens,
)
from stratagate.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[2]


def test_normalize_search_text() -> None:
    assert normalize_search_text("  ＡＢＣ　１２３\n\tStraße  ") == "abc 123 strasse"
    assert normalize_search_text("") == ""
    with pytest.raises(InvalidInputError):
        normalize_search_text(None)  # type: ignore[arg-type]


def test_latin_words_split_on_punctuation_apostrophes_and_underscores() -> None:
    assert word_tokens("Caroline's NEW job -- at Google! (2023)") == [
        "caroline",
        "s",
        "new",
        "job",
        "at",
        "google",
        "2023",
    ]
    assert word_tokens("snake_case v2.0") == ["snake", "case", "v2", "0"]


@given(
    st.text(st.sampled_from("aZ9_ -'.\t\x00\x1c\x1f\x7f"))
    | st.text(st.characters(max_codepoint=127))
    | st.text()
)
def test_words_are_the_runs_of_letters_and_digits(text: str) -> None:
    """Whatever path tokenises it (ASCII text has its own, without the regex), a text's words
    are the maximal runs of letters and digits of its normalised form (no Han here)."""
    normalized = normalize_search_text(text)
    if not any("\u3400" <= char <= "\U0003134f" for char in normalized):
        assert word_tokens(text) == re.findall(r"[^\W_]+", normalized)


def test_search_tokens_are_the_words_stemmed() -> None:
    text = "Caroline's NEW job -- at Google! (2023) Painted paintings"
    assert search_tokens(text) == [stem(word) for word in word_tokens(text)]
    assert search_tokens(text)[-2:] == ["paint", "paint"]


@pytest.mark.parametrize(
    ("words", "stemmed"),
    [
        (["paint", "paints", "painted", "painting"], "paint"),
        (["camp", "camps", "camped", "camping"], "camp"),
        (["class", "classes"], "class"),
        (["story", "stories"], "story"),
        (["run", "running"], "run"),
        (["stop", "stopped", "stops"], "stop"),
        (["love", "loved", "loving", "loves"], "lov"),
        (["hike", "hiked", "hiking", "hikes"], "hik"),
        (["pass", "passed", "passes"], "pass"),
    ],
)
def test_stem_conflates_inflections(words: list[str], stemmed: str) -> None:
    assert {stem(word) for word in words} == {stemmed}


@pytest.mark.parametrize("word", ["is", "was", "his", "bus", "thing", "need", "2023", "v2", "北京"])
def test_stem_leaves_short_words_digits_and_han_alone(word: str) -> None:
    assert stem(word) == word


@given(st.text(min_size=1, max_size=12))
def test_stem_changes_only_ascii_letter_words_and_never_empties_them(word: str) -> None:
    result = stem(word)
    if not (word.isascii() and word.isalpha()):
        assert result == word
    else:
        assert result and word.startswith(result[:-1])


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


@pytest.mark.slow
def test_jieba_initialises_quietly() -> None:
    code = "from stratagate.core.search_text import search_tokens; print(search_tokens('卡洛琳做了演讲'))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "演讲" in done.stdout
    assert done.stderr == ""
