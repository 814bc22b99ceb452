"""The OpenAI-compatible model adapter against a real local HTTP server with scripted replies."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stratagate.adapters import (
    ModelAssessor,
    ModelConfig,
    ModelElementProjector,
    ModelExtractor,
    ModelHTTPError,
    ModelSummarizer,
)
from stratagate.adapters.prompts import EXTRACTION_PROMPT, SUMMARY_PROMPT
from stratagate.errors import (
    InvalidInputError,
    ModelError,
    ModelResponseError,
    ModelTimeoutError,
)
from stratagate.models import (
    BlockSummary,
    ElementCard,
    ElementProjectionContext,
    EventCard,
    EventTemporal,
    ExtractionContext,
    MemoryBlock,
    RawMessage,
    TimelineEntry,
    ToolTrace,
)
from tests.support.chat_server import ChatServer, Reply, completion, error, json_reply

try:
    import cloudpickle
except ImportError:  # ray ships its own copy
    from ray import cloudpickle

T0 = datetime(2023, 6, 9, 13, 56, tzinfo=UTC)

SUMMARY = {
    "l0_title": "Caroline's school speech",
    "l0_tags": ["speech", "school"],
    "l1_summary": "Caroline talks about the speech she gave at a school.",
    "l2_keypoints": ["Caroline gave a speech at a school last week (said on 2023-06-09)."],
    "should_extract": True,
}
EXTRACTION = {
    "should_extract": True,
    "reason": "Caroline reports a past speech.",
    "events": [
        {
            "id": "evt_invented",
            "title": "Caroline gave a school speech",
            "summary": "Caroline gave a speech at a school the week before 2023-06-09.",
            "quotes": ["I gave a speech at a school last week"],
            "source_block_id": "blk_next",
            "source_message_ids": ["m3"],
            "temporal": {
                "mentioned_at": "2023-06-09T13:58:00Z",
                "happened_start": "2023-05-29",
                "happened_end": "2023-06-04",
                "original_text": "last week",
                "precision": "range",
                "basis": "relative",
                "status": "occurred",
            },
        },
        {"title": "Melanie plans a trip", "summary": "Melanie plans a trip.", "tags": ["plan"]},
    ],
}
PROJECTION = {
    "reason": "Caroline's job is stated.",
    "changes": [
        {
            "element": {"name": "Caroline", "type": "person", "aliases": []},
            "operation": "set_state",
            "key": "job",
            "value": "counsellor",
            "source_event_ids": ["evt_1"],
        }
    ],
}
ASSESSMENT = {
    "verdict": "partial",
    "evidence_refs": ["evt_1"],
    "fit": "The event names the speech but not its date.",
    "missing": "the occurrence date",
    "next_strategy": "search_raw_memory",
}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


def make_config(server: ChatServer, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "base_url": server.url,
        "model": "test-model",
        "timeout": 2.0,
        "max_retries": 2,
        "backoff_base": 0.01,
        "backoff_cap": 0.02,
    }
    return ModelConfig(**(values | overrides))


def message(msg_id: str, role: str, content: str, minute: int, **extra: Any) -> RawMessage:
    return RawMessage(
        id=msg_id,
        role=role,
        content=content,
        created_at=T0 + timedelta(minutes=minute),
        **extra,
    )


def block(
    block_id: str, position: int, messages: list[RawMessage], keypoints: list[str]
) -> MemoryBlock:
    return MemoryBlock(
        id=block_id,
        thread_id=None,
        sequence=position,
        position=position,
        start_turn=position,
        end_turn=position,
        created_at=messages[-1].created_at,
        should_extract=True,
        l0_title=f"block {position}",
        l0_tags=[],
        l1_summary="",
        l2_keypoints=keypoints,
        l3_condensed="",
        l4_readable="",
        l5_raw=messages,
        pointer_current_level=5,
        pointer_anchor_level=5,
        pointer_anchor_position=position,
    )


def extraction_context(*, with_previous: bool = True) -> ExtractionContext:
    previous = block(
        "blk_prev",
        1,
        [message("m1", "user", "PREVIOUS-SECRET adoption agency visit", 0)],
        ["Caroline visited an adoption agency."],
    )
    target = block(
        "blk_target",
        2,
        [
            message("m3", "user", "I gave a speech at a school last week", 2, name="Caroline"),
            message(
                "m4",
                "assistant",
                "That sounds great!",
                3,
                tool_calls=[ToolTrace(name="calendar", arguments={"q": "x"}, result="ok")],
            ),
        ],
        ["Caroline gave a school speech."],
    )
    following = block(
        "blk_next",
        3,
        [message("m5", "user", "NEXT-SECRET Melanie went camping", 5)],
        ["Melanie went camping."],
    )
    return ExtractionContext(
        previous=previous if with_previous else None,
        target=target,
        next=following,
        timeline=[
            TimelineEntry(
                id="evt_old",
                title="Caroline joined a support group",
                temporal=EventTemporal(happened_start="2023-05", precision="month"),
            )
        ],
    )


def user_payload(received_body: dict[str, Any]) -> dict[str, Any]:
    return json.loads(received_body["messages"][1]["content"])


def test_summarizer_posts_the_messages_and_returns_the_summary(server: ChatServer) -> None:
    server.script(json_reply(SUMMARY))
    messages = extraction_context().target.l5_raw

    summary = ModelSummarizer(make_config(server))(messages)

    assert summary == BlockSummary(**SUMMARY)
    [request] = server.received
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "test-model"
    assert request.body["temperature"] == 0
    assert "response_format" not in request.body
    assert "authorization" not in request.headers
    assert request.body["messages"][0] == {"role": "system", "content": SUMMARY_PROMPT}
    sent = user_payload(request.body)["messages"]
    assert [m["id"] for m in sent] == ["m3", "m4"]
    assert sent[0]["created_at"] == "2023-06-09T13:58:00.000000Z"


def test_extractor_sends_a_target_first_payload_and_anchors_cards(server: ChatServer) -> None:
    server.script(json_reply(EXTRACTION))
    config = make_config(
        server, api_key="sk-test", json_mode=True, extra_headers={"X-Trace": "t-1"}
    )

    result = ModelExtractor(config)(extraction_context())

    assert [card.title for card in result.events] == [
        "Caroline gave a school speech",
        "Melanie plans a trip",
    ]
    assert {card.source_block_id for card in result.events} == {"blk_target"}
    assert [card.id for card in result.events] == [None, None]
    assert result.events[0].temporal is not None
    assert result.events[0].temporal.happened_start == "2023-05-29"

    [request] = server.received
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-trace"] == "t-1"
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["messages"][0]["content"] == EXTRACTION_PROMPT
    payload = user_payload(request.body)
    assert list(payload) == [
        "target_block",
        "legal_message_ids",
        "previous_block_keypoints",
        "next_block_keypoints",
        "timeline",
    ]
    assert payload["target_block"]["id"] == "blk_target"
    assert payload["target_block"]["messages"] == [
        {
            "id": "m3",
            "role": "user",
            "name": "Caroline",
            "created_at": "2023-06-09T13:58:00.000000Z",
            "content": "I gave a speech at a school last week",
        },
        {
            "id": "m4",
            "role": "assistant",
            "created_at": "2023-06-09T13:59:00.000000Z",
            "content": "That sounds great!",
            "tool_names": ["calendar"],
        },
    ]
    assert payload["legal_message_ids"] == ["m3", "m4"]
    assert payload["previous_block_keypoints"] == ["Caroline visited an adoption agency."]
    assert payload["next_block_keypoints"] == ["Melanie went camping."]
    assert payload["timeline"] == [
        {
            "id": "evt_old",
            "title": "Caroline joined a support group",
            "temporal": {"happened_start": "2023-05", "precision": "month"},
        }
    ]
    raw_request = json.dumps(request.body)
    for neighbour_only in ("PREVIOUS-SECRET", "NEXT-SECRET", "blk_prev", "blk_next", "m1", "m5"):
        assert neighbour_only not in raw_request


def test_extractor_without_a_previous_block_sends_null(server: ChatServer) -> None:
    server.script(json_reply({"should_extract": False, "reason": "small talk", "events": []}))

    result = ModelExtractor(make_config(server))(extraction_context(with_previous=False))

    assert result.should_extract is False
    assert user_payload(server.received[0].body)["previous_block_keypoints"] is None


def test_projector_sends_events_and_elements(server: ChatServer) -> None:
    server.script(json_reply(PROJECTION))
    event = EventCard(
        id="evt_1",
        title="Caroline works as a counsellor",
        summary="Caroline said she works as a counsellor.",
        narrative="long narrative not sent",
        source_block_id="blk_target",
        source_message_ids=["m3"],
        temporal=EventTemporal(mentioned_at="2023-06-09", status="ongoing"),
        created_at=T0,
        updated_at=T0,
    )
    element = ElementCard(
        id="elem_1",
        name="Caroline",
        type="person",
        aliases=["Caro"],
        current_state={"hobbies": ["painting"]},
        created_at=T0,
        updated_at=T0,
    )
    ctx = ElementProjectionContext(job_id="proj_1", events=[event], existing_elements=[element])

    result = ModelElementProjector(make_config(server))(ctx)

    [change] = result.changes
    assert (change.element.name, change.key, change.value) == ("Caroline", "job", "counsellor")
    assert change.effective_mode == "state"
    payload = user_payload(server.received[0].body)
    assert payload == {
        "events": [
            {
                "id": "evt_1",
                "title": "Caroline works as a counsellor",
                "summary": "Caroline said she works as a counsellor.",
                "temporal": {"mentioned_at": "2023-06-09", "status": "ongoing"},
            }
        ],
        "existing_elements": [
            {
                "id": "elem_1",
                "name": "Caroline",
                "type": "person",
                "aliases": ["Caro"],
                "current_state": {"hobbies": ["painting"]},
            }
        ],
    }


def test_assessor_returns_the_raw_five_fields(server: ChatServer) -> None:
    server.script(json_reply(ASSESSMENT))
    hits = [{"ref": "evt_1", "title": "School speech", "mentioned_at": T0}]

    raw = ModelAssessor(make_config(server))("When did Caroline give the speech?", hits)

    assert raw == ASSESSMENT
    payload = user_payload(server.received[0].body)
    assert payload["question"] == "When did Caroline give the speech?"
    assert payload["hits"] == [
        {"ref": "evt_1", "title": "School speech", "mentioned_at": "2023-06-09T13:56:00.000000Z"}
    ]


def test_malformed_json_gets_one_corrective_retry(server: ChatServer) -> None:
    bad = 'Sure! {"verdict": "partial", oops'
    server.script(completion(bad), json_reply(ASSESSMENT))

    raw = ModelAssessor(make_config(server))("q", [{"id": "evt_1"}])

    assert raw == ASSESSMENT
    first, second = server.received
    assert second.body["messages"][:2] == first.body["messages"]
    assert second.body["messages"][2] == {"role": "assistant", "content": bad}
    correction = second.body["messages"][3]
    assert correction["role"] == "user"
    assert "no JSON object" in correction["content"]


def test_schema_mismatch_feeds_the_validation_error_back(server: ChatServer) -> None:
    incomplete = {k: v for k, v in SUMMARY.items() if k != "l1_summary"}
    server.script(json_reply(incomplete), json_reply(SUMMARY))

    summary = ModelSummarizer(make_config(server))(extraction_context().target.l5_raw)

    assert summary.l1_summary == SUMMARY["l1_summary"]
    assert "l1_summary" in server.received[1].body["messages"][-1]["content"]


def test_always_malformed_raises_model_response_error(server: ChatServer) -> None:
    server.script(fallback=completion("I cannot answer in JSON today."))

    with pytest.raises(ModelResponseError, match="no JSON object") as caught:
        ModelSummarizer(make_config(server))(extraction_context().target.l5_raw)

    assert isinstance(caught.value.__cause__, ValueError)
    assert len(server.received) == 2  # the answer plus one correction, no more


def test_assessment_with_an_extra_key_is_rejected(server: ChatServer) -> None:
    server.script(fallback=json_reply(ASSESSMENT | {"scratchpad": "long private notes"}))

    with pytest.raises(ModelResponseError, match="scratchpad"):
        ModelAssessor(make_config(server))("q", [{"id": "evt_1"}])


def test_think_prefix_is_skipped(server: ChatServer) -> None:
    decoy = {
        "verdict": "wrong",
        "evidence_refs": [],
        "fit": "",
        "missing": "",
        "next_strategy": "x",
    }
    reply = f"<think>Maybe {json.dumps(decoy)}? No.</think>\n\n{json.dumps(ASSESSMENT)}"
    server.script(completion(reply))

    assert ModelAssessor(make_config(server))("q", [{"id": "evt_1"}]) == ASSESSMENT
    assert len(server.received) == 1


def test_fenced_json_wins_over_prose(server: ChatServer) -> None:
    reply = f'Shape: {{"l0_title": "x"}}\n```json\n{json.dumps(SUMMARY, indent=2)}\n```\nDone.'
    server.script(completion(reply))

    summary = ModelSummarizer(make_config(server))(extraction_context().target.l5_raw)

    assert summary == BlockSummary(**SUMMARY)
    assert len(server.received) == 1


def test_a_slow_endpoint_raises_model_timeout_error(server: ChatServer) -> None:
    server.script(fallback=Reply(body=b"{}", delay=5.0))
    config = make_config(server, timeout=0.2, max_retries=1)

    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match="2 attempt") as caught:
        ModelSummarizer(config)(extraction_context().target.l5_raw)

    assert time.monotonic() - started < 2.0
    assert len(server.received) == 2
    assert caught.value.__cause__ is not None


def test_a_timeout_is_retried(server: ChatServer) -> None:
    server.script(Reply(body=b"{}", delay=5.0), json_reply(SUMMARY))

    summary = ModelSummarizer(make_config(server, timeout=0.2))(extraction_context().target.l5_raw)

    assert summary.l0_title == SUMMARY["l0_title"]
    assert len(server.received) == 2


def test_429_honours_retry_after_capped(server: ChatServer) -> None:
    server.script(error(429, "slow down", {"Retry-After": "5"}), json_reply(ASSESSMENT))
    config = make_config(server, retry_after_cap=0.3)

    started = time.monotonic()
    raw = ModelAssessor(config)("q", [{"id": "evt_1"}])
    elapsed = time.monotonic() - started

    assert raw == ASSESSMENT
    assert len(server.received) == 2
    assert 0.3 <= elapsed < 2.0


def test_5xx_is_retried_until_success(server: ChatServer) -> None:
    server.script(error(500), error(503), json_reply(ASSESSMENT))

    assert ModelAssessor(make_config(server, max_retries=2))("q", [{"id": "e"}]) == ASSESSMENT
    assert len(server.received) == 3


def test_5xx_always_raises_after_max_retries(server: ChatServer) -> None:
    server.script(fallback=error(500, "model overloaded"))

    with pytest.raises(ModelHTTPError, match="3 attempt") as caught:
        ModelAssessor(make_config(server, max_retries=2))("q", [{"id": "e"}])

    assert (caught.value.status, caught.value.attempts) == (500, 3)
    assert "model overloaded" in str(caught.value)
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert len(server.received) == 3


def test_4xx_is_not_retried(server: ChatServer) -> None:
    server.script(error(400, "unknown model 'nope'"), json_reply(ASSESSMENT))

    with pytest.raises(ModelHTTPError, match="unknown model") as caught:
        ModelAssessor(make_config(server, max_retries=3))("q", [{"id": "e"}])

    assert (caught.value.status, caught.value.attempts) == (400, 1)
    assert len(server.received) == 1


def test_a_reply_without_choices_raises_model_response_error(server: ChatServer) -> None:
    server.script(Reply(body=b'{"object": "list", "data": []}'))

    with pytest.raises(ModelResponseError, match="not a chat-completion response"):
        ModelAssessor(make_config(server))("q", [{"id": "e"}])

    assert len(server.received) == 1


def test_connection_refused_raises_model_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ModelConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_base=0.01
    )

    with pytest.raises(ModelError, match=r"cannot connect.*2 attempt") as caught:
        ModelSummarizer(config)(extraction_context().target.l5_raw)

    assert not isinstance(caught.value, ModelTimeoutError | ModelHTTPError)
    assert isinstance(caught.value.__cause__, urllib.error.URLError)


def test_config_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "STRATAGATE_MODEL_BASE_URL",
        "STRATAGATE_MODEL",
        "STRATAGATE_MODEL_API_KEY",
        "STRATAGATE_MODEL_TIMEOUT",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)

    with pytest.raises(InvalidInputError, match="STRATAGATE_MODEL_BASE_URL"):
        ModelConfig.from_env()
    with pytest.raises(InvalidInputError, match="STRATAGATE_MODEL_BASE_URL"):
        ModelExtractor()

    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.com/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    with pytest.raises(InvalidInputError, match="STRATAGATE_MODEL"):
        ModelConfig.from_env()

    monkeypatch.setenv("STRATAGATE_MODEL", "deepseek-chat")
    fallback = ModelConfig.from_env()
    assert (fallback.base_url, fallback.model, fallback.api_key) == (
        "https://api.example.com/v1",
        "deepseek-chat",
        "sk-openai",
    )

    monkeypatch.setenv("STRATAGATE_MODEL_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("STRATAGATE_MODEL_API_KEY", "sk-own")
    monkeypatch.setenv("STRATAGATE_MODEL_TIMEOUT", "45")
    own = ModelConfig.from_env(max_retries=0)
    assert (own.base_url, own.api_key, own.timeout, own.max_retries) == (
        "http://localhost:11434/v1",
        "sk-own",
        45.0,
        0,
    )
    assert ModelConfig.from_env(model="qwen2.5:7b").model == "qwen2.5:7b"
    assert ModelSummarizer().config.base_url == "http://localhost:11434/v1"

    monkeypatch.setenv("STRATAGATE_MODEL_TIMEOUT", "soon")
    with pytest.raises(InvalidInputError, match="timeout"):
        ModelConfig.from_env()


def test_callbacks_work_after_cloudpickle(server: ChatServer) -> None:
    config = make_config(server, api_key="sk-secret")
    callbacks = [
        ModelSummarizer(config),
        ModelExtractor(config),
        ModelElementProjector(config),
        ModelAssessor(config),
    ]
    assert all("sk-secret" not in repr(item) for item in [config, *callbacks])
    summarizer, extractor, projector, assessor = cloudpickle.loads(cloudpickle.dumps(callbacks))
    server.script(
        json_reply(SUMMARY),
        json_reply(EXTRACTION),
        json_reply(PROJECTION),
        json_reply(ASSESSMENT),
    )
    ctx = extraction_context()
    event = EventCard(
        id="evt_1",
        title="t",
        summary="s",
        source_block_id="blk_target",
        created_at=T0,
        updated_at=T0,
    )

    assert summarizer(ctx.target.l5_raw).l0_title == SUMMARY["l0_title"]
    assert len(extractor(ctx).events) == 2
    assert len(projector(ElementProjectionContext(job_id="p", events=[event])).changes) == 1
    assert assessor("q", [{"id": "evt_1"}]) == ASSESSMENT
    assert {r.headers["authorization"] for r in server.received} == {"Bearer sk-secret"}
