"""Snapshot sections read on first use: what lets a restore cost little until a query needs more.

A snapshot stores each model's top-level keys as separately compressed sections (a long list
in chunks of ``CHUNK_ITEMS`` items). A restore gets them as ``Sections``: indexing one
decompresses and parses it then; ``thunk`` defers that to a later call; ``keyed`` gives a
list of ``[key, ...]`` rows as a ``LazyMap`` that parses a chunk when one of its keys is
first read; ``Pending`` holds a value restored on first read, with the changes a fold made
before that applied to it then, in order. The whole stored payload is checked against its hash before any of it is used,
so a section read later is the one that was saved.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import (
    Callable,
    ItemsView,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
    ValuesView,
)
from itertools import chain, repeat
from typing import Any, Generic, TypeVar, overload

import orjson

V = TypeVar("V")
T = TypeVar("T")

CHUNK_ITEMS = 256
"""Items of a list stored per compressed chunk (a keyed list's value is read a chunk at a time)."""


class Section:
    """One key's stored value: compressed chunks of its canonical JSON (one chunk unless the
    value is a list of more than ``CHUNK_ITEMS`` items), and the keys of a keyed list."""

    __slots__ = ("chunks", "keys", "listed")

    def __init__(self, chunks: Sequence[memoryview], listed: bool, keys: list[str] | None) -> None:
        self.chunks = chunks
        self.listed = listed
        """Whether the value is a list stored as chunks of items (each chunk a JSON list)."""
        self.keys = keys

    def chunk(self, number: int) -> Any:
        """The parsed content of one chunk."""
        return orjson.loads(zlib.decompress(self.chunks[number]))

    def value(self) -> Any:
        """The whole parsed value."""
        if not self.listed:
            return self.chunk(0)
        items: list[Any] = []
        for number in range(len(self.chunks)):
            items.extend(self.chunk(number))
        return items


class Sections(Mapping[str, Any]):
    """A model's stored snapshot data, each key parsed when it is asked for."""

    def __init__(self, sections: dict[str, Section]) -> None:
        self._sections = sections

    def __getitem__(self, key: str) -> Any:
        return self._sections[key].value()

    def __contains__(self, key: object) -> bool:
        return key in self._sections  # Mapping's would parse the section to find out

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections)

    def __len__(self) -> int:
        return len(self._sections)

    def thunk(self, key: str) -> Callable[[], Any]:
        """A call that parses ``key``'s value (as ``self[key]``) when made."""
        return self._sections[key].value

    def keyed(self, key: str, build: Callable[[list[Any]], V]) -> LazyMap[V]:
        """A list of ``[key, ...]`` rows as a map key → ``build(row)``, each chunk of rows
        parsed and built when one of its keys is first read."""
        section = self._sections[key]
        if section.keys is None:
            raise ValueError(f"section {key!r} was not stored with its keys")
        if not section.listed:
            return LazyMap({row[0]: build(row) for row in section.chunk(0)})
        return LazyMap.stored(section.keys, lambda n: [build(row) for row in section.chunk(n)])


def pack(
    data: Mapping[str, Any], keyed: frozenset[str]
) -> tuple[str, list[list[Any]], list[bytes]]:
    """A model's snapshot data as compressed pieces: its digest, each key's section entry
    (``[key, listed, compressed sizes, row keys or None]``, keys sorted), and the pieces.

    Each key's value is serialised once, canonically (a list of more than ``CHUNK_ITEMS``
    items in chunks), and the texts are hashed as ``orjson`` with sorted keys writes the
    whole: the digest is ``ReadModel.digest``'s, without the whole text ever being made."""
    hashed = hashlib.sha256(b"{")
    sections: list[list[Any]] = []
    pieces: list[bytes] = []
    for number, key in enumerate(sorted(data)):
        value = data[key]
        hashed.update(b"," if number else b"")
        hashed.update(orjson.dumps(key) + b":")
        listed = isinstance(value, list) and len(value) > CHUNK_ITEMS
        if listed:
            texts = [
                orjson.dumps(value[at : at + CHUNK_ITEMS], option=orjson.OPT_SORT_KEYS)
                for at in range(0, len(value), CHUNK_ITEMS)
            ]
            for at, text in enumerate(texts):  # "[a,b" "c,d" "e]": each chunk's brackets dropped
                hashed.update(
                    memoryview(text)[1 if at else 0 : -1 if at + 1 < len(texts) else None]
                )
                hashed.update(b"," if at + 1 < len(texts) else b"")
        else:
            texts = [orjson.dumps(value, option=orjson.OPT_SORT_KEYS)]
            hashed.update(texts[0])
        compressed = [zlib.compress(text, 1) for text in texts]
        pieces.extend(compressed)
        keys = [row[0] for row in value] if key in keyed else None
        sections.append([key, listed, [len(piece) for piece in compressed], keys])
    hashed.update(b"}")
    return hashed.hexdigest(), sections, pieces


def unpack(entries: list[list[Any]], view: memoryview, start: int) -> tuple[Sections, int]:
    """The sections ``pack`` described by ``entries``, their pieces read from ``view`` at
    ``start`` on (nothing decompressed); and where the next model's pieces start."""
    sections: dict[str, Section] = {}
    for key, listed, sizes, keys in entries:
        chunks = []
        for size in sizes:
            chunks.append(view[start : start + size])
            start += size
        sections[key] = Section(chunks, listed, keys)
    return Sections(sections), start


