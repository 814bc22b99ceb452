"""Content fields of stored payloads, encrypted before a payload is encoded and hashed.

A content field (``stratagate.events.content_fields``) is stored as a reference
``{"$enc": key_id, "i": n}``: the ``n``-th value encrypted under that key in this payload. The
payload's top-level ``"$sealed"`` member (the stored name, kept for the logs that hold it) maps
each key id to the text its ``DataCipher`` made of the list of its values — one AES-GCM
operation per key and event, however many fields. The keys are the store's
(``stratagate.store.keys``); a field whose key was destroyed opens as its fixed redaction.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from stratagate.errors import LogIntegrityError
from stratagate.events.content_fields import CONTENT, Group, Path, field_slots, objects_at
from stratagate.store.keys import DataCipher, NamespaceKeys, canonical_text

ENVELOPE = "$enc"
ENCRYPTED = "$sealed"
"""The payload member that holds the encrypted values (its stored name)."""
_ENCRYPTED_START = '{"$sealed":{'
"""How an encrypted payload's canonical text starts (``$`` sorts before every other member)."""
_REFERENCE_START = '{"$enc":'
_INDEX = ',"i":'
"""A content reference as canonical text writes it: ``{"$enc":"<key id>","i":<n>}``."""


def encrypt_content(keys: NamespaceKeys, payloads: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Encrypt the content fields of each ``(event_type, data)`` in place."""
    todo = [(_PLANS[kind], data) for kind, data in payloads if kind in _PLANS]
    if not todo or not keys.encrypt:
        return
    with keys.lock:
        for plan, data in todo:
            encrypted: dict[str, tuple[DataCipher, list[Any]]] = {}
            for group, slots in plan:
                for obj in objects_at(data, group.at):
                    entry = None
                    for parents, field in slots:
                        holder: Any = obj
                        for step in parents:
                            holder = holder.get(step) if isinstance(holder, dict) else None
                        if not isinstance(holder, dict):
                            continue
                        value = holder.get(field)
                        if value is None:
                            continue
                        if entry is None:
                            name = group.scope(data, obj)
                            entry = encrypted.get(name)
                            if entry is None:
                                entry = encrypted[name] = (keys.cipher(name), [])
                        cipher, values = entry
                        values.append(value)
                        holder[field] = {ENVELOPE: cipher.key_id, "i": len(values) - 1}
            if encrypted:
                data[ENCRYPTED] = {
                    cipher.key_id: cipher.encrypt(values) for cipher, values in encrypted.values()
                }
        keys.flush()


_PLANS: dict[str, tuple[tuple[Group, tuple[tuple[Path, str], ...]], ...]] = {
    kind: tuple((group, tuple((path[:-1], path[-1]) for path in group.fields)) for group in groups)
    for kind, groups in CONTENT.items()
}
"""Per event type, its content groups with each field path split into the steps to the
object holding the field and the field's name, once (``field_slots`` does it per call)."""


_MEMBER = f'"{ENCRYPTED}"'
_MEMBER_BYTES = _MEMBER.encode()


def is_encrypted(payload: str | bytes) -> bool:
    """Whether a payload text holds encrypted content."""
    return (_MEMBER in payload) if isinstance(payload, str) else (_MEMBER_BYTES in payload)


def open_content(keys: NamespaceKeys, event_type: str, data: dict[str, Any]) -> None:
    """Decrypt the content fields of ``data`` in place; a destroyed key's fields read as
    their redaction."""
    encrypted = data.pop(ENCRYPTED, None)
    groups = CONTENT.get(event_type)
    if not encrypted or not groups:
        return
    with keys.lock:
        opened: dict[str, list[Any] | None] = {}
        for key_id, text in encrypted.items():
            cipher = keys.opener(key_id)
            opened[key_id] = None if cipher is None else cipher.open(text)
    for group in groups:
        for obj in objects_at(data, group.at):
            for path, redaction in group.fields.items():
                slot = field_slots(obj, path)
                if slot is None:
                    continue
                holder, field = slot
                ref = holder[field]
                if isinstance(ref, dict) and ENVELOPE in ref:
                    holder[field] = _resolve(opened, ref, redaction)


def open_content_text(keys: NamespaceKeys, payload: str) -> str | None:
    """The payload text with every content reference replaced by its value (no parse: the
    fast path of replay), or ``None`` when a key was destroyed or the text is not in the
    shape this pass knows (then ``open_content`` does it by the table)."""
    if not payload.startswith(_ENCRYPTED_START):
        return None
    end = payload.find("}", len(_ENCRYPTED_START))  # base64 has no braces
    try:
        encrypted = orjson.loads(payload[len(_ENCRYPTED_START) - 1 : end + 1])
    except orjson.JSONDecodeError:  # a key id with a brace in it: take the slow path
        return None
    texts: dict[str, list[str]] = {}
    with keys.lock:
        for key_id, text in encrypted.items():
            cipher = keys.opener(key_id)
            if cipher is None:
                return None
            texts[_reference_text(key_id)] = cipher.open_texts(text)
    rest = payload[end + 2 :] if payload[end + 1 : end + 2] == "," else payload[end + 1 :]
    parts = rest.split(_REFERENCE_START)
    out = ["{", parts[0]]
    append = out.append
    try:
        for part in parts[1:]:  # each: '"key id","i":N}' and the text up to the next reference
            head, _, after = part.partition("}")
            key_id, _, index = head.rpartition(_INDEX)
            if not index.isdigit():
                return None
            append(texts[key_id][int(index)])
            append(after)
    except (KeyError, IndexError, ValueError):  # not a reference this row sealed: the slow path
        return None
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _reference_text(key_id: str) -> str:
    """A key id as a reference writes it (canonical JSON text), memoised: a replay meets the
    same thread keys in every turn."""
    return canonical_text(key_id)


def _resolve(opened: Mapping[str, list[Any] | None], ref: Mapping[str, Any], redaction: Any) -> Any:
    """The value a field reference names, or the field's redaction when its key is gone."""
    key_id, index = ref.get(ENVELOPE), ref.get("i")
    if not isinstance(key_id, str) or key_id not in opened or not isinstance(index, int):
        raise LogIntegrityError(
            f"a content field refers to {key_id!r}, which the row did not encrypt"
        )
    values = opened[key_id]
    if values is None:
        return redaction
    if not 0 <= index < len(values):
        raise LogIntegrityError(f"a content field refers to value {index} of {key_id!r}: none")
    return values[index]


__all__ = [
    "ENCRYPTED",
    "ENVELOPE",
    "encrypt_content",
    "is_encrypted",
    "open_content",
    "open_content_text",
]
