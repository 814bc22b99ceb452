"""Plain-text layout for the command line: display width (CJK counts double), clipping,
wrapping, aligned tables and the progress line. Pure functions, no I/O."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

WIDTH = 100
"""Columns every line of human-readable output stays within."""

ELLIPSIS = "…"
_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


def char_width(char: str) -> int:
    """Terminal columns of one character: wide and full-width characters take two."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes on one line."""
    return sum(char_width(char) for char in text)


def one_line(text: str) -> str:
    """Line breaks (with the blanks around them) and tabs become single spaces; runs of spaces
    within a line are kept, so pre-aligned text stays aligned."""
    return _BREAKS.sub(" ", text).replace("\t", " ").rstrip()


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to at most ``width`` columns with an ellipsis when cut."""
    flat = one_line(text)
    if display_width(flat) <= width:
        return flat
    kept: list[str] = []
    used = 0
    for char in flat:
        step = char_width(char)
        if used + step > width - 1:
            break
        kept.append(char)
        used += step
    return "".join(kept).rstrip() + ELLIPSIS


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (never cut)."""
    return text + " " * max(0, width - display_width(text))


def wrap(text: str, width: int, *, indent: str = "", max_lines: int | None = None) -> list[str]:
    """Word-wrap ``text`` (paragraphs kept) into lines of at most ``width`` columns.

    Words wider than a line, and CJK runs without spaces, are broken between characters.
    With ``max_lines`` (a preview) blank lines are dropped, the output is cut there and its
    last line ends with an ellipsis.
    """
    room = max(8, width - display_width(indent))
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        if max_lines is not None and not paragraph.strip():
            continue
        lines.extend(_wrap_paragraph(paragraph, room))
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = clip(lines[-1] + " " + ELLIPSIS, room)
    return [indent + line if line else indent.rstrip() for line in lines]


def _wrap_paragraph(paragraph: str, room: int) -> list[str]:
    lines: list[str] = []
    current, used = "", 0
    for word in paragraph.split():
        width = display_width(word)
        gap = 1 if current else 0
        if used + gap + width <= room:
            current, used = current + " " * gap + word, used + gap + width
            continue
        if current:
            lines.append(current)
            current, used = "", 0
        for char in word:  # a word that still does not fit is broken between characters
            step = char_width(char)
            if used + step > room:
                lines.append(current)
                current, used = "", 0
            current, used = current + char, used + step
    if current or not lines:
        lines.append(current)
    return lines


def clip_start(text: str, width: int) -> str:
    """``text`` on one line, its start cut (an ellipsis first) to keep its end within ``width``
    columns: how a path keeps its file name."""
    flat = one_line(text)
    if display_width(flat) <= width:
        return flat
    kept: list[str] = []
    used = 0
    for char in reversed(flat):
        step = char_width(char)
        if used + step > width - 1:
            break
        kept.append(char)
        used += step
    return ELLIPSIS + "".join(reversed(kept)).lstrip()


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int = WIDTH,
    keep_end: bool = False,
) -> list[str]:
    """Aligned columns separated by two spaces; the last column is clipped to fit ``width``
    (at its end, or at its start with ``keep_end``, for paths)."""
    cells = [[one_line(cell) for cell in row] for row in rows]
    columns = len(headers)
    widths = [
        max([display_width(headers[i])] + [display_width(row[i]) for row in cells])
        for i in range(columns)
    ]
    lead = sum(widths[:-1]) + 2 * (columns - 1)
    last = max(8, width - lead)
    lines = []
    for row in [list(headers), *cells]:
        head = "  ".join(pad(cell, widths[i]) for i, cell in enumerate(row[:-1]))
        tail = (clip_start if keep_end else clip)(row[-1], last)
        lines.append(f"{head}  {tail}".rstrip() if columns > 1 else tail)
    return lines


def progress_line(
    done: int,
    total: int,
    elapsed: float,
    *,
    namespaces: tuple[int, int] | None = None,
    bar: int = 30,
) -> str:
    """``[#####.....] 40/96 turns · 1/3 namespaces · 12.3 turns/s · ETA 5s``.

    ``namespaces`` (done, total) is shown when given; the rate is 0 until time has passed, and
    the ETA is shown once there is a rate and work is left.
    """
    share = done / total if total else 1.0
    filled = min(bar, round(share * bar))
    rate = done / elapsed if elapsed > 0 else 0.0
    parts = [f"[{'#' * filled}{'.' * (bar - filled)}] {done:>{len(str(total))}}/{total} turns"]
    if namespaces is not None:
        finished, count = namespaces
        parts.append(f"{finished:>{len(str(count))}}/{count} namespaces")
    parts.append(f"{rate:.1f} turns/s")
    if rate > 0 and done < total:
        parts.append(f"ETA {duration((total - done) / rate)}")
    return " · ".join(parts)


def duration(seconds: float) -> str:
    """``8s``, ``3m05s``, ``2h07m``: a span of time, rounded up to the unit shown."""
    whole = math.ceil(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


__all__ = [
    "ELLIPSIS",
    "WIDTH",
    "char_width",
    "clip",
    "clip_start",
    "display_width",
    "duration",
    "one_line",
    "pad",
    "progress_line",
    "table",
    "wrap",
]
