"""``stratagate hook``: the Claude Code hook command, the hook server it starts, and the
installer that writes it into the host's settings (docs/AGENTS.md).

``stratagate hook claude-code`` runs on every hook event, so it imports only the standard
library and the small stdlib-only modules of ``integrations.hooks``: it hands the event to the
hook server of its database (started on first use) and prints the reply. It exits 0 or 1, never
2 (exit 2 would block the user's prompt): usage errors, bad input and failures are one line on
stderr and exit 1; nothing it could not store is lost (the transcript keeps it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stratagate import __version__
from stratagate.cli.constants import ENV_DATABASE, EXIT_OK
from stratagate.errors import InvalidInputError, StrataGateError
from stratagate.integrations.hooks.client import call, start_with
from stratagate.integrations.hooks.places import (
    PROJECT_DIR_ENV,
    database_key,
    default_database,
    hook_state_dir,
    namespace_for,
    private_dir,
    socket_path,
)
from stratagate.integrations.hooks.protocol import (
    CAPTURE_EVENTS,
    EXIT_ERROR,
    HANDLED_EVENTS,
    MAX_EVENT_BYTES,
    HookInputError,
    Reply,
    Request,
    event_from,
    load_event,
    one_line,
)

if TYPE_CHECKING:
    from stratagate.integrations.hooks.service import HookService


class HookUsageError(InvalidInputError):
    """The hook command's arguments are wrong (reported with exit status 1, never 2)."""


class NeverBlockingParser(argparse.ArgumentParser):
    """An argument parser whose usage errors raise instead of exiting 2."""

    def error(self, message: str) -> Any:
        raise HookUsageError(message)


def resolve_database(given: str | None, environ: Mapping[str, str]) -> str:
    """``--database``, else ``$STRATAGATE_DATABASE``, else the per-user file (its directory
    made private); a path comes back absolute (the hook server runs elsewhere)."""
    database = given or environ.get(ENV_DATABASE)
    if not database:
        path = default_database(environ)
        private_dir(path.parent)
        return str(path)
    if "://" in database:
        return database
    return os.path.abspath(os.path.expanduser(database))


def warn(line: str) -> None:
    print(one_line(line), file=sys.stderr)


def claude_code(parser: argparse.ArgumentParser, argv: Sequence[str]) -> int:
    """Parse the hook command's arguments with ``parser`` (a ``NeverBlockingParser``), then
    run it; the exit status is 0 or 1."""
    started = time.time()
    try:
        args = parser.parse_args(list(argv))
    except HookUsageError as exc:
        warn(f"stratagate hook claude-code: {exc}")
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return EXIT_OK if exc.code in (0, None) else EXIT_ERROR
    return run(args, started)


def run(args: argparse.Namespace, started: float | None = None) -> int:
    """Run the hook for the event on stdin; the exit status is 0 or 1."""
    try:
        return answer_event(args, time.time() if started is None else started)
    except StrataGateError as exc:
        warn(f"stratagate: {exc}")
    except KeyboardInterrupt:
        warn("stratagate: interrupted (the transcript keeps the turns; a later run stores them)")
    except Exception as exc:  # never a traceback, never exit 2: the host must go on
        warn(f"stratagate: unexpected {type(exc).__name__}: {exc}")
    return EXIT_ERROR


def answer_event(args: argparse.Namespace, started: float) -> int:
    if sys.stdin is None or sys.stdin.isatty():
        raise HookInputError("expects the hook event as JSON on stdin (the host writes it)")
    value = load_event(sys.stdin.buffer.read(MAX_EVENT_BYTES + 1))
    event = event_from(value)
    if event.name not in HANDLED_EVENTS:
        return EXIT_OK
    environ = os.environ
    if args.namespace is not None and not args.namespace.strip():
        raise HookUsageError(f"--namespace must name a namespace, got {args.namespace!r}")
    namespace = args.namespace or namespace_for(
        args.namespace_mode,
        session_id=event.session_id,
        cwd=event.cwd or os.getcwd(),
        project_dir=environ.get(PROJECT_DIR_ENV),
    )
    if not namespace.strip() or not namespace.isprintable():
        raise HookUsageError(f"namespace must be a printable string, got {namespace!r}")
    database = resolve_database(args.database, environ)
    request = Request(
        event=value,
        namespace=namespace,
        redact=args.redact,
        token_budget=args.token_budget,
        raw_hits=args.raw_hits,
        deadline=started + args.budget,
    )
    if args.no_server:
        return answer_here(args, database, request)
    state = private_dir(hook_state_dir(environ))  # before the socket's directory inside it
    path = socket_path(environ, database, __version__)
    private_dir(path.parent)
    log = state / f"server-{database_key(database)}.log"
    argv = server_argv(args, database)
    reply = call(path, request, start=lambda first: start_with(first, argv, log, environ))
    return emit(reply or late(event.name))


