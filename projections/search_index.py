"""The search read model: BM25 indexes over event cards, element facts and raw messages, plus
the structured rankings that RRF fuses with them.

Field weights (by repetition): event title 4, summary 3, tags 2, quotes 2, narrative 1,
participants 5, event type 5, original temporal text 4, happened dates 4; element fact: element
name 5, aliases 4, type 2, key 4, value 5. A raw message document is its own text (weight
``RAW_SELF_WEIGHT``) with its speaker and its neighbouring messages as context (weight 1). Raw
search blends (see ``SearchIndex.search_raw``) the BM25 share of the best match with the
reply rule (the reply to a matching question gains a share of its score), the speaker rule (a speaker
the query names multiplies the scores of their messages), bridges from the best event cards
and element facts to the messages they cite, and the category rule (a query's category word,
"activities", lends a bonus to the named speaker's messages that name a member, "swimming";
``stratagate.core.category_words``); for a hypothetical question ("Would Caroline be
considered religious?") the named speaker's self-describing messages ("I'm ...", "my ...")
gain in proportion to the question's words they hold; then a message that mostly asks is
scaled down, a named speaker's message that reports what they did scaled up, and one that
speaks of the listener rather than the speaker scaled down
(``stratagate.core.question_forms``); last, for a hypothetical question, the named speaker's
turns just before and after their best hits rise to most of those hits' scores. Raw hit
scores are these blended scores. A message with no text of its own (an empty side of a turn)
is not indexed: as a hit it would only repeat its neighbours.

Queries are tokenised with ``query_tokens`` (search tokens minus English stop words, all of
them when nothing else is left); documents keep every token, so BM25 itself is unchanged.

Structured rankings (participants, event type, time) order their ids by how well they match
(names matched, interval width); ties, which are most of a one-name list, go to the better
lexical rank (ids without a lexical match last), then the id. Without that rule a name in the
query fused a list in arbitrary id order into every result.

Only retrievable events (active or superseded) are indexed; forgetting, archiving or undoing
an import removes a card, restoring puts it back. Queries touch only the postings of their
tokens and the structured lists they ask for.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Self, cast

from projections.blocks import BlocksModel, LazyRows, MessageRow, thread_key
from projections.card_rows import CardRow
from projections.cards import EventsModel, erased_card_ids, touched_event_ids
from projections.element_facts import ElementRecord, ElementsModel
from projections.inverted import InvertedIndex
from projections.lazy import Pending, thunk_of
from projections.read_model import ReadModel, handles
from projections.sealed_turns import SealedTurn
from stratagate.core.category_words import category_members, named_element_types
from stratagate.core.facts import normalize_name
from stratagate.core.filters import ElementFilters, EventFilters, RawFilters, TemporalIntent
from stratagate.core.question_forms import (
    MessageForms,
    is_hypothetical_question,
    message_forms,
)
from stratagate.core.ranking import rrf_rank
from stratagate.core.search_text import (
    normalize_search_text,
    query_tokens,
    search_tokens,
    stem,
    weighted_tokens,
    word_tokens,
)
from stratagate.events import (
    DomainEvent,
    EventAdded,
    EventArchived,
    EventErased,
    EventForgotten,
    EventMerged,
    EventRestored,
    EventSuperseded,
    ExternalImportUndone,
    ExtractionSucceeded,
    NamespaceErased,
    ProjectionCompleted,
    Recorded,
    ThreadErased,
    TurnAppended,
)
from stratagate.events.payloads import FactData
from stratagate.models import ElementFact, EventCard, RawMessage
from stratagate.timeutil import partial_bounds

EVENT_FIELD_WEIGHTS = {
    "title": 4,
    "summary": 3,
    "tags": 2,
    "quotes": 2,
    "narrative": 1,
    "participants": 5,
    "event_type": 5,
    "original_text": 4,
    "happened": 4,
}
FACT_FIELD_WEIGHTS = {"name": 5, "aliases": 4, "type": 2, "key": 4, "value": 5}
RAW_SELF_WEIGHT = 2
RAW_CONTEXT_WEIGHT = 1
EVENT_FACT_BRIDGE = 10
BRIDGE_VALUE_WORDS = 4
"""Event search: how many fact hits lend the events they cite a ranking of their own."""
RAW_SPEAKER_BOOST = 1.5
"""Raw search: the factor on the score of a message spoken by a speaker the query names."""
RAW_ASKING_FACTOR = 0.6
"""Raw search: the factor on the final score of a message that mostly asks (more than
``ASKING_SHARE`` of its words in questions, ``MessageForms.asking_share``): it says little
about its speaker, matches through the words it asks about, and its answer is the reply
(which the reply rule lifts)."""
ASKING_SHARE = 0.5
"""The share of its words in questions above which a message counts as mostly asking."""
RAW_REPORT_BOOST = 1.2
"""Raw search: the factor on the final score of a named speaker's message that reports
something they did ("I went ...", "last week", "just joined"; ``MessageForms.report``):
what a person did is told in such turns, not in the reactions around them."""
RAW_LISTENER_FACTOR = 0.9
"""Raw search: the factor on the final score of a named speaker's message (not a report) that
speaks of the listener more than of the speaker ("your recipe looks great, you must ...";
``MessageForms.about_listener``): it is about the other person's things."""
RAW_NAMING_BOOST = 1.3
"""Raw search: the factor on the final score of a message that names a concrete thing (a
capitalised word inside a sentence other than a speaker's name, or a number;
``MessageForms.names_thing``): of several turns on one topic, the one that names the
thing ("we went to see Hamilton") answers what a person did, read or saw; topic talk
("painting is so relaxing") does not."""
MESSAGE_MARKS: dict[str, Callable[[MessageForms], bool]] = {
    "self_described": lambda forms: forms.self_description,
    "asking": lambda forms: forms.asking_share > ASKING_SHARE,
    "reporting": lambda forms: forms.report,
    "listener": lambda forms: forms.about_listener,
    "naming": lambda forms: forms.names_thing,
}
"""The marks raw search keeps of each indexed message, by name (as snapshotted), and the form
that sets each (``MessageForms``): self-describing (the evidence of a hypothetical question),
mostly asking, reporting what its speaker did, speaking of the listener, naming a thing."""
RAW_NEIGHBOUR_HITS = 5
RAW_NEIGHBOUR_FLOOR = 0.8
"""Raw search, hypothetical questions naming a speaker: each of the ``RAW_NEIGHBOUR_HITS``
best-scored messages of the named speakers raises the same speaker's message just before and
just after it in the thread (one message, the other side, between them) to at least
``RAW_NEIGHBOUR_FLOOR`` of its own score. What a person is like is told over their
consecutive turns of one exchange ("Gonna continue my edu and check out career options" →
"I'm keen on counseling or working in mental health"), and the turn that matches the
question is often only one of them."""
RAW_REPLY_SHARE = 0.4
"""Raw search: the share of a candidate's score its reply gains, when the candidate asks
something (has a ``?``): the answer to a question sits in the reply."""
RAW_CATEGORY_SHARE = 0.5
"""Raw search: the bonus (in shares of the best BM25 match) of a message matching the members
of the query's category words, scaled by its share of the best such match."""
RAW_BRIDGE_HITS = 5
"""Raw search: how many event and fact hits lend their source messages a bonus."""
RAW_EVENT_BRIDGE = 0.0
RAW_FACT_BRIDGE = 0.1
"""Raw search: the bonus (in shares of the best BM25 match) of a message a bridged event
card, or an event a bridged fact cites, cites. The event bridge is off (0.0): at 0.2 it
gained 0.004 recall@10 on the tuning conversations and 0.012 on the held-out one, and cost a
BM25 pass over the event cards per raw search (54 ms instead of 35 ms at 100k messages)."""


