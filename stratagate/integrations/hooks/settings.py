"""Installing the hook into the host's settings JSON, merged with what is there.

Claude Code reads hooks from ``~/.claude/settings.json`` (the user's) and
``<project>/.claude/settings.json`` (a project's) in the shape
``{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command", "command": …,
"timeout": …}]}]}}``. The merge adds one entry per event this package handles, or updates the
one it added before (recognised by its command), and leaves every other key, event, matcher
group and hook as it was, so running it twice changes nothing the second time.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stratagate.errors import InvalidInputError

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
HOOK_TIMEOUT = 10
"""Seconds the host lets the command run before it stops it (the command's own ``--budget``
ends its wait well before)."""
COMMAND_MARK = "hook claude-code"


def is_ours(hook: object) -> bool:
    """Whether a hook entry runs this package's hook command."""
    if not isinstance(hook, Mapping) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    return isinstance(command, str) and "stratagate" in command and COMMAND_MARK in command


def hook_entry(command: str, timeout: int = HOOK_TIMEOUT) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


def snippet(command: str, timeout: int = HOOK_TIMEOUT) -> dict[str, Any]:
    """The settings this package would add to an empty file."""
    return {"hooks": {event: [{"hooks": [hook_entry(command, timeout)]}] for event in HOOK_EVENTS}}


def merge(settings: Mapping[str, Any], command: str, timeout: int = HOOK_TIMEOUT) -> dict[str, Any]:
    """``settings`` with this package's hook on every event it handles: an entry it added
    before is updated in place (a second one of ours is dropped), every other one is kept."""
    merged = copy.deepcopy(dict(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInputError('the settings\' "hooks" is not a JSON object: not changed')
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInputError(f'the settings\' hooks "{event}" is not a list: not changed')
        found = False
        emptied = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                continue
            kept = []
            for entry in entries:
                if not is_ours(entry):
                    kept.append(entry)
                elif not found:
                    kept.append({**entry, **hook_entry(command, timeout)})
                    found = True
            if entries and not kept:  # it held only a second entry of ours
                emptied.append(group)
            group["hooks"] = kept
        hooks[event] = [g for g in groups if not any(g is e for e in emptied)]
        if not found:
            hooks[event].append({"hooks": [hook_entry(command, timeout)]})
    return merged


def settings_file(*, project: Path | None, user: bool, home: Path) -> Path:
    """The settings file to write: the user's, or the project's (default: this directory)."""
    if user:
        return home / ".claude" / "settings.json"
    return (project or Path.cwd()) / ".claude" / "settings.json"


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` (empty when there is no file); anything but a JSON object is an
    error, so that nothing is overwritten that could not be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"{path} is not JSON ({exc}): not changed") from exc
    if not isinstance(value, dict):
        raise InvalidInputError(f"{path} does not hold a JSON object: not changed")
    return value


def install(path: Path, command: str, timeout: int = HOOK_TIMEOUT) -> bool:
    """Merge the hook into the settings file (created if missing); whether it changed."""
    current = read_settings(path)
    merged = merge(current, command, timeout)
    if merged == current and path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", "utf-8")
    if path.exists():
        os.chmod(temporary, path.stat().st_mode & 0o7777)
    os.replace(temporary, path)
    return True


__all__ = [
    "COMMAND_MARK",
    "HOOK_EVENTS",
    "HOOK_TIMEOUT",
    "hook_entry",
    "install",
    "is_ours",
    "merge",
    "read_settings",
    "settings_file",
    "snippet",
]
