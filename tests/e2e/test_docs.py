"""Every command and code example in README.md and docs/ is exercised here, from a fresh
checkout: the files git tracks (as they are in the working tree), copied to a temporary
directory, with nothing prepared but what a page itself says to fetch (a LoCoMo conversation).

Python blocks of a page run in order, as one script, in a fresh process and a temporary
directory, on the checkout's code (so the examples cannot lean on test fixtures or untracked
files). Shell lines are classified: the README set-up commands must be what CI runs, and their
pieces run (the checkout installs, without network, and its installed ``stratagate demo``
works); ``stratagate …`` commands run in a real shell whose ``stratagate`` is the checkout;
``scripts/…`` commands must exist and parse their options (their smoke tests run them with
small sizes); anything else must be a listed external tool. JSON blocks must parse; text
blocks of USAGE.md, CLI.md and AGENTS.md that show a ``stratagate`` synopsis must name real
subcommands and options, and those that run a script must name one that exists: every block
of those three pages is checked.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from stratagate.cli.app import build_parser
from stratagate.formats.locomo import default_data_dir
from tests.support.chat_server import ChatServer, json_reply

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
EVERY_BLOCK = ("USAGE.md", "CLI.md", "AGENTS.md")
"""The pages whose every code block runs or is checked (see the module docstring)."""
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


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tracked files of this worktree, copied as a fresh clone would have them."""
    target = tmp_path_factory.mktemp("checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, (os.fsdecode(n) for n in tracked)):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the worktree is not in the clone
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def env_for(page: Path, base_url: str, checkout: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
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
    """What a page tells the reader to fetch: a LoCoMo conversation (CLI.md); everything else
    a page uses it makes itself (``stratagate sample``)."""
    shutil.copy(default_data_dir() / "conv-26.json", cwd / "conv-26.json")


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=lambda p: p.name)
def test_python_examples_run(page: Path, tmp_path: Path, checkout: Path) -> None:
    script = "\n\n".join(blocks(page, "python"))
    (tmp_path / "example.py").write_text(script, encoding="utf-8")
    prepare(tmp_path)
    with ChatServer(fallback=json_reply(ASSESSMENT)) as server:
        result = subprocess.run(
            [sys.executable, "example.py"],
            cwd=tmp_path,
            env=env_for(page, server.url, checkout),
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert result.returncode == 0, (
        f"{page.name} examples failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )


def test_readme_pieces_run_from_the_checkout(checkout: Path, tmp_path: Path) -> None:
    """The README's set-up, install and demo, piece by piece: a virtual environment is made;
    the checkout builds and installs as pip builds it (its dependencies are this
    environment's);
    the installed package, not the source tree, runs the demo with its bundled sample."""
    lines = shell_lines(ROOT / "README.md")
    demo_command = next(line for line in lines if "stratagate demo" in line)
    assert demo_command.startswith("python3 -m venv .venv && .venv/bin/pip install")
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], timeout=120
    )
    assert made.returncode == 0 and (tmp_path / "venv" / "bin" / "python").exists()
    target = tmp_path / "installed"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(checkout)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    assert (target / "stratagate" / "sample" / "project_conversation.jsonl").is_file()
    assert (target / "stratagate" / "py.typed").is_file()
    work = tmp_path / "work"
    work.mkdir()
    demo = subprocess.run(
        [sys.executable, "-m", "stratagate", "demo"],
        cwd=work, env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "verify" in demo.stdout and (work / "stratagate-demo.db").exists()


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
def test_shell_commands_are_known_and_run(page: Path, tmp_path: Path, checkout: Path) -> None:
    """``stratagate`` lines run, in order, in a real shell whose ``stratagate`` is this checkout."""
    prepare(tmp_path)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "stratagate").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m stratagate "$@"\n')
    (shim / "stratagate").chmod(0o755)
    (shim / "python").symlink_to(sys.executable)
    env = env_for(page, "http://127.0.0.1:9/v1", checkout)
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
            script = checkout / words[1]
            assert script.exists(), f"{page.name}: missing {words[1]}"
            result = subprocess.run(
                [sys.executable, str(script), "--help"],
                cwd=checkout,
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


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "json")], ids=lambda p: p.name)
def test_json_blocks_parse(page: Path) -> None:
    for body in blocks(page, "json"):
        json.loads(body)


def text_commands(page: Path) -> list[str]:
    """The command lines of a page's text blocks: a synopsis over several lines is one line;
    a prompt (``$ ``) and what precedes an ``&&`` are dropped; output lines are left out."""
    found: list[str] = []
    for body in blocks(page, "text"):
        for raw in body.splitlines():
            line = raw.strip().removeprefix("$ ")
            if raw.startswith(" ") and raw.strip().startswith("[") and found:
                found[-1] += " " + line  # a synopsis continued
                continue
            line = line.rsplit("&& ", 1)[-1].split("  #", 1)[0].strip()
            if line.startswith(("stratagate ", "python ", "python3 ", "pip install ")):
                found.append(line)
    return found


def parser_for(words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The parser of the (sub)command ``words`` name, and the words left after its name."""
    parser: argparse.ArgumentParser = build_parser()
    while words:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers or words[0] not in subparsers[0].choices:
            break
        parser, words = subparsers[0].choices[words[0]], words[1:]
    return parser, words


@pytest.mark.parametrize("name", EVERY_BLOCK)
def test_text_blocks_name_real_commands_options_and_files(name: str) -> None:
    page = ROOT / "docs" / name
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    for line in text_commands(page):
        words = line.replace("[", " ").replace("]", " ").replace("|", " ").split()
        if words[0] == "stratagate":
            parser, rest = parser_for(words[1:])
            assert parser.prog != "stratagate", f"{name}: no such command: {line}"
            known = {o for action in parser._actions for o in action.option_strings}
            used = {w.split("=", 1)[0] for w in rest if w.startswith("--")}
            assert used <= known, f"{name}: {line}: no options {sorted(used - known)}"
        elif words[0] == "pip":
            extra = re.findall(r"stratagate\[(\w+)\]", line)
            assert extra and set(extra) <= set(extras), f"{name}: {line}"
        else:
            assert (ROOT / words[1]).is_file(), f"{name}: no script {words[1]}"