def happened_text(card: EventCard | CardRow) -> str:
    """The happened dates of a card as searchable text: ISO form plus month and year words."""
    temporal = card.temporal
    if temporal is None:
        return ""
    return _happened_text(temporal.happened_start, temporal.happened_end)


@functools.lru_cache(maxsize=1024)
def _happened_text(happened_start: str | None, happened_end: str | None) -> str:
    parts: list[str] = []
    for value in (happened_start, happened_end):
        if not value:
            continue
        start, _ = _bounds(value)
        parts.append(value)
        parts.append(start.strftime("%B %Y"))
    return " ".join(dict.fromkeys(parts))


_name_key = functools.lru_cache(maxsize=4096)(normalize_name)
"""``normalize_name`` through a memo: the fold keys every message by its speaker's name and
every card by its participants' and type's, a few names repeated thousands of times."""

_bounds = functools.lru_cache(maxsize=1024)(partial_bounds)
"""``partial_bounds`` through a memo: the cards of a conversation share a few dates."""


def event_document(card: EventCard | CardRow) -> list[tuple[str, int]]:
    """The weighted fields of an event card."""
    temporal = card.temporal
    w = EVENT_FIELD_WEIGHTS
    return [
        (card.title, w["title"]),
        (card.summary, w["summary"]),
        (" ".join(card.tags), w["tags"]),
        (" ".join(card.quotes), w["quotes"]),
        (card.narrative or "", w["narrative"]),
        (" ".join(temporal.participants) if temporal else "", w["participants"]),
        ((temporal.event_type or "") if temporal else "", w["event_type"]),
        ((temporal.original_text or "") if temporal else "", w["original_text"]),
        (happened_text(card), w["happened"]),
    ]


def event_counts(card: EventCard | CardRow) -> dict[str, int]:
    """An event card's term frequencies, in first-occurrence order: what
    ``Counter(weighted_tokens(event_document(card)))`` gives, counted without the weighted
    list, and with the short fields cards repeat (participants, type, dates) tokenised once."""
    counts: dict[str, int] = {}
    get = counts.get
    for text, weight in event_document(card):
        if text and weight:
            terms = _field_terms(text) if len(text) <= SHORT_FIELD else map(stem, word_tokens(text))
            for term in terms:  # search_tokens(text), without its list
                counts[term] = get(term, 0) + weight
    return counts


SHORT_FIELD = 64
"""Fields up to this many characters are tokenised through a memo: participants, event types
and happened dates repeat from card to card; titles and summaries rarely do."""


@functools.lru_cache(maxsize=4096)
def _field_terms(text: str) -> tuple[str, ...]:
    return tuple(search_tokens(text))


def fact_document(element: ElementRecord, fact: ElementFact | FactData) -> list[tuple[str, int]]:
    """The weighted fields of one element fact."""
    w = FACT_FIELD_WEIGHTS
    value = fact.value if isinstance(fact.value, str) else " ".join(fact.value)
    return [
        (element.name, w["name"]),
        (" ".join(element.aliases), w["aliases"]),
        (element.type, w["type"]),
        (fact.key.replace("_", " "), w["key"]),
        (value, w["value"]),
    ]


def _interval(card: EventCard | CardRow) -> tuple[datetime, datetime] | None:
    temporal = card.temporal
    if temporal is None or not (temporal.happened_start or temporal.happened_end):
        return None
    start_text = temporal.happened_start or temporal.happened_end
    end_text = temporal.happened_end or temporal.happened_start
    assert start_text is not None and end_text is not None
    start = _bounds(start_text)[0]
    end = _bounds(end_text)[1]
    return (start, end) if end > start else (end, start)


