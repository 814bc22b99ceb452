"""Hostile input to the command line and to ``StrataGate.open``: huge numbers, invalid UTF-8,
database paths that cannot be files, a missing driver, other tenants' names. Each is a one-line
typed error with its documented exit status, never a traceback; a hypothesis run throws random
argument values at the looking commands to keep it that way."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate import StrataGate
from stratagate.cli.app import main
from stratagate.errors import InvalidInputError, StorageError
from tests.support.cli import WORKTREE, quiet_main, run, write_turns

HUGE = str(2**70)
BAD_BYTE = os.fsdecode(b"\xff")
"""How an invalid UTF-8 byte in a shell argument reaches ``sys.argv`` (a lone surrogate)."""


def assert_one_line_error(result: tuple[int, str, str], status: int) -> str:
    code, out, err = result
    assert (code, out) == (status, ""), err
    assert err.startswith("stratagate: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tenants' namespaces, ``alice-private`` and ``bob``, in one database."""
    root = tmp_path_factory.mktemp("tenants")
    database = root / "tenants.db"
    turns = write_turns(root / "turns.jsonl")
    for namespace in ("alice-private", "bob"):
        argv = ["ingest", str(turns), "--database", str(database), "--namespace", namespace]
        assert quiet_main(*argv, "--block-turn-size", "4") == 0
    return database


# -- the reported tracebacks ---------------------------------------------------------------


