"""Data keys of encrypted content: AES-GCM per key, kept in the store's key table, optionally
wrapped by a master key, cached per store.

A content field (``stratagate.events.content_fields``) is stored as a reference
``{"$enc": key_id, "i": n}``: the ``n``-th value sealed under that key in this payload. The
payload's top-level ``"$sealed"`` maps each key id to ``base64(nonce ‖ ciphertext ‖ tag)`` of
the JSON list of its values — one AES-GCM operation per key and event, however many fields.
The nonce is synthetic — the first 12 bytes of HMAC-SHA256(nonce key, plaintext) — so
encrypting the same payload twice gives the same text: a retried append stays byte-identical
(idempotent), and nonces never repeat for different plaintexts under one key (equal plaintexts
under one key do show as equal ciphertexts). The key id is the additional authenticated data.
A destroyed key (a tombstone in the key table) opens every field it sealed as that field's
fixed redaction.

``STRATAGATE_MASTER_KEY`` (32 bytes, base64) wraps new data keys with AES-GCM; once keys are
wrapped, opening them without that master key raises ``MasterKeyError``.
``STRATAGATE_ENCRYPTION=off`` stores new content in clear (encrypted rows still decrypt).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from stratagate.errors import LogIntegrityError, MasterKeyError, StorageError
from stratagate.events.content_fields import CONTENT, field_slots, objects_at
from stratagate.store import DataKey, EventStore
from stratagate.timeutil import format_utc, utc_now

MASTER_KEY_ENV = "STRATAGATE_MASTER_KEY"
ENCRYPTION_ENV = "STRATAGATE_ENCRYPTION"
ENVELOPE = "$enc"
SEALED = "$sealed"
_SEALED_START = '{"$sealed":{'
"""How a sealed payload's canonical text starts (``$`` sorts before every other member)."""
_REFERENCE_START = '{"$enc":'
_INDEX = ',"i":'
"""A content reference as canonical text writes it: ``{"$enc":"<key id>","i":<n>}``."""
BLOB_MAGIC = b"SGENC1"
_NONCE = 12


class MasterKey:
    """The key-encryption key: wraps and unwraps data keys."""

    def __init__(self, raw: bytes) -> None:
        if len(raw) != 32:
            raise MasterKeyError(f"{MASTER_KEY_ENV} must be 32 bytes (base64), got {len(raw)}")
        self._aead = AESGCM(raw)
        self.fingerprint = hashlib.sha256(b"stratagate master key\0" + raw).hexdigest()[:16]

    def wrap(self, material: bytes, key_id: str) -> bytes:
        nonce = os.urandom(_NONCE)
        return nonce + self._aead.encrypt(nonce, material, key_id.encode())

    def unwrap(self, blob: bytes, key_id: str) -> bytes:
        try:
            return self._aead.decrypt(blob[:_NONCE], blob[_NONCE:], key_id.encode())
        except InvalidTag as exc:
            raise MasterKeyError(f"data key {key_id} does not unwrap with this master key") from exc


def master_key_from_env(environ: Mapping[str, str] = os.environ) -> MasterKey | None:
    """The master key ``STRATAGATE_MASTER_KEY`` names, or ``None`` when it is unset."""
    text = environ.get(MASTER_KEY_ENV, "").strip()
    if not text:
        return None
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=False)
    except (binascii.Error, ValueError) as exc:
        raise MasterKeyError(f"{MASTER_KEY_ENV} is not base64") from exc
    return MasterKey(raw)


def new_master_key() -> str:
    """A fresh master key, as the text ``STRATAGATE_MASTER_KEY`` takes."""
    return base64.b64encode(os.urandom(32)).decode("ascii")


