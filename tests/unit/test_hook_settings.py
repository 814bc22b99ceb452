"""Installing the hook into the host's settings: merged with what is there, idempotent, never
clobbering another hook or setting, and refusing a file it cannot read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import InvalidInputError
from stratagate.integrations.hooks.settings import (
    HOOK_EVENTS,
    install,
    is_ours,
    merge,
    snippet,
)

COMMAND = "/venv/bin/python -m stratagate hook claude-code"
OTHER = {"type": "command", "command": "notify-send done", "timeout": 5}


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in settings["hooks"][event] for h in g.get("hooks", []) if is_ours(h)]


def test_an_empty_file_gets_one_entry_per_event() -> None:
    merged = merge({}, COMMAND)
    assert merged == snippet(COMMAND)
    assert set(merged["hooks"]) == set(HOOK_EVENTS)
    assert merged["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": COMMAND, "timeout": 10}]}
    ]


def test_other_hooks_and_settings_are_kept_and_ours_updated_in_place() -> None:
    before = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [OTHER, {"type": "command", "command": "stratagate hook claude-code --old"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER]}],
            "SessionStart": [{"matcher": "startup", "hooks": [OTHER]}],
        },
    }  # fmt: skip
    merged = merge(before, COMMAND)
    assert merged["model"] == "opus"
    assert merged["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"] == [
        {"hooks": [OTHER, {"type": "command", "command": COMMAND, "timeout": 10}]}
    ]
    assert merged["hooks"]["SessionStart"][0] == {"matcher": "startup", "hooks": [OTHER]}
    assert len(ours(merged, "SessionStart")) == 1
    assert before["hooks"]["Stop"][0]["hooks"][1]["command"].endswith("--old")  # not mutated


def test_a_second_entry_of_ours_is_dropped_but_an_empty_group_of_the_user_kept() -> None:
    mine = {"type": "command", "command": COMMAND}
    before = {"hooks": {"Stop": [{"hooks": []}, {"hooks": [mine]}, {"hooks": [mine]}]}}
    merged = merge(before, COMMAND)
    assert merged["hooks"]["Stop"] == [
        {"hooks": []},
        {"hooks": [{"type": "command", "command": COMMAND, "timeout": 10}]},
    ]


hook = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.sampled_from(["a", "b --x", COMMAND + " --redact"])}
)
group = st.fixed_dictionaries(
    {"hooks": st.lists(hook, max_size=3)}, optional={"matcher": st.sampled_from(["", "Bash"])}
)
settings = st.fixed_dictionaries(
    {"hooks": st.dictionaries(st.sampled_from([*HOOK_EVENTS, "PreToolUse"]), st.lists(group, max_size=3))},
    optional={"theme": st.text(max_size=5)},
)  # fmt: skip


@given(settings)
def test_merging_twice_changes_nothing_and_keeps_every_other_hook(before: dict[str, Any]) -> None:
    once = merge(before, COMMAND)
    assert merge(once, COMMAND) == once
    for event in HOOK_EVENTS:
        assert [h["command"] for h in ours(once, event)] == [COMMAND]
    for event, groups in before["hooks"].items():
        others = [h for g in groups for h in g["hooks"] if not is_ours(h)]
        assert [h for g in once["hooks"][event] for h in g["hooks"] if not is_ours(h)] == others
    assert once.get("theme") == before.get("theme")


def test_install_writes_merges_and_leaves_an_unreadable_file_alone(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert install(path, COMMAND) is True
    assert json.loads(path.read_text()) == snippet(COMMAND)
    assert install(path, COMMAND) is False
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [OTHER]}]}}))
    path.chmod(0o640)
    assert install(path, COMMAND) is True
    written = json.loads(path.read_text())
    assert written["hooks"]["Stop"][0]["hooks"][0] == OTHER and path.stat().st_mode & 0o777 == 0o640
    path.write_text("{broken")
    with pytest.raises(InvalidInputError, match="not JSON"):
        install(path, COMMAND)
    assert path.read_text() == "{broken"
    path.write_text('{"hooks": []}')
    with pytest.raises(InvalidInputError, match="not a JSON object"):
        install(path, COMMAND)
