"""``StrataGate``: the memory object of docs/API.md, a thin façade over the namespace's runtime.

Every method validates its input into one message and sends it: the runtime answers it by
the pipeline's flow for that command (``stratagate.actors.pipeline``) or by the handler the
registry names — a role (inline: in this process; Ray: an actor), the reader, or the auditor
(the log's own queries: history, verify, time travel, revision, anchors). The façade holds no
store of its own.
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from stratagate.actors.inline_runtime import InlineRuntime
from stratagate.actors.read_only_runtime import ReadOnlyRuntime
from stratagate.actors.registry import Handles
from stratagate.actors.role import new_command_id
from stratagate.actors.runtime import Runtime
from stratagate.anchors import Anchor, parse_anchor
from stratagate.callbacks import validate_output
from stratagate.core.arguments import (
    check_argument,
    check_collection,
    check_flag,
    check_id,
    check_timeout,
)
from stratagate.core.filters import ElementFilters, EventFilters, RawFilters
from stratagate.core.turn_input import check_thread_id, check_time, turn_messages
from stratagate.errors import InvalidInputError, StorageError
from stratagate.events import EVENT_TYPES
from stratagate.formats.external_memory import parse_document
from stratagate.log_transfer import import_log
from stratagate.messages import (
    MAX_POSITION,
    AddEvents,
    AppendTurn,
    AppendTurns,
    ApplySettings,
    Assess,
    ClaimProjection,
    CompleteProjection,
    CurrentTurn,
    EraseEvent,
    EraseNamespace,
    EraseThread,
    EventWeight,
    ExpandEvent,
    ExportLog,
    FailProjection,
    GetBlock,
    GetBlockContext,
    GetElement,
    GetEvent,
    GetStats,
    Govern,
    Governance,
    HasReceipt,
    History,
    ImportMemory,
    LiftBlock,
    ListBlocks,
    ListElements,
    ListEvents,
    ListExtractionJobs,
    ListOpenTail,
    ListProjectionJobs,
    ListUsageReceipts,
    Message,
    Processing,
    Recall,
    RecordUse,
    Refresh,
    ResumePending,
    Revision,
    SearchElements,
    SearchEvents,
    SearchRaw,
    StateAt,
    SummarizeLog,
    TakeAnchor,
    UndoImport,
    Verify,
)
from stratagate.models import (
    ElementCard,
    ElementProjectionContext,
    ElementProjectionJob,
    ElementProjectionResult,
    EventCard,
    EventCardInput,
    ExtractionJob,
    MemoryBlock,
    RawMessage,
    RetrievalAssessment,
    ToolTrace,
    TurnInput,
    UsageAudit,
    UsageReceipt,
    parse_input,
    trusted,
)
from stratagate.options import MemoryOptions
from stratagate.read.view import MemoryView
from stratagate.results import (
    AppendTurnResult,
    AppendTurnsResult,
    BlockContextEntry,
    ElementHit,
    ErasureReport,
    EventHit,
    ExpandedEvent,
    HistoryRecord,
    HitList,
    ImportResult,
    LogExportReport,
    LogImportReport,
    LogSummary,
    NamespaceStats,
    RawHit,
    RecallContext,
    ResumePendingResult,
    VerifyReport,
)
from stratagate.store import open_sql_store
from stratagate.store.in_process import IN_PROCESS_URL
from stratagate.timeutil import format_utc, utc_now

R = TypeVar("R")


def check_namespace(namespace: object) -> str:
    """A namespace is a non-empty printable string."""
    if not isinstance(namespace, str) or not namespace.strip() or not namespace.isprintable():
        raise InvalidInputError(
            f"namespace must be a non-empty printable string, got {namespace!r}"
        )
    return namespace


def id_list(name: str, ids: object) -> list[str]:
    """A sequence of id strings as a list (a lone string or anything else is an input error)."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise InvalidInputError(f"{name} must be a sequence of id strings, got {ids!r:.80}")
    found = list(ids)
    if not all(isinstance(i, str) for i in found):
        raise InvalidInputError(f"{name} must hold id strings only")
    return found


def database_url(database: str | os.PathLike[str]) -> str:
    """A stable identity for a database: URLs as given, file paths made absolute."""
    if not isinstance(database, str | os.PathLike):
        raise InvalidInputError(
            f"database must be a file path or a URL, not {type(database).__name__}"
        )
    text = os.fsdecode(database)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no file system can take the name
        raise InvalidInputError(f"database {text!r} is not valid UTF-8") from exc
    if "://" in text or text == ":memory:":
        return text
    return str(Path(text).expanduser().resolve())