class SearchIndex(ReadModel):
    """Three inverted indexes and the structured lookups beside them."""

    name = "search"
    version = 10
    """2: stemmed terms and a speakers table; 3: element name and type tables; 4: compact
    postings; 5: renamed elements' facts re-indexed in plan order, not hash order; 6: each
    message's reply; 7: each index's postings as three arrays; 8: the self-describing, mostly
    asking, reporting and listener-directed messages; 9: the messages naming a concrete thing;
    10: the event and fact postings apart from their documents, so a restore reads them when
    first needed (older snapshots are ignored and replayed)."""

    def __init__(self) -> None:
        self._events = InvertedIndex()
        self._pending_events: dict[str, EventCard | CardRow] = {}
        """Cards made retrievable since the event postings were last read, by id in fold order
        (a card removed before then leaves, one added again goes last, as in the index):
        tokenised and indexed in one pass when the postings are first read (``events``), so a
        replay or an ingest that never searches pays nothing for them."""
        self.facts = InvertedIndex()
        self._raw = InvertedIndex(removable=False)
        self._raw_stored: dict[str, Callable[[], Any]] | None = None
        """A restored index's raw-message postings, replies and marks, by snapshot key: parsed
        when first read (``_load_raw``)."""
        self._pending_raw: list[MessageRow | LazyRows | str | Sequence[MessageRow] | None] = []
        """Turns whose messages are not indexed yet, two entries each: the thread's previous
        message (or ``None``; the id of the sealed block it ends when the thread's tail was
        empty, read when indexed), then the turn's rows (the blocks model's own tuple). Flat,
        so a waiting turn adds no object the garbage collector walks. Raw messages are indexed when
        first needed — a raw search, a digest, a snapshot — so ingesting pays nothing for
        them."""
        self._participants: Pending[dict[str, set[str]]] = Pending({})
        self._speakers: Pending[dict[str, set[str]]] = Pending({})
        self._sealed_speakers: list[Sequence[MessageRow]] = []
        """Turns folded with their content sealed (and any folded after them), whose speakers
        ``speakers`` adds when read, in fold order (whether a message is blank is in its
        content)."""
        self._replies: dict[str, str] = {}
        self._message_marks: dict[str, set[str]] = {name: set() for name in MESSAGE_MARKS}
        self._event_types: Pending[dict[str, set[str]]] = Pending({})
        self._intervals: Pending[dict[str, tuple[datetime, datetime]]] = Pending({})
        """Those four tables are restored when first read (a tail only adds to them)."""
        self.element_names: dict[str, set[str]] = {}
        """Normalised element name or alias → element ids."""
        self.element_types: dict[str, set[str]] = {}
        self._cited_by: dict[str, set[str]] | None = None
        """Message id → indexed events citing it (built when first asked, then kept)."""
        self._events_model: EventsModel | None = None
        self._elements_model: ElementsModel | None = None
        self._blocks_model: BlocksModel | None = None

    @property
    def events(self) -> InvertedIndex:
        """The event-card index, with every retrievable card folded so far in it."""
        if self._pending_events:
            self._index_pending_events()
        return self._events

    def _index_pending_events(self) -> None:
        """Index the waiting cards in fold order (each card's content never changes)."""
        pending, self._pending_events = self._pending_events, {}
        self._index_cards(pending)

    def _index_cards(self, cards: dict[str, EventCard | CardRow]) -> None:
        add = self._events.add_counts
        for event_id, card in cards.items():
            add(event_id, event_counts(card))

    def index_some(self, limit: int) -> bool:
        """Index up to ``limit`` of the waiting cards, else of the waiting turns, in fold
        order, as their first read would (the same postings, in pieces); whether any still
        wait."""
        if self._pending_events:
            waiting = iter(self._pending_events.items())
            self._index_cards(dict(itertools.islice(waiting, limit)))
            self._pending_events = dict(waiting)
        elif self._pending_raw:
            self._load_raw()
            cut = 2 * limit  # two entries a turn
            pending, self._pending_raw = self._pending_raw[:cut], self._pending_raw[cut:]
            self._index_turns(pending)
        return bool(self._pending_events or self._pending_raw)

    @property
    def participants(self) -> dict[str, set[str]]:
        """Normalised participant name → events naming that participant."""
        return self._participants.value

    @property
    def speakers(self) -> dict[str, set[str]]:
        """Normalised speaker name → messages that speaker wrote."""
        if self._sealed_speakers:
            self._unseal_speakers()
        return self._speakers.value

    @property
    def event_types(self) -> dict[str, set[str]]:
        """Normalised event type → events of that type."""
        return self._event_types.value

    @property
    def intervals(self) -> dict[str, tuple[datetime, datetime]]:
        """Event id → the time interval the event happened in."""
        return self._intervals.value

    def bind(self, models: dict[str, ReadModel]) -> None:
        events, elements, blocks = (
            models.get("events"),
            models.get("elements"),
            models.get("blocks"),
        )
        self._events_model = events if isinstance(events, EventsModel) else None
        self._elements_model = elements if isinstance(elements, ElementsModel) else None
        self._blocks_model = blocks if isinstance(blocks, BlocksModel) else None

    # -- fold -------------------------------------------------------------------------------

    @handles(
        ExtractionSucceeded,
        EventAdded,
        EventSuperseded,
        EventForgotten,
        EventArchived,
        EventRestored,
        EventMerged,
    )
    def _event_changed(self, event: DomainEvent, _: Recorded) -> None:
        self._sync_events(touched_event_ids(event))

    @handles(ThreadErased, EventErased, NamespaceErased)
    def _erased(self, event: ThreadErased | EventErased | NamespaceErased, _: Recorded) -> None:
        assert self._events_model is not None
        # What a restore left stored is read first, so the erased cards' terms and names
        # leave memory with this erasure instead of waiting among the changes until a search
        # reads them (erasures are rare; the read is what a first search would pay).
        self._events.read_stored()
        self._unseal_speakers()
        for table in (self._participants, self._speakers, self._event_types, self._intervals):
            table.read_stored()
        self._sync_events(erased_card_ids(event, self._events_model.records))

    @handles(ExternalImportUndone)
    def _import_undone(self, event: ExternalImportUndone, _: Recorded) -> None:
        assert self._events_model is not None
        batch = self._events_model.imports[event.batch_id]
        self._sync_events([*batch.added, *batch.superseded, *(e for e, _ in batch.merged)])

    def _sync_events(self, event_ids: Iterable[str]) -> None:
        assert self._events_model is not None, "the search index needs the events model"
        for event_id in event_ids:
            indexed = event_id in self._events or event_id in self._pending_events
            if self._events_model.retrievable(event_id):
                if not indexed:
                    self._add_event(self._events_model.records[event_id].card)
            elif indexed:
                self._remove_event(event_id)

    def _add_event(self, card: EventCard | CardRow) -> None:
        self._pending_events[card.id] = card
        if self._cited_by is not None:
            for message_id in card.source_message_ids:
                self._cited_by.setdefault(message_id, set()).add(card.id)
        temporal = card.temporal
        if temporal is not None:
            for person in temporal.participants:
                self._participants.change(_add, _name_key(person), card.id)
            if temporal.event_type:
                self._event_types.change(_add, _name_key(temporal.event_type), card.id)
        interval = _interval(card)
        if interval is not None:
            self._intervals.change(_put, card.id, interval)

    def _remove_event(self, event_id: str) -> None:
        assert self._events_model is not None
        card = self._events_model.records[event_id].card
        temporal = card.temporal
        if self._pending_events.pop(event_id, None) is None:
            self._events.remove(event_id)
        if self._cited_by is not None:
            for message_id in card.source_message_ids:
                _discard(self._cited_by, message_id, event_id)
        if temporal is not None:
            for person in temporal.participants:
                self._participants.change(_discard, _name_key(person), event_id)
            if temporal.event_type:
                self._event_types.change(_discard, _name_key(temporal.event_type), event_id)
        self._intervals.change(_drop, event_id, None)

    @handles(ProjectionCompleted)
    def _projected(self, event: ProjectionCompleted, _: Recorded) -> None:
        assert self._elements_model is not None, "the search index needs the elements model"
        for new in event.plan.elements_created:
            self.element_names.setdefault(normalize_name(new.name), set()).add(new.id)
            self.element_types.setdefault(new.type, set()).add(new.id)
            for name in new.aliases:
                self.element_names.setdefault(normalize_name(name), set()).add(new.id)
        for added_alias in event.plan.aliases_added:
            key = normalize_name(added_alias.alias)
            self.element_names.setdefault(key, set()).add(added_alias.element_id)
        # in plan order: a set's order follows the hash seed, and the index order is state
        renamed = dict.fromkeys(alias.element_id for alias in event.plan.aliases_added)
        for element_id in renamed:
            element = self._elements_model.elements[element_id]
            for fact in element.facts:
                self.facts.add(fact.id, weighted_tokens(fact_document(element, fact)))
        for added in event.plan.facts_added:
            element = self._elements_model.elements[added.element_id]
            self.facts.add(added.fact.id, weighted_tokens(fact_document(element, added.fact)))

    @handles(TurnAppended)
    def _turn(self, event: TurnAppended | SealedTurn, _: Recorded) -> None:
        earlier, rows = self._turn_rows(event)
        self._pending_raw += (earlier, rows)
        if isinstance(rows, LazyRows) or self._sealed_speakers:  # in fold order, when read
            self._sealed_speakers.append(rows)
        else:
            self._add_speakers(rows)

    def _add_speakers(self, rows: Sequence[MessageRow]) -> None:
        """Note each named, non-blank message of a turn under its speaker."""
        for row in rows:
            if row.name and row.content.strip():
                self._speakers.change(_add, _name_key(row.name), row.id)

    def _unseal_speakers(self) -> None:
        """Add the speakers of the turns folded with their content sealed, in fold order."""
        waiting, self._sealed_speakers = self._sealed_speakers, []
        for rows in waiting:
            self._add_speakers(rows)

    @property
    def raw(self) -> InvertedIndex:
        """The raw-message index, with every folded turn's messages in it."""
        self._load_raw()
        if self._pending_raw:
            self._index_pending_raw()
        return self._raw

    @property
    def _raw_next(self) -> dict[str, str]:
        """Indexed message that asks something (has a ``?``) → the next indexed message of its
        thread (the reply)."""
        self._load_raw()
        return self._replies

    @property
    def _marks(self) -> dict[str, set[str]]:
        """Mark name (``MESSAGE_MARKS``) → the indexed messages that bear it."""
        self._load_raw()
        return self._message_marks

    def _load_raw(self) -> None:
        """Parse a restored index's raw-message side (postings, replies, marks), on first use:
        a restore followed by turns and event searches never needs it."""
        stored = self._raw_stored
        if stored is not None:
            self._raw = InvertedIndex.restore(stored["raw"](), removable=False)
            self._replies = dict(stored["raw_next"]())
            self._message_marks = {name: set(stored[name]()) for name in MESSAGE_MARKS}
            self._raw_stored = None

    def _index_pending_raw(self) -> None:
        """Index the waiting turns, in fold order: each message's own tokens weighted up, its
        speaker, and its neighbours (the thread's previous message, the turn's next one)."""
        pending, self._pending_raw = self._pending_raw, []
        self._index_turns(pending)

    def _index_turns(
        self, pending: list[MessageRow | LazyRows | str | Sequence[MessageRow] | None]
    ) -> None:
        nothing: Counter[str] = Counter()
        people = frozenset(self.speakers)  # speakers' names name no thing
        for at in range(0, len(pending), 2):
            earlier = self._earlier_row(cast("MessageRow | LazyRows | str | None", pending[at]))
            rows = cast("Sequence[MessageRow]", pending[at + 1])
            first = 1 if earlier is not None else 0
            messages = (earlier, *rows) if earlier is not None else tuple(rows)
            if not messages:  # a turn without messages (the schema allows it): nothing to index
                continue
            previous = messages[0]
            last = previous.id if first and "?" in previous.content else None
            counts = [Counter(search_tokens(m.content)) for m in messages]  # once each
            for i in range(first, len(messages)):
                message = messages[i]
                text = message.content
                if not text.strip():
                    continue
                before = counts[i - 1] if i > 0 else nothing
                after = counts[i + 1] if i + 1 < len(messages) else nothing
                self._raw.add_counts(
                    message.id, weighted_counts(counts[i], message.name, before, after)
                )
                forms = message_forms(text, people)
                for name, holds in MESSAGE_MARKS.items():
                    if holds(forms):
                        self._marks[name].add(message.id)
                if last is not None:
                    self._raw_next[last] = message.id
                last = message.id if "?" in text else None

    def _earlier_row(self, earlier: MessageRow | LazyRows | str | None) -> MessageRow | None:
        """A waiting turn's previous message: as folded, the last of a turn folded with its
        content sealed, or the last of the sealed block whose id was noted (a block's content
        never changes, and its id is never reused)."""
        if isinstance(earlier, LazyRows):
            return earlier[-1]
        if not isinstance(earlier, str):
            return earlier
        assert self._blocks_model is not None, "the search index needs the blocks model"
        rows = self._blocks_model.blocks[earlier].rows
        return rows[-1] if rows else None

    def _turn_rows(
        self, event: TurnAppended | SealedTurn
    ) -> tuple[MessageRow | LazyRows | str | None, Sequence[MessageRow]]:
        """The thread's last message before this turn (the rows of the turn that ends with it
        while their content is sealed; the id of the sealed block that ends with it when the
        tail held no earlier turn: a restored block is built only when a raw search needs
        it), and the turn's own rows (the blocks model has folded the turn: it is the last of
        the thread's tail)."""
        assert self._blocks_model is not None, "the search index needs the blocks model"
        thread = self._blocks_model.threads[thread_key(event.thread_id)]
        *earlier, current = thread.tail
        if earlier and earlier[-1].rows:
            rows = earlier[-1].rows
            return (rows if isinstance(rows, LazyRows) else rows[-1]), current.rows
        if thread.block_ids:
            return thread.block_ids[-1], current.rows
        return None, current.rows

    # -- queries ----------------------------------------------------------------------------

    def events_citing(
        self, message_ids: Iterable[str], order: Mapping[str, int] | None = None
    ) -> list[str]:
        """Retrievable events citing these messages: in message order; events citing the same
        message by ``order`` (say, their rank in an event search; unlisted ones last), then
        id."""
        if self._cited_by is None:
            assert self._events_model is not None
            records = self._events_model.records
            self._cited_by = {}
            for event_id in self.events.doc_ids():
                for message_id in records[event_id].card.source_message_ids:
                    self._cited_by.setdefault(message_id, set()).add(event_id)
        rank = order or {}
        last = len(rank)
        cited = (
            sorted(self._cited_by.get(m, ()), key=lambda e: (rank.get(e, last), e))
            for m in message_ids
        )
        return list(dict.fromkeys(event_id for ids in cited for event_id in ids))

    def related_events(self, text: str, limit: int) -> list[str]:
        """Event ids lexically closest to ``text`` (BM25), equally close ones latest first: what
        a compact timeline keeps besides the latest events."""
        tokens = query_tokens(text)
        return [doc_id for doc_id, _ in self.events.top(tokens, limit, newest_first=True)]

    def search_events(
        self, query: str, *, limit: int, filters: EventFilters
    ) -> list[tuple[str, float]]:
        """Event ids by fused relevance: BM25 plus participant, type, time and intent rankings.

        A non-empty query with no lexical or structured match returns nothing; an empty query
        with no filters lists every retrievable event (ordered by the temporal intent, else
        newest first).
        """
        assert self._events_model is not None
        intent, participants = filters.temporal_intent, filters.participants
        event_type = filters.event_type
        happened_from, happened_to = filters.happened_from, filters.happened_to
        tokens = query_tokens(query)
        rankings: list[list[str]] = []
        depth = fusion_depth(limit)
        lexical = [doc_id for doc_id, _ in self.events.top(tokens, depth)] if tokens else []
        if lexical:
            rankings.append(lexical)
        people = {normalize_name(p) for p in participants or ()}
        people |= self._names_in(query, self.participants)
        order = _tie_order(lexical)
        if people:
            by_people = self._count_rank(self.participants, people, order, depth)
            if by_people:
                rankings.append(by_people)
        types = {normalize_name(event_type)} if event_type else set()
        types |= self._names_in(query, self.event_types)
        if types:
            by_type = self._count_rank(self.event_types, types, order, depth)
            if by_type:
                rankings.append(by_type)
        if happened_from is not None or happened_to is not None:
            by_time = self._time_rank(happened_from, happened_to, order, depth)
            if by_time:
                rankings.append(by_time)
        if tokens:
            by_facts = self._fact_events(query, depth)
            if by_facts:
                rankings.append(by_facts)
        if not rankings:
            if query.strip() or participants or event_type or happened_from or happened_to:
                return []
            candidates = list(self.events.doc_ids())
        else:
            candidates = list(dict.fromkeys(i for ranking in rankings for i in ranking))
        if intent is not None or not rankings:
            rankings.append(self._intent_rank(candidates, intent or "latest"))
        fused = rrf_rank(rankings, limit=limit)
        return [(hit.item, hit.score) for hit in fused]

    def _fact_events(self, query: str, depth: int) -> list[str]:
        """Retrievable events cited by the element facts matching ``query``, in fact rank order
        (active facts before superseded ones): the bridge from a fact's key, element name or
        type ("package manager") to the events that set it ("let's switch to pnpm")."""
        assert self._events_model is not None and self._elements_model is not None
        facts = self._bridging_facts(query, EVENT_FACT_BRIDGE)
        # current facts first (stable: rank order otherwise)
        facts.sort(key=lambda fact: (fact.status != "active", fact.valid_to is not None))
        cited = (event_id for fact in facts for event_id in fact.source_event_ids)
        found = [e for e in dict.fromkeys(cited) if self._events_model.retrievable(e)]
        return [e for e in found if e in self.events][:depth]

    def _bridging_facts(self, query: str, limit: int) -> list[ElementFact]:
        """The state and relation facts among the best ``limit`` fact hits (what a decision or
        a change set, not items of a set like preferences) whose key or short value (a state, a name: at most
        ``BRIDGE_VALUE_WORDS`` words) shares a token with the query other than the name of a person
        it names (a speaker or a person element). A match on a name alone says nothing about
        which of the person's events answers, and a long value (an event's
        title kept as a fact) only repeats what event search already matched."""
        assert self._elements_model is not None
        if not len(self.facts):
            return []
        people = self._names_in(query, self.speakers) | {
            phrase
            for phrase in self._names_in(query, self.element_names)
            if self.element_names[phrase] & self.element_types.get("person", set())
        }
        named = {token for name in people for token in search_tokens(name)}
        wanted = set(query_tokens(query)) - named
        if not wanted:
            return []
        found = []
        for fact_id, _ in self.search_facts(query, limit=limit, filters=ElementFilters()):
            _, fact = self._elements_model.fact(fact_id)
            if fact.mode == "set":
                continue
            values = [fact.value] if isinstance(fact.value, str) else fact.value
            short = [v for v in values if len(word_tokens(v)) <= BRIDGE_VALUE_WORDS]
            if wanted.intersection(search_tokens(" ".join([fact.key.replace("_", " "), *short]))):
                found.append(fact)
        return found

    @staticmethod
    def _names_in(query: str, table: dict[str, set[str]]) -> set[str]:
        """Keys of ``table`` that occur as whole words (or Han runs) in the query text.

        Looks up the query's phrases (runs of up to ``NAME_WORDS`` words, and its tokens), so
        the cost follows the query's length, not the number of names known.
        """
        return {phrase for phrase in query_phrases(query) if phrase in table}

    @staticmethod
    def _count_rank(
        table: dict[str, set[str]], keys: set[str], order: TieOrder, depth: int
    ) -> list[str]:
        """The ``depth`` ids listed under the most of ``keys``; ties in ``order``."""
        counts: dict[str, int] = {}
        for key in keys:
            for doc_id in table.get(key, ()):
                counts[doc_id] = counts.get(doc_id, 0) + 1
        return heapq.nsmallest(depth, counts, key=lambda doc_id: (-counts[doc_id], *order(doc_id)))

    def _time_rank(
        self, start: datetime | None, end: datetime | None, order: TieOrder, depth: int
    ) -> list[str]:
        """The ``depth`` events whose happened interval overlaps ``[start, end)``, tightest first."""
        overlaps = (
            (e - s, *order(event_id))
            for event_id, (s, e) in self.intervals.items()
            if (start is None or e > start) and (end is None or s < end)
        )
        return [event_id for *_, event_id in heapq.nsmallest(depth, overlaps)]

    def _intent_rank(self, candidates: list[str], intent: TemporalIntent) -> list[str]:
        """Candidates ordered by happened start, then mentioned, then created (first or latest)."""
        assert self._events_model is not None
        records = self._events_model.records

        def key(event_id: str) -> tuple[str, str, str, str]:
            card = records[event_id].card
            temporal = card.temporal
            happened = ""
            mentioned = ""
            if temporal is not None:
                if temporal.happened_start or temporal.happened_end:
                    happened = (
                        self.intervals[event_id][0].isoformat()
                        if event_id in self.intervals
                        else ""
                    )
                if temporal.mentioned_at:
                    mentioned = partial_bounds(temporal.mentioned_at)[0].isoformat()
            return happened or "~", mentioned or "~", card.created_at.isoformat(), event_id

        ordered = sorted(candidates, key=key)
        if intent == "latest":
            dated = [i for i in ordered if key(i)[0] != "~"]
            undated = [i for i in ordered if key(i)[0] == "~"]
            ordered = list(reversed(dated)) + list(reversed(undated))
        return ordered

    def search_facts(
        self, query: str, *, limit: int, filters: ElementFilters
    ) -> list[tuple[str, float]]:
        """Fact ids by fused relevance: BM25 plus element name/alias and element type rankings."""
        assert self._elements_model is not None
        name, type_ = filters.name, filters.type
        elements = self._elements_model
        tokens = query_tokens(query)
        rankings: list[list[str]] = []
        depth = fusion_depth(limit)
        lexical = [doc_id for doc_id, _ in self.facts.top(tokens, depth)] if tokens else []
        if lexical:
            rankings.append(lexical)
        named: set[str] = set()
        if name:
            named.update(self.element_names.get(normalize_name(name), ()))
        for phrase in self._names_in(query, self.element_names):
            named.update(self.element_names[phrase])
        if named:
            rankings.append(self._element_facts(sorted(named))[:depth])
        if type_:
            by_type = self._element_facts(sorted(self.element_types.get(type_, ())))[:depth]
            if by_type:
                rankings.append(by_type)
        if not rankings:
            if query.strip() or name or type_:
                return []
            rankings.append(self._element_facts(list(elements.elements)))
        fused = rrf_rank(rankings, limit=limit)
        return [(hit.item, hit.score) for hit in fused]

    def _element_facts(self, element_ids: Iterable[str]) -> list[str]:
        """Fact ids of these elements, each element's active and newest facts first."""
        assert self._elements_model is not None
        elements = self._elements_model.elements
        return [
            fact.id
            for element_id in element_ids
            for fact in _newest_first(elements[element_id].facts)
        ]

    def search_raw(self, query: str, *, limit: int, filters: RawFilters) -> list[tuple[str, float]]:
        """Message ids by blended relevance, optionally of one thread.

        The ``fusion_depth(limit)`` best BM25 matches (over the message and its neighbours) are
        the candidates, each scored by its BM25 share of the best match. The reply to a
        candidate that asks something (has a ``?``; the answer sits in the reply) gains
        ``RAW_REPLY_SHARE`` of the candidate's share. Messages spoken by a speaker the query
        names have their score multiplied by ``RAW_SPEAKER_BOOST``. Then the category rule: a
        query with a category word ("activities", "pets") adds ``RAW_CATEGORY_SHARE`` times each
        message's share of the best match for the category's members (``_category_matches``).
        Then the structure bridge:
        each message cited by an event that one of the ``RAW_BRIDGE_HITS`` best state or
        relation facts cites gains ``RAW_FACT_BRIDGE`` (so a question worded like a fact key,
        "package manager", reaches the message that said "pnpm"); with ``RAW_EVENT_BRIDGE``
        set, so does each message the best event cards cite. For a hypothetical question that
        names a speaker, the speaker's self-describing messages holding a question word are
        multiplied by 1 + the share of the question's words they hold
        (``_self_description_factors``). Then a message that mostly asks is multiplied by
        ``RAW_ASKING_FACTOR``, a named speaker's message reporting what they did by
        ``RAW_REPORT_BOOST`` and one speaking of the listener rather than themselves by
        ``RAW_LISTENER_FACTOR``; any message naming a concrete thing (a name or a number) by
        ``RAW_NAMING_BOOST``. Last, for a hypothetical question naming a speaker, the
        speaker's previous and next turn around each of their ``RAW_NEIGHBOUR_HITS`` best
        messages rise to at least ``RAW_NEIGHBOUR_FLOOR`` of its score
        (``_raise_neighbours``).
        """
        tokens = query_tokens(query)
        if not tokens:
            return []
        raw = self.raw
        keep = self._thread_filter(filters.thread_id)
        best, lexical = raw.ranked(tokens, keep, fusion_depth(limit))
        if not best:
            return []
        top = best[0][1]
        score = {doc_id: value / top for doc_id, value in best}
        following = self._raw_next
        for doc_id, value in best:
            reply = following.get(doc_id)
            if reply is not None and (keep is None or keep(reply)):
                own = score.get(reply, lexical(reply) / top)
                score[reply] = own + RAW_REPLY_SHARE * value / top
        speakers = self._names_in(query, self.speakers)
        named: set[str] = set()
        hypothetical = False
        if speakers:
            named = set().union(*(self.speakers[name] for name in speakers))
            for doc_id in score.keys() & named:
                score[doc_id] *= RAW_SPEAKER_BOOST
            hypothetical = is_hypothetical_question(query)
            if hypothetical:
                names = {token for name in speakers for token in search_tokens(name)}
                for doc_id, factor in self._self_description_factors(tokens, names, named, keep):
                    score[doc_id] = score.get(doc_id, lexical(doc_id) / top) * factor
        for doc_id, share in self._category_matches(tokens, named, keep, fusion_depth(limit)):
            score[doc_id] = score.get(doc_id, lexical(doc_id) / top) + RAW_CATEGORY_SHARE * share
        for bridge, bonus in self._bridges(query):
            for doc_id in bridge:
                if doc_id in raw and (keep is None or keep(doc_id)):
                    score[doc_id] = score.get(doc_id, lexical(doc_id) / top) + bonus
        marks = self._marks
        asking, reporting, listener = marks["asking"], marks["reporting"], marks["listener"]
        naming = marks["naming"]
        for doc_id in score:
            if doc_id in asking:
                score[doc_id] *= RAW_ASKING_FACTOR
            elif doc_id in named:
                if doc_id in reporting:
                    score[doc_id] *= RAW_REPORT_BOOST
                elif doc_id in listener:
                    score[doc_id] *= RAW_LISTENER_FACTOR
            if doc_id in naming:
                score[doc_id] *= RAW_NAMING_BOOST
        if hypothetical:
            self._raise_neighbours(score, named, keep, lexical, top)
        ranked = heapq.nsmallest(limit, score.items(), key=lambda item: (-item[1], item[0]))
        return [(doc_id, value) for doc_id, value in ranked]

    def _raise_neighbours(
        self,
        score: dict[str, float],
        named: set[str],
        keep: Callable[[str], bool] | None,
        lexical: Callable[[str], float],
        top: float,
    ) -> None:
        """The neighbour rule of hypothetical questions (``RAW_NEIGHBOUR_FLOOR``): the same
        speaker's previous and next message of each of the best-scored named-speaker messages
        rises to at least ``RAW_NEIGHBOUR_FLOOR`` of that message's score. The floors are
        taken from the scores before any of them is raised (no chains)."""
        best = heapq.nsmallest(
            RAW_NEIGHBOUR_HITS,
            ((doc_id, value) for doc_id, value in score.items() if doc_id in named),
            key=lambda item: (-item[1], item[0]),
        )
        raw = self.raw
        for doc_id, value in best:
            floor = RAW_NEIGHBOUR_FLOOR * value
            for other in self._same_speaker_neighbours(doc_id):
                if other in raw and (keep is None or keep(other)):
                    score[other] = max(score.get(other, lexical(other) / top), floor)

    def _same_speaker_neighbours(self, message_id: str) -> list[str]:
        """The messages two before and two after ``message_id`` in its thread that have the
        same speaker: the speaker's previous and next turn of a two-sided exchange. Looked up
        in the message's block or open-tail turn and the ones on either side of it."""
        assert self._blocks_model is not None
        blocks = self._blocks_model
        ref = blocks.messages.get(message_id)
        if ref is None:
            return []
        key, turn, block_id = ref
        thread = blocks.threads.get(key)
        if thread is None:
            return []
        sealed = len(thread.block_ids)
        if block_id is not None:
            unit = blocks.blocks[block_id].position - 1
            if not 0 <= unit < sealed or thread.block_ids[unit] != block_id:
                return []  # not a block of the thread's sequence (an import's own block)
        else:
            unit = sealed + bisect.bisect_left(thread.tail, turn, key=lambda t: t.turn)

        def rows_of(k: int) -> Sequence[MessageRow]:
            if k < sealed:
                return blocks.blocks[thread.block_ids[k]].rows
            return thread.tail[k - sealed].rows if k - sealed < len(thread.tail) else ()

        rows = [row for k in range(max(unit - 1, 0), unit + 2) for row in rows_of(k)]
        index = next((i for i, row in enumerate(rows) if row.id == message_id), None)
        if index is None:
            return []
        speaker = rows[index].name
        return [
            rows[i].id
            for i in (index - 2, index + 2)
            if 0 <= i < len(rows) and rows[i].name == speaker
        ]

    def _self_description_factors(
        self,
        tokens: Sequence[str],
        names: set[str],
        named: set[str],
        keep: Callable[[str], bool] | None,
    ) -> list[tuple[str, float]]:
        """The hypothetical rule: each self-describing message of the named speakers that
        shares a word with the question (its words other than the speakers' names) and its
        factor, 1 + the share of those words it holds ("Would Caroline be considered
        religious?" → "I'm grateful for my church community")."""
        terms = [token for token in dict.fromkeys(tokens) if token not in names]
        if not terms:
            return []
        described = self._marks["self_described"]

        def within(doc_id: str) -> bool:
            return doc_id in named and doc_id in described and (keep is None or keep(doc_id))

        matched = self.raw.matched_terms(terms, within)
        return [(doc_id, 1 + count / len(terms)) for doc_id, count in matched.items()]

    def _category_matches(
        self,
        tokens: Sequence[str],
        named: set[str],
        keep: Callable[[str], bool] | None,
        depth: int,
    ) -> list[tuple[str, float]]:
        """The ``depth`` best matches of the members of the query's category words
        (``category_members``: "activities" → swimming, painting, ...; a word naming an element
        type, "cities", makes that type's element names members), each with its BM25 share
        of the best such match; only the named speakers' own messages when the query names a
        speaker (what a person does is in their own turns). Empty without a category word."""
        members = category_members(tokens)
        types = named_element_types(tokens)
        if types:
            members = list(dict.fromkeys([*members, *self._element_name_tokens(types, tokens)]))
        if not members:
            return []
        only = keep
        if named:
            only = named.__contains__ if keep is None else lambda d: d in named and keep(d)
        found, _ = self.raw.ranked(members, only, depth)
        return [(doc_id, value / found[0][1]) for doc_id, value in found]

    def _element_name_tokens(self, types: Sequence[str], tokens: Sequence[str]) -> list[str]:
        """The search tokens of the names and aliases of the elements of ``types`` ("cities" →
        place elements → "paris", "rome"), minus the query's own tokens."""
        assert self._elements_model is not None
        elements = self._elements_model.elements
        own = set(tokens)
        ids = sorted(set().union(*(self.element_types.get(t, set()) for t in types)))
        names = [name for element_id in ids for name in elements[element_id].names()]
        return [token for name in names for token in search_tokens(name) if token not in own]

    def _thread_filter(self, thread_id: str | None) -> Callable[[str], bool] | None:
        if thread_id is None:
            return None
        assert self._blocks_model is not None
        key = thread_key(thread_id)
        messages = self._blocks_model.messages
        return lambda doc_id: messages[doc_id][0] == key

    def _bridges(self, query: str) -> list[tuple[list[str], float]]:
        """The source messages of the best event hits and of the events the best fact hits
        cite, each list with the bonus its messages gain."""
        assert self._events_model is not None and self._elements_model is not None
        records = self._events_model.records
        by_events: list[str] = []
        if RAW_EVENT_BRIDGE:  # off by default: it costs an event search per raw search
            events = self.events.top(query_tokens(query), RAW_BRIDGE_HITS)
            by_events = [m for e, _ in events for m in records[e].card.source_message_ids]
        by_facts: list[str] = []
        for fact in self._bridging_facts(query, RAW_BRIDGE_HITS):
            for event_id in fact.source_event_ids:
                record = records.get(event_id)
                if record is not None and self._events_model.retrievable(event_id):
                    by_facts.extend(record.card.source_message_ids)
        return [
            (list(dict.fromkeys(by_events)), RAW_EVENT_BRIDGE),
            (list(dict.fromkeys(by_facts)), RAW_FACT_BRIDGE),
        ]

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        events, event_postings = self.events.snapshot_parts()
        facts, fact_postings = self.facts.snapshot_parts()
        return {
            "events": events,
            "event_postings": event_postings,
            "facts": facts,
            "fact_postings": fact_postings,
            "raw": self.raw.snapshot(),
            "participants": _dump_table(self.participants),
            "speakers": _dump_table(self.speakers),
            "raw_next": sorted(self._raw_next.items()),
            **{name: sorted(ids) for name, ids in self._marks.items()},
            "event_types": _dump_table(self.event_types),
            "element_names": _dump_table(self.element_names),
            "element_types": _dump_table(self.element_types),
            "intervals": [
                [event_id, start.isoformat(), end.isoformat()]
                for event_id, (start, end) in self.intervals.items()
            ],
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any]) -> Self:
        """The index ``data`` was taken from; its raw-message postings are parsed when first
        needed, with the replies and marks (``_load_raw``), and so are the event and fact
        postings and the participant, speaker, type and interval tables."""
        model = cls()
        model._events = InvertedIndex.restore(
            data["events"], postings=thunk_of(data, "event_postings")
        )
        model.facts = InvertedIndex.restore(data["facts"], postings=thunk_of(data, "fact_postings"))
        model._raw_stored = {"raw": thunk_of(data, "raw")}
        for key in ("raw_next", *MESSAGE_MARKS):  # event_search v1 snapshots lack these
            model._raw_stored[key] = thunk_of(data, key) if key in data else lambda: ()
        model._participants = Pending.stored(_table_of(thunk_of(data, "participants")))
        model._speakers = Pending.stored(_table_of(thunk_of(data, "speakers")))
        model._event_types = Pending.stored(_table_of(thunk_of(data, "event_types")))
        model.element_names = {key: set(ids) for key, ids in data["element_names"]}
        model.element_types = {key: set(ids) for key, ids in data["element_types"]}
        intervals = thunk_of(data, "intervals")
        model._intervals = Pending.stored(
            lambda: {
                event_id: (datetime.fromisoformat(start), datetime.fromisoformat(end))
                for event_id, start, end in intervals()
            }
        )
        return model