def test_huge_numbers_are_input_errors(tenants: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--database", str(tenants), "--namespace", "bob"]
    for argv in (
        ["search", "pnpm", "--limit", "99999999999999999999"],
        ["search", "pnpm", "--kind", "raw", "--limit", HUGE],
        ["history", "--since", HUGE],
        ["replay", "--until", HUGE],
        ["context", "pnpm", "--budget", HUGE],
    ):
        assert_one_line_error(run(capsys, *argv, *db), 2)


def test_invalid_utf8_arguments_are_input_errors(
    tenants: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--database", str(tenants), "--namespace", "bob"]
    turns = write_turns(tmp_path / "turns.jsonl")
    odd_file = tmp_path / f"{BAD_BYTE}.jsonl"
    odd_file.write_bytes(turns.read_bytes())
    for argv in (
        ["search", BAD_BYTE, *db],
        ["search", f"pnpm {BAD_BYTE}", "--kind", "raw", *db],
        ["expand", "event", f"evt_{BAD_BYTE}", *db],
        ["history", "--type", BAD_BYTE, *db],
        ["search", "pnpm", "--database", str(tenants), "--namespace", BAD_BYTE],
        ["ingest", str(odd_file), "--database", str(tmp_path / "u.db")],
        ["ingest", str(turns), "--database", str(tmp_path / f"{BAD_BYTE}.db")],
        ["stats", "--database", str(tmp_path / f"{BAD_BYTE}.db")],
    ):
        err = assert_one_line_error(run(capsys, *argv), 2)
        assert "not valid UTF-8" in err, argv
    assert not (tmp_path / "u.db").exists()
    # The same from a shell: the raw byte in argv.
    shell = subprocess.run(
        [sys.executable, "-m", "stratagate", "search", b"\xff", *db],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        timeout=60,
    )
    assert shell.returncode == 2 and shell.stdout == b""
    assert shell.stderr.startswith(b"stratagate: error: ") and shell.stderr.count(b"\n") == 1


def test_database_paths_that_cannot_be_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = write_turns(tmp_path / "turns.jsonl")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a directory")
    for database in (
        str(a_file / "x.db"),
        f"sqlite:///{a_file}/x.db",
        "/proc/x.db",
        "/proc/no-such-dir/x.db",
    ):
        err = assert_one_line_error(run(capsys, "ingest", str(turns), "--database", database), 4)
        assert "x.db" in err, err
        assert_one_line_error(run(capsys, "stats", "--database", database), 3)


def test_unknown_namespace_names_no_other_tenant(
    tenants: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--database", str(tenants), "--namespace", "mallory"]
    for argv in (
        ["stats"],
        ["search", "pnpm"],
        ["history"],
        ["verify"],
        ["replay", "--until", "1"],
    ):
        err = assert_one_line_error(run(capsys, *argv, *db), 3)
        assert "unknown namespace 'mallory'" in err
        assert "alice-private" not in err and "bob" not in err


def test_postgres_without_psycopg_says_what_to_install(tmp_path: Path) -> None:
    """A real process in which ``import psycopg`` fails, as on an install without the extra."""
    script = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from stratagate.cli.app import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    url = "postgresql://postgres@127.0.0.1:5432/test"
    for argv in (["stats", "--database", url], ["ingest", "turns.jsonl", "--database", url]):
        write_turns(tmp_path / "turns.jsonl")
        result = subprocess.run(
            [sys.executable, "-c", script, *argv],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(WORKTREE)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 4 and result.stderr.count("\n") == 1, result.stderr
        assert "pip install 'stratagate[postgres]'" in result.stderr


# -- the same from Python ----------------------------------------------------------------


@pytest.mark.parametrize("database", [123, None, 4.5, ["memory.db"]])
def test_open_rejects_a_database_that_is_not_a_path(database: object) -> None:
    with pytest.raises(InvalidInputError, match="database must be"):
        StrataGate.open(database, "ns")  # type: ignore[arg-type]


def test_open_reports_paths_that_cannot_be_files_as_storage_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a directory")
    for database in (a_file / "x.db", "/proc/no-such-dir/x.db", "/proc/x.db"):
        with pytest.raises(StorageError, match=r"x\.db") as caught:
            StrataGate.open(database, "ns")
        assert caught.value.__cause__ is not None
    with pytest.raises(InvalidInputError, match="not valid UTF-8"):
        StrataGate.open(tmp_path / f"{BAD_BYTE}.db", "ns")


def test_history_rejects_a_position_past_any_log(tmp_path: Path) -> None:
    with StrataGate.open(tmp_path / "h.db", "ns", block_turn_size=4) as memory:
        memory.append_turn("hello", "hi")
        assert memory.history(since=2**63 - 1) == []
        with pytest.raises(InvalidInputError, match="since"):
            memory.history(since=2**63)


# -- random argument values ----------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=(), exclude_characters="\x00"), max_size=24)
NUMBER = st.integers(min_value=-(2**80), max_value=2**80).map(str)
WORDS = st.sampled_from(["", " ", "-", "--", "pnpm", "beta", "2026-05-05", "L9", "next", "1e3"])
VALUE = st.one_of(ANY_TEXT, NUMBER, WORDS, st.just(BAD_BYTE))
USER_ERRORS = (0, 2, 3)
"""ok, usage or input error, not found: what a random argument may earn, never a crash."""


@pytest.fixture(scope="module")
def fuzz_db(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("fuzz")
    turns = write_turns(root / "turns.jsonl")
    database = ["--database", str(root / "fuzz.db")]
    assert quiet_main("ingest", str(turns), *database, "--block-turn-size", "4") == 0
    return database


def run_quietly(argv: list[str]) -> tuple[int, str]:
    """``main(argv)`` with output captured; argparse's exits become statuses."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else 2
    return code, err.getvalue()


def check_user_error(argv: list[str]) -> None:
    code, err = run_quietly(argv)
    assert code in USER_ERRORS, (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code != 0:
        last = err.rstrip("\n").splitlines()[-1]
        assert last.startswith(("stratagate: error: ", "stratagate ")), (argv, err)
        assert ": error: " in last, (argv, err)
        if err.startswith("stratagate: error: "):
            assert err.count("\n") == 1, (argv, err)


@settings(max_examples=25)
@given(query=VALUE, kind=st.sampled_from(["events", "elements", "raw"]), limit=VALUE)
def test_search_survives_any_arguments(
    fuzz_db: list[str], query: str, kind: str, limit: str
) -> None:
    check_user_error(["search", "--kind", kind, f"--limit={limit}", *fuzz_db, "--", query])


@settings(max_examples=25)
@given(since=VALUE, limit=VALUE, type_=VALUE)
def test_history_survives_any_arguments(
    fuzz_db: list[str], since: str, limit: str, type_: str
) -> None:
    argv = ["history", f"--since={since}", f"--limit={limit}", f"--type={type_}", *fuzz_db]
    check_user_error(argv)


@settings(max_examples=25)
@given(
    kind=st.sampled_from(["block", "event", "element"]),
    identifier=VALUE,
    option=st.sampled_from(["--level", "--at"]),
    value=VALUE,
)
def test_expand_survives_any_arguments(
    fuzz_db: list[str], kind: str, identifier: str, option: str, value: str
) -> None:
    check_user_error(["expand", f"{option}={value}", *fuzz_db, kind, "--", identifier])


@settings(max_examples=25)
@given(until=VALUE)
def test_replay_survives_any_arguments(fuzz_db: list[str], until: str) -> None:
    check_user_error(["replay", f"--until={until}", *fuzz_db])


# -- issue 21, finding 7: names, ports, what the CLI reads --------------------------------


def test_an_empty_namespace_is_refused_not_defaulted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = write_turns(tmp_path / "turns.jsonl")
    database = tmp_path / "e.db"
    for namespace in ("", " "):
        argv = ["ingest", str(turns), "--database", str(database), "--namespace", namespace]
        err = assert_one_line_error(run(capsys, *argv), 2)
        assert "--namespace" in err, err
    assert not database.exists()


@pytest.mark.parametrize("port", ["99999", "65536", "-1", HUGE])
@pytest.mark.parametrize("command", ["serve", "ui"])
def test_ports_out_of_range_are_usage_errors(
    command: str, port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--database", "x.db", "--port", port])
    assert exited.value.code == 2
    assert "0-65535" in capsys.readouterr().err


def test_ingest_refuses_what_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "turns.fifo"
    os.mkfifo(fifo)
    database = tmp_path / "f.db"
    for path in ("/dev/zero", str(fifo)):
        err = assert_one_line_error(run(capsys, "ingest", path, "--database", str(database)), 2)
        assert "not a regular file" in err, err
    assert not database.exists()


def test_verify_refuses_an_anchor_that_is_not_a_regular_file(
    tenants: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "anchor.fifo"
    os.mkfifo(fifo)
    db = ["--database", str(tenants), "--namespace", "bob"]
    for path in ("/dev/zero", str(fifo)):
        err = assert_one_line_error(run(capsys, "verify", *db, "--anchor", path), 2)
        assert "not a regular file" in err, err


def test_an_input_file_over_the_limit_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stratagate.formats.input_files import MAX_INPUT_BYTES

    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:  # sparse: no disk, no reading
        handle.truncate(MAX_INPUT_BYTES + 1)
    err = assert_one_line_error(
        run(capsys, "ingest", str(huge), "--database", str(tmp_path / "h.db")), 2
    )
    assert "larger than" in err, err
