"""Writer leases: who may append to a namespace now, and the epoch that fences everyone else.

A namespace has at most one writer at a time: one process hosting its roles inline, or the
Ray directory that activated its role actors. The writer holds a lease row (namespace, epoch,
holder); every append it makes carries the lease, and the store refuses an append whose epoch
is not the current one (``StorageConflictError``), so a late write from a stale holder — a
process that lost its lease, or a recycled actor still finishing work for its previous
namespace — never lands.

A lease is taken over only from a holder that is gone: on the same host, a holder whose process
no longer exists (its pid is dead, or was reused by a process started later); on another host,
a holder that has not renewed within its time to live. A live holder's lease — even one held
by another memory of the same process — is refused with ``WriterBusyError``; a holder gives it
up by closing. Everything here is pure but the two probes of this machine's processes.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TTL_S = 30.0
"""How long a lease stays valid without renewal for a reader on another host."""


def _start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), if this is Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of stat(5): starttime
    except (IndexError, ValueError):
        return None


_PROCESS_STARTED = _start_ticks(os.getpid()) or int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Holder:
    """A process that may hold leases: host, pid and when it started (pids are reused)."""

    host: str
    pid: int
    started: int
    label: str = ""

    @classmethod
    def current(cls, label: str = "") -> Holder:
        """This process."""
        return cls(socket.gethostname(), os.getpid(), _PROCESS_STARTED, label)

    def describe(self) -> str:
        kind = f"{self.label} " if self.label else ""
        return f"{kind}process {self.pid} on {self.host}"


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to append to ``namespace`` while ``epoch`` is the namespace's current epoch."""

    namespace: str
    epoch: int
    holder: Holder
    ttl_s: float = DEFAULT_TTL_S


def holder_alive(holder: Holder, renewed_at: float, ttl_s: float, *, now: float) -> bool:
    """Whether a lease's holder may still be writing.

    On this host the answer is exact: the process exists and is the one that took the lease.
    Elsewhere only the clock can tell: a holder that renewed within its time to live is alive.
    """
    if holder.host == socket.gethostname():
        return _same_process_alive(holder)
    return now - renewed_at < ttl_s


def _same_process_alive(holder: Holder) -> bool:
    if holder.pid == os.getpid():
        return holder.started == _PROCESS_STARTED
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    if _zombie(holder.pid):
        return False  # exited, not yet reaped by its parent
    started = _start_ticks(holder.pid)
    return started is None or started == holder.started


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].startswith(("Z", "X"))


def may_take_over(current: Holder, renewed_at: float, ttl_s: float, *, now: float) -> bool:
    """Whether a lease ``current`` holds may be taken: only when its holder is gone. A second
    open in the holder's own process is refused too — close the first memory, or open the
    namespace read-only."""
    return not holder_alive(current, renewed_at, ttl_s, now=now)


__all__ = ["DEFAULT_TTL_S", "Holder", "Lease", "holder_alive", "may_take_over"]
