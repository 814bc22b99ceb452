"""Model providers by name: ``summarizer="openai"`` (and ``"offline"``, ``None``) work in the
library itself, against a real HTTP endpoint; a name that cannot be built fails the open."""

from __future__ import annotations

import json

import pytest

from stratagate import InvalidInputError, StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.providers import KINDS, PROVIDERS
from tests.support.chat_server import ChatServer, json_reply

SUMMARY = {
    "l0_title": "Switch to pnpm",
    "l0_tags": ["tooling"],
    "l1_summary": "The team moves the monorepo to pnpm.",
    "l2_keypoints": ["pnpm replaces npm"],
    "should_extract": False,
}


def test_openai_by_name_summarizes_through_the_configured_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with ChatServer(json_reply(SUMMARY)) as server:
        monkeypatch.setenv("STRATAGATE_MODEL_BASE_URL", server.url)
        monkeypatch.setenv("STRATAGATE_MODEL", "test-model")
        with StrataGate.in_memory(block_turn_size=1, summarizer="openai") as memory:
            result = memory.append_turn("Let's use pnpm.", "Noted.")
            history = memory.history(type="BlockSealed")
        assert result.sealed_block is not None
        assert result.sealed_block.l0_title == "Switch to pnpm"
        assert history[0].data["summarizer"] == "stratagate.adapters.openai_models.ModelSummarizer"
        [request] = server.received
        assert request.body["model"] == "test-model"
        assert "Let's use pnpm." in json.dumps(request.body)


def test_a_provider_that_cannot_be_configured_fails_the_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("STRATAGATE_MODEL_BASE_URL", "OPENAI_BASE_URL", "STRATAGATE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(InvalidInputError, match="STRATAGATE_MODEL_BASE_URL"):
        StrataGate.in_memory(extractor="openai")


def test_an_unknown_provider_name_lists_the_known_ones() -> None:
    with pytest.raises(InvalidInputError, match=r"'offline', 'openai' or None, got 'gpt'"):
        StrataGate.in_memory(summarizer="gpt")


def test_offline_by_name_and_the_cli_passes_names_only() -> None:
    with StrataGate.in_memory(block_turn_size=1, summarizer="offline") as memory:
        sealed = memory.append_turn("We ship on Friday.", "Friday it is.").sealed_block
    assert sealed is not None and sealed.l0_title
    assert model_options("openai") == dict.fromkeys(KINDS, "openai")
    assert model_options("none") == {}
    assert set(PROVIDERS) == {"offline", "openai"}