class DataCipher:
    """One data key, ready to seal and open field values (AES-GCM, synthetic nonces)."""

    __slots__ = ("_aad", "_aead", "_nonce_key", "key_id")

    def __init__(self, key_id: str, material: bytes) -> None:
        self.key_id = key_id
        self._aad = key_id.encode()
        self._aead = AESGCM(material)
        self._nonce_key = hmac.digest(material, b"stratagate synthetic nonce", "sha256")

    def seal(self, values: list[Any]) -> str:
        """``values`` as one sealed text (synthetic nonce): their canonical JSON texts, one a
        line (canonical JSON never holds a raw newline), so opening needs no JSON parse."""
        plaintext = "\n".join(canonical_text(value) for value in values).encode()
        nonce = hmac.digest(self._nonce_key, plaintext, "sha256")[:_NONCE]
        return binascii.b2a_base64(
            nonce + self._aead.encrypt(nonce, plaintext, self._aad), newline=False
        ).decode("ascii")

    def seal_blob(self, data: bytes) -> bytes:
        nonce = os.urandom(_NONCE)
        head = BLOB_MAGIC + bytes([len(self._aad)]) + self._aad
        return head + nonce + self._aead.encrypt(nonce, data, self._aad)

    def open_blob(self, body: bytes) -> bytes:
        try:
            return self._aead.decrypt(body[:_NONCE], body[_NONCE:], self._aad)
        except InvalidTag as exc:
            raise LogIntegrityError(f"a blob sealed with {self.key_id} does not decrypt") from exc

    def open_texts(self, text: Any) -> list[str]:
        """The canonical JSON texts of the values of a ``seal`` text."""
        try:
            blob = binascii.a2b_base64(text)
            plaintext = self._aead.decrypt(blob[:_NONCE], blob[_NONCE:], self._aad)
        except (InvalidTag, TypeError, ValueError, binascii.Error) as exc:
            raise LogIntegrityError(f"content sealed with {self.key_id} does not decrypt") from exc
        return plaintext.decode().split("\n")

    def open(self, text: Any) -> list[Any]:
        """The values of a ``seal`` text."""
        try:
            return [orjson.loads(value) for value in self.open_texts(text)]
        except orjson.JSONDecodeError as exc:
            raise LogIntegrityError(f"content sealed with {self.key_id} is not JSON") from exc


def canonical_text(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys), as it stands in a stored payload."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _resolve(opened: Mapping[str, list[Any] | None], ref: Mapping[str, Any], redaction: Any) -> Any:
    """The value a field reference names, or the field's redaction when its key is gone."""
    key_id, index = ref.get(ENVELOPE), ref.get("i")
    if not isinstance(key_id, str) or key_id not in opened or not isinstance(index, int):
        raise LogIntegrityError(f"a content field refers to {key_id!r}, which the row did not seal")
    values = opened[key_id]
    if values is None:
        return redaction
    if not 0 <= index < len(values):
        raise LogIntegrityError(f"a content field refers to value {index} of {key_id!r}: none")
    return values[index]


def _name_of(key_id: str) -> tuple[str, int]:
    name, _, generation = key_id.rpartition("@")
    return name, int(generation)


