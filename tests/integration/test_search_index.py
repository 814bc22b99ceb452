"""Search ranking rules through the public API (inline runtime, in-memory store)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from projections.search_index import event_counts, event_document, raw_counts, raw_document
from projections.state import NamespaceState
from stratagate import StrataGate
from stratagate.core.search_text import weighted_tokens
from stratagate.events import TurnAppended
from stratagate.events.payloads import MessageData
from stratagate.models import EventCard, EventTemporal
from stratagate.read.view import MemoryView
from tests.support.folding import fold_events


@pytest.fixture
def memory() -> Iterator[StrataGate]:
    counter = itertools.count(1)
    memory = StrataGate.in_memory(
        block_turn_size=1, id_factory=lambda prefix: f"{prefix}_{next(counter):04d}"
    )
    yield memory
    memory.close()


def _event(memory: StrataGate, title: str, people: list[str], **temporal: Any) -> str:
    block = memory.list_blocks()[-1]
    card = memory.add_event(
        {
            "title": title,
            "summary": title,
            "source_block_id": block.id,
            "source_message_ids": [block.l5_raw[0].id],
            "temporal": {"participants": people, **temporal},
        }
    )
    return card.id


def test_a_participant_ranking_orders_the_persons_events_by_lexical_rank(
    memory: StrataGate,
) -> None:
    memory.append_turn("hello", "hi")
    memory.append_turn("more", "talk")
    _event(memory, "Went to the bakery", ["Melanie"])
    _event(memory, "Bought groceries for the week", ["Melanie"])
    sunset = _event(memory, "Painted a sunset over the lake", ["Melanie"])
    _event(memory, "Painted a portrait", ["Caroline"])
    hits = memory.search_events("When did Melanie paint a sunset?", limit=4)
    assert hits[0].id == sunset
    assert hits[0].score == pytest.approx(2 / 61)  # first in BM25 and in the participant list


def test_the_reply_to_a_matching_question_is_found(memory: StrataGate) -> None:
    memory.append_turn("Which city did you move to last spring?", "Lisbon, and I love it")
    memory.append_turn("my garden", "tomatoes")
    memory.append_turn("city break plans", "none yet")
    memory.append_turn("city lights", "pretty")
    hits = memory.search_raw_memory("Which city did Ana move to?", limit=2)
    assert {hit.message.content for hit in hits} == {
        "Which city did you move to last spring?",
        "Lisbon, and I love it",
    }


def test_the_reply_to_a_question_that_ended_a_sealed_block_is_found(memory: StrataGate) -> None:
    """The next turn's first message is the question's reply though the question's block was
    sealed (and, after a restore, not yet read) when the turn was folded."""
    memory.append_turn("my garden", "Which city did you move to last spring?")
    memory.append_turn("Lisbon, and I love it", "lovely")
    memory.append_turn("city break plans", "none yet")
    memory.append_turn("city lights", "pretty")
    hits = memory.search_raw_memory("Which city did Ana move to?", limit=3)
    assert "Lisbon, and I love it" in [hit.message.content for hit in hits]


def test_raw_search_ignores_stop_words_of_the_query(memory: StrataGate) -> None:
    memory.append_turn("What did you do when it was there with them?", "It was what it was.")
    memory.append_turn("I painted a sunset last week", "lovely")
    hits = memory.search_raw_memory("When did you paint it?", limit=3)
    assert hits[0].message.content == "I painted a sunset last week"
    assert memory.search_raw_memory("what was it", limit=1)  # stop words only: all kept


def test_raw_search_favours_the_named_speakers_matches(memory: StrataGate) -> None:
    memory.append_turn(
        {"content": "Caroline, pottery classes start soon! Pottery is relaxing", "name": "Melanie"},
        {"content": "ok", "name": "Jon"},
        thread_id="a",
    )
    memory.append_turn(
        {"content": "hi", "name": "Jon"},
        {"content": "I tried pottery once", "name": "Caroline"},
        thread_id="b",
    )
    unnamed = memory.search_raw_memory("Does anyone like pottery?", limit=3)
    assert unnamed[0].message.name == "Melanie"
    named = memory.search_raw_memory("Does Caroline like pottery?", limit=3)
    assert named[0].message.content == "I tried pottery once"
    assert memory.search_raw_memory("Caroline zebra", limit=3)[0].message.name == "Caroline"
    assert memory.search_raw_memory("Caroline pottery", limit=3, thread_id="a")[0].message.name == (
        "Melanie"
    )


def test_a_category_word_reaches_the_named_speakers_member_word(memory: StrataGate) -> None:
    memory.append_turn(
        {"content": "How was your week?", "name": "Caroline"},
        {"content": "I'm off to go swimming with the kids this afternoon", "name": "Melanie"},
        thread_id="a",
    )
    memory.append_turn(
        {"content": "Have a great time!", "name": "Caroline"},
        {"content": "Thanks, see you soon", "name": "Melanie"},
        thread_id="a",
    )
    memory.append_turn(
        {"content": "Swimming lessons sound fun, but not for me", "name": "Caroline"},
        {"content": "ok", "name": "Jon"},
        thread_id="b",
    )
    hits = memory.search_raw_memory("What activities does Melanie partake in?", limit=3)
    assert hits[0].message.content == "I'm off to go swimming with the kids this afternoon"
    assert [hit.message.name for hit in hits] == ["Melanie", "Melanie"]  # not Caroline's swim
    hers = memory.search_raw_memory("Which activities did Caroline try?", limit=3)
    assert hers[0].message.content == "Swimming lessons sound fun, but not for me"
    assert {hit.message.name for hit in hers} == {"Caroline"}  # Melanie's swimming: not hers


def test_a_word_naming_an_element_type_reaches_the_turns_naming_its_elements() -> None:
    with _offline_memory() as memory:
        for gina, jon in [
            ("How was your trip, Jon?", "Great! I just got back from Paris with my sister."),
            ("Lovely. Any plans now?", "Next month I fly to Rome for a dance festival."),
            ("Wow, enjoy it", "Thanks, I will"),
            ("Bye", "Bye"),
        ]:
            memory.append_turn({"content": gina, "name": "Gina"}, {"content": jon, "name": "Jon"})
        assert {e.name for e in memory.list_elements() if e.type == "place"} == {"Paris", "Rome"}
        hits = memory.search_raw_memory("Which cities has Jon visited?", limit=3)
        contents = [hit.message.content for hit in hits]
        assert "Next month I fly to Rome for a dance festival." in contents  # "cities" → Rome


def test_a_message_without_text_is_never_a_raw_hit(memory: StrataGate) -> None:
    memory.append_turn("", "We went to the pottery class")
    memory.append_turn("Pottery again?", "")
    hits = memory.search_raw_memory("pottery", limit=5)
    assert sorted(hit.message.content for hit in hits) == [
        "Pottery again?",
        "We went to the pottery class",
    ]


def _offline_memory() -> StrataGate:
    return StrataGate.in_memory(
        block_turn_size=2, summarizer="offline", extractor="offline", element_projector="offline"
    )


PROJECT_TURNS = [
    ("We're building Fieldnotes, a field-notes app.", "Sounds good."),
    ("We'll use npm for packages since everyone already has it installed.", "OK, npm it is."),
    ("Installs take forever with npm. Let's switch to pnpm then.", "Done: pnpm-lock.yaml it is."),
    ("Tip: check `pnpm --version` locally first.", "Will do."),
    ("Anything else?", "No."),
    ("Bye", "Bye"),
]


def test_a_fact_key_reaches_the_decision_in_events_elements_and_raw_messages() -> None:
    with _offline_memory() as memory:
        for user, assistant in PROJECT_TURNS:
            memory.append_turn(user, assistant)
        switch = "Let's switch to pnpm then"
        facts = memory.search_elements("package manager", limit=3)
        assert ("package_manager", "pnpm") in [(f.fact.key, f.fact.value) for f in facts]
        events = memory.search_events("package manager", limit=3)
        assert switch in [hit.event.title for hit in events]
        assert memory.search_events("pnpm", limit=3)[0].event.title == switch
        raw = memory.search_raw_memory("package manager", limit=3)
        assert any(switch in hit.message.content for hit in raw)


WORDS = st.lists(st.sampled_from(["pnpm", "fly", "tokyo", "we", "decided", "launch"]), max_size=8)


@given(own=WORDS, before=WORDS, after=WORDS, speaker=st.sampled_from([None, "", "Lin Wei"]))
def test_raw_counts_are_the_raw_documents_counts(
    own: list[str], before: list[str], after: list[str], speaker: str | None
) -> None:
    counted = raw_counts(own, speaker, before, after)
    listed = Counter(raw_document(own, speaker, before, after))
    assert list(counted.items()) == list(listed.items())


TEXTS = WORDS.map(" ".join)
DATES = st.sampled_from([None, "2023", "2023-05", "2023-05-07", "2023-05-07T10:00:00Z"])


@given(
    title=TEXTS.filter(str.strip),
    summary=TEXTS,
    tags=st.lists(TEXTS, max_size=3),
    people=st.lists(st.sampled_from(["Lin Wei", "Ana", "Tokyo"]), max_size=3),
    event_type=st.sampled_from([None, "launch", "we decided"]),
    start=DATES,
    end=DATES,
)
def test_event_counts_are_the_event_documents_counts(
    title: str,
    summary: str,
    tags: list[str],
    people: list[str],
    event_type: str | None,
    start: str | None,
    end: str | None,
) -> None:
    card = EventCard(
        id="evt_1",
        title=title,
        summary=summary,
        tags=tags,
        quotes=[summary],
        narrative=title,
        source_block_id="blk_1",
        temporal=EventTemporal(
            participants=people,
            event_type=event_type,
            original_text=summary or None,
            happened_start=start,
            happened_end=end,
        ),
        created_at="2026-01-05T09:00:00Z",
        updated_at="2026-01-05T09:00:00Z",
    )
    listed = Counter(weighted_tokens(event_document(card)))
    assert list(event_counts(card).items()) == list(listed.items())


def _changed_cards(search_after_each: bool) -> tuple[list[tuple[str, float]], str]:
    """The same cards added, forgotten, restored and archived, with or without an event search
    (which reads the postings) after every change: the hits of a last search, and the search
    model's digest."""
    counters: dict[str, Iterator[int]] = {}

    def ids(prefix: str) -> str:
        return f"{prefix}_{next(counters.setdefault(prefix, itertools.count(1))):04d}"

    memory = StrataGate.in_memory(block_turn_size=1, id_factory=ids)
    query = "painted the sunset at the lake"

    def changed() -> None:
        if search_after_each:
            memory.search_events(query)

    try:
        memory.append_turn("hello", "hi")
        sunset = _event(
            memory, "Painted a sunset over the lake", ["Melanie"], happened_start="2023-05"
        )
        changed()
        portrait = _event(memory, "Painted a portrait", ["Caroline"])
        changed()
        memory.forget_event(sunset)
        changed()
        lake = _event(memory, "Swam in the lake at sunset", ["Melanie"], happened_start="2023-06")
        changed()
        memory.restore_event(sunset)
        changed()
        memory.archive_event(portrait)
        changed()
        memory.forget_event(lake)
        changed()
        _event(memory, "Painted the lake again", ["Caroline"])
        hits = memory.search_events(query, limit=10)
        search = memory._runtime.live.state.search
        return [(hit.id, hit.score) for hit in hits], search.digest()
    finally:
        memory.close()


