"""``stratagate ingest`` of many files: one namespace per file, several at once (inline threads
or Ray actors), one progress bar, a summary table or JSON, and resumption by receipt ids after
a failure or a SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.cli import WORKTREE, cli_process, run, run_json, unwrap


def note_turns(path: Path, count: int, *, bad_line: int | None = None) -> Path:
    """``count`` synthetic turns in the file's own thread, without receipt ids (so each turn's
    receipt is ``<file name>:<line>``); ``bad_line`` gets a ``created_at`` no one can read."""
    lines = []
    for i in range(count):
        turn: dict[str, Any] = {
            "user": f"In project {path.stem}, note {i}: we use tool{i % 7} with Priya on task {i}.",
            "assistant": f"Noted, task {i}.",
            "created_at": f"2026-03-{1 + i // 10:02d}T09:{i % 60:02d}:00Z",
            "thread_id": path.stem,
        }
        if bad_line == i + 1:
            turn["created_at"] = "sometime"
        lines.append(orjson.dumps(turn))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def turn_counts(database: Path) -> dict[str, tuple[int, int]]:
    """Per namespace: TurnAppended rows and distinct receipt ids among them, read with sqlite3."""
    with closing(sqlite3.connect(database)) as conn:
        rows = conn.execute(
            "SELECT namespace, count(*), count(DISTINCT json_extract(payload, '$.receipt_id')) "
            "FROM stratagate_events WHERE event_type = 'TurnAppended' GROUP BY namespace"
        ).fetchall()
    return {namespace: (turns, receipts) for namespace, turns, receipts in rows}


def test_a_directory_goes_in_one_namespace_per_file_two_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # paths print as given: short ones fit the table
    folder = Path("conversations")
    for name, count in (("alpha", 20), ("beta", 30), ("gamma", 70)):
        note_turns(folder / f"{name}.jsonl", count)
    (folder / "README.txt").write_text("not a turn file")
    note_turns(folder / ".hidden.jsonl", 3)
    database = Path("many.db")
    db = ["--database", str(database)]

    report = run_json(
        capsys,
        "ingest",
        "--models",
        "offline",
        str(folder),
        *db,
        "--parallel",
        "2",
        "--block-turn-size",
        "8",
    )
    assert (report["runtime"], report["parallel"], report["namespaces"]) == ("inline", 2, 3)
    assert report["turns"] == {"total": 120, "appended": 120, "skipped": 0}
    files = {f["namespace"]: f for f in report["files"]}
    assert sorted(files) == ["alpha", "beta", "gamma"]
    assert files["gamma"]["file"] == str(folder / "gamma.jsonl")
    assert files["gamma"]["turns"] == {"total": 70, "appended": 70, "skipped": 0}
    assert files["gamma"]["blocks"] == {"total": 8, "added": 8}
    assert turn_counts(database) == {"alpha": (20, 20), "beta": (30, 30), "gamma": (70, 70)}
    for name, count in (("alpha", 20), ("beta", 30), ("gamma", 70)):
        assert run_json(capsys, "stats", *db, "--namespace", name)["turns"] == count
        assert run(capsys, "verify", *db, "--namespace", name)[0] == 0

    code, out, err = run(
        capsys, "ingest", "--models", "offline", "conversations", *db, "--parallel", "2"
    )
    assert code == 0 and err == ""  # stderr is no terminal and the run is short: no bar
    lines = out.splitlines()
    assert lines[0] == "ingested 3 file(s) into 3 namespace(s) of many.db (inline, 2 at once)"
    assert lines[1].split()[:4] == ["NAMESPACE", "TURNS", "APPENDED", "SKIPPED"]
    rows = {line.split()[0]: line.split() for line in lines[2:5]}
    assert rows["gamma"][:8] == ["gamma", "70", "0", "70", "8", "(+0)", "0", "(+0)"]
    assert rows["alpha"][-1] == "conversations/alpha.jsonl"
    assert "0 appended, 120 skipped (already in), 120 in all" in out
    assert all(len(line) <= 100 for line in lines)


def test_several_files_into_one_namespace_go_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = note_turns(tmp_path / "monday.jsonl", 5)
    second = note_turns(tmp_path / "tuesday.jsonl", 7)
    db = ["--database", str(tmp_path / "one.db"), "--namespace", "diary"]
    report = run_json(
        capsys, "ingest", "--models", "offline", str(second), str(first), *db, "--parallel", "4"
    )
    assert [(f["file"], f["namespace"]) for f in report["files"]] == [
        (str(second), "diary"),
        (str(first), "diary"),
    ]
    turns = run_json(capsys, "history", *db, "--type", "TurnAppended")
    receipts = [t["data"]["receipt_id"] for t in turns]
    assert receipts == [f"tuesday.jsonl:{i}" for i in range(1, 8)] + [
        f"monday.jsonl:{i}" for i in range(1, 6)
    ]


def test_files_that_would_share_receipts_or_a_bad_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = note_turns(tmp_path / "a" / "notes.jsonl", 2)
    two = note_turns(tmp_path / "b" / "notes.jsonl", 2)
    database = tmp_path / "refused.db"
    code, out, err = run(
        capsys, "ingest", "--models", "offline", str(one), str(two), "--database", str(database)
    )
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "would both go into namespace 'notes'" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(
        capsys, "ingest", "--models", "offline", str(empty), "--database", str(database)
    )
    assert code == 2 and "no .jsonl or .json files" in err
    assert not database.exists()


def test_a_failing_file_stops_the_job_and_a_rerun_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "job"
    note_turns(folder / "good.jsonl", 100)
    bad = note_turns(folder / "bad.jsonl", 100, bad_line=70)
    database = tmp_path / "stop.db"
    db = ["--database", str(database)]
    code, out, err = run(
        capsys, "ingest", "--models", "offline", str(folder), *db, "--parallel", "2"
    )
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("stratagate: error: bad.jsonl line 70: ")
    assert turn_counts(database)["bad"] == (69, 69)  # the turns before it stay in

    note_turns(bad, 100)  # fixed
    report = run_json(capsys, "ingest", "--models", "offline", str(folder), *db, "--parallel", "2")
    files = {f["namespace"]: f["turns"] for f in report["files"]}
    assert files["bad"] == {"total": 100, "appended": 31, "skipped": 69}
    assert files["good"]["appended"] + files["good"]["skipped"] == 100
    assert turn_counts(database) == {"bad": (100, 100), "good": (100, 100)}


@pytest.mark.slow
def test_a_killed_ingest_resumes_without_losing_or_repeating_a_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ("east", "north", "south", "west")
    folder = tmp_path / "big"
    for name in names:
        note_turns(folder / f"{name}.jsonl", 100)
    database = tmp_path / "killed.db"
    argv = [
        "ingest",
        "--models",
        "offline",
        str(folder),
        "--database",
        str(database),
        "--parallel",
        "2",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "stratagate", *argv],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    try:
        while sum(turns for turns, _ in _counts_or_empty(database).values()) < 64:
            assert process.poll() is None, "the ingest ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    before = turn_counts(database)
    stored = sum(turns for turns, _ in before.values())
    assert 64 <= stored < 400, before  # killed mid-job
    assert all(turns == receipts for turns, receipts in before.values())

    report = run_json(capsys, *argv)
    assert report["turns"] == {"total": 400, "appended": 400 - stored, "skipped": stored}
    assert turn_counts(database) == {name: (100, 100) for name in names}
    for name in names:
        db = ["--database", str(database), "--namespace", name]
        stats = run_json(capsys, "stats", *db)
        assert stats["turns"] == 100 and stats["blocks"] == 8
        assert set(stats["extraction_jobs"]) <= {"succeeded", "skipped"}
        assert run(capsys, "verify", *db)[0] == 0


def _counts_or_empty(database: Path) -> dict[str, tuple[int, int]]:
    """``turn_counts`` once the ingest has created its tables; empty before."""
    try:
        return turn_counts(database)
    except sqlite3.OperationalError:  # no file or no table yet
        return {}


@pytest.mark.ray
@pytest.mark.slow
def test_ingest_on_ray_actors_in_a_real_process(tmp_path: Path) -> None:
    """Its own local Ray, started once although two worker threads open namespaces at once;
    Ray's own warnings stay off stdout, which holds exactly the JSON document."""
    folder = tmp_path / "ray"
    note_turns(folder / "left.jsonl", 30)
    note_turns(folder / "right.jsonl", 20)
    database = tmp_path / "ray.db"
    argv = [
        "ingest",
        "--models",
        "offline",
        str(folder),
        "--database",
        str(database),
        "--runtime",
        "ray",
    ]
    argv += ["--parallel", "2", "--models", "none", "--block-turn-size", "10", "--json"]
    result = cli_process(*argv, "--ray-log-level", "info", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.count("Started a local Ray instance") == 1
    report = unwrap(result.stdout, "ingest")
    assert report["runtime"] == "ray" and report["turns"]["appended"] == 50
    assert {f["namespace"]: f["blocks"]["total"] for f in report["files"]} == {
        "left": 3,
        "right": 2,
    }
    assert turn_counts(database) == {"left": (30, 30), "right": (20, 20)}


@pytest.mark.ray
@pytest.mark.slow
def test_ray_is_quiet_by_default_and_stdout_holds_only_the_document(tmp_path: Path) -> None:
    note_turns(tmp_path / "one.jsonl", 12)
    argv = ["ingest", str(tmp_path / "one.jsonl"), "--database", str(tmp_path / "q.db")]
    result = cli_process(*argv, "--runtime", "ray", "--json", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert unwrap(result.stdout, "ingest")["turns"]["appended"] == 12  # nothing else on stdout
    for notice in ("Started a local Ray instance", "Token authentication", "SIGTERM handler"):
        assert notice not in result.stderr, result.stderr


def test_ray_address_needs_the_ray_runtime(tmp_path: Path) -> None:
    note_turns(tmp_path / "one.jsonl", 2)
    result = cli_process(
        "ingest", str(tmp_path / "one.jsonl"), "--ray-address", "auto", cwd=tmp_path
    )
    assert result.returncode == 2 and "needs --runtime ray" in result.stderr


def test_reserved_stdout_sends_stray_writes_to_stderr(tmp_path: Path) -> None:
    """What Ray's threads and children write to fd 1 lands on stderr, the result on stdout."""
    script = (
        "import os, sys\n"
        "from stratagate.cli.streams import reserve_stdout\n"
        "reserve_stdout()\n"
        "os.write(1, b'(raylet) WARNING stray\\n')\n"
        "print('{\"doc\": 1}')\n"
        "os.write(1, b'(raylet) WARNING at exit\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=WORKTREE, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"doc": 1}\n'
    assert done.stderr.count("(raylet) WARNING") == 2