def late(event_name: str) -> Reply:
    """What the hook says when the server's reply did not come within the budget."""
    if event_name in CAPTURE_EVENTS:
        return Reply(
            stderr="stratagate: the hook server is still storing this session's turns "
            "(the transcript keeps them meanwhile)"
        )
    return Reply(stderr="stratagate: the memory is still opening; nothing was recalled this time")


def emit(reply: Reply) -> int:
    if reply.stdout:
        print(reply.stdout, flush=True)
    if reply.stderr:
        warn(reply.stderr)
    return reply.exit


def server_argv(args: argparse.Namespace, database: str) -> list[str]:
    """How the hook command starts the hook server of its database."""
    argv = [sys.executable, "-m", "stratagate", "hook", "server", "--database", database]
    argv += ["--models", args.models, "--idle", str(args.idle)]
    if args.block_turn_size is not None:
        argv += ["--block-turn-size", str(args.block_turn_size)]
    return argv


def memory_options(args: argparse.Namespace) -> dict[str, Any]:
    from stratagate.cli.ingest_job import model_options

    options = model_options(args.models)
    if args.block_turn_size is not None:
        options["block_turn_size"] = args.block_turn_size
    return options


def answer_here(args: argparse.Namespace, database: str, request: Request) -> int:
    """``--no-server``: the hook's work in this process (slower: it opens the memory)."""
    from stratagate.integrations.hooks.service import HookService

    service = HookService(database, memory_options(args), private_dir(hook_state_dir(os.environ)))
    try:
        status = emit(service.handle(request))
        sys.stdout.flush()
        service.run_later()
        return status
    finally:
        service.close()


def server(args: argparse.Namespace) -> int:
    """``stratagate hook server``: serve the hook commands of one database until idle."""
    from stratagate.integrations.hooks.server import serve

    environ = os.environ
    database = resolve_database(args.database, environ)
    state = private_dir(hook_state_dir(environ))
    path = socket_path(environ, database, __version__)
    private_dir(path.parent)

    def make_service() -> HookService:
        from stratagate.integrations.hooks.service import HookService

        return HookService(database, memory_options(args), state, log=sys.stderr)

    first = None
    if args.first_request_on_stdin:  # the hook that started this server waits on stdout
        first = Request.decode(sys.stdin.buffer.read())
    serve(make_service, path, idle=args.idle, log=sys.stderr, first=first, answer_first=answer)
    return EXIT_OK


def answer(reply: Reply) -> None:
    """Write the first request's reply to the hook that started this server, then let go of
    stdout (that hook is gone once it has read it, or has stopped waiting)."""
    try:
        sys.stdout.buffer.write(reply.encode())
        sys.stdout.buffer.flush()
    except OSError:  # it stopped waiting: the work is done all the same
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def hook_command(args: argparse.Namespace) -> str:
    """The command line the host runs: this interpreter's ``-m stratagate hook claude-code``
    with the options given to ``install``."""
    import shlex

    if args.host_command:
        return str(args.host_command)
    argv = [sys.executable, "-m", "stratagate", "hook", "claude-code"]
    if args.database:
        argv += ["--database", resolve_database(args.database, os.environ)]
    if args.namespace:
        argv += ["--namespace", args.namespace]
    elif args.namespace_mode != "project":
        argv += ["--namespace-mode", args.namespace_mode]
    if args.redact:
        argv.append("--redact")
    argv += ["--models", args.models]  # explicit: the CLI's own default is no models
    return shlex.join(argv)


def install(args: argparse.Namespace) -> int:
    """``stratagate hook install claude-code``: merge the hook into the host's settings."""
    import json

    from stratagate.integrations.hooks.settings import install as install_settings
    from stratagate.integrations.hooks.settings import settings_file, snippet

    command = hook_command(args)
    if args.print:
        print(json.dumps(snippet(command), indent=2))
        return EXIT_OK
    path = settings_file(
        project=None if args.project is None else Path(args.project).expanduser().resolve(),
        user=args.user,
        home=Path.home(),
    )
    changed = install_settings(path, command)
    state = "updated" if changed else "unchanged (the hook was already there)"
    print(f"{path}: {state}; hook command: {command}")
    return EXIT_OK


__all__ = [
    "HookUsageError",
    "NeverBlockingParser",
    "claude_code",
    "install",
    "resolve_database",
    "run",
    "server",
]