def test_cards_changed_before_the_first_search_index_as_if_searched_after_each_change() -> None:
    """Cards are tokenised when the event postings are first read: cards added, forgotten,
    restored and archived before then rank and snapshot as in an index read after every
    change."""
    hits, digest = _changed_cards(search_after_each=False)
    assert (hits, digest) == _changed_cards(search_after_each=True)
    assert [hit_id for hit_id, _ in hits][:2] == ["evt_0001", "evt_0004"]


def _said(memory: StrataGate, speaker: str, text: str, thread: str) -> None:
    memory.append_turn(
        {"content": text, "name": speaker}, {"content": "ok", "name": "Ana"}, thread_id=thread
    )


def test_a_message_that_mostly_asks_yields_to_one_that_tells(memory: StrataGate) -> None:
    _said(memory, "Jon", "Is pottery hard? Do you keep your pottery?", "a")
    _said(memory, "Jon", "I signed up for a pottery class on Fridays with my sister", "b")
    contents = [hit.message.content for hit in memory.search_raw_memory("pottery", limit=4)]
    telling = contents.index("I signed up for a pottery class on Fridays with my sister")
    assert telling < contents.index("Is pottery hard? Do you keep your pottery?")


def test_a_named_speakers_report_outranks_their_talk_about_the_topic(memory: StrataGate) -> None:
    _said(memory, "Melanie", "Painting is lovely, it always calms me down", "a")
    _said(memory, "Melanie", "Last week I painted a horse on the barn wall", "b")
    hits = memory.search_raw_memory("What has Melanie painted?", limit=2)
    assert hits[0].message.content.startswith("Last week I painted a horse")


