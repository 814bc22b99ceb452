"""The memory's operations as agent tools: each tool is a name, a description written for the
model that reads it, a pydantic input model (its JSON schema is the tool's input schema) and the
façade call it makes. Shared by the MCP server and the LangChain tools; imports no agent SDK.

A tool's result is a JSON-ready dict; every search returns the ``batch_id`` it was logged as,
which ``assess_retrieval`` and ``record_memory_use`` cite. A failure is a ``StrataGateError``
(bad input: ``InvalidInputError``; an id that names nothing: ``UnknownIdError``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.memory import StrataGate
from stratagate.models import ElementType, Strategy, Verdict

In = TypeVar("In", bound=BaseModel)

Query = Annotated[str, Field(min_length=1, max_length=4000, description="What to look for.")]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many hits.")]
EventId = Annotated[str, Field(min_length=1, description="An event id (evt_…) from a search.")]
ThreadId = Annotated[
    str | None, Field(description="Only this conversation thread (default: all threads).")
]


class ToolInput(BaseModel):
    """Base of every tool's input: unknown fields are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class AppendTurnInput(ToolInput):
    user: str = Field(description="What the user said in this turn.")
    assistant: str = Field(description="What the assistant answered in this turn.")
    thread_id: str | None = Field(None, description="The conversation thread of the turn.")
    created_at: str | None = Field(
        None, description="When the turn happened, ISO-8601 (default: now, UTC)."
    )
    receipt_id: str | None = Field(
        None,
        description="An idempotency key: a retried call with the same receipt id and the same "
        "turn is skipped, so it is never stored twice; the same id with a different turn is "
        "refused (ReceiptConflictError).",
    )


class RecallContextInput(ToolInput):
    query: Query
    thread_id: str | None = Field(
        None, description="Also pack this thread's recent block context (default: none)."
    )
    max_events: int = Field(4, ge=0, le=50, description="Event memories to pack at most.")
    max_elements: int = Field(4, ge=0, le=50, description="Element facts to pack at most.")
    token_budget: int = Field(900, ge=1, le=100_000, description="Token budget of the text.")


class SearchEventsInput(ToolInput):
    query: Query
    limit: Limit = 6
    temporal_intent: Literal["first", "latest"] | None = Field(
        None, description="Prefer the earliest or the latest matching events."
    )
    participants: list[str] | None = Field(None, description="Only events involving these people.")
    event_type: str | None = Field(None, description="Only events of this type, e.g. 'decision'.")
    happened_from: str | None = Field(
        None, description="Only events that happened on or after this ISO-8601 time."
    )
    happened_to: str | None = Field(
        None, description="Only events that happened on or before this ISO-8601 time."
    )


class SearchElementsInput(ToolInput):
    query: Query
    limit: Limit = 8
    name: str | None = Field(None, description="Only facts of the element with this name.")
    type: ElementType | None = Field(None, description="Only facts of elements of this type.")


class SearchRawMemoryInput(ToolInput):
    query: Query
    limit: Limit = 6
    thread_id: ThreadId = None


class ExpandEventInput(ToolInput):
    event_id: EventId


class ExpandElementInput(ToolInput):
    element_id: str = Field(min_length=1, description="An element id (elem_…) from a search.")
    at: str | None = Field(None, description="Its state as of this ISO-8601 time (default: now).")


class ExpandBlockInput(ToolInput):
    block_id: str = Field(min_length=1, description="A block id (blk_…) from recall or search.")
    level: int | str = Field(
        "next",
        validation_alias=AliasChoices("level", "target"),
        description="The level to show: 'next' (one level more detailed), 0-5, 'L0'-'L5' or "
        "'raw' (the exact messages); `stratagate expand block --level` takes the same "
        "('target' is accepted too).",
    )