def thunk_of(data: Mapping[str, Any], key: str) -> Callable[[], Any]:
    """``data[key]`` deferred when ``data`` is stored sections, else at once."""
    if isinstance(data, Sections):
        return data.thunk(key)
    value = data[key]
    return lambda: value


def keyed_of(data: Mapping[str, Any], key: str, build: Callable[[list[Any]], V]) -> LazyMap[V]:
    """``data[key]``, a list of ``[key, ...]`` rows, as a map key → ``build(row)``: built a
    chunk at a time on first read when ``data`` is stored sections, else at once."""
    if isinstance(data, Sections):
        return data.keyed(key, build)
    return LazyMap({row[0]: build(row) for row in data[key]})


class _Unbuilt:
    """The value of a stored key whose chunk is not built yet (which chunk: ``number``)."""

    __slots__ = ("number",)

    def __init__(self, number: int) -> None:
        self.number = number


class LazyMap(MutableMapping[str, V]):
    """A map (in insertion order) whose stored values are built a chunk at a time, when one of
    the chunk's keys is first read; keys, length, membership and writes cost no loading. Made
    empty (or of ``items``) by a fold, of stored rows by ``stored``."""

    __slots__ = ("_items", "_keys", "_load", "_unbuilt")

    def __init__(self, items: dict[str, V] | None = None) -> None:
        self._items: dict[str, Any] = {} if items is None else items
        """Key → value, or ``_Unbuilt`` for a stored value not built yet."""
        self._keys: list[str] = []
        """The stored keys in stored order: chunk n holds ``CHUNK_ITEMS`` of them from
        ``n * CHUNK_ITEMS``."""
        self._load: Callable[[int], list[V]] | None = None
        self._unbuilt = 0
        """Chunks not built yet."""

    @classmethod
    def stored(cls, keys: list[str], load: Callable[[int], list[V]]) -> LazyMap[V]:
        """A map of stored rows with these keys; ``load(n)`` builds the values of chunk n."""
        chunks = (len(keys) + CHUNK_ITEMS - 1) // CHUNK_ITEMS
        lazy: LazyMap[V] = cls()
        marks = chain.from_iterable(repeat(_Unbuilt(n), CHUNK_ITEMS) for n in range(chunks))
        # the marks run past the last key (to a whole chunk): zip stops at the keys
        lazy._items = dict(zip(keys, marks, strict=False))
        lazy._keys = keys
        lazy._load = load
        lazy._unbuilt = chunks
        return lazy

    def __getitem__(self, key: str) -> V:
        value = self._items[key]
        if type(value) is _Unbuilt:
            self._build(value.number)
            value = self._items[key]
        return value  # type: ignore[no-any-return]

    @overload
    def get(self, key: str, /) -> V | None: ...

    @overload
    def get(self, key: str, /, default: V | T) -> V | T: ...

    def get(self, key: str, /, default: Any = None) -> Any:
        return self[key] if key in self._items else default

    def _build(self, number: int) -> None:
        assert self._load is not None
        start = number * CHUNK_ITEMS
        items = self._items
        keys = self._keys[start : start + CHUNK_ITEMS]
        for key, value in zip(keys, self._load(number), strict=True):
            found = items.get(key)
            if type(found) is _Unbuilt and found.number == number:  # not replaced since
                items[key] = value
        self._unbuilt -= 1
        if not self._unbuilt:
            self._keys, self._load = [], None

    def load_all(self) -> None:
        """Build every stored value still unbuilt."""
        if not self._unbuilt:
            return
        pending = {v.number for v in self._items.values() if type(v) is _Unbuilt}
        for number in sorted(pending):
            self._build(number)
        self._keys, self._load, self._unbuilt = [], None, 0

    def __setitem__(self, key: str, value: V) -> None:
        self._items[key] = value

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> ValuesView[V]:
        self.load_all()
        return self._items.values()

    def items(self) -> ItemsView[str, V]:
        self.load_all()
        return self._items.items()


class Pending(Generic[T]):
    """A value, or a stored one restored when first read (``stored``): changes made before that
    wait, in order, and are then applied to it as they would have been at once."""

    __slots__ = ("_changes", "_load", "_value")

    def __init__(self, value: T) -> None:
        self._value = value
        self._load: Callable[[], T] | None = None
        self._changes: list[tuple[Callable[[T, Any, Any], None], Any, Any]] = []

    @classmethod
    def stored(cls, load: Callable[[], T]) -> Pending[T]:
        """A value ``load()`` restores when it is first read."""
        pending = cls.__new__(cls)
        pending._load, pending._changes = load, []
        return pending

    @property
    def value(self) -> T:
        """The value, with every change made so far."""
        self.read_stored()
        return self._value

    def read_stored(self) -> None:
        """Restore the stored value now (if it still is), applying the changes waiting on it."""
        if self._load is not None:
            value = self._load()
            for change, key, item in self._changes:
                change(value, key, item)
            self._value, self._load, self._changes = value, None, []

    def change(self, change: Callable[[T, Any, Any], None], key: Any, item: Any) -> None:
        """``change(value, key, item)``, now or, while the value is stored, when it is read."""
        if self._load is None:
            change(self._value, key, item)
        else:
            self._changes.append((change, key, item))


__all__ = [
    "CHUNK_ITEMS",
    "LazyMap",
    "Pending",
    "Section",
    "Sections",
    "keyed_of",
    "pack",
    "thunk_of",
    "unpack",
]