def test_a_hypothetical_question_reaches_the_speakers_self_description(
    memory: StrataGate,
) -> None:
    _said(memory, "Caroline", "The concert downtown sold out", "a")
    _said(memory, "Caroline", "I love classical music, it calms me", "b")
    hits = memory.search_raw_memory("Would Caroline enjoy a classical concert?", limit=2)
    assert hits[0].message.content == "I love classical music, it calms me"


def test_a_named_speakers_words_about_the_listener_yield_to_their_own(memory: StrataGate) -> None:
    _said(memory, "Joanna", "Your recipe looks great, you should share your recipe", "a")
    _said(memory, "Joanna", "The lasagna recipe came out well for the family", "b")
    hits = memory.search_raw_memory("What recipes has Joanna made?", limit=2)
    assert hits[0].message.content == "The lasagna recipe came out well for the family"


def test_a_turn_naming_the_thing_outranks_talk_about_the_topic(memory: StrataGate) -> None:
    _said(memory, "Ana", "Jon, any news on the books?", "q")
    _said(memory, "Jon", "Books are relaxing, I love my books", "a")
    _said(memory, "Jon", "Those books by Tolkien and Le Guin, wow", "b")
    contents = [
        m.message.content for m in memory.search_raw_memory("What books has Jon read?", limit=4)
    ]
    naming = contents.index("Those books by Tolkien and Le Guin, wow")
    assert naming < contents.index("Books are relaxing, I love my books")


