"""A deterministic token estimate, used by the layer length guard and context budgets.

Rule: every Han, Kana or Hangul character counts 1; every other maximal run of non-whitespace
characters (CJK characters also end a run) counts ``ceil(len / 4)``; whitespace counts 0.
Appending text can only extend the last run or add new ones, so the estimate is monotone.
"""

from __future__ import annotations

import re

_CJK = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005\u3007"  # 々 〇
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # halfwidth Katakana
    "\U00020000-\U0003134f"  # CJK Extensions B-G
)
_PIECE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")
_RUN_TOKENS = tuple((length + 3) // 4 for length in range(256))
"""The tokens of a run of each length below 256."""


def estimate_tokens(text: str) -> int:
    """Estimate the model tokens of ``text`` (empty or blank text is 0)."""
    # the common case (ASCII needs no scan): no CJK, so runs are exactly the split() words
    if text.isascii() or _HAS_CJK.search(text) is None:
        lengths = list(map(len, text.split()))
        if max(lengths, default=0) < len(_RUN_TOKENS):  # a table lookup per run, all in C
            return sum(map(_RUN_TOKENS.__getitem__, lengths))
        return sum([(length + 3) // 4 for length in lengths])
    total = 0
    for match in _PIECE.finditer(text):
        length = match.end() - match.start()
        total += 1 if length == 1 else -(-length // 4)
    return total


__all__ = ["estimate_tokens"]