class EventSearchIndex(SearchIndex):
    """Only the event-card side of the search index: what the extractor's compact timeline
    asks ("events related to this block"). Raw messages and element facts are not indexed, so
    the extractor does not tokenise every message of the namespace (the reader's full index
    does)."""

    name = "event_search"
    version = 3
    """2: postings as three arrays (as ``search`` v7); 3: postings apart from their documents
    (as ``search`` v10)."""

    def _projected(self, event: ProjectionCompleted, recorded: Recorded) -> None:
        """Element facts are not indexed here."""

    def _turn(self, event: TurnAppended | SealedTurn, recorded: Recorded) -> None:
        """Raw messages are not indexed here."""


TieOrder = Callable[[str], tuple[int, str]]


def _tie_order(lexical: Sequence[str]) -> TieOrder:
    """Sort key breaking ties in a structured ranking: lexical rank (unmatched last), then id."""
    position = {doc_id: rank for rank, doc_id in enumerate(lexical)}
    unmatched = len(position)
    return lambda doc_id: (position.get(doc_id, unmatched), doc_id)


def _dump_table(table: dict[str, set[str]]) -> list[list[Any]]:
    return [[key, sorted(ids)] for key, ids in sorted(table.items())]


def _table_of(rows: Callable[[], list[list[Any]]]) -> Callable[[], dict[str, set[str]]]:
    """A call restoring a table ``_dump_table`` wrote, from a call giving its rows."""
    return lambda: {key: set(ids) for key, ids in rows()}


