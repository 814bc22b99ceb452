"""Every command and code example in README.md and docs/ is exercised here.

Python blocks of a page run in order, as one script, in a fresh process and a temporary
directory (so the examples cannot lean on test fixtures). Shell lines are classified: the README
set-up commands must be what CI runs; `stratagate …` commands run against files prepared in the
temporary directory; `scripts/…` commands must exist and parse their options (their smoke tests
run them with small sizes); anything else must be a listed external tool.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stratagate.formats.locomo import default_data_dir
from tests.support.chat_server import ChatServer, json_reply

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"```([\w-]*)\n(.*?)```", re.S)
SHELL = ("bash", "sh", "shell")
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")
EXTERNAL = {
    "ollama": "the model server the adapter section configures",
    "sqlite3": "SQLite's own shell, for backups",
    "pg_dump": "PostgreSQL's backup tool",
    "ray": "Ray's cluster launcher",
}
ASSESSMENT = {
    "verdict": "partial",
    "evidence_refs": [],
    "fit": "f",
    "missing": "m",
    "next_strategy": "search_raw_memory",
}


def blocks(page: Path, language: str) -> list[str]:
    return [
        body for lang, body in FENCE.findall(page.read_text(encoding="utf-8")) if lang == language
    ]


def shell_lines(page: Path) -> list[str]:
    lines: list[str] = []
    for body in (b for language in SHELL for b in blocks(page, language)):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def env_for(page: Path, base_url: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for line in shell_lines(page):
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            env[name] = value
    if "STRATAGATE_MODEL_BASE_URL" in env:
        env["STRATAGATE_MODEL_BASE_URL"] = (
            base_url  # the documented Ollama, played by a local server
        )
    return env


def prepare(cwd: Path) -> None:
    """Files the documented commands refer to."""
    sample = ROOT / "stratagate" / "sample" / "project_conversation.jsonl"
    shutil.copy(sample, cwd / "conversation.jsonl")
    shutil.copy(default_data_dir() / "conv-26.json", cwd / "conv-26.json")


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=lambda p: p.name)
def test_python_examples_run(page: Path, tmp_path: Path) -> None:
    script = "\n\n".join(blocks(page, "python"))
    (tmp_path / "example.py").write_text(script, encoding="utf-8")
    prepare(tmp_path)
    with ChatServer(fallback=json_reply(ASSESSMENT)) as server:
        result = subprocess.run(
            [sys.executable, "example.py"],
            cwd=tmp_path,
            env=env_for(page, server.url),
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert result.returncode == 0, (
        f"{page.name} examples failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )


def test_readme_commands_are_the_ci_and_demo_commands() -> None:
    lines = shell_lines(ROOT / "README.md")
    test_command = next(line for line in lines if line.endswith("python -m pytest"))
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    demo_command = next(line for line in lines if "stratagate demo" in line)
    setup = test_command.rsplit("&&", 1)[0]
    assert demo_command.startswith(setup), "both commands set up the same environment"


def command_words(line: str) -> list[str]:
    """The command's words without leading ``VAR=value`` assignments."""
    words = shlex.split(line)
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def classify(line: str) -> str:
    words = command_words(line)
    if not words:
        return "unknown"
    program = Path(words[0]).name
    if program == "export" or line.startswith("python3 -m venv"):
        return "setup"
    if program == "stratagate" or re.fullmatch(r"\w+=\$\(stratagate", words[0]):
        return "cli"
    if program in ("python", "python3") and len(words) > 1 and words[1].startswith("scripts/"):
        return "script"
    if program in EXTERNAL:
        return "external"
    return "unknown"


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if shell_lines(p)], ids=lambda p: p.name)
def test_shell_commands_are_known_and_run(page: Path, tmp_path: Path) -> None:
    """``stratagate`` lines run, in order, in a real shell whose ``stratagate`` is this checkout."""
    prepare(tmp_path)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "stratagate").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m stratagate "$@"\n')
    (shim / "stratagate").chmod(0o755)
    (shim / "python").symlink_to(sys.executable)
    env = env_for(page, "http://127.0.0.1:9/v1")
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    script_lines = ["set -euo pipefail"]
    for line in shell_lines(page):
        kind = classify(line)
        assert kind != "unknown", f"{page.name}: a command no test exercises: {line}"
        words = command_words(line)
        if kind == "cli":
            if words[1:2] in (["serve"], ["ui"]):  # serve until stopped (their own e2e tests):
                script_lines.append(f"{line} --help >/dev/null")  # its options must parse
            elif "demo" not in words[1:2]:  # the demo runs twice in tests/e2e/test_cli.py
                script_lines.append(line)
        elif kind == "script":
            script = ROOT / words[1]
            assert script.exists(), f"{page.name}: missing {words[1]}"
            result = subprocess.run(
                [sys.executable, str(script), "--help"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert result.returncode == 0, (
                f"{page.name}: {words[1]} --help\n{result.stderr[-2000:]}"
            )
            options = {w.split("=", 1)[0] for w in words[2:] if w.startswith("--")}
            missing = {o for o in options if o not in result.stdout}
            assert not missing, f"{page.name}: {words[1]} has no options {missing}"
    if len(script_lines) > 1:
        result = subprocess.run(
            ["bash", "-c", "\n".join(script_lines)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, (
            f"{page.name} commands failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        )


def test_external_import_format_example_is_valid() -> None:
    from stratagate.formats.external_memory import parse_document

    text = (ROOT / "stratagate" / "formats" / "external_memory.py").read_text(encoding="utf-8")
    example = text.split("A document is JSON (a dict or text)::", 1)[1].split("Malformed", 1)[0]
    cleaned = re.sub(r"#[^\n]*", "", example)
    document = json.loads(cleaned)
    assert parse_document(document).items[0].kind == "preference"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_fence_says_what_it_holds(page: Path) -> None:
    """Unlabelled fences could hide commands from the checks above: label them (text, bash …)."""
    assert [lang for lang, _ in FENCE.findall(page.read_text(encoding="utf-8")) if not lang] == []