class AssessRetrievalInput(ToolInput):
    batch_id: str = Field(min_length=1, description="The batch_id the search returned.")
    verdict: Verdict = Field(
        description="'sufficient': the evidence answers the question; 'partial': some is "
        "missing; 'wrong': the hits do not fit."
    )
    evidence_refs: list[str] = Field(
        default_factory=list,
        description="Ids of the hits in that batch that support the answer (refs not in the "
        "batch are rejected and listed back).",
    )
    fit: str = Field("", description="How the evidence fits the question, briefly.")
    missing: str = Field("", description="What is still missing, briefly.")
    next_strategy: Strategy = Field(
        description="What to do next: 'answer' when sufficient, else the tool to try."
    )


class RecordMemoryUseInput(ToolInput):
    receipt_id: str = Field(
        min_length=1,
        description="A key for this answer (e.g. the run id and message index): recording the "
        "same receipt again with the same content is a no-op.",
    )
    event_ids: list[str] = Field(default_factory=list, description="Events the answer used.")
    element_ids: list[str] = Field(default_factory=list, description="Elements the answer used.")
    batch_id: str | None = Field(None, description="The batch the evidence came from.")
    evidence_refs: list[str] = Field(
        default_factory=list, description="The exact refs (hit ids) cited as evidence."
    )
    session_id: str | None = Field(None, description="The agent session, for the audit trail.")


class PinEventInput(ToolInput):
    event_id: EventId
    pinned: bool = Field(True, description="True pins (never decays); False unpins.")


class ForgetEventInput(ToolInput):
    event_id: EventId


class HistoryInput(ToolInput):
    since: int = Field(
        0, ge=0, description="Only events after this global position (next_since of a page)."
    )
    limit: int = Field(50, ge=1, le=500, description="At most this many events in the page.")


class VerifyInput(ToolInput):
    pass


# -- results ---------------------------------------------------------------------------------


def dump(value: Any) -> Any:
    """A JSON-ready form of a model, a list of them or a plain value."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [dump(item) for item in value]
    return value


def hits_result(hits: Any) -> dict[str, Any]:
    """A search's hits with the batch id it was logged as (``None``: a view's search, which
    logs nothing)."""
    return {"batch_id": getattr(hits, "batch_id", None), "hits": dump(list(hits))}


# -- the façade calls ------------------------------------------------------------------------


def append_turn(memory: StrataGate, a: AppendTurnInput) -> dict[str, Any]:
    result = memory.append_turn(
        a.user, a.assistant, created_at=a.created_at, thread_id=a.thread_id,
        receipt_id=a.receipt_id,
    )  # fmt: skip
    return {
        "turn": result.turn,
        "duplicate": result.duplicate,
        "sealed_block_id": result.sealed_block.id if result.sealed_block else None,
        "extracted_event_ids": [card.id for card in result.extracted_events],
        "projected_element_ids": [card.id for card in result.projected_elements],
    }


def recall_context(memory: StrataGate, a: RecallContextInput) -> dict[str, Any]:
    """The recalled context; a block's content is in ``text`` once, not again in ``blocks``."""
    recalled = dump(
        memory.recall_context(
            a.query, thread_id=a.thread_id, max_events=a.max_events,
            max_elements=a.max_elements, token_budget=a.token_budget,
        )
    )  # fmt: skip
    for block in recalled["blocks"]:
        del block["content"]
    return recalled


def search_events(memory: StrataGate, a: SearchEventsInput) -> dict[str, Any]:
    return hits_result(
        memory.search_events(
            a.query, limit=a.limit, temporal_intent=a.temporal_intent,
            participants=a.participants, event_type=a.event_type,
            happened_from=a.happened_from, happened_to=a.happened_to,
        )
    )  # fmt: skip


def search_elements(memory: StrataGate, a: SearchElementsInput) -> dict[str, Any]:
    return hits_result(memory.search_elements(a.query, limit=a.limit, name=a.name, type=a.type))


