"""The deterministic block views: L5 rendering, L4 readable transcript, L3 condensed transcript.

No model and no paraphrase: L4 drops system messages, trims outer whitespace and adds labels
(``User:``, ``Assistant:``, ``Tool:``; with a speaker name ``User (Caroline):``), and reduces
recognised tool records to ``[tool NAME] SUMMARY`` lines (summary at most 160 characters, raw
``arguments``/``params``/``input``/``request`` never shown). L3 starts from the same form, drops
user/assistant sentences that are only a ``FILLER_PHRASES`` entry (a message left empty goes)
and replaces later exact copies of long or code-like paragraphs with ``REPEATED_MARKER``.
A length guard keeps ``L3 <= L4 <= rendered L5`` in tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stratagate.core.tokens import estimate_tokens
from stratagate.errors import InvalidInputError
from stratagate.models import Model, RawMessage, parse_input

SUMMARY_CHARS = 160
LONG_PARAGRAPH_CHARS = 80
REPEATED_MARKER = "[repeated content omitted]"
FILLER_PHRASES: tuple[str, ...] = (
    # English greetings, acknowledgements and pure confirmations
    "ok", "okay", "ok thanks", "okay thanks", "ok thank you", "okay thank you", "thanks",
    "thank you", "thanks a lot", "thank you very much", "many thanks", "thx", "got it",
    "sure", "cool", "great", "nice", "perfect", "alright", "all right", "noted", "understood",
    "sounds good", "will do", "no problem", "you're welcome", "hi", "hello", "hey",
    "hi there", "hello there", "hey there", "good morning", "good afternoon", "good evening",
    # Chinese
    "好的", "好", "好滴", "嗯", "嗯嗯", "哦", "噢", "明白", "明白了", "收到", "了解",
    "知道了", "谢谢", "谢谢你", "谢谢您", "多谢", "感谢", "辛苦了", "可以", "行", "没问题",
    "你好", "您好", "嗨", "哈喽",
)  # fmt: skip
"""Sentences removed by L3 after trailing punctuation, extra whitespace and case are ignored.

Bare yes/no answers (``yes``, ``no``, ``是``, ``对``) are deliberately absent: they often carry
the answer to a question.
"""
_FILLERS = frozenset(FILLER_PHRASES)
_FILLER_WORDS = max(len(phrase.split()) for phrase in FILLER_PHRASES)
"""The most words a filler phrase has."""
RAW_ARGUMENT_KEYS = frozenset({"arguments", "params", "input", "request"})
_NAME_KEYS = ("name", "tool", "tool_name", "toolName")
_RESULT_KEYS = ("result", "output", "error")
_ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(
    r"(?:[^.!?…。！？\n]++|[.!?…]++(?!\s|$))*+(?:[.!?…]+(?=\s|$)|[。！？]+|\n|$)\s*", re.DOTALL
)
r"""One sentence: up to the first ``.!?…`` run followed by whitespace or the end, a ``。！？`` run,
a newline or the end, with the whitespace after it. (It matches what the lazy
``.*?(?:[.!?…]+(?=\s|$)|[。！？]+|\n|$)\s*`` does, without its backtracking at every character:
``tests/unit/test_layers.py`` holds the two equal.)"""
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Every character ``str.isspace`` (and so ``str.split``, and a regex ``\\s``) counts as
whitespace (``tests/unit/test_layers.py`` checks the list against both)."""
_TRAILING = WHITESPACE + ".!?…。！？,，、~～;；:："
"""What is ignored at the end of a sentence judged as a filler: whitespace and punctuation."""
_CODE_LINE = re.compile(
    r"^\s*(?:def\s+\w+\s*\(|class\s+\w+\s*[(:{]|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*;?$"
    r"|(?:const|let|var)\s+\w+\s*=|function\b[\w\s]*\(|(?:SELECT|INSERT|UPDATE|DELETE|CREATE)\s)"
    r"|[{};]\s*$|=>|^\s*[}\])]|^(?: {4}|\t)\S",
    re.MULTILINE,
)
"""Heuristic code signals, checked only in multi-line paragraphs: a definition, import,
declaration or SQL keyword opening a line, a line ending in a brace or semicolon, an arrow, a
line opening with a closing bracket, or an indented line."""
_JSON_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)


class DeterministicLayers(Model):
    """The code-made views of a block: L3 condensed, L4 readable, L5 raw messages."""

    l3_condensed: str
    l4_readable: str
    l5_raw: list[RawMessage]


def _messages(messages: Iterable[RawMessage | Mapping[str, Any]]) -> list[RawMessage]:
    if type(messages) is not list and (  # a list needs no ABC check
        isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable)
    ):
        raise InvalidInputError("messages must be a sequence of RawMessage or dicts")
    return [parse_input(RawMessage, message, what="message") for message in messages]


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # keys JSON cannot hold, or a reference cycle
        return str(value)


