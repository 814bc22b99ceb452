"""Where the hook writes: the namespace per project, session or globally, the per-user files,
the socket path, and directories only their owner may use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import StorageError
from stratagate.integrations.hooks.places import (
    default_database,
    hook_state_dir,
    namespace_for,
    private_dir,
    project_namespace,
    runtime_dir,
    socket_path,
)


def test_project_mode_names_the_project_directory_stably() -> None:
    name = namespace_for("project", session_id="s1", cwd="/home/ada/src/tide pool")
    assert name.startswith("claude-code/tide-pool-") and name.isprintable()
    assert name == namespace_for("project", session_id="s2", cwd="/home/ada/src/tide pool/")
    # the host's project directory wins over a cwd the agent moved to
    assert name == namespace_for(
        "project", session_id="s3", cwd="/elsewhere", project_dir="/home/ada/src/tide pool"
    )
    assert name != namespace_for("project", session_id="s1", cwd="/home/bob/src/tide pool")


def test_session_and_global_modes() -> None:
    assert namespace_for("session", session_id="abc", cwd="/x") == "claude-code/session-abc"
    assert namespace_for("global", session_id="abc", cwd="/x") == "claude-code"


@given(st.text(min_size=1, max_size=80))
def test_any_directory_gives_a_printable_namespace(directory: str) -> None:
    name = project_namespace("/" + directory)
    assert name.isprintable() and name.startswith("claude-code/") and len(name) < 80


def test_files_follow_the_xdg_directories(tmp_path: Path) -> None:
    environ = {"XDG_DATA_HOME": str(tmp_path / "d"), "XDG_STATE_HOME": str(tmp_path / "s")}
    assert default_database(environ) == tmp_path / "d" / "stratagate" / "memory.db"
    assert hook_state_dir(environ) == tmp_path / "s" / "stratagate" / "hooks"
    assert runtime_dir(environ) == tmp_path / "s" / "stratagate" / "hooks" / "run"
    assert runtime_dir({"XDG_RUNTIME_DIR": "/run/user/7"}) == Path("/run/user/7/stratagate")


def test_a_socket_path_too_long_for_af_unix_is_a_clear_error() -> None:
    path = socket_path({"XDG_RUNTIME_DIR": "/tmp/r"}, "/data/memory.db", "0.1.0")
    assert path.parent == Path("/tmp/r/stratagate") and path.suffix == ".sock"
    assert path != socket_path({"XDG_RUNTIME_DIR": "/tmp/r"}, "/data/other.db", "0.1.0")
    with pytest.raises(StorageError, match="XDG_RUNTIME_DIR"):
        socket_path({"XDG_RUNTIME_DIR": "/tmp/" + "x" * 120}, "/data/memory.db", "0.1.0")


def test_private_dirs_are_made_0700_and_open_ones_refused(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        made = private_dir(tmp_path / "a" / "b")
    finally:
        os.umask(previous)
    assert made.stat().st_mode & 0o777 == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(StorageError, match="others may write"):
        private_dir(shared)
