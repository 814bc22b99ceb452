"""LangGraph's long-term store (``BaseStore``) on one StrataGate namespace (extra ``langgraph``).

Every item LangGraph puts is a document of the namespace with provenance: a put is an
external-memory import (``stratagate.external-memory.v2``, source ``"langgraph store"``) whose
item carries the value verbatim as its ``data`` and becomes an event card citing it, so
``history()``, ``verify()``, export and erasure cover the store like everything else. A put of
a key that holds a value supersedes that value's card (the old revision stays in the log); a
delete forgets the card (reversible with ``restore_event``; ``erase_event`` shreds it). Several
puts in one batch are one import: all land or none.

LangGraph namespace tuples are kept on each item (``("users", "alice")``); they scope gets,
searches and ``list_namespaces`` here, while the StrataGate namespace is the unit of isolation,
export and erasure. ``search(query=...)`` ranks with the memory's own event search
(BM25 over jieba words and Han bigrams, structured rankings, RRF); items it does not rank, and
unindexed ones (``index=False``), follow in most-recently-updated order with no score, as an
embedding store lists what it could not embed. TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
)

from stratagate.core.filters import MAX_LIMIT, MAX_QUERY_CHARS
from stratagate.formats.external_memory import FORMAT, item_data
from stratagate.memory import StrataGate
from stratagate.timeutil import format_utc, parse_datetime, utc_now

SOURCE = "langgraph store"
TAG = "langgraph-store"
"""The tag every store document's card carries (how the store finds its own cards)."""
KIND = "document"


