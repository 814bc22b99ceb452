"""Holding a namespace's writer lease for as long as a runtime writes to it.

The keeper takes the lease when a runtime starts (a live holder in another process makes that
fail with ``WriterBusyError``), renews it in the background so readers on other hosts see the
holder alive, and releases it on close so the next opener need not wait.
"""

from __future__ import annotations

import contextlib
import threading

from stratagate.errors import StorageError
from stratagate.store import Holder, Lease, LeaseStore


class LeaseKeeper:
    """Takes a writer lease now, renews it every third of its time to live, releases it."""

    def __init__(self, store: LeaseStore, namespace: str, holder: Holder) -> None:
        self.store = store
        self.lease: Lease = store.acquire_lease(namespace, holder)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._renew, name=f"stratagate-lease-{namespace}", daemon=True
        )
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.lease.ttl_s / 3):
            try:
                self.store.renew_lease(self.lease)
            except StorageError:
                continue  # the store is briefly unavailable: try again at the next tick
            except Exception:
                return  # fenced: the next append reports it to the caller

    def release(self) -> None:
        """Stop renewing and give the lease up (safe to call twice)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(StorageError):
            self.store.release_lease(self.lease)


__all__ = ["LeaseKeeper"]