class StrataGate:
    """Long-term memory of one namespace. Open it with ``StrataGate.open`` or ``in_memory``."""

    _namespace: str
    _database: str
    _options: MemoryOptions
    _temp_dir: str | None
    _closed: bool
    _runtime: Runtime

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "construction is explicit: use StrataGate.open(...) or StrataGate.in_memory(...)"
        )

    @classmethod
    def open(
        cls,
        database: str | os.PathLike[str],
        namespace: str,
        *,
        read_only: bool = False,
        **options: Any,
    ) -> StrataGate:
        """A durable memory on a SQLite file path or a SQLAlchemy URL (PostgreSQL too).

        ``read_only=True`` opens it for an audit: no writer lease, no recovery, nothing
        appended (a read-only file or a SELECT-only role is enough); writes raise
        ``ReadOnlyError``.
        """
        if not isinstance(read_only, bool):
            raise InvalidInputError(f"read_only must be True or False, got {read_only!r}")
        opts = MemoryOptions.from_kwargs(**options)
        url, name = database_url(database), check_namespace(namespace)
        if read_only:
            return cls._start_read_only(url, name, opts)
        return cls._start(url, name, opts, temp_dir=None)

    @classmethod
    def _start_read_only(cls, database: str, namespace: str, options: MemoryOptions) -> StrataGate:
        self = object.__new__(cls)
        self._namespace, self._database, self._temp_dir = namespace, database, None
        self._options = options.with_(persistent=False)  # never snapshot on close
        self._closed = False
        self._runtime = ReadOnlyRuntime(database, namespace, self._options)
        return self

    @classmethod
    def in_memory(cls, namespace: str = "default", **options: Any) -> StrataGate:
        """An ephemeral memory (tests, scratch): nothing outlives ``close()``."""
        opts = MemoryOptions.from_kwargs(**options).with_(persistent=False)
        if "snapshot_every" not in options and opts.runtime == "inline":
            opts = opts.with_(snapshot_every=0)  # nothing outlives the process: no snapshots
        temp_dir = None
        database = IN_PROCESS_URL
        if opts.runtime == "ray":  # actors are processes: they need a file to share
            temp_dir = tempfile.mkdtemp(prefix="stratagate-")
            database = str(Path(temp_dir) / "memory.db")
        return cls._start(database, check_namespace(namespace), opts, temp_dir=temp_dir)

    @classmethod
    def prepare_database(cls, database: str | os.PathLike[str]) -> None:
        """Create ``database``'s tables when it is new (a SQLite file and its directory, or the
        tables in a PostgreSQL schema), touching no namespace: a server checks its database at
        start this way and opens namespaces only on their first call."""
        with open_sql_store(database_url(database)):
            pass

    @classmethod
    def list_namespaces(cls, database: str | os.PathLike[str]) -> list[LogSummary]:
        """Every namespace with at least one logged event in ``database``, sorted, each with
        its revision and last position (read-only: nothing is opened for writing)."""
        with open_sql_store(database_url(database), create=False, read_only=True) as store:
            log_position = store.global_head()
            return [
                LogSummary(
                    namespace=name,
                    present=True,
                    revision=store.count(name),
                    last_position=store.head(name),
                    log_position=log_position,
                )
                for name in store.namespaces()
            ]

    @classmethod
    def purge_namespace(
        cls, database: str | os.PathLike[str], namespace: str, *, reason: str
    ) -> int:
        """Delete every row of ``namespace`` (log, heads, lease, snapshots, keys), keeping one
        audit record of it in ``stratagate_purges``; returns how many log rows went. Erase the
        namespace first (``erase_namespace``): a purge alone is not an erasure on record."""
        name = check_namespace(namespace)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInputError(f"reason must be a non-empty string, got {reason!r}")
        with open_sql_store(database_url(database), create=False) as store:
            return store.purge_namespace(name, reason=reason, at=format_utc(utc_now())).rows

    @classmethod
    def import_log(
        cls,
        path: str | os.PathLike[str],
        database: str | os.PathLike[str],
        namespace: str | None = None,
    ) -> LogImportReport:
        """Check an exported log line by line and write it into ``database`` as ``namespace``
        (default: its own name), which must be empty there; nothing is written unless every
        line checks. Open the namespace afterwards to use it."""
        url = database_url(database)
        if url in (IN_PROCESS_URL, ":memory:"):
            raise InvalidInputError("import_log needs a durable database: a file path or a URL")
        if namespace is not None:
            check_namespace(namespace)
        with open_sql_store(url) as store:
            return import_log(_path_text(path), store, namespace)

    @classmethod
    def _start(
        cls, database: str, namespace: str, options: MemoryOptions, *, temp_dir: str | None
    ) -> StrataGate:
        self = object.__new__(cls)
        self._namespace = namespace
        self._database = database
        self._options = options
        self._temp_dir = temp_dir
        self._closed = False
        self._runtime = self._make_runtime(recover=options.recover_on_open)
        try:
            self._runtime.send(ApplySettings())
        except BaseException:
            self._runtime.close(snapshot=False)
            raise
        return self

    def _make_runtime(self, *, recover: bool) -> Runtime:
        if self._options.runtime == "ray":
            from stratagate.actors.ray_runtime import RayRuntime

            return RayRuntime(self._database, self._namespace, self._options, recover=recover)
        return InlineRuntime(self._database, self._namespace, self._options, recover=recover)

    # -- lifecycle --------------------------------------------------------------------------

    def __enter__(self) -> StrataGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Finish background work, snapshot the read models (durable mode) and release."""
        if self._closed:
            return
        self._closed = True
        try:
            self._runtime.close(
                snapshot=self._options.persistent and self._options.snapshot_every > 0
            )
        finally:
            if self._temp_dir is not None:
                shutil.rmtree(self._temp_dir, ignore_errors=True)

    def _send(self, message: Message[R]) -> R:
        """Send one operation to the runtime (see ``actors.pipeline`` and ``actors.registry``)."""
        if self._closed:
            raise StorageError("this memory is closed")
        return self._runtime.send(message)

    # -- identity ---------------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def turn(self) -> int:
        """Turns appended to this namespace (all threads)."""
        return self._send(CurrentTurn())

    @property
    def revision(self) -> int:
        """How many domain events the namespace has logged (monotonic)."""
        return self._send(Revision())

    def refresh(self) -> int:
        """Catch up with what other handles (other processes) appended; returns how many
        events were folded. Reads catch up by themselves; a command decided before another
        writer's append is refused with ``StaleHandleError`` (nothing appended) unless the
        memory was opened with ``on_conflict="retry"``."""
        return self._send(Refresh())

    def log_summary(self) -> LogSummary:
        """What the log holds of this namespace — presence, revision, last positions — read
        without folding anything (so it answers on a damaged log too)."""
        return self._send(SummarizeLog())

    @property
    def handles(self) -> Handles:
        """The namespace's actors: ``.sealer``, ``.extractor``, ``.projector``, ``.weights``."""
        return self._runtime.handles

    # -- ingest -----------------------------------------------------------------------------

    def append_turn(
        self,
        user: Any,
        assistant: Any,
        *,
        created_at: datetime | str | None = None,
        thread_id: str | None = None,
        user_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None = None,
        assistant_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None = None,
        receipt_id: str | None = None,
        defer_processing: bool = False,
        wait: bool = True,
    ) -> AppendTurnResult:
        """Make a turn durable, then (unless deferred) seal, extract and project what is ready.

        ``wait=False`` returns once the turn is durable; the rest continues in the background
        (see ``drain``). A known ``receipt_id`` with the same content is a no-op with an empty
        result; with other content it raises ``ReceiptConflictError``.
        """
        processing = _processing(defer_processing=defer_processing, wait=wait)
        return self._send(
            self._turn_command(
                user,
                assistant,
                created_at=created_at,
                thread_id=thread_id,
                user_tool_calls=user_tool_calls,
                assistant_tool_calls=assistant_tool_calls,
                receipt_id=receipt_id,
                processing=processing,
            )
        )

    def append_turns(
        self,
        turns: Iterable[TurnInput | Mapping[str, Any]],
        *,
        defer_processing: bool = False,
        wait: bool = True,
    ) -> AppendTurnsResult:
        """Make many turns durable in one call and one commit, then process what is ready.

        Each turn takes the keyword arguments of ``append_turn`` (``user``, ``assistant``,
        ``created_at``, ``thread_id``, tool calls, ``receipt_id``) as a mapping or a
        ``TurnInput``. Every turn is validated before anything is appended (a bad one raises
        ``InvalidInputError`` naming its index and nothing is appended); a known receipt id is
        skipped as ``append_turn`` would skip it. The turns are durable before any model runs.
        """
        commands = []
        for index, raw in enumerate(check_collection("turns", turns)):
            try:
                item = parse_input(TurnInput, raw, what="turn")
                commands.append(
                    self._turn_command(**{k: getattr(item, k) for k in item.model_fields_set})
                )
            except InvalidInputError as exc:
                raise InvalidInputError(f"turns[{index}]: {exc}") from exc
        if not commands:
            return AppendTurnsResult()
        processing = _processing(defer_processing=defer_processing, wait=wait)
        return self._send(AppendTurns(turns=commands, processing=processing))

    def _turn_command(
        self,
        user: Any,
        assistant: Any,
        *,
        created_at: datetime | str | None = None,
        thread_id: str | None = None,
        user_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None = None,
        assistant_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None = None,
        receipt_id: str | None = None,
        processing: Processing = "wait",
    ) -> AppendTurn:
        """One validated turn, with its message ids and time decided here, once."""
        options = self._options
        check_id("receipt_id", receipt_id, optional=True)
        for name, calls in (
            ("user_tool_calls", user_tool_calls),
            ("assistant_tool_calls", assistant_tool_calls),
        ):
            if calls is not None:
                check_collection(name, calls)
        thread = check_thread_id(thread_id)
        at = check_time(created_at, options.now())
        messages = turn_messages(
            user,
            assistant,
            at=at,
            thread_id=thread,
            user_tool_calls=user_tool_calls,
            assistant_tool_calls=assistant_tool_calls,
            new_id=options.make_id,
            max_chars=options.max_message_chars,
        )
        # every field is checked above (a side yields at least one message): the command is
        # not validated a second time field by field
        return trusted(
            AppendTurn,
            {
                "command_id": new_command_id(),
                "thread_id": thread,
                "receipt_id": receipt_id,
                "messages": messages,
                "at": at,
                "processing": processing,
            },
        )

    def drain(self, timeout: float | None = None) -> None:
        """Block until this namespace's background work is idle (re-raises a background error)."""
        self._runtime.drain(check_timeout("timeout", timeout))

    def resume_pending_work(self, *, retry_skipped: bool = False) -> ResumePendingResult:
        """Retry failed or interrupted seals, extractions and projections, and finish what is ready.

        ``retry_skipped=True`` also retries each skipped extraction once.
        """
        return self._send(ResumePending(retry_skipped=check_flag("retry_skipped", retry_skipped)))

    # -- read models ------------------------------------------------------------------------

    def list_blocks(self, thread_id: str | None = None) -> list[MemoryBlock]:
        """Sealed blocks (all threads, or one), in sealing order."""
        return self._send(ListBlocks(thread_id=thread_id))

    def list_open_tail(self, thread_id: str | None = None) -> list[RawMessage]:
        """Messages not yet sealed (all conversation threads, or one)."""
        return self._send(ListOpenTail(thread_id=thread_id))

    def list_events(self) -> list[EventCard]:
        """Every event card in creation order, whatever its status."""
        return self._send(ListEvents())

    def list_elements(self) -> list[ElementCard]:
        """Every element card with its current state."""
        return self._send(ListElements())

    def list_extraction_jobs(self) -> list[ExtractionJob]:
        return self._send(ListExtractionJobs())

    def list_element_projection_jobs(self) -> list[ElementProjectionJob]:
        return self._send(ListProjectionJobs())

    def list_usage_receipts(self) -> list[UsageReceipt]:
        return self._send(ListUsageReceipts())

    def has_ingestion_receipt(self, receipt_id: str) -> bool:
        return self._send(HasReceipt(receipt_id=receipt_id))

    def get_event(self, event_id: str) -> EventCard:
        return self._send(GetEvent(event_id=event_id))

    def get_block(self, block_id: str) -> MemoryBlock:
        return self._send(GetBlock(block_id=block_id))

    def stats(self) -> NamespaceStats:
        """Counts of everything in the namespace, and when its last event was recorded."""
        return self._send(GetStats())

    # -- events -----------------------------------------------------------------------------

    def add_event(self, event: EventCardInput | Mapping[str, Any]) -> EventCard:
        """Add a card citing an existing block; a projection job is queued for it."""
        return self._add_events([event])[0]

    def add_events(self, events: Iterable[EventCardInput | Mapping[str, Any]]) -> list[EventCard]:
        """Add many cards in one append (all or none); one projection job is queued for them."""
        return self._add_events(events)

    def _add_events(self, events: Iterable[EventCardInput | Mapping[str, Any]]) -> list[EventCard]:
        """``add_events`` once its argument is checked (``add_event``'s was, by its own edge)."""
        cards = [
            parse_input(EventCardInput, event, what="event")
            for event in check_collection("events", events)
        ]
        if not cards:
            return []
        return self._send(AddEvents(events=cards))

    def event_weight(self, event_id: str) -> float:
        """``memory_weight`` of the event at the current turn."""
        return self._send(EventWeight(event_id=event_id))

    def pin_event(self, event_id: str, pinned: bool = True) -> EventCard:
        return self._govern("pin" if check_flag("pinned", pinned) else "unpin", event_id)

    def forget_event(self, event_id: str) -> EventCard:
        return self._govern("forget", event_id)

    def restore_event(self, event_id: str) -> EventCard:
        return self._govern("restore", event_id)

    def archive_event(self, event_id: str) -> EventCard:
        return self._govern("archive", event_id)

    def _govern(self, action: Governance, event_id: str) -> EventCard:
        return self._send(Govern(action=action, event_id=event_id))

    # -- erasure ----------------------------------------------------------------------------

    def erase_thread(self, thread_id: str | None, *, reason: str) -> ErasureReport:
        """Irreversibly erase a thread's content (turns, blocks, cards, facts) by destroying
        its data keys; the log keeps its rows, which verify and read as ``[erased]``."""
        return self._send(EraseThread(thread_id=check_thread_id(thread_id), reason=reason))

    def erase_event(self, event_id: str, *, reason: str) -> ErasureReport:
        """Irreversibly erase one event card's text and the facts drawn from it."""
        return self._send(EraseEvent(event_id=event_id, reason=reason))

    def erase_namespace(self, *, reason: str) -> ErasureReport:
        """Irreversibly erase every content field of this namespace (all its data keys)."""
        return self._send(EraseNamespace(reason=reason))

    # -- retrieval --------------------------------------------------------------------------

    def search_events(
        self,
        query: str,
        *,
        limit: int = 6,
        temporal_intent: str | None = None,
        participants: Sequence[str] | None = None,
        event_type: str | None = None,
        happened_from: datetime | str | None = None,
        happened_to: datetime | str | None = None,
    ) -> HitList[EventHit]:
        """Hybrid event search (BM25 + structured rankings, RRF); the batch is logged."""
        filters = EventFilters(
            temporal_intent=temporal_intent,
            participants=participants,
            event_type=event_type,
            happened_from=happened_from,
            happened_to=happened_to,
        )
        return self._send(SearchEvents(query=query, limit=limit, filters=filters))

    def search_elements(
        self, query: str, *, limit: int = 8, name: str | None = None, type: str | None = None
    ) -> HitList[ElementHit]:
        """Fact-level element search; the batch is logged."""
        filters = ElementFilters(name=name, type=type)
        return self._send(SearchElements(query=query, limit=limit, filters=filters))

    def search_raw_memory(
        self, query: str, *, limit: int = 6, thread_id: str | None = None
    ) -> HitList[RawHit]:
        """Ranked source messages (with neighbours); the batch is logged."""
        filters = RawFilters(thread_id=thread_id)
        return self._send(SearchRaw(query=query, limit=limit, filters=filters))

    def expand_event(self, event_id: str) -> ExpandedEvent:
        """The card, its source block and the exact messages it cites."""
        return self._send(ExpandEvent(event_id=event_id))

    def expand_element(self, element_id: str, at: datetime | str | None = None) -> ElementCard:
        """An element card as of ``at`` (default: now)."""
        return self._send(GetElement(element_id=element_id, at=at))

    def get_block_context(self, thread_id: str | None = None) -> list[BlockContextEntry]:
        """A thread's blocks at their decayed levels, then its open tail."""
        return self._send(GetBlockContext(thread_id=thread_id))

    def expand_block(
        self, block_id: str, target: int | str | None = "next", *, source: str = "agent"
    ) -> BlockContextEntry:
        """Re-anchor a block's pointer at ``target`` (a level, ``"L3"``, ``"raw"``, ``"next"``)
        and return its context entry at that level."""
        return self._send(LiftBlock(block_id=block_id, target=target, source=source))

    def assess_retrieval(
        self, raw: Mapping[str, Any], batch: str | Collection[str]
    ) -> RetrievalAssessment:
        """Normalise a five-field assessment against a logged batch (or refs); it is logged."""
        if not isinstance(raw, Mapping):
            raise InvalidInputError(f"assessment must be a mapping, got {type(raw).__name__}")
        if isinstance(batch, str):
            return self._send(Assess(raw=dict(raw), batch_id=batch))
        if not isinstance(batch, Collection) or not all(isinstance(r, str) for r in batch):
            raise InvalidInputError("batch must be a batch id or a collection of ref strings")
        return self._send(Assess(raw=dict(raw), refs=list(batch)))

    def record_memory_use(
        self,
        *,
        event_ids: Sequence[str] = (),
        element_ids: Sequence[str] = (),
        receipt_id: str | None = None,
        audit: UsageAudit | Mapping[str, Any] | None = None,
    ) -> UsageReceipt:
        """Record which memories an answer used; reinforces them once per receipt id."""
        return self._send(
            RecordUse(
                event_ids=id_list("event_ids", event_ids),
                element_ids=id_list("element_ids", element_ids),
                receipt_id=check_id("receipt_id", receipt_id, optional=True),
                audit=None if audit is None else parse_input(UsageAudit, audit, what="audit"),
            )
        )

    def recall_context(
        self,
        query: str,
        *,
        thread_id: str | None = None,
        max_events: int = 4,
        max_elements: int = 4,
        token_budget: int = 900,
    ) -> RecallContext:
        """Relevant long-term memories within a token budget plus the thread's block context."""
        return self._send(
            Recall(
                query=query,
                thread_id=thread_id,
                max_events=max_events,
                max_elements=max_elements,
                token_budget=token_budget,
            )
        )

    # -- manual projection ------------------------------------------------------------------

    def claim_next_element_projection(self) -> ElementProjectionContext | None:
        """Claim the oldest pending projection job, else the oldest failed one (a retry)."""
        return self._send(ClaimProjection(include_failed=True))

    def complete_element_projection(
        self, job_id: str, result: ElementProjectionResult | Mapping[str, Any]
    ) -> list[ElementCard]:
        """Apply a result to a claimed job; returns the element cards it applied."""
        outcome = validate_output(ElementProjectionResult, result, "element projection result")
        return self._send(CompleteProjection(job_id=job_id, result=outcome))

    def fail_element_projection(
        self, job_id: str, error: str | BaseException
    ) -> ElementProjectionJob:
        """Record a claimed job as failed; it can be claimed again."""
        text = error if isinstance(error, str) else repr(error)
        return self._send(FailProjection(job_id=job_id, error=text))

    # -- external memory --------------------------------------------------------------------

    def import_external_memory(
        self,
        document: Mapping[str, Any] | str | bytes,
        *,
        decide: Callable[[EventCardInput, list[EventCard]], Any] | None = None,
        top_k: int = 5,
    ) -> ImportResult:
        """Import a ``stratagate.external-memory.v2`` document as one undoable batch.

        Each new item becomes a candidate event compared with the ``top_k`` most similar
        existing events; ``decide(candidate, matches)`` — called here, in the caller's process,
        before anything is appended — answers add / merge / supersede / conflict / ignore
        (without a decider every candidate is added).
        """
        parsed = parse_document(document)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 50:
            raise InvalidInputError(f"top_k must be an integer from 1 to 50, got {top_k!r}")
        if decide is not None and not callable(decide):
            raise InvalidInputError(f"decide must be a callable or None, got {decide!r}")
        return self._send(ImportMemory(document=parsed, top_k=top_k, decide=decide))

    def undo_import(self, batch_id: str) -> bool:
        """Undo an import batch by appended events (nothing is deleted); False if already undone."""
        return self._send(UndoImport(batch_id=batch_id))

    # -- audit ------------------------------------------------------------------------------

    def history(
        self, since: int = 0, *, limit: int | None = None, type: str | None = None
    ) -> list[HistoryRecord]:
        """Logged domain events after ``since`` (a global position), in order; only those of
        event ``type`` when given; at most ``limit`` of them (a page: the next starts after the
        last one's position)."""
        if not isinstance(since, int) or isinstance(since, bool) or not 0 <= since <= MAX_POSITION:
            raise InvalidInputError(
                f"since must be an integer from 0 to {MAX_POSITION}, got {since!r}"
            )
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise InvalidInputError(f"limit must be a positive integer or None, got {limit!r}")
        if type is not None and type not in EVENT_TYPES:
            raise InvalidInputError(
                f"unknown event type {type!r}; the types are {', '.join(sorted(EVENT_TYPES))}"
            )
        return self._send(History(since=since, limit=limit, event_type=type))

    def verify(
        self, anchor: Anchor | Mapping[str, Any] | str | bytes | None = None
    ) -> VerifyReport:
        """Check the hash chain (and that the log still extends ``anchor``, a ``checkpoint()``
        kept elsewhere), then rebuild every read model from the log and compare."""
        return self._send(Verify(anchor=None if anchor is None else parse_anchor(anchor)))

    def checkpoint(self) -> Anchor:
        """An anchor of the namespace's head now (namespace, position, chain hash, time): keep
        it outside the database. With ``STRATAGATE_CHECKPOINT_KEY`` set it is signed, and
        (unless read-only) the signed head is logged too (``LogCheckpointed``), so a log
        re-hashed without the key fails ``verify`` even with no anchor at hand."""
        return self._send(TakeAnchor())

    def export_log(self, path: str | os.PathLike[str]) -> LogExportReport:
        """Write the namespace's log (every row as stored, with its data keys) to ``path`` as a
        ``stratagate.log.v1`` JSONL file that ``StrataGate.import_log`` reads back anywhere."""
        return self._send(ExportLog(path=_path_text(path)))

    def state_at(self, position: int, *, search: bool = True) -> MemoryView:
        """A read-only view of the namespace as of a global position (nothing is logged).

        ``search=False`` browses the past: the view has no search index (it cannot be searched)
        and comes from states this memory keeps across calls, so nearby positions (a dragged
        slider) cost only the events in between; such a view is valid until the next
        ``state_at(..., search=False)`` of this memory, which may fold its state forward."""
        if (
            not isinstance(position, int)
            or isinstance(position, bool)
            or not 0 <= position <= MAX_POSITION
        ):
            raise InvalidInputError(
                f"position must be an integer from 0 to {MAX_POSITION}, got {position!r}"
            )
        if not isinstance(search, bool):
            raise InvalidInputError(f"search must be True or False, got {search!r}")
        return self._send(StateAt(position=position, search=search))

    def view(self) -> MemoryView:
        """The namespace as it is now, as a ``MemoryView``: reads and searches that log nothing
        (an audit's query path; the Memory UI's). A read-only memory hands out its read models,
        caught up with the log (shared: its next read folds in what was appended meanwhile); a
        writable memory replays its log for it, as ``state_at`` does."""
        if isinstance(self._runtime, ReadOnlyRuntime):
            return self._runtime.view()
        return self.state_at(MAX_POSITION)


def _at_the_edge(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` with every argument checked first (``check_argument``: valid UTF-8 text,
    bounded nesting), naming the argument that fails."""
    names = list(inspect.signature(method).parameters)[1:]

    @functools.wraps(method)
    def checked(self: StrataGate, *args: Any, **kwargs: Any) -> Any:
        for name, value in zip(names, args, strict=False):
            check_argument(name, value)
        for name, value in kwargs.items():
            check_argument(name, value)
        return method(self, *args, **kwargs)

    return checked


for _name, _member in list(vars(StrataGate).items()):
    if not _name.startswith("_") and inspect.isfunction(_member):
        setattr(StrataGate, _name, _at_the_edge(_member))


def _path_text(path: object) -> str:
    """A file path given as text or ``os.PathLike``, as text."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path must be a file path, not {type(path).__name__}")
    return os.fsdecode(path)


def _processing(*, defer_processing: bool, wait: bool) -> Processing:
    """What follows a turn, from ``append_turn``'s two switches (deferring wins)."""
    check_flag("wait", wait)
    if check_flag("defer_processing", defer_processing):
        return "defer"
    return "wait" if wait else "background"


__all__ = [
    "StrataGate",
    "check_namespace",
    "database_url",
    "id_list",
]