def _label(message: RawMessage) -> str:
    label = _ROLE_LABELS[message.role]
    return f"{label} ({message.name})" if message.name else label


def render_raw(messages: Iterable[RawMessage | Mapping[str, Any]]) -> str:
    """L5 in full: ``role (name): content`` per message, then each tool call as raw JSON."""
    blocks = []
    for message in _messages(messages):
        head = f"{message.role} ({message.name})" if message.name else message.role
        lines = [f"{head}: {message.content}"]
        traces = message.tool_calls or ()
        lines += [f"Tool call (raw): {_json(trace.model_dump())}" for trace in traces]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _without_raw_arguments(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            key: _without_raw_arguments(item)
            for key, item in value.items()
            if not (isinstance(key, str) and key.casefold() in RAW_ARGUMENT_KEYS)
        }
    if isinstance(value, list | tuple):
        return [_without_raw_arguments(item) for item in value]
    return value


def _bounded(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= SUMMARY_CHARS:
        return text
    return text[: SUMMARY_CHARS - 1].rstrip() + "…"


def _parse_json(text: str) -> Any:
    """The JSON value of ``text`` (a ```json fence allowed), or ``None`` if it is not JSON."""
    stripped = text.strip()
    fenced = _JSON_FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _result_summary(value: Any) -> str:
    """A one-line summary of a tool result, at most 160 characters, without raw arguments."""
    if value is None:
        return ""
    if isinstance(value, str):
        parsed = _parse_json(value)
        return _bounded(value) if parsed is None else _result_summary(parsed)
    if isinstance(value, Mapping):
        clean = _without_raw_arguments(value)
        for key, prefix in (("error", "error: "), ("summary", ""), ("message", "")):
            if isinstance(clean.get(key), str):
                return _bounded(prefix + clean[key])
        return _bounded(_json(clean))
    return _bounded(_json(_without_raw_arguments(value)))


def _tool_line(name: str, result: Any) -> str:
    summary = _result_summary(result)
    return f"[tool {name}] {summary}" if summary else f"[tool {name}]"


def _record_line(record: Any) -> str | None:
    """The tool line of a JSON tool record (a name field plus a result field), else ``None``."""
    if not isinstance(record, Mapping):
        return None
    name = next((record[key] for key in _NAME_KEYS if isinstance(record.get(key), str)), None)
    key = next((key for key in _RESULT_KEYS if key in record), None)
    if not name or key is None:
        return None
    return _tool_line(name, {"error": record[key]} if key == "error" else record[key])


def _tool_record_text(text: str) -> str | None:
    """Tool-role text reduced to tool lines if it is a JSON tool record (or a list of them)."""
    parsed = _parse_json(text)
    records = parsed if isinstance(parsed, list) and parsed else [parsed]
    lines: list[str] = []
    for record in records:
        line = _record_line(record)
        if line is None:
            return None
        lines.append(line)
    return "\n".join(lines)


def _trace_lines(message: RawMessage) -> list[str]:
    return [_tool_line(trace.name, trace.result) for trace in message.tool_calls or ()]


def _text(message: RawMessage) -> tuple[str, bool]:
    """The message text for L4/L3 and whether it is a summarised tool record."""
    text = message.content.strip()
    if message.role == "tool":
        record = _tool_record_text(text)
        if record is not None:
            return record, True
    return text, False


def _block(message: RawMessage, text: str) -> str | None:
    """One labelled message: its text, then one line per tool call; ``None`` when empty."""
    parts = ([text] if text else []) + _trace_lines(message)
    return f"{_label(message)}: " + "\n".join(parts) if parts else None


def _readable(raw: list[RawMessage]) -> Iterator[tuple[RawMessage, str, bool, str | None]]:
    """Each message L4 shows (not system ones): the message, its trimmed text, whether that
    text is a tool record, and its labelled block (``None`` when empty)."""
    for message in raw:
        if message.role == "system":
            continue
        text, is_record = _text(message)
        yield message, text, is_record, _block(message, text)


def readable_transcript(messages: Iterable[RawMessage | Mapping[str, Any]]) -> str:
    """L4: labelled, trimmed user/assistant/tool text and tool summaries; no system messages.
    (The seal makes it with L3 in one pass: ``_both_views``.)"""
    return "\n\n".join(block for *_, block in _readable(_messages(messages)) if block)


def _normalized(text: str) -> str:
    """Whitespace runs as one space, trimmed, case folded (by ``str.split``: a regex is ten
    times slower, and this runs for every sentence a block seals)."""
    return " ".join(text.split()).casefold()


def _is_filler(sentence: str) -> bool:
    """Whether a sentence is only a filler phrase (trailing punctuation, spacing, case ignored).
    A sentence of more words than any phrase is none, told from its first few words alone
    (``casefold`` never makes or removes whitespace)."""
    words = sentence.rstrip(_TRAILING).split(None, _FILLER_WORDS)
    return len(words) <= _FILLER_WORDS and " ".join(words).casefold() in _FILLERS


def _without_fillers(paragraph: str) -> str:
    sentences = [piece for piece in _SENTENCE.findall(paragraph) if piece]
    kept = [piece for piece in sentences if not _is_filler(piece)]
    return paragraph if len(kept) == len(sentences) else "".join(kept).strip()


def _looks_like_code(paragraph: str) -> bool:
    return "\n" in paragraph and _CODE_LINE.search(paragraph) is not None


def _paragraphs(text: str) -> list[tuple[str, bool]]:
    """``(paragraph, is_code)`` pieces: fenced blocks whole, other text split at blank lines."""
    pieces: list[tuple[str, bool]] = []
    cursor = 0
    for fence in _FENCE.finditer(text):
        pieces += [(part, False) for part in _PARAGRAPH_BREAK.split(text[cursor : fence.start()])]
        pieces.append((fence.group(0), True))
        cursor = fence.end()
    pieces += [(part, False) for part in _PARAGRAPH_BREAK.split(text[cursor:])]
    return [(part.strip(), code) for part, code in pieces if part.strip()]


def _condensed_parts(text: str, conversational: bool, seen: set[str]) -> list[str]:
    """Paragraphs of one message's text; fillers are dropped only from user/assistant prose."""
    parts = []
    for paragraph, fenced in _paragraphs(text):
        code = fenced or _looks_like_code(paragraph)
        kept = _without_fillers(paragraph) if conversational and not code else paragraph
        if not kept:
            continue
        # ASCII text casefolds to as many characters and its key is no longer: a short one's
        # key is short too, and need not be made
        if code or len(kept) >= LONG_PARAGRAPH_CHARS or not kept.isascii():
            key = _normalized(kept)
            if code or len(key) >= LONG_PARAGRAPH_CHARS:
                if key in seen:
                    kept = REPEATED_MARKER
                seen.add(key)
        parts.append(kept)
    return parts


def condense_transcript(messages: Iterable[RawMessage | Mapping[str, Any]]) -> str:
    """L3: the L4 form minus filler sentences and later copies of long or code-like paragraphs."""
    return _both_views(_messages(messages))[1]


def _plain_text(messages: list[RawMessage]) -> bool:
    """Whether no message has a tool call or the tool role. Then each message's L4 block is
    its L5 one with the role's label (as long: ``User`` for ``user``) and the content
    trimmed, or nothing (a system message, an empty content): L4 has at most L5's tokens
    (runs never cross the whitespace between blocks, so tokens add up block by block)."""
    return not any(m.tool_calls or m.role == "tool" for m in messages)


def _both_views(raw: list[RawMessage]) -> tuple[str, str, int]:
    """L4 and L3 of ``raw`` in one pass over the messages, and L3's tokens less L4's. The
    blocks are joined by whitespace, so a text's tokens are the sum of its blocks' (no run
    crosses a join): only the blocks L3 changed are estimated."""
    readable: list[str] = []
    condensed: list[str] = []
    more = 0
    seen: set[str] = set()
    for message, text, is_record, block in _readable(raw):
        short = block
        if not is_record:
            kept = "\n\n".join(_condensed_parts(text, message.role in ("user", "assistant"), seen))
            if kept != text:
                short = _block(message, kept)
                more += estimate_tokens(short or "") - estimate_tokens(block or "")
        if block:
            readable.append(block)
        if short:
            condensed.append(short)
    return "\n\n".join(readable), "\n\n".join(condensed), more


def deterministic_layers(messages: Iterable[RawMessage | Mapping[str, Any]]) -> DeterministicLayers:
    """L3, L4 and L5 of ``messages`` with the length guard applied (L3 <= L4 <= rendered L5)."""
    raw = _messages(messages)
    readable, condensed, more = _both_views(raw)
    if not _plain_text(raw):  # else L4 cannot outgrow L5: it need not be rendered to know
        rendered = render_raw(raw)
        if estimate_tokens(readable) > estimate_tokens(rendered):
            readable = rendered
            more = estimate_tokens(condensed) - estimate_tokens(rendered)
    if more > 0:  # L3 would have more tokens than L4
        condensed = readable
    return DeterministicLayers(l3_condensed=condensed, l4_readable=readable, l5_raw=raw)


__all__ = [
    "FILLER_PHRASES",
    "LONG_PARAGRAPH_CHARS",
    "RAW_ARGUMENT_KEYS",
    "REPEATED_MARKER",
    "SUMMARY_CHARS",
    "WHITESPACE",
    "DeterministicLayers",
    "condense_transcript",
    "deterministic_layers",
    "readable_transcript",
    "render_raw",
]
