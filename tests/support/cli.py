"""Helpers for tests of the ``stratagate`` command line: turn files, running ``main`` in this
process or ``python -m stratagate`` as a real one, and reading SQLite files directly."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from stratagate.cli.app import main
from stratagate.formats.locomo import default_data_dir

WORKTREE = Path(__file__).resolve().parents[2]
LOCOMO = default_data_dir() / "conv-26.json"

ALPHA = [
    ("We're building Tidepool, a tide-chart app for the harbour office.", "Noted: Tidepool."),
    ("Stack: we'll use npm for packages.", "Fine: npm with a lockfile."),
    ("For hosting, let's go with Heroku in the EU region.", "Noted: Heroku, EU region."),
    ("Plan: ship the beta next week.", "Beta due next week."),
    ("Marta will review the designs on Friday.", "Design review with Marta on Friday."),
    ("ok thanks", "You're welcome."),
    ("npm installs are too slow on CI. Let's switch to pnpm then.", "Switching to pnpm."),
    ("Decided: we move hosting from Heroku to Render.", "Noted: Render instead of Heroku."),
    ("The beta shipped today.", "Congratulations on the beta."),
    ("Marta is on leave until Monday.", "Noted."),
    ("We prefer squash merges.", "Squash merges it is."),
    ("ok", "ok"),
]
BETA = [
    ("Separate thread for hiring: we'll hire a tester in June.", "Hiring a tester in June."),
    ("The job post goes out tomorrow.", "Job post tomorrow."),
    ("Interviews start next Monday.", "Interviews next Monday."),
    ("thanks", "welcome"),
]


def write_turns(path: Path) -> Path:
    """16 turns in threads alpha and beta; odd alpha lines carry no receipt id."""
    items: list[dict[str, Any]] = []
    for i, (user, assistant) in enumerate(ALPHA):
        item = {"user": user, "assistant": assistant, "thread_id": "alpha"}
        item["created_at"] = f"2026-05-{i + 1:02d}T09:00:00Z"
        if i % 2 == 0:
            item["receipt_id"] = f"alpha-{i + 1}"
        items.append(item)
    for i, (user, assistant) in enumerate(BETA):
        item = {"user": user, "assistant": assistant, "thread_id": "beta"}
        items.append({**item, "created_at": f"2026-05-{i + 13:02d}T10:00:00Z"})
    path.write_bytes(jsonl_lines(*items) + b"\n\n")
    return path


def jsonl_lines(*items: dict[str, Any]) -> bytes:
    return b"\n".join(orjson.dumps(item) for item in items)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in this process: exit status, stdout, stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def unwrap(text: str | bytes, command: str | None = None) -> Any:
    """The result of a ``--json`` document, after checking its envelope (docs/CLI.md)."""
    document = orjson.loads(text)
    assert set(document) == {"format", "command", "result"}, document
    assert document["format"] == "stratagate.cli.v1"
    assert command is None or document["command"] == command
    return document["result"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return unwrap(out, argv[0])


def quiet_main(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def cli_process(*argv: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m stratagate argv`` as a real process with this worktree on its path."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    return subprocess.run(
        [sys.executable, "-m", "stratagate", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def db_rows(database: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement with the sqlite3 module (committed) and return its rows."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        rows = conn.execute(sql, params).fetchall()
        conn.commit()
        return rows


def copy_db(source: Path, target: Path) -> Path:
    """A copy of a SQLite database at rest, with its write-ahead log and snapshot files."""
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{target}{suffix}")
    if Path(f"{source}.snapshots").is_dir():
        shutil.copytree(f"{source}.snapshots", f"{target}.snapshots")
    return target