def _add(table: dict[str, set[str]], key: str, doc_id: str) -> None:
    table.setdefault(key, set()).add(doc_id)


def _put(table: dict[str, Any], key: str, value: Any) -> None:
    table[key] = value


def _drop(table: dict[str, Any], key: str, _: None) -> None:
    table.pop(key, None)


def raw_document(
    own: Sequence[str], speaker: str | None, before: Sequence[str], after: Sequence[str]
) -> list[str]:
    """A raw message's document from tokenised parts: its own tokens ``RAW_SELF_WEIGHT`` times,
    its speaker's name, and its neighbours' tokens ``RAW_CONTEXT_WEIGHT`` times each."""
    return [
        *(token for _ in range(RAW_SELF_WEIGHT) for token in own),
        *(search_tokens(speaker) if speaker else ()),
        *(token for _ in range(RAW_CONTEXT_WEIGHT) for token in before),
        *(token for _ in range(RAW_CONTEXT_WEIGHT) for token in after),
    ]


def raw_counts(
    own: Sequence[str], speaker: str | None, before: Sequence[str], after: Sequence[str]
) -> dict[str, int]:
    """``raw_document`` as term frequencies, counted without building the weighted list (the
    same counts, in the same first-occurrence order)."""
    return weighted_counts(Counter(own), speaker, Counter(before), Counter(after))


