"""The rules every public argument meets at the edge (issue 21): checked once, in the façade,
before any message is built, so that no value of any type reaches a handler as a raw
``TypeError`` or ``RecursionError``. Pure: no I/O.

- any text, anywhere in an argument (keys too), is valid UTF-8 (a lone surrogate is not: no
  database or JSON can hold it);
- an argument nests at most ``MAX_DEPTH`` containers deep;
- switches are ``True`` or ``False`` (not 1, "yes" or None);
- ids are non-empty strings of at most ``MAX_ID_CHARS`` characters without NUL (PostgreSQL
  refuses NUL in text: the same rule holds on every backend);
- a collection argument is a collection (not None, a scalar, a string or a mapping).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from stratagate.errors import InvalidInputError

MAX_DEPTH = 64
"""Containers inside containers an argument may hold (tool-call arguments nest a few deep)."""
MAX_ID_CHARS = 512
"""The longest id (thread, receipt, event, block …) a caller may give."""
_CONTAINERS = (list, tuple, set, frozenset)
_LEAVES = frozenset({type(None), bool, int, float, datetime})
"""Exact types that hold neither text nor other values."""


def check_argument(name: str, value: Any) -> None:
    """Refuse text that is not valid UTF-8 and nesting deeper than ``MAX_DEPTH``, anywhere in
    ``value`` (walked without recursion, so a 5,000-deep list is an input error, not a
    ``RecursionError``). Other types pass: the method's own rules judge them."""
    kind = type(value)
    if kind in _LEAVES or (kind is str and value.isascii()):  # most arguments: nothing to walk
        return
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict:  # the exact types first: no ABC check for what callers pass most
            children: Iterable[Any] = [*item.keys(), *item.values()]
        elif kind is list or kind is tuple:
            children = item
        elif kind in _LEAVES:
            continue
        elif isinstance(item, str):
            _check_text(name, item)
            continue
        elif isinstance(item, Mapping):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, _CONTAINERS):
            children = item
        else:
            continue
        if depth >= MAX_DEPTH:
            raise InvalidInputError(f"{name} is nested more than {MAX_DEPTH} containers deep")
        for child in children:  # plain text and leaves are judged here, not pushed
            kind = type(child)
            if kind is str:
                if not child.isascii():
                    _check_text(name, child)
            elif kind not in _LEAVES:
                stack.append((child, depth + 1))


def _check_text(name: str, text: str) -> None:
    if not text.isascii() and not _is_utf8(text):
        raise InvalidInputError(f"{name} holds text that is not valid UTF-8 (a lone surrogate)")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_flag(name: str, value: object) -> bool:
    """A switch: ``True`` or ``False``, nothing read by its truthiness."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {type(value).__name__}")
    return value


def check_timeout(name: str, value: object) -> float | None:
    """``None`` (no limit; so is infinity) or a number of seconds >= 0 (not NaN)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name} must be None or seconds, got {type(value).__name__}")
    if value == math.inf:
        return None  # no limit, as None says
    if not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{name} must be seconds >= 0, got {value!r}")
    return float(value)


def check_id(name: str, value: object, *, optional: bool = False) -> str | None:
    """A caller's id: a non-empty string, at most ``MAX_ID_CHARS`` long, without NUL."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{name} must be a non-empty string, got {_short(value)}")
    return check_id_text(name, value)


def check_id_text(name: str, value: str) -> str:
    """The length and NUL rules of an id that is already a string."""
    if len(value) > MAX_ID_CHARS:
        raise InvalidInputError(f"{name} is {len(value)} characters, more than {MAX_ID_CHARS}")
    if "\x00" in value:
        raise InvalidInputError(f"{name} holds a NUL character")
    return value


def check_collection(name: str, value: object) -> list[Any]:
    """A list, tuple or other iterable of items, as a list (not None, a scalar, text, bytes
    or a mapping)."""
    if type(value) is list or type(value) is tuple:  # what callers pass: no ABC check
        return list(value)
    if isinstance(value, str | bytes | bytearray | Mapping) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _short(value: object) -> str:
    """A bounded description of a value for an error message (never a deep ``repr``)."""
    if isinstance(value, str | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return type(value).__name__


__all__ = [
    "MAX_DEPTH",
    "MAX_ID_CHARS",
    "check_argument",
    "check_collection",
    "check_flag",
    "check_id",
    "check_id_text",
    "check_timeout",
]
