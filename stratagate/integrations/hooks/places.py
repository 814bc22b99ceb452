"""Where the hook keeps things: the namespace a session writes to, the per-user database, the
hook server's socket and the transcript cursors (stdlib only: the hook command imports it).

Names are pure functions of their inputs; the directories are made private (0700) when they are
first made, and a runtime directory anyone else can write to is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from stratagate.errors import StorageError

NamespaceMode = Literal["project", "session", "global"]
NAMESPACE_MODES: tuple[NamespaceMode, ...] = ("project", "session", "global")
NAMESPACE_PREFIX = "claude-code"
PROJECT_DIR_ENV = "CLAUDE_PROJECT_DIR"
"""Set by Claude Code for every hook command: the project's root, whatever ``cwd`` became."""
SOCKET_PATH_MAX = 104
"""The longest AF_UNIX path every platform accepts (Linux allows 107 bytes, macOS 103)."""


def project_namespace(project_dir: str) -> str:
    """A stable, readable namespace for a project directory: its name and a digest of its path
    (two checkouts named alike stay apart; the same path always gives the same name)."""
    path = os.path.normpath(project_dir)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(path)).strip("-.") or "root"
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{NAMESPACE_PREFIX}/{name[:48]}-{digest}"


def namespace_for(
    mode: NamespaceMode, *, session_id: str, cwd: str, project_dir: str | None = None
) -> str:
    """The namespace a hook event writes to: one per project (the host's project directory,
    else ``cwd``), one per session, or one for everything."""
    if mode == "project":
        return project_namespace(project_dir or cwd)
    if mode == "session":
        return f"{NAMESPACE_PREFIX}/session-{session_id}"
    return NAMESPACE_PREFIX


def data_home(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``."""
    return Path(environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def state_home(environ: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME``, else ``~/.local/state``."""
    return Path(environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")


def default_database(environ: Mapping[str, str]) -> Path:
    """The per-user database: ``$XDG_DATA_HOME/stratagate/memory.db``."""
    return data_home(environ) / "stratagate" / "memory.db"


def hook_state_dir(environ: Mapping[str, str]) -> Path:
    """Where transcript cursors and the hook server's log live."""
    return state_home(environ) / "stratagate" / "hooks"


def runtime_dir(environ: Mapping[str, str]) -> Path:
    """Where the hook server's socket lives: ``$XDG_RUNTIME_DIR/stratagate`` (private to the
    user by the XDG rules), else the hook state directory."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "stratagate" if runtime else hook_state_dir(environ) / "run"


def database_key(database: str) -> str:
    """A short digest naming a database (its absolute path, or the URL as given)."""
    identity = database if "://" in database else os.path.abspath(os.path.expanduser(database))
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_path(environ: Mapping[str, str], database: str, version: str) -> Path:
    """The hook server's socket for a database (one server per database, user and version)."""
    path = runtime_dir(environ) / f"hooks-{version}-{database_key(database)}.sock"
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise StorageError(
            f"the hook server's socket path {path} is longer than {SOCKET_PATH_MAX} bytes; "
            "set XDG_RUNTIME_DIR to a shorter directory"
        )
    return path


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may use: made 0700 if missing; an existing one
    owned by someone else, or that others may write to, is refused (a socket or cursor there
    could be swapped)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError as exc:
        raise StorageError(f"cannot make the directory {path}: {exc.strerror or exc}") from exc
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise StorageError(
            f"{path} belongs to another user or others may write to it: refusing to use it"
        )
    return path


__all__ = [
    "NAMESPACE_MODES",
    "NAMESPACE_PREFIX",
    "PROJECT_DIR_ENV",
    "NamespaceMode",
    "data_home",
    "database_key",
    "default_database",
    "hook_state_dir",
    "namespace_for",
    "private_dir",
    "project_namespace",
    "runtime_dir",
    "socket_path",
    "state_home",
]
