"""Text helpers of the offline heuristics: sentences, words (English and Chinese), content words.

Han text is segmented with jieba, imported on first use with its start-up logging silenced.
Everything here is pure and deterministic (jieba's default dictionary is fixed).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from types import ModuleType

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\bSt\.)"
    r"[\"')\]]*\s+(?=\S)|(?<=[。！？；;])\s*|\n+"
)
"""Sentence ends: after . ! ? (not a title such as "Dr.") and Chinese stops, and line breaks."""
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]|[A-Za-z]|\d+(?:[.,:]\d+)*")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_SPACES = re.compile(r"\s+")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


ENGLISH_STOPWORDS = _word_set(
    """
    a about above after again against all almost also although always am an and any anyway
    are aren't around as at be because been before being below between both but by can can't
    cannot could couldn't did didn't do does doesn't doing don't down during each either else
    even ever every few for from further get gets getting go goes going gone gonna got gotta
    had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
    him himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself
    just let let's lot lots made make makes many may maybe me might more most much must my
    myself need needs no nor not now of off oh ok okay on once one only or other our ours
    ourselves out over own pretty quite rather really right said same say says see seems she
    she'd she'll she's should shouldn't since so some something sometimes still such sure
    than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've thing things think this those though through to too totally
    toward under until up upon us very via was wasn't way we we'd we'll we're we've well were
    weren't what what's whatever when when's where where's whether which while who who's whom
    whose why why's will with won't would wouldn't yeah yes yet you you'd you'll you're you've
    your yours yourself yourselves hey hi hello thanks thank wow cool awesome great good nice
    glad sounds sound amazing lol haha hmm btw wanna kinda sorta stuff super definitely
    absolutely also anything everything nothing someone everyone anyone lately recently
    """
)
HAN_STOPWORDS = _word_set(
    """
    我们 你们 他们 她们 它们 我的 你的 他的 她的 这个 那个 这些 那些 什么 怎么 因为 所以 但是
    然后 就是 还是 已经 一个 没有 可以 自己 这样 那样 现在 觉得 知道 真的 一下 一些 一起
    非常 特别 有点 如果 虽然 或者 而且 不过 还有 这里 那里 时候 我们的 大家 好的 谢谢
    """
)


@cache
def _jieba() -> ModuleType:
    """jieba, imported once with its logger silenced (it prints on dictionary load, and a
    traceback when it cannot write its cache), its dictionary cache kept in a private per-user
    directory (``jieba_cache_dir``), not as one shared file in the system temp directory that
    another local user could plant (jieba loads it with ``marshal``)."""
    logging.getLogger("jieba").setLevel(logging.CRITICAL)
    import jieba

    jieba.setLogLevel(logging.CRITICAL)
    private = jieba_cache_dir()
    if private is not None:
        jieba.dt.tmp_dir = str(private)
        return jieba
    with tempfile.TemporaryDirectory(prefix="stratagate-jieba-") as scratch:  # 0700, ours
        jieba.dt.tmp_dir = scratch
        jieba.dt.initialize()  # build the dictionary now; its cache goes with the directory
    return jieba


def jieba_cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/stratagate/jieba`` (else ``~/.cache/…``), made 0700 and checked to be
    this user's alone; ``None`` when it cannot be (then no cache is kept)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(base) / "stratagate" / "jieba"
    try:
        directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
        status = directory.lstat()
    except OSError:
        return None
    owner = getattr(os, "getuid", lambda: status.st_uid)()
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != owner:
        return None
    if stat.S_IMODE(status.st_mode) & 0o077:
        try:
            os.chmod(directory, 0o700)
        except OSError:
            return None
    return directory


def has_han(text: str) -> bool:
    """True when ``text`` contains at least one Han character."""
    return _HAN.search(text) is not None


def clean(text: str) -> str:
    """Collapse runs of whitespace and trim."""
    return _SPACES.sub(" ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (English and Chinese punctuation, line breaks), trimmed, non-empty."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def words(text: str) -> list[str]:
    """Lower-case word tokens: Latin words and numbers as written, Han runs segmented by jieba."""
    tokens: list[str] = []
    position = 0
    for run in _HAN_RUN.finditer(text):
        tokens.extend(_latin_words(text[position : run.start()]))
        tokens.extend(word for word in _jieba().lcut(run.group()) if word.strip())
        position = run.end()
    tokens.extend(_latin_words(text[position:]))
    return tokens


def _latin_words(text: str) -> Iterable[str]:
    return (match.group().lower().replace("’", "'") for match in _LATIN_WORD.finditer(text))


def is_content_word(word: str) -> bool:
    """True for words that carry topic: not a stop word, not a bare number, long enough."""
    if has_han(word):
        return len(word) >= 2 and word not in HAN_STOPWORDS
    if word.isdigit():
        return False
    return len(word) >= 3 and word not in ENGLISH_STOPWORDS


def content_words(text: str) -> list[str]:
    """The content words of ``text`` in order of appearance (repeats kept)."""
    return [word for word in words(text) if is_content_word(word)]


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis."""
    text = clean(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if not has_han(cut) and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-–—") + "…"


def top_words(texts: Iterable[str], limit: int) -> list[str]:
    """The ``limit`` most frequent content words across ``texts`` (ties: first seen wins)."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in content_words(text):
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: first seen first
    return [word for word, _ in ranked[:limit]]


__all__ = [
    "ENGLISH_STOPWORDS",
    "HAN_STOPWORDS",
    "clean",
    "content_words",
    "has_han",
    "is_content_word",
    "split_sentences",
    "top_words",
    "truncate",
    "words",
]
