"""Data keys of a namespace's encrypted content: AES-GCM per key, kept in the store's key
table (``stratagate_keys``, outside the chained rows), optionally wrapped by a master key,
cached per store.

A ``DataCipher`` encrypts a list of values into one text with a synthetic nonce — the first 12
bytes of HMAC-SHA256(nonce key, plaintext) — so encrypting the same values twice gives the same
text: a retried append stays byte-identical (idempotent), and nonces never repeat for different
plaintexts under one key (equal plaintexts under one key do show as equal ciphertexts). The key
id is the additional authenticated data. A destroyed key (a tombstone in the key table) opens
nothing: its content reads as redacted. Which payload fields are content, and how a payload
refers to its encrypted values, is the domain events' business
(``stratagate.events.encryption``); this module knows keys, not events.

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
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from stratagate.errors import KeyRaceError, LogIntegrityError, MasterKeyError, StorageError
from stratagate.store.records import DataKey, KeyStore
from stratagate.timeutil import format_utc, utc_now

MASTER_KEY_ENV = "STRATAGATE_MASTER_KEY"
ENCRYPTION_ENV = "STRATAGATE_ENCRYPTION"
BLOB_MAGIC = b"SGENC1"
_NONCE = 12
CIPHER_CACHE = 1024
"""Ciphers kept ready per namespace. Each holds an AES context outside Python's heap (about
2.7 KB): with a key per card, caching every one grew a namespace of 20k cards by 54 MiB, and
a card's key is seldom used again once its card is written. An evicted cipher is rebuilt from
its key row (kept whole) when it is needed."""


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
    """One data key, ready to encrypt and open values (AES-GCM, synthetic nonces)."""

    __slots__ = ("_aad", "_aead", "_nonces", "key_id")

    def __init__(self, key_id: str, material: bytes, *, sealing: bool = True) -> None:
        self.key_id = key_id
        self._aad = key_id.encode()
        self._aead = AESGCM(material)
        self._nonces: hmac.HMAC | None = None
        """HMAC-SHA256 under the nonce key, copied for each nonce (half the cost of
        ``hmac.digest``, which looks the hash up by name every time); ``None`` for a cipher
        made to open only (a replay opens each card's key once and never encrypts with it)."""
        if sealing:
            nonce_key = hmac.digest(material, b"stratagate synthetic nonce", "sha256")
            self._nonces = hmac.new(nonce_key, digestmod=hashlib.sha256)

    @property
    def seals(self) -> bool:
        """Whether this cipher encrypts (a cipher made by ``NamespaceKeys.opener`` only opens)."""
        return self._nonces is not None

    def encrypt(self, values: list[Any]) -> str:
        """``values`` as one encrypted text (synthetic nonce): their canonical JSON texts, one
        a line (canonical JSON never holds a raw newline), so opening needs no JSON parse."""
        if self._nonces is None:
            raise StorageError(f"the cipher of {self.key_id} was made to open only")
        plaintext = "\n".join(canonical_text(value) for value in values).encode()
        mac = self._nonces.copy()
        mac.update(plaintext)
        nonce = mac.digest()[:_NONCE]
        return binascii.b2a_base64(
            nonce + self._aead.encrypt(nonce, plaintext, self._aad), newline=False
        ).decode("ascii")

    def encrypt_blob(self, data: bytes) -> bytes:
        nonce = os.urandom(_NONCE)
        head = BLOB_MAGIC + bytes([len(self._aad)]) + self._aad
        return head + nonce + self._aead.encrypt(nonce, data, self._aad)

    def open_blob(self, body: bytes | memoryview) -> bytes:
        body = memoryview(body)  # the nonce and the ciphertext as views: no copy of either
        try:
            return self._aead.decrypt(body[:_NONCE], body[_NONCE:], self._aad)
        except InvalidTag as exc:
            raise LogIntegrityError(
                f"a blob encrypted with {self.key_id} does not decrypt"
            ) from exc

    def open_texts(self, text: Any) -> list[str]:
        """The canonical JSON texts of the values of an ``encrypt`` text."""
        try:
            blob = binascii.a2b_base64(text)
            plaintext = self._aead.decrypt(blob[:_NONCE], blob[_NONCE:], self._aad)
        except (InvalidTag, TypeError, ValueError, binascii.Error) as exc:
            raise LogIntegrityError(
                f"content encrypted with {self.key_id} does not decrypt"
            ) from exc
        return plaintext.decode().split("\n")

    def open(self, text: Any) -> list[Any]:
        """The values of an ``encrypt`` text."""
        try:
            return [orjson.loads(value) for value in self.open_texts(text)]
        except orjson.JSONDecodeError as exc:
            raise LogIntegrityError(f"content encrypted with {self.key_id} is not JSON") from exc


def canonical_text(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys), as it stands in a stored payload."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def blob_key_id(blob: bytes) -> str | None:
    """The key id an ``encrypt_blob`` result names in its header (``None``: a clear blob)."""
    if not blob.startswith(BLOB_MAGIC) or len(blob) <= len(BLOB_MAGIC):
        return None
    start = len(BLOB_MAGIC) + 1
    try:
        return blob[start : start + blob[len(BLOB_MAGIC)]].decode()
    except UnicodeDecodeError:
        return None


def _name_of(key_id: str) -> tuple[str, int]:
    name, _, generation = key_id.rpartition("@")
    return name, int(generation)


class CipherCache:
    """Ciphers by key id (``None``: a destroyed key), the oldest dropped beyond
    ``CIPHER_CACHE`` (each is rebuilt from its key row when asked for again)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, DataCipher | None] = OrderedDict()
        """In insertion order; the oldest goes first in O(1) (deleting a plain dict's first
        key leaves a gap every later ``next(iter(...))`` walks over until the dict resizes)."""

    def __contains__(self, key_id: object) -> bool:
        return key_id in self._items

    def get(self, key_id: str) -> DataCipher | None:
        return self._items.get(key_id)

    def put(self, key_id: str, cipher: DataCipher | None) -> DataCipher | None:
        """Keep ``cipher`` for ``key_id``; returns it."""
        items = self._items
        items[key_id] = cipher
        if len(items) > CIPHER_CACHE:
            items.popitem(last=False)
        return cipher


class NamespaceKeys:
    """The data keys of one namespace by name (``thread:<id>``, ``event:<id>``, …): the
    active cipher of a name (made and stored when there is none), the cipher of a key id, and
    blobs encrypted under a name. Keys are loaded once and cached; ``forget`` drops the cache.
    Callers that use several ciphers for one write hold ``lock`` and ``flush`` before it."""

    def __init__(self, keyring: Keyring, namespace: str) -> None:
        self.keyring = keyring
        self.namespace = namespace
        self._rows: dict[str, DataKey] = {}
        self._ciphers = CipherCache()
        self._active: dict[str, str] = {}
        self._generation: dict[str, int] = {}
        self._new: list[DataKey] = []
        self._loaded = False
        self.lock = threading.RLock()

    @property
    def encrypt(self) -> bool:
        """Whether new content is encrypted (``STRATAGATE_ENCRYPTION`` is not ``off``)."""
        return self.keyring.encrypt

    def cipher(self, name: str) -> DataCipher:
        """The active cipher of key ``name``, made now (and stored at ``flush``) if none is."""
        key_id = self._active.get(name)
        if key_id is None and not self._loaded:
            self._load()
            key_id = self._active.get(name)
        if key_id is None:
            key_id = self._create(name)
        cipher = self._ciphers.get(key_id)
        if cipher is None or not cipher.seals:  # none cached, or one made to open only
            cipher = self._ciphers.put(key_id, self._build(self._rows[key_id]))
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
        self._ciphers.put(key_id, DataCipher(key_id, material))
        self._active[name] = key_id
        self._generation[name] = generation
        self._new.append(row)
        return key_id

    def flush(self) -> None:
        """Store the keys made since the last flush (before the append that uses them)."""
        if self._new:
            rows, self._new = self._new, []
            try:
                taken = self.keyring.store.put_keys(rows)
            except BaseException:
                self.forget()  # keys that were not stored must not encrypt anything
                raise
            if taken:  # another process stored these names first: its keys are the ones
                self.forget()
                raise KeyRaceError(
                    f"namespace {self.namespace!r}: data keys {sorted(taken)} were made by "
                    "another writer first; encode again with them"
                )

    def encrypt_blob(self, name: str, data: bytes) -> bytes:
        """``data`` (a snapshot) encrypted under the key ``name`` (random nonce), or ``data``
        itself when encryption is off."""
        if not self.keyring.encrypt:
            return data
        with self.lock:
            cipher = self.cipher(name)
            self.flush()
        return cipher.encrypt_blob(data)

    def open_blob(self, blob: bytes) -> bytes | None:
        """The data of an ``encrypt_blob`` result (clear data passes through); ``None`` when
        its key was destroyed."""
        if not blob.startswith(BLOB_MAGIC):
            return blob
        size = blob[len(BLOB_MAGIC)]
        start = len(BLOB_MAGIC) + 1
        key_id = blob[start : start + size].decode()
        with self.lock:
            cipher = self.opener(key_id)
        # a view, not a slice: a snapshot's payload is tens of MiB, copied twice otherwise
        return None if cipher is None else cipher.open_blob(memoryview(blob)[start + size :])

    def opener(self, key_id: Any) -> DataCipher | None:
        """The cipher of key ``key_id``; ``None`` when that key was destroyed."""
        if key_id in self._ciphers:
            return self._ciphers.get(key_id)
        row = self._rows.get(key_id)
        if row is None:
            self._load()  # another process may have made it since
            row = self._rows.get(key_id)
        if row is None:
            raise StorageError(
                f"namespace {self.namespace!r}: data key {key_id!r} is missing from the key table"
            )
        opener = None if row.material is None else self._build(row, sealing=False)
        return self._ciphers.put(key_id, opener)

    # -- the key table ----------------------------------------------------------------------

    def _load(self) -> None:
        rows = self.keyring.store.load_keys(self.namespace)
        self.keyring.check_master(rows)
        self._rows = {row.key_id: row for row in rows}
        self._ciphers = CipherCache()
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

    def _build(self, row: DataKey, *, sealing: bool = True) -> DataCipher:
        assert row.material is not None
        material = row.material
        if row.wrapped is not None:
            material = self.keyring.unwrap(row, material)
        return DataCipher(row.key_id, material, sealing=sealing)

    def names(self) -> dict[str, str]:
        """Every live key's id by its name (after a fresh load)."""
        with self.lock:
            self._load()
            return dict(self._active)

    def forget(self) -> None:
        """Drop every cached key: the next use reads the key table again."""
        with self.lock:
            self._rows, self._active, self._generation = {}, {}, {}
            self._ciphers = CipherCache()
            self._loaded = False


class Keyring:
    """The data keys of one store, per namespace, with its master key and encryption switch."""

    def __init__(self, store: KeyStore, *, master: MasterKey | None, encrypt: bool) -> None:
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


_KEYRINGS: weakref.WeakKeyDictionary[KeyStore, Keyring] = weakref.WeakKeyDictionary()
_KEYRINGS_LOCK = threading.Lock()


def keyring_for(store: KeyStore) -> Keyring:
    """The keyring of ``store`` (one per store object; the master key and the encryption
    switch are read from the environment when it is first asked for)."""
    with _KEYRINGS_LOCK:
        keyring = _KEYRINGS.get(store)
        if keyring is None:
            encrypt = os.environ.get(ENCRYPTION_ENV, "on").strip().lower() not in ("off", "0")
            keyring = Keyring(store, master=master_key_from_env(), encrypt=encrypt)
            _KEYRINGS[store] = keyring
        return keyring


def keys_for(store: KeyStore, namespace: str) -> NamespaceKeys:
    """The data keys of ``namespace`` in ``store``."""
    return keyring_for(store).of(namespace)


__all__ = [
    "ENCRYPTION_ENV",
    "MASTER_KEY_ENV",
    "DataCipher",
    "Keyring",
    "MasterKey",
    "NamespaceKeys",
    "blob_key_id",
    "keyring_for",
    "keys_for",
    "master_key_from_env",
    "new_master_key",
]