class NamespaceKeys:
    """The data keys of one namespace: seals payloads before they are stored, opens them
    after they are read. Keys are loaded once and cached; ``forget`` drops the cache."""

    def __init__(self, keyring: Keyring, namespace: str) -> None:
        self.keyring = keyring
        self.namespace = namespace
        self._rows: dict[str, DataKey] = {}
        self._ciphers: dict[str, DataCipher | None] = {}
        self._active: dict[str, str] = {}
        self._generation: dict[str, int] = {}
        self._new: list[DataKey] = []
        self._loaded = False
        self._lock = threading.RLock()

    # -- sealing ----------------------------------------------------------------------------

    def seal_all(self, payloads: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Encrypt the content fields of each ``(event_type, data)`` in place."""
        todo = [(CONTENT[kind], data) for kind, data in payloads if kind in CONTENT]
        if not todo or not self.keyring.encrypt:
            return
        with self._lock:
            for groups, data in todo:
                sealed: dict[str, tuple[DataCipher, list[Any]]] = {}
                for group in groups:
                    for obj in objects_at(data, group.at):
                        name = group.scope(data, obj)
                        for path in group.fields:
                            slot = field_slots(obj, path)
                            if slot is None:
                                continue
                            entry = sealed.get(name)
                            if entry is None:
                                entry = sealed[name] = (self._cipher(name), [])
                            cipher, values = entry
                            holder, field = slot
                            values.append(holder[field])
                            holder[field] = {ENVELOPE: cipher.key_id, "i": len(values) - 1}
                if sealed:
                    data[SEALED] = {
                        cipher.key_id: cipher.seal(values) for cipher, values in sealed.values()
                    }
            self._flush()

    def _cipher(self, name: str) -> DataCipher:
        key_id = self._active.get(name)
        if key_id is None and not self._loaded:
            self._load()
            key_id = self._active.get(name)
        if key_id is None:
            key_id = self._create(name)
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            cipher = self._ciphers[key_id] = self._build(self._rows[key_id])
        assert cipher is not None
        return cipher

    def _create(self, name: str) -> str:
        generation = self._generation.get(name, 0) + 1
        key_id = f"{name}@{generation}"
        material = os.urandom(32)
        master = self.keyring.master
        row = DataKey(
            namespace=self.namespace,
            key_id=key_id,
            material=master.wrap(material, key_id) if master else material,
            wrapped=master.fingerprint if master else None,
            created_at=format_utc(utc_now()),
        )
        self._rows[key_id] = row
        self._ciphers[key_id] = DataCipher(key_id, material)
        self._active[name] = key_id
        self._generation[name] = generation
        self._new.append(row)
        return key_id

    def _flush(self) -> None:
        """Store the keys created for this batch (before the append that uses them)."""
        if self._new:
            rows, self._new = self._new, []
            try:
                self.keyring.store.put_keys(rows)
            except BaseException:
                self.forget()  # keys that were not stored must not seal anything
                raise

    def seal_blob(self, name: str, data: bytes) -> bytes:
        """``data`` (a snapshot) encrypted under the key ``name`` (random nonce), or ``data``
        itself when encryption is off."""
        if not self.keyring.encrypt:
            return data
        with self._lock:
            cipher = self._cipher(name)
            self._flush()
        return cipher.seal_blob(data)

    def open_blob(self, blob: bytes) -> bytes | None:
        """The data of a ``seal_blob`` result (clear data passes through); ``None`` when its
        key was destroyed."""
        if not blob.startswith(BLOB_MAGIC):
            return blob
        size = blob[len(BLOB_MAGIC)]
        start = len(BLOB_MAGIC) + 1
        key_id = blob[start : start + size].decode()
        with self._lock:
            cipher = self._opener(key_id)
        return None if cipher is None else cipher.open_blob(blob[start + size :])

    # -- opening ----------------------------------------------------------------------------

    def open(self, event_type: str, data: dict[str, Any]) -> None:
        """Decrypt the content fields of ``data`` in place; a destroyed key's fields read as
        their redaction."""
        sealed = data.pop(SEALED, None)
        groups = CONTENT.get(event_type)
        if not sealed or not groups:
            return
        with self._lock:
            opened: dict[str, list[Any] | None] = {}
            for key_id, text in sealed.items():
                cipher = self._opener(key_id)
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

    def open_text(self, payload: str) -> str | None:
        """The payload text with every content reference replaced by its value (no parse: the
        fast path of replay), or ``None`` when a key was destroyed or the text is not in the
        shape this pass knows (then ``open`` does it by the table)."""
        if not payload.startswith(_SEALED_START):
            return None
        end = payload.find("}", len(_SEALED_START))  # base64 has no braces
        try:
            sealed = orjson.loads(payload[len(_SEALED_START) - 1 : end + 1])
        except orjson.JSONDecodeError:  # a key id with a brace in it: take the slow path
            return None
        texts: dict[str, list[str]] = {}
        with self._lock:
            for key_id, text in sealed.items():
                cipher = self._opener(key_id)
                if cipher is None:
                    return None
                texts[canonical_text(key_id)] = cipher.open_texts(text)
        rest = payload[end + 2 :] if payload[end + 1 : end + 2] == "," else payload[end + 1 :]
        parts = rest.split(_REFERENCE_START)
        out = ["{", parts[0]]
        for part in parts[1:]:  # each: '"key id","i":N}' and the text up to the next reference
            close = part.find("}")
            head = part[:close]
            comma = head.rfind(_INDEX)
            values = texts.get(head[:comma])
            index = head[comma + len(_INDEX) :]
            if values is None or not index.isdigit() or int(index) >= len(values):
                return None  # not a reference this row sealed: the slow path decides
            out.append(values[int(index)])
            out.append(part[close + 1 :])
        return "".join(out)

    def _opener(self, key_id: Any) -> DataCipher | None:
        if key_id in self._ciphers:
            return self._ciphers[key_id]
        row = self._rows.get(key_id)
        if row is None:
            self._load()  # another process may have made it since
            row = self._rows.get(key_id)
        if row is None:
            raise StorageError(
                f"namespace {self.namespace!r}: data key {key_id!r} is missing from the key table"
            )
        cipher = None if row.material is None else self._build(row)
        self._ciphers[key_id] = cipher
        return cipher

    # -- the key table ----------------------------------------------------------------------

    def _load(self) -> None:
        rows = self.keyring.store.load_keys(self.namespace)
        self.keyring.check_master(rows)
        self._rows = {row.key_id: row for row in rows}
        self._ciphers = {}
        self._active = {}
        self._generation = {}
        for row in rows:
            name, generation = _name_of(row.key_id)
            if generation > self._generation.get(name, 0):
                self._generation[name] = generation
                if row.material is not None:
                    self._active[name] = row.key_id
                else:
                    self._active.pop(name, None)
        self._loaded = True

    def _build(self, row: DataKey) -> DataCipher:
        assert row.material is not None
        material = row.material
        if row.wrapped is not None:
            material = self.keyring.unwrap(row, material)
        return DataCipher(row.key_id, material)

    def names(self) -> dict[str, str]:
        """Every live key's id by its name (after a fresh load)."""
        with self._lock:
            self._load()
            return dict(self._active)

    def forget(self) -> None:
        """Drop every cached key: the next use reads the key table again."""
        with self._lock:
            self._rows, self._ciphers, self._active, self._generation = {}, {}, {}, {}
            self._loaded = False


class Keyring:
    """The data keys of one store, per namespace, with its master key and encryption switch."""

    def __init__(self, store: EventStore, *, master: MasterKey | None, encrypt: bool) -> None:
        self.store = store
        self.master = master
        self.encrypt = encrypt
        self._spaces: dict[str, NamespaceKeys] = {}
        self._lock = threading.Lock()

    def of(self, namespace: str) -> NamespaceKeys:
        """The keys of ``namespace``."""
        with self._lock:
            keys = self._spaces.get(namespace)
            if keys is None:
                keys = self._spaces[namespace] = NamespaceKeys(self, namespace)
            return keys

    def check_master(self, rows: Iterable[DataKey]) -> None:
        """Wrapped keys need the master key they were wrapped with: a typed error otherwise."""
        for row in rows:
            if row.wrapped is None or row.material is None:
                continue
            if self.master is None:
                raise MasterKeyError(
                    f"the data keys of namespace {row.namespace!r} are wrapped by a master key: "
                    f"set {MASTER_KEY_ENV}"
                )
            if row.wrapped != self.master.fingerprint:
                raise MasterKeyError(
                    f"the data keys of namespace {row.namespace!r} are wrapped by master key "
                    f"{row.wrapped}, not by the {MASTER_KEY_ENV} given ({self.master.fingerprint})"
                )

    def unwrap(self, row: DataKey, blob: bytes) -> bytes:
        if self.master is None:
            raise MasterKeyError(f"data key {row.key_id} is wrapped: set {MASTER_KEY_ENV}")
        return self.master.unwrap(blob, row.key_id)


_KEYRINGS: weakref.WeakKeyDictionary[EventStore, Keyring] = weakref.WeakKeyDictionary()
_KEYRINGS_LOCK = threading.Lock()


def keyring_for(store: EventStore) -> Keyring:
    """The keyring of ``store`` (one per store object; the master key and the encryption
    switch are read from the environment when it is first asked for)."""
    with _KEYRINGS_LOCK:
        keyring = _KEYRINGS.get(store)
        if keyring is None:
            encrypt = os.environ.get(ENCRYPTION_ENV, "on").strip().lower() not in ("off", "0")
            keyring = Keyring(store, master=master_key_from_env(), encrypt=encrypt)
            _KEYRINGS[store] = keyring
        return keyring


def keys_for(store: EventStore, namespace: str) -> NamespaceKeys:
    """The data keys of ``namespace`` in ``store``."""
    return keyring_for(store).of(namespace)


__all__ = [
    "ENCRYPTION_ENV",
    "ENVELOPE",
    "MASTER_KEY_ENV",
    "SEALED",
    "DataCipher",
    "Keyring",
    "MasterKey",
    "NamespaceKeys",
    "keyring_for",
    "keys_for",
    "master_key_from_env",
    "new_master_key",
]
