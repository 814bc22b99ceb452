"""Read-only audits: a read-only SQLite file in a read-only directory (read by an unprivileged
user, so the permissions really hold), a SQLite ``mode=ro`` open, and a PostgreSQL role that may
only SELECT. verify, history, replay and state_at answer; writes raise ``ReadOnlyError``; nothing
is written. And two processes on one namespace: the second writer is refused while the first
lives, nothing of the first is marked interrupted, and the log verifies."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from stratagate import ReadOnlyError, StorageError, StrataGate
from tests.support.cli import WORKTREE, quiet_main

TURNS = [("We host on Render.", "Noted."), ("Marta reviews on Friday.", "Ok.")] * 3


def fill(database: str, namespace: str = "default") -> None:
    with StrataGate.open(database, namespace, block_turn_size=2) as memory:
        for user, assistant in TURNS:
            memory.append_turn(user, assistant)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_audit(memory: StrataGate) -> None:
    """What an auditor does on a read-only memory, and what it may not do."""
    report = memory.verify()
    assert report.ok, report
    history = memory.history()
    assert history and history[-1].position == memory.history(history[-2].position)[0].position
    turns = [record.position for record in history if record.type == "TurnAppended"]
    assert memory.state_at(turns[1]).stats(0).turns == 2
    assert memory.stats().turns == len(TURNS)
    revision = memory.revision
    with pytest.raises(ReadOnlyError):
        memory.append_turn("more", "text")
    with pytest.raises(ReadOnlyError):
        memory.search_events("Render")  # a search logs its batch
    with pytest.raises(ReadOnlyError):
        memory.forget_event("evt_any")
    assert memory.revision == revision


def test_a_read_only_sqlite_file_in_a_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "backup"
    folder.mkdir()
    database = folder / "memory.db"
    fill(str(database))
    before = digest(database)
    with StrataGate.open(database, "default", read_only=True) as memory:
        check_audit(memory)
    assert digest(database) == before
    database.chmod(0o444)
    folder.chmod(0o555)
    tmp_path.chmod(0o755)
    try:
        with StrataGate.open(database, "default", read_only=True) as memory:
            check_audit(memory)
        assert not any(p.stat().st_size for p in folder.glob("*-wal"))
        assert digest(database) == before
        # root ignores permissions: run the audits as an unprivileged user too, where one can
        for argv in (["verify"], ["history", "--read-only"], ["stats", "--read-only"]):
            done = as_nobody([*argv, "--database", str(database), "--json"])
            assert done.returncode == 0, done.stderr
        done = as_nobody(["replay", "--until", "3", "--database", str(database), "--json"])
        assert done.returncode == 0, done.stderr
        script = (
            "from stratagate import StrataGate\n"
            f"m = StrataGate.open({str(database)!r}, 'default', read_only=True)\n"
            "assert m.verify().ok and m.history() and m.state_at(3) is not None\n"
            "print(m.stats().turns)\n"
        )
        done = as_nobody(["-c", script], module=False)
        assert done.returncode == 0 and done.stdout.strip() == str(len(TURNS)), done.stderr
    finally:
        folder.chmod(0o755)
    assert digest(database) == before


def as_nobody(argv: list[str], *, module: bool = True) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root to run the audit as another user")
    command = [sys.executable, *(["-m", "stratagate"] if module else []), *argv]
    environment = {**os.environ, "PYTHONPATH": str(WORKTREE), "HOME": "/tmp"}
    try:
        return subprocess.run(
            command, capture_output=True, text=True, user="nobody", env=environment, timeout=120
        )
    except PermissionError:
        pytest.skip("this Python cannot be run by an unprivileged user here")


def test_a_sqlite_mode_ro_uri_and_the_cli_take_no_lease(tmp_path: Path) -> None:
    database = tmp_path / "live.db"
    fill(str(database))
    writer = StrataGate.open(database, "default")  # a live writer holds the lease
    try:
        with StrataGate.open(f"sqlite:///{database}", "default", read_only=True) as memory:
            check_audit(memory)
        assert quiet_main("verify", "--database", str(database)) == 0
        assert quiet_main("history", "--database", str(database), "--read-only") == 0
        assert (
            quiet_main("expand", "block", "blk_x", "--database", str(database), "--read-only") == 4
        )
        writer.append_turn("still", "writing")
    finally:
        writer.close()


@pytest.fixture
def postgres_reader(postgres_schema_url: str) -> Iterator[tuple[str, str]]:
    """The schema's URL for its owner, and for a new role that may only SELECT from it."""
    url = make_url(postgres_schema_url)
    schema = url.query["options"].split("=", 1)[1]
    role = f"sgreader_{uuid.uuid4().hex[:12]}"
    fill(postgres_schema_url)
    admin = create_engine(url.set(query={}), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        conn.execute(text(f"GRANT USAGE ON SCHEMA {schema} TO {role}"))
        conn.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}"))
    try:
        yield postgres_schema_url, url.set(username=role).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP OWNED BY {role}"))
            conn.execute(text(f"DROP ROLE {role}"))
        admin.dispose()


