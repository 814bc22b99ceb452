"""A new SQLite database is its owner's alone: the file and its -wal and -shm are created 0600
whatever the umask; an existing file keeps the mode its owner gave it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagate import StrataGate
from tests.support.cli import quiet_main, write_turns


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # the usual default: files world-readable
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_database_and_its_wal_files_are_private(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "nested" / "memory.db"
    memory = StrataGate.open(database, "default")
    try:
        memory.append_turn("a secret", "kept")
        files = sorted(tmp_path.joinpath("nested").iterdir())
        assert [p.name for p in files] == [
            "memory.db",
            "memory.db-shm",
            "memory.db-wal",
            "memory.db.writers",  # the writers' queue (an empty lock file)
        ]
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        memory.close()
    assert mode(database) == 0o600


def test_ingest_creates_a_private_database(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "cli.db"
    assert (
        quiet_main("ingest", str(write_turns(tmp_path / "t.jsonl")), "--database", str(database))
        == 0
    )
    assert mode(database) == 0o600


def test_an_existing_database_keeps_its_mode(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "shared.db"
    StrataGate.open(database, "default").close()
    database.chmod(0o640)  # its owner shares it with a group on purpose
    with StrataGate.open(database, "default") as memory:
        memory.append_turn("still", "shared")
    assert mode(database) == 0o640


def test_parent_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """Issue 21, finding 8: under umask 000 the directories made for a database were 0777."""
    previous = os.umask(0)
    try:
        database = tmp_path / "made" / "for" / "memory.db"
        StrataGate.open(database, "default").close()
    finally:
        os.umask(previous)
    assert mode(tmp_path / "made") == 0o700 and mode(tmp_path / "made" / "for") == 0o700


JIEBA_SCRIPT = (
    "from stratagate.offline.text import words\nprint(' '.join(words('我们决定用深色主题')))\n"
)


def jieba_run(tmp_path: Path, cache_home: Path) -> tuple[str, str, Path]:
    import subprocess
    import sys

    from tests.support.cli import WORKTREE

    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    env = {
        **os.environ, "PYTHONPATH": str(WORKTREE), "TMPDIR": str(temp),
        "XDG_CACHE_HOME": str(cache_home), "HOME": str(tmp_path / "home"),
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", JIEBA_SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr, temp


def test_jiebas_dictionary_cache_is_private_to_its_user(tmp_path: Path) -> None:
    """Issue 21, finding 8: jieba kept its marshal cache as one shared file in the system temp
    directory (another local user could plant it); now it lives in a 0700 per-user directory."""
    out, err, temp = jieba_run(tmp_path, tmp_path / "cache")
    assert "深色" in out and "Traceback" not in err
    assert not any(temp.iterdir()), list(temp.iterdir())
    private = tmp_path / "cache" / "stratagate" / "jieba"
    assert mode(private) == 0o700 and any(private.iterdir())


def test_an_unusable_cache_directory_costs_the_cache_not_a_traceback(tmp_path: Path) -> None:
    """As ``verify`` run by another user printed jieba's PermissionError: a cache directory that
    cannot be made (here a file is in the way) means no cache kept, and nothing on stderr."""
    blocker = tmp_path / "cache"
    blocker.write_text("in the way")
    out, err, temp = jieba_run(tmp_path, blocker)
    assert "深色" in out and err == ""
    assert not any(temp.iterdir()), list(temp.iterdir())
