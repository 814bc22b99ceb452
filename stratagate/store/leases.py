"""Who is writing: the processes behind claims, and the Ray directory's fenced leases.

Any number of handles may write a namespace (optimistically, see ``stratagate.actors.live``).
Background jobs they start are claimed in the log with the claiming process's ``Holder.token``;
a claim is recovered by another handle only once ``claim_abandoned`` says its process is gone.

The Ray directory, which assigns namespaces to pooled host actors, holds a lease row per
namespace it activated (namespace, epoch, holder); every append a host makes for it carries the
lease, and the store refuses an append whose epoch is not the current one
(``FencedWriterError``), so a late write from a host still finishing work for a namespace
passivated or moved meanwhile never lands.

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


_STARTED: dict[int, int] = {}


def _process_started() -> int:
    """When this process started (asked once per pid: a forked child is another process)."""
    pid = os.getpid()
    found = _STARTED.get(pid)
    if found is None:
        found = _STARTED[pid] = _start_ticks(pid) or int(time.time() * 1000)
    return found


CLAIM_TTL_S = 900.0
"""A claim older than this is recovered whoever made it (a process on another host, whose
liveness this one cannot see; or a call that never returned)."""


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
        return cls(socket.gethostname(), os.getpid(), _process_started(), label)

    def token(self) -> str:
        """``host:pid:started``, as claims in the log record their worker."""
        return f"{self.host}:{self.pid}:{self.started}"

    @classmethod
    def from_token(cls, token: str) -> Holder | None:
        """The holder a claim's worker names, or ``None`` when it is not a token."""
        host, _, rest = token.rpartition(":")
        host, _, pid = host.rpartition(":")
        try:
            return cls(host, int(pid), int(rest))
        except ValueError:
            return None

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
        return holder.started == _process_started()
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


def claim_abandoned(worker: str | None, age_s: float) -> bool:
    """Whether a running job claimed by ``worker`` ``age_s`` seconds ago may be recovered: its
    process is gone (on this host, exactly), it is older than ``CLAIM_TTL_S``, or its claim
    names no worker (a v1 claim, from before several writers)."""
    if worker is None or age_s > CLAIM_TTL_S:
        return True
    holder = Holder.from_token(worker)
    if holder is None:
        return True
    if holder.host != socket.gethostname():
        return False
    return not _same_process_alive(holder)


__all__ = [
    "CLAIM_TTL_S",
    "DEFAULT_TTL_S",
    "Holder",
    "Lease",
    "claim_abandoned",
    "holder_alive",
    "may_take_over",
]
