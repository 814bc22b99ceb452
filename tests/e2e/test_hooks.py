"""``stratagate hook claude-code`` run as the host runs it: a subprocess per event with the
event's JSON on stdin, over transcripts written line by line in the host's format. Every run
exits 0 or 1 (never 2, which would block the user's prompt) with at most one line on stderr and
never a traceback; what was stored is read back through a read-only memory."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from stratagate import StrataGate
from stratagate.errors import StorageError
from stratagate.integrations.hooks.places import namespace_for
from stratagate.integrations.hooks.protocol import Reply, Request
from tests.support.transcripts import Transcript, event

WORKTREE = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # real processes: hooks, hook servers


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    @property
    def context(self) -> str | None:
        """The ``additionalContext`` the hook printed, if any."""
        if not self.out.strip():
            return None
        output = orjson.loads(self.out)["hookSpecificOutput"]
        text: str = output["additionalContext"]
        return text


@dataclass
class Host:
    """An agent host: its directories, its environment and the hook command it runs."""

    root: Path
    env: dict[str, str]

    @property
    def database(self) -> Path:
        return self.root / "memory.db"

    def run(self, stdin: bytes, *options: str) -> Done:
        argv = [sys.executable, "-m", "stratagate", "hook", "claude-code", "--budget", "60"]
        done = subprocess.run(
            [*argv, *options], input=stdin, capture_output=True, env=self.env, cwd=self.root,
            timeout=120,
        )  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode in (0, 1), (done.returncode, err)
        assert "Traceback" not in err and len(err.splitlines()) <= 1, err
        return Done(done.returncode, done.stdout.decode(), err)

    def hook(
        self,
        name: str,
        transcript: Transcript | None,
        path: Path | None,
        *options: str,
        **fields: Any,
    ) -> Done:
        """The hook for ``name`` after writing the transcript out as it stands."""
        if transcript is not None and path is not None:
            transcript.write(path)
        session = transcript.session_id if transcript is not None else fields.pop("session")
        cwd = transcript.cwd if transcript is not None else fields.pop("cwd")
        return self.run(event(name, path, session, cwd=cwd, **fields), *options)

    def stored(self, namespace: str, thread: str | None = None) -> list[tuple[str, str]]:
        """The (role, content) of every message the namespace holds (of one thread), in order."""
        with StrataGate.open(self.database, namespace, read_only=True) as memory:
            blocks = [m for b in memory.list_blocks(thread) for m in b.l5_raw]
            messages = blocks + memory.list_open_tail(thread)
        return [(m.role, m.content) for m in messages if m.role in ("user", "assistant")]

    def tools(self, namespace: str) -> list[dict[str, Any]]:
        with StrataGate.open(self.database, namespace, read_only=True) as memory:
            messages = [m for b in memory.list_blocks() for m in b.l5_raw]
            messages += memory.list_open_tail()
        return [t.model_dump() for m in messages for t in m.tool_calls or []]

    def stop_servers(self) -> None:
        """Stop the hook servers this host's hooks started (by the pid each one wrote)."""
        for pid_file in (self.root / "run").rglob("*.pid"):
            pid = int(pid_file.read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)