def weighted_counts(
    own: Mapping[str, int],
    speaker: str | None,
    before: Mapping[str, int],
    after: Mapping[str, int],
) -> dict[str, int]:
    """A raw message's term frequencies from its own, its neighbours' and its speaker's."""
    counts = {term: n * RAW_SELF_WEIGHT for term, n in own.items()}
    get = counts.get
    if speaker:
        for term in search_tokens(speaker):
            counts[term] = get(term, 0) + 1
    for context in (before, after):
        for term, n in context.items():
            counts[term] = get(term, 0) + n * RAW_CONTEXT_WEIGHT
    return counts


def raw_tokens(
    message: RawMessage, before: RawMessage | None, after: RawMessage | None
) -> list[str]:
    """A raw message's document: its text weighted up, its speaker and neighbours as context."""
    return raw_document(
        search_tokens(message.content),
        message.name,
        search_tokens(before.content) if before is not None else [],
        search_tokens(after.content) if after is not None else [],
    )


FUSION_DEPTH_FACTOR = 10
FUSION_MIN_DEPTH = 100


def fusion_depth(limit: int) -> int:
    """How deep each ranking goes into the fusion: ``max(10 × limit, 100)``.

    Fusing the top of each list, not every match, keeps a query's cost on the postings it touches
    instead of sorting every match. It is the usual approximation of reciprocal-rank fusion: an
    item ranked below this depth in every list is left out (it would score at most
    n / (60 + depth) for n lists, below what results at the top of a single list score).
    """
    return max(limit * FUSION_DEPTH_FACTOR, FUSION_MIN_DEPTH)