@pytest.mark.postgres
def test_a_select_only_postgres_role_audits(postgres_reader: tuple[str, str]) -> None:
    owner, reader = postgres_reader
    with StrataGate.open(reader, "default", read_only=True) as memory:
        check_audit(memory)
    assert quiet_main("verify", "--database", reader) == 0
    assert quiet_main("replay", "--until", "3", "--database", reader) == 0
    with (
        StrataGate.open(reader, "default") as memory,  # opening writes nothing
        pytest.raises(StorageError) as refused,  # the role really cannot write
    ):
        memory.append_turn("not allowed", "no")
    assert "permission denied" in str(refused.value)
    with StrataGate.open(owner, "default") as memory:
        assert memory.verify().ok


WRITER = textwrap.dedent(
    """
    import sys, time
    from stratagate import StrataGate
    database, ready, release = sys.argv[1:4]

    def summarizer(messages):  # holds the seal's claim until released
        open(ready, "w").close()
        while not __import__("os").path.exists(release):
            time.sleep(0.05)
        return {"l0_title": "held", "l1_summary": "held", "should_extract": False}

    with StrataGate.open(database, "default", block_turn_size=2, summarizer=summarizer) as memory:
        memory.append_turn("first", "turn")
        memory.append_turn("second", "turn")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("file_backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)  # fmt: skip
def test_a_second_process_never_disrupts_a_live_writer(
    file_backend: object, tmp_path: Path
) -> None:
    database = file_backend.database  # type: ignore[attr-defined]
    ready, release = tmp_path / "ready", tmp_path / "release"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, database, str(ready), str(release)],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
    )
    try:
        for _ in range(600):
            if ready.exists() or child.poll() is not None:
                break
            import time

            time.sleep(0.05)
        assert ready.exists(), "the writer did not start"
        # a second writer beside it: opening (which recovers abandoned work) leaves the live
        # writer's running seal alone, and its own turn lands beside it
        with StrataGate.open(database, "default") as memory:
            memory.append_turn("beside", "turn", thread_id="other")
            assert memory.stats().turns == 3
        with StrataGate.open(database, "default", read_only=True) as memory:
            assert memory.verify().ok and memory.stats().turns == 3
        release.touch()
        assert child.wait(timeout=120) == 0
    finally:
        if child.poll() is None:
            child.kill()
    with StrataGate.open(database, "default", read_only=True) as memory:
        records = memory.history()
        assert memory.verify().ok
    data = [orjson.dumps(record.data) for record in records]
    assert not any(b'"interrupted":true' in item for item in data)
    assert [r.type for r in records].count("TurnAppended") == 3
    assert not any(r.type.endswith("Failed") for r in records)
    sealed = [r.data for r in records if r.type == "BlockSealed"]
    assert [s["summary"]["l0_title"] for s in sealed] == ["held"]