@contextlib.contextmanager
def new_host(**environ: str) -> Iterator[Host]:
    """A host with directories of its own; the hook servers its hooks start are stopped after."""
    root = Path(tempfile.mkdtemp(prefix="sgh-", dir="/tmp"))  # AF_UNIX paths must stay short
    inherited = {  # model endpoints only when the test names them
        k: v for k, v in os.environ.items() if not k.startswith(("STRATAGATE_MODEL", "OPENAI_"))
    }
    env = {
        **inherited,
        "PYTHONPATH": str(WORKTREE),
        "XDG_RUNTIME_DIR": str(root / "run"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_DATA_HOME": str(root / "data"),
        "STRATAGATE_DATABASE": str(root / "memory.db"),
        **environ,
    }
    env.pop("CLAUDE_PROJECT_DIR", None)
    host = Host(root, env)
    try:
        yield host
    finally:
        host.stop_servers()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    with new_host() as shared:
        yield shared


@pytest.fixture
def project(request: pytest.FixtureRequest) -> str:
    """A project directory of its own per test (so a namespace of its own)."""
    return f"/work/{request.node.name}"


def namespace(project: str) -> str:
    return namespace_for("project", session_id="-", cwd=project)


def test_stop_stores_string_and_block_content_with_tool_records(
    host: Host, project: str, tmp_path: Path
) -> None:
    t = Transcript("sess-a", cwd=project)
    t.summary("an earlier, compacted conversation")
    t.prompt("Let's use pnpm for the monorepo.")
    t.reply({"type": "thinking", "thinking": "SECRET-THOUGHT"}, "Checking the lockfile.")
    t.tool_use("toolu_1", "Bash", {"command": "ls"})
    t.tool_result("toolu_1", [{"type": "text", "text": "package-lock.json"}])
    t.tool_use("toolu_2", "Read", {"file_path": "/missing"})
    t.tool_result("toolu_2", "File does not exist.", is_error=True)
    t.prompt("subagent: audit the lockfile", isSidechain=True)
    t.reply("SIDECHAIN-ANSWER", stop_reason="end_turn", isSidechain=True)
    t.reply("Switched to pnpm and removed package-lock.json.", stop_reason="end_turn")
    t.prompt([{"type": "text", "text": "And CI?"}])
    t.reply("CI now runs pnpm install.", stop_reason="end_turn")
    done = host.hook("Stop", t, tmp_path / "a.jsonl", stop_hook_active=False)
    assert (done.code, done.out, done.err) == (0, "", "")
    assert host.stored(namespace(project), "sess-a") == [
        ("user", "Let's use pnpm for the monorepo."),
        ("assistant", "Checking the lockfile.\n\nSwitched to pnpm and removed package-lock.json."),
        ("user", "And CI?"),
        ("assistant", "CI now runs pnpm install."),
    ]
    assert host.tools(namespace(project)) == [
        {"name": "Bash", "arguments": {"command": "ls"}, "result": "package-lock.json"},
        {
            "name": "Read",
            "arguments": {"file_path": "/missing"},
            "result": {"error": "File does not exist."},
        },
    ]


def test_an_empty_namespace_is_refused_not_read_as_the_project(
    host: Host, project: str, tmp_path: Path
) -> None:
    """Issue 21, finding 7: ``--namespace ""`` silently fell back to the project's namespace."""
    t = Transcript("sess-empty", cwd=project)
    t.prompt("remember nothing")
    t.reply("nothing stored", stop_reason="end_turn")
    done = host.hook("Stop", t, tmp_path / "e.jsonl", "--namespace", "", stop_hook_active=False)
    assert done.code == 1 and "--namespace" in done.err, done
    assert not host.database.exists() or host.stored(namespace(project), "sess-empty") == []


def test_a_turn_in_progress_waits_and_a_grown_transcript_stores_only_what_is_new(
    host: Host, project: str, tmp_path: Path
) -> None:
    path = tmp_path / "b.jsonl"
    t = Transcript("sess-b", cwd=project)
    t.turn("First: the API is REST.", "REST it is.")
    t.prompt("Second: add a health endpoint.")
    t.tool_use("toolu_1", "Edit", {"file_path": "api.py"})  # its result is not written yet
    assert host.hook("Stop", t, path).code == 0
    assert [c for _, c in host.stored(namespace(project))] == [
        "First: the API is REST.",
        "REST it is.",
    ]
    assert host.hook("Stop", t, path).code == 0  # a repeated Stop stores nothing twice
    shutil.rmtree(host.root / "state" / "stratagate" / "hooks" / "cursors")
    assert host.hook("Stop", t, path).code == 0  # nor does a run that lost its cursors
    t.tool_result("toolu_1", "edited")
    t.reply("Added /health.", stop_reason="end_turn")
    t.turn("Third: document it.", "Documented.")
    assert host.hook("Stop", t, path).code == 0
    assert host.hook("SessionEnd", t, path, reason="exit").code == 0
    assert [c for _, c in host.stored(namespace(project))] == [
        "First: the API is REST.",
        "REST it is.",
        "Second: add a health endpoint.",
        "Added /health.",
        "Third: document it.",
        "Documented.",
    ]


def test_a_reply_without_a_stop_reason_is_stored_at_the_stop(
    host: Host, project: str, tmp_path: Path
) -> None:
    t = Transcript("sess-c", cwd=project)
    t.prompt("Name the release.")
    t.reply("Call it Tidepool.")  # no stop_reason: only the Stop says the reply is over
    assert host.hook("PreCompact", t, tmp_path / "c.jsonl", trigger="auto").code == 0
    assert host.stored(namespace(project)) == [
        ("user", "Name the release."),
        ("assistant", "Call it Tidepool."),
    ]


def test_truncated_corrupt_and_non_utf8_lines(host: Host, project: str, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    t = Transcript("sess-d", cwd=project)
    t.turn("Caf\u00e9 menu, please.", "Here it is.")
    data = t.data().replace("\u00e9".encode(), b"\xe9")  # a byte that is not UTF-8
    data += b'{"type": "user", "message": {"content": "half a li\n'  # a broken line
    t2 = Transcript("sess-d", cwd=project)
    t2.turn("Last one.", "Done.")
    tail = t2.data()
    path.write_bytes(data + tail[:-30])  # the host is still writing the last line
    done = host.run(event("Stop", path, "sess-d", cwd=project))
    assert done.code == 0
    assert "skipped 1 corrupt transcript line" in done.err and "not UTF-8" in done.err
    assert host.stored(namespace(project)) == [
        ("user", "Caf\ufffd menu, please."),
        ("assistant", "Here it is."),
    ]
    path.write_bytes(data + tail)  # the line is complete now
    assert host.run(event("Stop", path, "sess-d", cwd=project)).code == 0
    assert [c for _, c in host.stored(namespace(project))][2:] == ["Last one.", "Done."]


def test_two_sessions_of_one_project_share_a_memory(
    host: Host, project: str, tmp_path: Path
) -> None:
    yesterday = Transcript("sess-yesterday", cwd=project)
    yesterday.turn("We decided: deploy to Fly.io, region ams.", "Noted: Fly.io in ams.")
    yesterday.turn("And the database is Postgres 16.", "Postgres 16, noted.")
    assert host.hook("Stop", yesterday, tmp_path / "y.jsonl").code == 0
    today = Transcript("sess-today", cwd=project + "/src")  # the agent moved; the project did not
    assert host.hook("SessionStart", today, tmp_path / "t.jsonl", source="startup").out == ""
    prompt = "Where do we deploy, and in which region?"
    done = host.run(
        event("UserPromptSubmit", tmp_path / "t.jsonl", "sess-today", cwd=project, prompt=prompt)
    )
    assert done.code == 0 and done.err == ""
    assert orjson.loads(done.out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert done.context is not None
    assert "Fly.io" in done.context and "sess-yes" in done.context
    assert namespace(project) in done.context
    unrelated = event(
        "UserPromptSubmit", None, "sess-today", cwd=project, prompt="zebra quantum xylophone"
    )
    assert host.run(unrelated).out == ""  # nothing bears on it: nothing is added


def test_session_start_shows_the_sessions_block_context(
    host: Host, project: str, tmp_path: Path
) -> None:
    t = Transcript("sess-e", cwd=project)
    for n in range(13):  # one block of 12 turns is sealed, one turn is in the open tail
        t.turn(f"Step {n}: write module {n}.", f"Module {n} written.")
    assert host.hook("Stop", t, tmp_path / "e.jsonl").code == 0
    done = host.hook("SessionStart", t, tmp_path / "e.jsonl", source="compact")
    assert done.context is not None
    assert "turns 1-12" in done.context and "Module 12 written." in done.context


def test_errors_exit_1_with_one_line_and_never_2(host: Host, project: str, tmp_path: Path) -> None:
    missing = host.run(event("Stop", tmp_path / "nope.jsonl", "sess-f", cwd=project))
    assert missing.code == 1 and "no transcript at" in missing.err
    assert host.run(b"{not json").code == 1
    assert host.run(b'["a list"]').code == 1
    assert host.run(orjson.dumps({"hook_event_name": "Stop"})).code == 1  # no session id
    assert host.run(event("Stop", None, "sess-f", cwd=project)).code == 1  # no transcript
    usage = host.run(event("Stop", None, "sess-f", cwd=project), "--no-such-option")
    assert usage.code == 1 and "unrecognized arguments" in usage.err
    assert host.run(event("PreToolUse", None, "sess-f", cwd=project, tool_name="Bash")).code == 0
    assert host.run(b"", "--namespace-mode", "bogus").code == 1


def test_hooks_work_beside_a_running_mcp_server_on_the_same_namespace(
    host: Host, project: str, tmp_path: Path
) -> None:
    """A server holds the namespace open (an agent window) while the hooks of another capture
    and recall: both write, each finds the other's turn, nothing is refused."""
    import anyio

    from tests.support.mcp_client import call, stdio_client

    t = Transcript("sess-g", cwd=project)
    t.turn("Remember: the staging password rotates monthly.", "Noted.")

    async def beside() -> None:
        async with stdio_client(host.database, "--namespace", namespace(project)) as server:
            await call(server, "append_turn", user="The server says we deploy on Fridays.",
                       assistant="Understood.")  # fmt: skip
            stored = host.hook("Stop", t, tmp_path / "g.jsonl")
            assert stored.code == 0, stored.err
            found = await call(server, "search_raw_memory", query="staging password")
            assert any("rotates monthly" in h["message"]["content"] for h in found["hits"])
            recalled = host.hook(
                "UserPromptSubmit", None, None, session="sess-other", cwd=project,
                prompt="When do we deploy on Fridays?",
            )  # fmt: skip
            assert recalled.code == 0 and "Fridays" in (recalled.context or ""), recalled

    anyio.run(beside)
    assert {c for _, c in host.stored(namespace(project))} == {
        "Remember: the staging password rotates monthly.",
        "Noted.",
        "The server says we deploy on Fridays.",
        "Understood.",
    }


def test_a_first_stop_with_a_short_budget_is_stored_by_the_server_it_started(
    tmp_path: Path,
) -> None:
    with new_host() as cold:  # no hook server runs yet: this hook starts one
        t = Transcript("sess-k", cwd="/work/cold")
        t.turn("Cold start: remember the port is 8443.", "Port 8443, noted.")
        done = cold.hook("Stop", t, tmp_path / "k.jsonl", "--budget", "0.2")
        assert done.code == 0 and "still storing this session's turns" in done.err
        wait_for(cold, "/work/cold", 2)
        assert cold.stored(namespace("/work/cold")) == [
            ("user", "Cold start: remember the port is 8443."),
            ("assistant", "Port 8443, noted."),
        ]


def test_hooks_racing_to_start_the_server_start_one_and_lose_no_request(
    tmp_path: Path,
) -> None:
    with new_host() as cold:
        argv = [sys.executable, "-m", "stratagate", "hook", "claude-code", "--budget", "0.3"]
        running = []
        for n in range(4):  # four sessions of one project stop at the same moment
            t = Transcript(f"sess-race-{n}", cwd="/work/race")
            t.turn(f"Race {n}: note the number {n}.", f"Noted {n}.")
            path = t.write(tmp_path / f"race-{n}.jsonl")
            process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=cold.env, cwd=cold.root,
            )  # fmt: skip
            assert process.stdin is not None
            process.stdin.write(event("Stop", path, t.session_id, cwd=t.cwd))
            process.stdin.close()  # the hook reads to the end of its stdin
            running.append(process)
        for process in running:
            assert process.wait(timeout=120) == 0 and process.stderr is not None
            assert "Traceback" not in process.stderr.read().decode()
        wait_for(cold, "/work/race", 8)
        assert sorted(c for _, c in cold.stored(namespace("/work/race"))) == sorted(
            text for n in range(4) for text in (f"Race {n}: note the number {n}.", f"Noted {n}.")
        )
        assert len(list((cold.root / "run").rglob("*.pid"))) == 1  # one server serves


def test_a_server_that_loses_the_start_race_hands_its_request_on(tmp_path: Path) -> None:
    with new_host() as cold:
        argv = [sys.executable, "-m", "stratagate", "hook", "server", "--first-request-on-stdin"]
        servers = []
        for n in range(2):  # as two hooks that found no server would start them
            t = Transcript(f"sess-pair-{n}", cwd="/work/pair")
            t.turn(f"Pair {n}.", f"Paired {n}.")
            request = Request(
                event=orjson.loads(event("Stop", t.write(tmp_path / f"p{n}.jsonl"), t.session_id)),
                namespace="pair",
                deadline=time.time() + 60,
            )
            server = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=cold.env, cwd=cold.root, start_new_session=True,
            )  # fmt: skip
            assert server.stdin is not None
            server.stdin.write(request.encode())
            server.stdin.close()
            servers.append(server)
        replies = [Reply.decode(server.stdout.read()) for server in servers if server.stdout]
        assert [reply.exit for reply in replies] == [0, 0]
        deadline = time.monotonic() + 60
        while all(server.poll() is None for server in servers):  # the loser exits, 0
            assert time.monotonic() < deadline, "no server exited: both serve?"
            time.sleep(0.05)
        [loser] = [server for server in servers if server.returncode == 0]
        assert loser.stderr is not None and b"handing the request on" in loser.stderr.read()
        assert sorted(c for _, c in cold.stored("pair")) == ["Pair 0.", "Pair 1.", "Paired 0.",
                                                             "Paired 1."]  # fmt: skip


def wait_for(host: Host, project: str, messages: int) -> None:
    """Until the project's namespace holds ``messages`` messages (a server stores them)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if len(host.stored(namespace(project))) >= messages:
                return
        except StorageError:  # the database is still being created
            pass
        assert time.monotonic() < deadline, "a request was lost"
        time.sleep(0.2)


def test_a_failing_model_is_reported_by_the_next_capture_and_the_turns_kept(
    tmp_path: Path,
) -> None:
    unreachable = {  # nothing listens on port 9: every model call fails
        "STRATAGATE_MODEL_BASE_URL": "http://127.0.0.1:9/v1",
        "STRATAGATE_MODEL": "none-such",
        "STRATAGATE_MODEL_TIMEOUT": "2",
    }
    with new_host(**unreachable) as models_down:
        path = tmp_path / "m.jsonl"
        t = Transcript("sess-m", cwd="/work/models-down")
        for n in range(12):  # a full block: sealing it calls the summarizer
            t.turn(f"Decision {n}: keep it.", f"Kept {n}.")
        first = models_down.hook("Stop", t, path, "--models", "openai")
        assert first.code == 0  # the turns are durable before any model runs
        assert len(models_down.stored(namespace("/work/models-down"))) == 24
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            again = models_down.hook("Stop", t, path, "--models", "openai")
            if again.code:
                break
            time.sleep(0.2)
        assert again.code == 1 and "model work on them failed (ModelError:" in again.err
        assert "Connection refused" in again.err
        with StrataGate.open(
            models_down.database, namespace("/work/models-down"), read_only=True
        ) as memory:
            assert memory.list_blocks() == [] and len(memory.list_open_tail()) == 24


def test_a_server_that_cannot_open_memories_says_so_at_once(tmp_path: Path) -> None:
    with new_host() as unconfigured:  # --models openai with no endpoint configured
        t = Transcript("sess-n", cwd="/work/unconfigured")
        t.turn("Hello.", "Hi.")
        for _ in range(2):  # the server that the first started answers the second too
            started = time.monotonic()
            done = unconfigured.hook("Stop", t, tmp_path / "n.jsonl", "--models", "openai")
            assert done.code == 1 and "model base URL missing" in done.err
            assert time.monotonic() - started < 30  # not the whole --budget of 60 s


def test_redact_masks_credentials_before_storage(host: Host, project: str, tmp_path: Path) -> None:
    t = Transcript("sess-i", cwd=project)
    t.turn("Use api_key=abcd1234efgh5678 for the staging API.", "Stored the key.")
    t.write(tmp_path / "i.jsonl")
    assert (
        host.run(event("Stop", tmp_path / "i.jsonl", "sess-i", cwd=project), "--redact").code == 0
    )
    [(_, prompt), _] = host.stored(namespace(project))
    assert "abcd1234efgh5678" not in prompt and "api_key=[redacted:assignment]" in prompt


def test_no_server_does_the_work_in_the_hook_process(host: Host, tmp_path: Path) -> None:
    t = Transcript("sess-j", cwd="/work/no-server")
    t.turn("Inline please.", "Done inline.")
    t.write(tmp_path / "j.jsonl")
    stdin = event("Stop", tmp_path / "j.jsonl", "sess-j", cwd=t.cwd)
    assert host.run(stdin, "--no-server", "--namespace", "inline-ns").code == 0
    assert host.stored("inline-ns") == [("user", "Inline please."), ("assistant", "Done inline.")]


def test_install_merges_into_the_settings_and_is_idempotent(host: Host, tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    other = {"type": "command", "command": "notify-send done"}
    settings.write_text(orjson.dumps({"hooks": {"Stop": [{"hooks": [other]}]}, "x": 1}).decode())
    argv = [sys.executable, "-m", "stratagate", "hook", "install", "claude-code"]
    for _ in range(2):
        done = subprocess.run(
            [*argv, "--project", str(tmp_path), "--redact"],
            capture_output=True, text=True, env=host.env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    written = orjson.loads(settings.read_bytes())
    assert written["x"] == 1 and written["hooks"]["Stop"][0]["hooks"] == [other]
    [[ours]] = [g["hooks"] for g in written["hooks"]["Stop"][1:]]
    assert ours["command"].endswith("hook claude-code --redact --models offline")
    assert ours["timeout"] == 10
    assert "unchanged" in done.stdout
    printed = subprocess.run(
        [*argv, "--print"], capture_output=True, text=True, env=host.env, timeout=60
    )
    assert set(orjson.loads(printed.stdout)["hooks"]) == set(written["hooks"])