def search_raw_memory(memory: StrataGate, a: SearchRawMemoryInput) -> dict[str, Any]:
    return hits_result(memory.search_raw_memory(a.query, limit=a.limit, thread_id=a.thread_id))


def expand_event(memory: StrataGate, a: ExpandEventInput) -> dict[str, Any]:
    return dump(memory.expand_event(a.event_id))


def expand_element(memory: StrataGate, a: ExpandElementInput) -> dict[str, Any]:
    return dump(memory.expand_element(a.element_id, a.at))


def expand_block(memory: StrataGate, a: ExpandBlockInput) -> dict[str, Any]:
    return dump(memory.expand_block(a.block_id, a.level, source="agent"))


def assess_retrieval(memory: StrataGate, a: AssessRetrievalInput) -> dict[str, Any]:
    raw = a.model_dump(include={"verdict", "evidence_refs", "fit", "missing", "next_strategy"})
    return dump(memory.assess_retrieval(raw, a.batch_id))


def record_memory_use(memory: StrataGate, a: RecordMemoryUseInput) -> dict[str, Any]:
    audit = a.model_dump(include={"batch_id", "evidence_refs", "session_id"}, exclude_defaults=True)
    return dump(
        memory.record_memory_use(
            event_ids=a.event_ids, element_ids=a.element_ids, receipt_id=a.receipt_id,
            audit=audit or None,
        )
    )  # fmt: skip


def pin_event(memory: StrataGate, a: PinEventInput) -> dict[str, Any]:
    return dump(memory.pin_event(a.event_id, a.pinned))


def forget_event(memory: StrataGate, a: ForgetEventInput) -> dict[str, Any]:
    return dump(memory.forget_event(a.event_id))


def history(memory: StrataGate, a: HistoryInput) -> dict[str, Any]:
    records = memory.history(a.since, limit=a.limit + 1)  # one more: is there a next page?
    page = records[: a.limit]
    more = len(records) > len(page)
    return {
        "records": dump(page),
        "next_since": page[-1].position if more else None,
    }


def verify(memory: StrataGate, a: VerifyInput) -> dict[str, Any]:
    return dump(memory.verify())


# -- the catalogue ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool(Generic[In]):
    """One agent tool: what the model reads, what it must send and what it calls."""

    name: str
    description: str
    input: type[In]
    run: Callable[[StrataGate, In], dict[str, Any]]
    read_only: bool = False
    """Whether it leaves the log as it was (searches do not: they log their batch)."""

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input (what MCP lists as ``inputSchema``)."""
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        return schema

    def call(self, memory: StrataGate, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate the arguments against the input model, then make the call."""
        return self.run(memory, parse_arguments(self, arguments))