@dataclass(frozen=True, slots=True)
class Stored:
    """One item as the store keeps it: the value and the card that holds it now."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    indexed: bool
    event_id: str

    def item(self) -> Item:
        return Item(
            value=dict(self.value),
            key=self.key,
            namespace=self.namespace,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )

    def hit(self, score: float | None) -> SearchItem:
        return SearchItem(
            self.namespace, self.key, dict(self.value), self.created_at, self.updated_at, score
        )


class StrataGateStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are documents of ``memory``'s namespace.

    ``index`` is LangGraph's ``IndexConfig``; only its ``fields`` are used (the paths whose text
    is searched, default the whole value): ranking is lexical, so no embeddings are needed.
    """

    supports_ttl = False

    def __init__(self, memory: StrataGate, *, index: IndexConfig | None = None) -> None:
        self.memory = memory
        fields = list((index or {}).get("fields") or ["$"])
        self._paths = [(field, tokenize_path(field)) for field in fields]
        self._lock = threading.RLock()
        self._documents: dict[str, Stored] = {}
        self._current: dict[tuple[tuple[str, ...], str], Stored] = {}
        self._revision = -1

    # -- BaseStore --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer every read against the store as it was, then apply the writes (the last
        write of a key wins), as LangGraph's stores do."""
        ops = list(ops)
        with self._lock:
            self._sync()
            results: list[Result] = [self._read(op) for op in ops]
            writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in ops:
                if isinstance(op, PutOp):
                    _check_labels(op.namespace)
                    writes[(op.namespace, op.key)] = op
            if writes:
                self._write(list(writes.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on a worker thread (the event loop never waits on the log)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def event_id(self, namespace: tuple[str, ...], key: str) -> str | None:
        """The event card that holds an item now (its provenance: ``memory.expand_event``)."""
        with self._lock:
            self._sync()
            found = self._current.get((tuple(namespace), key))
            return found.event_id if found else None

    # -- reads ------------------------------------------------------------------------------

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            _check_labels(op.namespace)
            found = self._current.get((tuple(op.namespace), op.key))
            return found.item() if found else None
        if isinstance(op, SearchOp):
            _check_labels(op.namespace_prefix)
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        if isinstance(op, PutOp):
            return None
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        chosen = [
            stored
            for stored in self._current.values()
            if stored.namespace[: len(prefix)] == prefix
            and all(matches(stored.value.get(k), v) for k, v in (op.filter or {}).items())
        ]
        chosen.sort(key=lambda stored: (stored.updated_at, stored.key), reverse=True)
        ranked: list[SearchItem] = []
        query = (op.query or "").strip()[:MAX_QUERY_CHARS]
        if query and chosen:
            by_event = {stored.event_id: stored for stored in chosen if stored.indexed}
            before = self.memory.revision
            hits = self.memory.search_events(query, limit=MAX_LIMIT)
            ranked = [by_event[hit.id].hit(hit.score) for hit in hits if hit.id in by_event]
            if self._revision == before and self.memory.revision == before + 1:
                self._revision = before + 1  # only the search's own batch was logged
            seen = {(hit.namespace, hit.key) for hit in ranked}
            chosen = [stored for stored in chosen if (stored.namespace, stored.key) not in seen]
        found = [*ranked, *(stored.hit(None) for stored in chosen)]
        return found[op.offset : op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        names = {
            stored.namespace
            for stored in self._current.values()
            if all(namespace_matches(condition, stored.namespace) for condition in conditions)
        }
        if op.max_depth is not None:
            names = {name[: op.max_depth] for name in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    # -- writes -----------------------------------------------------------------------------

    def _write(self, writes: list[PutOp]) -> None:
        puts = [op for op in writes if op.value is not None]
        now = utc_now()
        if puts:
            items = [self._item(op, now) for op in puts]
            document = {"format": FORMAT, "source": SOURCE, "items": items}
            result = self.memory.import_external_memory(document)
            for op, event_id in zip(puts, result.added, strict=True):
                old = self._current.get((op.namespace, op.key))
                stored = Stored(
                    namespace=tuple(op.namespace),
                    key=op.key,
                    value=dict(op.value or {}),
                    created_at=old.created_at if old else now,
                    updated_at=now,
                    indexed=op.index is not False,
                    event_id=event_id,
                )
                self._documents[event_id] = stored
                self._current[(stored.namespace, stored.key)] = stored
        for op in writes:
            if op.value is None:
                gone = self._current.pop((tuple(op.namespace), op.key), None)
                if gone is not None:
                    self.memory.forget_event(gone.event_id)

    def _item(self, op: PutOp, now: datetime) -> dict[str, Any]:
        old = self._current.get((tuple(op.namespace), op.key))
        value = dict(op.value or {})
        indexed = op.index is not False
        return {
            "text": self._text(op, value) if indexed else f"{'/'.join(op.namespace)}: {op.key}",
            "kind": KIND,
            "tags": [TAG],
            "supersedes": [old.event_id] if old else [],
            "data": {
                "namespace": list(op.namespace),
                "key": op.key,
                "value": value,
                "created_at": format_utc(old.created_at if old else now),
                "updated_at": format_utc(now),
                "indexed": indexed,
            },
        }

    def _text(self, op: PutOp, value: dict[str, Any]) -> str:
        """What search ranks an item on: the text at the indexed paths (the whole value's
        strings by default), with the item's key when there is no text."""
        paths = self._paths if not op.index else [(f, tokenize_path(f)) for f in op.index]
        texts: list[str] = []
        for field, tokens in paths:
            texts.extend(_strings(value) if field == "$" else get_text_at_path(value, tokens))
        text = "\n".join(t for t in texts if t.strip())
        return text or f"{'/'.join(op.namespace)}: {op.key}"

    # -- catching up with the log -----------------------------------------------------------

    def _sync(self) -> None:
        """Rebuild which card holds each item when the log moved (another writer, a
        governance call) since this store last looked; values are read once per card."""
        revision = self.memory.revision
        if revision == self._revision:
            return
        current: dict[tuple[tuple[str, ...], str], Stored] = {}
        for card in self.memory.list_events():
            if card.status != "active" or TAG not in card.tags:
                continue
            stored = self._documents.get(card.id) or self._load(card.id)
            if stored is None:
                continue
            slot = (stored.namespace, stored.key)
            if slot not in current or current[slot].updated_at < stored.updated_at:
                current[slot] = stored
        self._current = current
        self._revision = revision

    def _load(self, event_id: str) -> Stored | None:
        expanded = self.memory.expand_event(event_id)
        data = next(
            (found for m in expanded.source_messages if (found := item_data(m)) is not None),
            None,
        )
        if data is None or not isinstance(data.get("value"), dict):
            return None  # erased content, or a card some other import tagged like ours
        stored = Stored(
            namespace=tuple(data["namespace"]),
            key=str(data["key"]),
            value=data["value"],
            created_at=parse_datetime(data["created_at"]),
            updated_at=parse_datetime(data["updated_at"]),
            indexed=bool(data.get("indexed", True)),
            event_id=event_id,
        )
        self._documents[event_id] = stored
        return stored


def matches(value: Any, wanted: Any) -> bool:
    """Whether an item's field matches a LangGraph filter term: equality (nested objects and
    lists compared member by member) or ``{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}``."""
    if isinstance(wanted, Mapping):
        if any(str(name).startswith("$") for name in wanted):
            return all(_compare(value, name, operand) for name, operand in wanted.items())
        return isinstance(value, Mapping) and all(
            matches(value.get(name), operand) for name, operand in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(matches(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _compare(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    if operator == "$lte":
        return left <= right
    raise ValueError(f"unsupported filter operator {operator!r}")


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether a namespace starts (``prefix``) or ends (``suffix``) with the condition's path,
    ``"*"`` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    labels = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(want in ("*", label) for want, label in zip(path, labels, strict=True))


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value, depth first (the text of the whole value)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _check_labels(namespace: Sequence[str]) -> None:
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"namespace labels must be non-empty strings without '.' or NUL, got {label!r}"
            )


__all__ = ["SOURCE", "TAG", "StrataGateStore", "matches", "namespace_matches"]