@pytest.mark.parametrize("block_turns", [1, 50], ids=["across-blocks", "open-tail"])
def test_a_hypothetical_question_reaches_the_speakers_next_turn(block_turns: int) -> None:
    counter = itertools.count(1)
    memory = StrataGate.in_memory(
        block_turn_size=block_turns, id_factory=lambda prefix: f"{prefix}_{next(counter):04d}"
    )
    try:
        _said(memory, "Caroline", "The bus was late again this morning", "b")
        _said(memory, "Caroline", "The lake was calm and sunny today", "c")
        _said(memory, "Caroline", "Gonna finish my studies and look at career options!", "a")
        _said(memory, "Caroline", "I'm keen on counseling, helping people heal", "a")
        hits = memory.search_raw_memory("What career would Caroline likely pursue?", limit=2)
        assert [hit.message.content for hit in hits] == [
            "Gonna finish my studies and look at career options!",
            "I'm keen on counseling, helping people heal",
        ]
    finally:
        memory.close()


def test_a_turn_without_messages_leaves_raw_search_working() -> None:
    """A stored turn may hold no messages (the event's schema allows it, an imported log can
    carry one): the raw index skips it instead of failing on the first raw search."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    said = MessageData(id="m1", role="user", content="hello there", created_at=at, thread_id=None)
    state = NamespaceState("empty-turn")
    turns = [
        TurnAppended(at=at, turn=1, thread_id=None, thread_turn=1, messages=[]),
        TurnAppended(at=at, turn=2, thread_id=None, thread_turn=2, messages=[said]),
    ]
    fold_events(state, turns, last_position=2)
    hits = MemoryView(state).search_raw_memory("hello", limit=6)
    assert [hit.message.id for hit in hits] == ["m1"]