def parse_arguments(tool: Tool[In], arguments: Mapping[str, Any] | None) -> In:
    """The validated input of a tool; bad arguments are an ``InvalidInputError``."""
    try:
        return tool.input.model_validate(dict(arguments or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
            for error in exc.errors()
        )
        raise InvalidInputError(f"{tool.name}: {problems}") from exc


SEARCH_NOTE = " The result carries a batch_id: cite it in assess_retrieval and record_memory_use."

TOOLS: tuple[Tool[Any], ...] = (
    Tool(
        "recall_context",
        "Before answering, recall what long-term memory knows about the question: the most "
        "relevant event memories and element facts packed within a token budget, plus the "
        "thread's recent conversation blocks, as ready-to-read text ('text') with the ids it "
        "cites. Nothing is reinforced." + SEARCH_NOTE,
        RecallContextInput,
        recall_context,
    ),
    Tool(
        "search_events",
        "Search event memories (things that happened, were decided or planned, with dates and "
        "participants). Hits are ranked; each has the event card (title, summary, temporal: "
        "when it happened and how sure) and its id (evt_…). Events are extracted a block "
        "late, so the latest turns are not here yet: search_raw_memory (or recall_context) "
        "has them." + SEARCH_NOTE,
        SearchEventsInput,
        search_events,
    ),
    Tool(
        "search_elements",
        "Search facts about people, projects, organizations, tools and places (the current "
        "state and its history, with validity dates). Each hit is one fact with its element "
        "id (elem_…)." + SEARCH_NOTE,
        SearchElementsInput,
        search_elements,
    ),
    Tool(
        "search_raw_memory",
        "Search the exact messages of past conversations, each with its neighbours, time "
        "stamp and block. Use it when an event card lacks a detail (an exact date, a "
        "number, a quote)." + SEARCH_NOTE,
        SearchRawMemoryInput,
        search_raw_memory,
    ),
    Tool(
        "expand_event",
        "An event card in full with the exact source messages it was extracted from.",
        ExpandEventInput,
        expand_event,
        read_only=True,
    ),
    Tool(
        "expand_element",
        "An element card (person, project, …) in full: its current state and every fact "
        "with validity dates and source events, optionally as of a past time.",
        ExpandElementInput,
        expand_element,
        read_only=True,
    ),
    Tool(
        "expand_block",
        "Show a block of conversation at a more detailed level (summary → condensed → "
        "readable → raw messages); the block stays that detailed in later recalls.",
        ExpandBlockInput,
        expand_block,
    ),
    Tool(
        "assess_retrieval",
        "The evidence gate: after a search, say whether its hits answer the question "
        "(verdict), which hit ids are the evidence, what is missing and what to do next. "
        "Refs that are not in the batch are rejected and returned in "
        "rejected_evidence_refs. Answer only once a verdict is 'sufficient'.",
        AssessRetrievalInput,
        assess_retrieval,
    ),
    Tool(
        "record_memory_use",
        "After answering, record which events and elements the answer used (with the batch "
        "and refs as audit): they are reinforced once per receipt_id and decay more slowly.",
        RecordMemoryUseInput,
        record_memory_use,
    ),
    Tool(
        "append_turn",
        "Store one conversation turn (the user's message and the assistant's answer) in "
        "long-term memory. The turn is durable on return and search_raw_memory finds it at "
        "once. Event memories come later, by design: turns are sealed into blocks (12 turns "
        "by default) and a block's events are extracted only when the next block of its "
        "thread is sealed (so a correction that follows can still shape them): with the "
        "defaults, a thread's first events appear after 24 turns, and the latest turns are "
        "never in search_events yet. Pass a receipt_id to make retries safe.",
        AppendTurnInput,
        append_turn,
    ),
    Tool(
        "pin_event",
        "Pin an event so that it never decays out of recall (or unpin it with pinned=false).",
        PinEventInput,
        pin_event,
    ),
    Tool(
        "forget_event",
        "Take an event out of recall and search (the user asked to forget it). Nothing is "
        "deleted: the log keeps the event and the decision to forget it.",
        ForgetEventInput,
        forget_event,
    ),
    Tool(
        "history",
        "The audit log of this memory: its domain events in order, one page at a time. Pass "
        "next_since of a page as since to read the next one (null: no more).",
        HistoryInput,
        history,
        read_only=True,
    ),
    Tool(
        "verify",
        "Check the memory's integrity: the hash chain of its log, and every read model "
        "rebuilt from the log and compared with the live one. ok is true when both hold.",
        VerifyInput,
        verify,
        read_only=True,
    ),
)

TOOLS_BY_NAME: dict[str, Tool[Any]] = {tool.name: tool for tool in TOOLS}


def find_tool(name: str) -> Tool[Any]:
    """The tool of that name; ``UnknownIdError`` names the tools there are."""
    try:
        return TOOLS_BY_NAME[name]
    except KeyError:
        raise UnknownIdError(
            f"no tool named {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}"
        ) from None


__all__ = ["TOOLS", "TOOLS_BY_NAME", "Tool", "ToolInput", "dump", "find_tool", "parse_arguments"]
