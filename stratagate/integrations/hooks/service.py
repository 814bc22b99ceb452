"""What the hook does per event, over the memories of one database (the hook server's core; the
hook command runs it in its own process with ``--no-server``).

- Stop, SessionEnd, PreCompact: the transcript's completed turns are appended (durable, one
  commit) and the reply goes back; the model work they start (seal, extract, project) runs
  after it, and a failure there is reported by the namespace's next capture. Transcripts whose
  turns wait because an earlier run could not write are stored too, after the reply.
- UserPromptSubmit: ``recall_context`` and the best raw messages of other sessions, as
  ``additionalContext`` (nothing when nothing bears on the prompt).
- SessionStart: the session's block context.

Every failure is a reply with exit status 1 and one line for stderr (never 2: that would block
the user's prompt); a capture that cannot write loses nothing: its turns wait in the transcript
and a later run stores them. Other processes (a server, another window's hook, the CLI) may
write the same namespace meanwhile: memories are opened with ``on_conflict="retry"``.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from stratagate.core.filters import MAX_QUERY_CHARS
from stratagate.core.search_text import search_tokens
from stratagate.errors import StrataGateError
from stratagate.integrations.hooks.capture import Captured, TranscriptError, capture, last_line_end
from stratagate.integrations.hooks.context import prompt_context, session_context
from stratagate.integrations.hooks.cursors import Cursor, CursorStore
from stratagate.integrations.hooks.protocol import (
    CAPTURE_EVENTS,
    EXIT_ERROR,
    EXIT_OK,
    RECALL_EVENT,
    SESSION_START,
    HookEvent,
    HookInputError,
    Reply,
    Request,
    additional_context,
    event_from,
    one_line,
)
from stratagate.memory import StrataGate
from stratagate.options import MemoryOptions
from stratagate.results import RawHit

RECALL_SHARE = 2 / 3
"""The part of the token budget ``recall_context`` may fill; raw hits and blocks get the rest."""


class _Waiting(StrataGateError):
    """A capture stored nothing; its turns wait in the transcript for a later run."""

    def __init__(self, cause: StrataGateError) -> None:
        super().__init__(
            f"{one_line(str(cause))}; this session's new turns wait in its transcript and a "
            "later run stores them"
        )


class HookService:
    """Answers hook requests for one database; one request at a time (not thread-safe)."""

    def __init__(
        self,
        database: str,
        options: Mapping[str, Any],
        state_dir: Path,
        *,
        log: TextIO | None = None,
    ) -> None:
        self.database = database
        self.options = {"on_conflict": "retry", **options}
        self.cursors = CursorStore(state_dir, database)
        self.max_chars = MemoryOptions().max_message_chars
        self.log = log
        self.memories: dict[str, StrataGate] = {}
        self._later: list[Callable[[], None]] = []
        self._failed: dict[str, str] = {}
        """Per namespace, the model failure a background run met, until a capture reports it."""

    # -- memories ---------------------------------------------------------------------------

    def memory(self, namespace: str) -> StrataGate:
        """The namespace's memory, opened on first use (other processes may hold it open too)."""
        memory = self.memories.get(namespace)
        if memory is None:
            memory = self.memories[namespace] = StrataGate.open(
                self.database, namespace, **self.options
            )
        return memory

    def close(self) -> None:
        """Finish background work and close every memory (with a snapshot)."""
        while self.memories:
            _, memory = self.memories.popitem()
            try:
                memory.close()
            except Exception as exc:  # closing the others matters more than this one's error
                self._note(f"closing a memory failed: {exc!r}")

    # -- requests ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        """The reply to one hook request; never raises."""
        started = time.monotonic()
        try:
            reply = self._reply(request)
        except Exception as exc:  # a bug: the host must still go on, and the log keeps it
            self._note(traceback.format_exc())
            reply = Reply(
                EXIT_ERROR, stderr=f"stratagate: internal error {type(exc).__name__}: {exc}"
            )
        name = request.event.get("hook_event_name") if isinstance(request.event, dict) else None
        self._note(
            f"{name if isinstance(name, str) and name.isprintable() else '?'} "
            f"{request.namespace} exit={reply.exit} {(time.monotonic() - started) * 1000:.1f} ms"
        )
        return reply

    def _reply(self, request: Request) -> Reply:
        """The reply to one request; an expected error is a reply with exit status 1."""
        try:
            return self._dispatch(event_from(request.event), request)
        except StrataGateError as exc:
            return Reply(EXIT_ERROR, stderr=f"stratagate: {one_line(str(exc))}")

    def run_later(self) -> None:
        """Work a reply need not wait for (stores waiting turns, retries failed model work)."""
        while self._later:
            job = self._later.pop(0)
            try:
                job()
            except Exception as exc:  # the next run tries again
                self._note(f"deferred work failed: {exc!r}")

    def _dispatch(self, event: HookEvent, request: Request) -> Reply:
        if event.name in CAPTURE_EVENTS:
            return self._capture(event, request)
        if event.name == RECALL_EVENT:
            reply = self._recall(event, request)
        elif event.name == SESSION_START:
            reply = self._session_start(event, request)
        else:
            return Reply()
        if event.transcript_path:  # what completed since the last capture, after the reply
            self._later.append(lambda: self._capture_quietly(event, request))
        return reply

    # -- capture ----------------------------------------------------------------------------

    def _cursor(self, event: HookEvent, namespace: str) -> Cursor:
        if not event.transcript_path:
            raise HookInputError(f"the {event.name} event has no transcript_path")
        path = os.path.abspath(event.transcript_path)
        return self.cursors.load(namespace, path, event.session_id)

    def _capture(self, event: HookEvent, request: Request) -> Reply:
        cursor = self._cursor(event, request.namespace)
        stop = last_line_end(cursor.transcript)
        try:
            memory = self.memory(request.namespace)
            captured = self._store(memory, cursor, stop, request)
        except StrataGateError as exc:  # nothing stored: the turns wait in the transcript
            self.cursors.save(cursor.moved(stops=(*cursor.stops, stop), waiting=True))
            raise _Waiting(exc) from exc
        for other in self.cursors.waiting(request.namespace):
            if other.transcript != cursor.transcript:
                self._later.append(partial(self._store_waiting, memory, other, request))
        failure = self._failed.pop(request.namespace, None)
        self._later.append(partial(self._finish, memory, request.namespace, retry=bool(failure)))
        notes = [failure] if failure else []
        return Reply(
            EXIT_ERROR if failure else EXIT_OK,
            stderr=one_line(" ".join([*notes, *skipped(captured)])),
        )

    def _store(
        self, memory: StrataGate, cursor: Cursor, stop: int | None, request: Request
    ) -> Captured:
        captured, moved = capture(
            memory, cursor, stop=stop, redact=request.redact, max_chars=self.max_chars
        )
        if moved != cursor:  # most runs after a prompt find nothing new: no write then
            self.cursors.save(moved)
        return captured

    def _store_waiting(self, memory: StrataGate, cursor: Cursor, request: Request) -> None:
        try:
            self._store(memory, cursor, None, request)
        except TranscriptError:  # the transcript is gone: nothing can be stored any more
            self.cursors.save(cursor.moved(waiting=False))

    def _capture_quietly(self, event: HookEvent, request: Request) -> None:
        """Store what completed in the transcript (no stop point: only closed turns)."""
        cursor = self._cursor(event, request.namespace)
        if os.path.exists(cursor.transcript):
            memory = self.memory(request.namespace)
            self._store(memory, cursor, None, request)
            self._finish(memory, request.namespace, retry=False)

    def _finish(self, memory: StrataGate, namespace: str, *, retry: bool) -> None:
        """After the reply: wait for the model work the append started (and, after a failure,
        retry the failed jobs); a failure is reported by the namespace's next capture."""
        try:
            if retry:
                memory.resume_pending_work()
            memory.drain()
        except Exception as exc:  # a model callback's own error, or a ModelError
            self._failed[namespace] = (
                "stratagate: earlier turns are stored, but model work on them failed "
                f"({type(exc).__name__}: {one_line(str(exc))}); the job is marked failed and "
                "is retried after this reply."
            )

    # -- recall -----------------------------------------------------------------------------

    def _recall(self, event: HookEvent, request: Request) -> Reply:
        query = (event.prompt or "")[:MAX_QUERY_CHARS]
        memory = self.memory(request.namespace)  # open even when too late: the next is quick
        if not search_tokens(query) or time.time() >= request.deadline:
            return Reply()
        budget = request.token_budget
        recalled = memory.recall_context(
            query, thread_id=event.session_id, token_budget=max(1, int(budget * RECALL_SHARE))
        )
        found = recalled.events or recalled.elements
        batches = [recalled.batch_id] if found and recalled.batch_id else []
        raw: list[RawHit] = []
        if request.raw_hits:
            hits = memory.search_raw_memory(query, limit=request.raw_hits * 3)
            raw = [hit for hit in hits if hit.thread_id != event.session_id][: request.raw_hits]
            if raw and hits.batch_id:
                batches.append(hits.batch_id)
        text = prompt_context(
            request.namespace,
            recalled,
            raw,
            thread_id=event.session_id,
            token_budget=budget,
            batch_ids=batches,
        )
        return Reply(stdout=additional_context(RECALL_EVENT, text)) if text else Reply()

    def _session_start(self, event: HookEvent, request: Request) -> Reply:
        memory = self.memory(request.namespace)
        entries = memory.get_block_context(event.session_id)
        text = session_context(request.namespace, entries, token_budget=request.token_budget)
        return Reply(stdout=additional_context(SESSION_START, text)) if text else Reply()

    def _note(self, line: str) -> None:
        if self.log is not None:
            self.log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line.rstrip()}\n")
            self.log.flush()


def skipped(captured: Captured) -> list[str]:
    """The note a capture leaves when lines could not be read as they were."""
    notes = []
    if captured.corrupt:
        notes.append(f"stratagate: skipped {captured.corrupt} corrupt transcript line(s).")
    if captured.replaced:
        notes.append(
            f"stratagate: {captured.replaced} transcript line(s) held bytes that are not UTF-8 "
            "(stored with U+FFFD in their place)."
        )
    return notes


__all__ = ["HookService", "skipped"]