NAME_WORDS = 6
QUERY_CACHE = 1024
"""Queries whose phrases are remembered: one search looks them up in several tables."""
"""The longest name (in words) that structured rankings recognise in a query."""


@functools.lru_cache(maxsize=QUERY_CACHE)
def query_phrases(query: str) -> frozenset[str]:
    """Every normalised run of 1 to ``NAME_WORDS`` words of the query, plus its word tokens
    (jieba words and bigrams for Chinese): the candidates for name and type lookups."""
    words = normalize_search_text(query).split()
    phrases = {
        normalize_name(" ".join(words[i : i + n]))
        for i in range(len(words))
        for n in range(1, NAME_WORDS + 1)
        if i + n <= len(words)
    }
    phrases.update(word_tokens(query))
    phrases.discard("")
    return frozenset(phrases)


def _discard(table: dict[str, set[str]], key: str, doc_id: str) -> None:
    ids = table.get(key)
    if ids is not None:
        ids.discard(doc_id)
        if not ids:
            del table[key]


def _newest_first(facts: Iterable[ElementFact]) -> list[ElementFact]:
    return sorted(facts, key=lambda f: (f.status != "active", -f.created_at.timestamp(), f.id))


__all__ = [
    "EVENT_FACT_BRIDGE",
    "EVENT_FIELD_WEIGHTS",
    "FACT_FIELD_WEIGHTS",
    "RAW_ASKING_FACTOR",
    "RAW_BRIDGE_HITS",
    "RAW_CATEGORY_SHARE",
    "RAW_EVENT_BRIDGE",
    "RAW_FACT_BRIDGE",
    "RAW_LISTENER_FACTOR",
    "RAW_NAMING_BOOST",
    "RAW_NEIGHBOUR_FLOOR",
    "RAW_NEIGHBOUR_HITS",
    "RAW_REPLY_SHARE",
    "RAW_REPORT_BOOST",
    "RAW_SPEAKER_BOOST",
    "EventSearchIndex",
    "SearchIndex",
    "event_document",
    "fact_document",
    "fusion_depth",
    "query_phrases",
    "raw_document",
    "raw_tokens",
]
