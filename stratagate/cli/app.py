"""The ``stratagate`` command line: argument parsing, dispatch and exit statuses.

The subcommands live in ``stratagate.cli.commands``, ``demo``, ``erase``, ``serve``,
``transfer`` and ``ui``; each parser holds its handler as a typed callable, and those modules
load only when a handler runs (they are lazy modules here), so ``--help`` and usage errors answer
at once.
A ``StrataGateError`` becomes one ``stratagate: error: …`` line on stderr and its exit status
(see ``EXIT_CODES``); any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from stratagate import __version__
from stratagate.cli.constants import (
    COMMAND,
    DEFAULT_DATABASE,
    DEFAULT_NAMESPACE,
    ENV_DATABASE,
    ENV_NAMESPACE,
    ENV_TOKEN,
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_OK,
)
from stratagate.errors import InvalidInputError, StrataGateError

Handler = Callable[[argparse.Namespace], int]
"""What a subcommand runs: the parsed arguments in, the exit status out."""


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module whose code runs at its first attribute access (stdlib LazyLoader)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None, name
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from stratagate.cli import commands as run_commands
    from stratagate.cli import demo as run_demo
    from stratagate.cli import erase as run_erase
    from stratagate.cli import hook as run_hook
    from stratagate.cli import sample as run_sample
    from stratagate.cli import serve as run_serve
    from stratagate.cli import transfer as run_transfer
    from stratagate.cli import ui as run_ui
else:
    run_commands = lazy_module("stratagate.cli.commands")
    run_demo = lazy_module("stratagate.cli.demo")
    run_erase = lazy_module("stratagate.cli.erase")
    run_hook = lazy_module("stratagate.cli.hook")
    run_sample = lazy_module("stratagate.cli.sample")
    run_serve = lazy_module("stratagate.cli.serve")
    run_transfer = lazy_module("stratagate.cli.transfer")
    run_ui = lazy_module("stratagate.cli.ui")

EPILOG = """\
exit status:
  0  ok
  1  verification failed (verify, demo)
  2  usage or input error (bad arguments, missing file, malformed JSONL line, bad position)
  3  not found (unknown id, namespace or database)
  4  storage error or conflict (unreachable database, damaged log, concurrent writer)
  5  model error (a model callback failed; re-run ingest to resume)

--database takes a SQLite file path or a SQLAlchemy URL (postgresql://user@host/db).
"""


def non_negative(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def port(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text}")
    return value


def positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0 seconds, got {text}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def from_environment(name: str, fallback: str) -> str:
    """An option's default: the environment variable when set and not empty, else ``fallback``."""
    return os.environ.get(name) or fallback


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand; each sets ``handler`` to the function that runs it."""
    parser = argparse.ArgumentParser(
        prog="stratagate",
        description="Long-term memory for AI agents: ingest, search, audit and replay.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"stratagate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(
        name: str,
        handler: Handler,
        help_text: str,
        *,
        demo: bool = False,
        per_file: bool = False,
        json_output: bool = True,
        many_namespaces: bool = False,
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        # The demo never takes its database from the environment: --fresh deletes it.
        sub.add_argument(
            "--database",
            default="stratagate-demo.db"
            if demo
            else from_environment(ENV_DATABASE, DEFAULT_DATABASE),
            help="SQLite file path or SQLAlchemy URL (default: %(default)s"
            + ("" if demo else f"; ${ENV_DATABASE} when set")
            + ")",
        )
        if demo:
            namespace, namespace_help = DEFAULT_NAMESPACE, "(default: %(default)s)"
        elif per_file and not os.environ.get(ENV_NAMESPACE):
            namespace = None
            namespace_help = (
                f"for every file (default: {DEFAULT_NAMESPACE} for a single file, else one "
                f"namespace per file named by its stem; ${ENV_NAMESPACE} when set)"
            )
        else:
            namespace = from_environment(ENV_NAMESPACE, DEFAULT_NAMESPACE)
            namespace_help = f"(default: %(default)s; ${ENV_NAMESPACE} when set)"
        if many_namespaces:
            sub.add_argument(
                "--namespace",
                dest="namespaces",
                action="append",
                metavar="NS",
                help="a namespace to serve; repeat for more (default: every namespace)",
            )
        else:
            sub.add_argument(
                "--namespace",
                default=namespace,
                help=f"the namespace (one agent's or user's memory) to work on {namespace_help}",
            )
        if not demo and json_output:
            sub.add_argument("--json", action="store_true", help="print one JSON document")
        sub.set_defaults(handler=handler)
        return sub

    ingest = command(
        "ingest",
        lambda a: run_commands.ingest(a),
        "append the turns of JSONL or LoCoMo files, one namespace per file",
        per_file=True,
    )
    ingest.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="JSONL turns or a LoCoMo conversation (.json), or a directory of them",
    )
    memory_options(
        ingest, runtime_help="run each namespace's roles in this process or as Ray actors"
    )
    ingest.add_argument(
        "--thread", metavar="THREAD_ID", help="put every turn in this thread (default: the file's)"
    )
    ingest.add_argument(
        "--limit",
        type=positive,
        metavar="N",
        help="only the first N turns of each file (default: all)",
    )
    ingest.add_argument(
        "--parallel",
        type=positive,
        default=1,
        metavar="N",
        help="namespaces ingested at once (default: %(default)s)",
    )

    search = command(
        "search", lambda a: run_commands.search(a), "search events, element facts or raw messages"
    )
    search.add_argument("query", help="the words to look for (an empty query is an error)")
    search.add_argument(
        "--kind",
        choices=("events", "elements", "raw"),
        default="events",
        help="event cards, element facts or raw messages (default: %(default)s)",
    )
    search.add_argument(
        "--limit",
        type=positive,
        default=6,
        metavar="N",
        help="at most N hits (default: %(default)s)",
    )
    search.add_argument(
        "--thread", metavar="THREAD_ID", help="raw search: only this thread (default: all)"
    )

    context = command(
        "context", lambda a: run_commands.context(a), "print what recall_context packs"
    )
    context.add_argument("query", help="what the model is about to be asked")
    context.add_argument(
        "--thread", metavar="THREAD_ID", help="whose block context to add (default: none)"
    )
    context.add_argument(
        "--max-events",
        type=non_negative,
        default=4,
        metavar="N",
        help="events to pack at most (default: %(default)s)",
    )
    context.add_argument(
        "--max-elements",
        type=non_negative,
        default=4,
        metavar="N",
        help="element facts to pack at most (default: %(default)s)",
    )
    context.add_argument(
        "--budget",
        type=positive,
        default=900,
        metavar="TOKENS",
        help="token budget of the packed text (default: %(default)s)",
    )

    expand = command(
        "expand", lambda a: run_commands.expand(a), "expand a block, an event or an element"
    )
    expand.add_argument(
        "kind", choices=("block", "event", "element"), help="what ID names: block, event or element"
    )
    expand.add_argument("id", help="a block, event or element id, as search and replay print it")
    expand.add_argument(
        "--level",
        metavar="L",
        help="block: the level to lift it to, 0-5, L0-L5 or next (default: next)",
    )
    expand.add_argument(
        "--at", metavar="TIME", help="element: its state as of this ISO time (default: now)"
    )

    history = command(
        "history", lambda a: run_commands.history(a), "the namespace's log of domain events"
    )
    history.add_argument(
        "--since",
        type=non_negative,
        default=0,
        metavar="POSITION",
        help="only events after this global position (default: %(default)s)",
    )
    history.add_argument(
        "--limit", type=positive, metavar="N", help="at most N events (default: all)"
    )
    history.add_argument(
        "--type", metavar="TYPE", help="only events of this type, e.g. BlockSealed (default: all)"
    )

    verify = command(
        "verify", lambda a: run_commands.verify(a), "check the hash chain and replay the log"
    )
    verify.add_argument(
        "--anchor",
        metavar="FILE",
        help="an anchor `stratagate checkpoint` wrote: fail unless the log still extends it",
    )

    checkpoint = command(
        "checkpoint",
        lambda a: run_commands.checkpoint(a),
        "print an anchor of the namespace's head (JSON) to keep outside the database",
    )
    checkpoint.add_argument(
        "--output", metavar="FILE", help="write the anchor to FILE (default: stdout)"
    )

    replay = command(
        "replay", lambda a: run_commands.replay(a), "what the memory knew as of a position"
    )
    replay.add_argument(
        "--until",
        type=non_negative,
        required=True,
        metavar="POSITION",
        help="the global position to stop at (history prints positions)",
    )

    export = command(
        "export",
        lambda a: run_transfer.export(a),
        "write the namespace's log (rows as stored, with its keys) to a JSONL file",
    )
    export.add_argument(
        "--output", required=True, metavar="FILE", help="the file to write (replaced whole)"
    )
    importing = command(
        "import-log",
        lambda a: run_transfer.import_log(a),
        "check an exported log line by line, write it into --database and verify it",
    )
    importing.add_argument("path", metavar="FILE", help="a file `stratagate export` wrote")
    for action in importing._actions:
        if action.dest == "namespace":
            action.default = None
            action.help = "the namespace to import it as (default: the one it was exported from)"

    stats = command(
        "stats", lambda a: run_commands.stats(a), "counts of everything in the namespace"
    )
    names = command(
        "namespaces",
        lambda a: run_erase.namespaces_command(a),
        "every namespace in the database; `namespaces drop NS --yes` erases one",
    )
    names.add_argument("action", nargs="?", choices=["drop"], help="drop: erase NS for good")
    names.add_argument("target", nargs="?", metavar="NS", help="the namespace to drop")
    names.add_argument("--purge-rows", action="store_true", help="then delete its rows too")
    erasure_options(names)

    erase = command(
        "erase",
        lambda a: run_erase.erase(a),
        "irreversibly erase a thread's, an event's or the namespace's content",
    )
    erase.add_argument(
        "what", choices=["thread", "event", "namespace"], help="what to erase (of --namespace)"
    )
    erase.add_argument("id", nargs="?", help="the thread or event id")
    erasure_options(erase)

    for looking in (history, verify, replay, stats, expand):
        looking.add_argument(
            "--read-only",
            action="store_true",
            help="open the database read-only: no lock, nothing written; works on a read-only "
            "file or a SELECT-only role (always so for this command; expand block refuses it)",
        )

    add_serve(command)
    add_ui(command)
    add_hook(commands)

    demo = command(
        "demo",
        lambda a: run_demo.demo(a),
        "ingest the bundled sample and show what it learned",
        demo=True,
    )
    demo.add_argument("--fresh", action="store_true", help="delete the demo database first")

    sample = commands.add_parser(
        "sample",
        help="write the bundled sample conversation (JSONL turns) to try the other commands",
        description="write the bundled sample conversation (96 JSONL turns in two threads, "
        "the one the demo ingests) to try the other commands",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sample.add_argument("--output", metavar="FILE", help="the file to write (default: stdout)")
    sample.set_defaults(handler=lambda a: run_sample.sample(a))
    return parser


def erasure_options(parser: argparse.ArgumentParser) -> None:
    """``--yes`` and ``--reason``, which every irreversible command takes."""
    parser.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    parser.add_argument(
        "--reason",
        default="operator request (stratagate CLI)",
        help="why, recorded in the log's …Erased event (default: %(default)s)",
    )


def add_serve(command: Callable[..., argparse.ArgumentParser]) -> None:
    """``stratagate serve``: the memory's tools over MCP (extra ``mcp``; see docs/AGENTS.md)."""
    serve = command(
        "serve",
        lambda a: run_serve.serve(a),
        "serve the memory's tools to agents over MCP (stdio or streamable HTTP)",
        json_output=False,
    )
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio for a client that starts the server, http for streamable HTTP on "
        "--host:--port/mcp (default: %(default)s)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="http: the address to bind; anything but loopback requires a token "
        "(default: %(default)s)",
    )
    serve.add_argument(
        "--port", type=port, default=8765, help="http: the port (default: %(default)s)"
    )
    serve.add_argument(
        "--namespaces",
        metavar="A,B,...",
        help="the namespaces a call may name (default: only --namespace)",
    )
    serve.add_argument(
        "--token",
        help=f"http: the bearer token every request must carry (default: ${ENV_TOKEN} when set, "
        "else none; prefer the variable: a command line is visible to other users)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=positive,
        default=1_048_576,
        metavar="N",
        help="http: refuse larger request bodies with 413 (default: %(default)s)",
    )
    serve.add_argument(
        "--rate-limit",
        type=non_negative,
        default=50,
        metavar="N",
        help="http: requests per second per client address, with bursts of 200; "
        "0 disables (default: %(default)s)",
    )
    serve.add_argument(
        "--ui",
        action="store_true",
        help="http: also serve the read-only Memory UI of the served namespaces at / (its JSON "
        "API at /api/v1; docs/UI.md)",
    )
    serve.add_argument(
        "--read-only",
        action="store_true",
        help="open the namespaces read-only: the tools that read answer (searches log no "
        "batch), those that write answer ReadOnlyError",
    )
    memory_options(serve, runtime_help="run the roles in the server process or as Ray actors")


def add_ui(command: Callable[..., argparse.ArgumentParser]) -> None:
    """``stratagate ui``: the read-only Memory UI and JSON API (extra ``mcp``; docs/UI.md)."""
    ui = command(
        "ui",
        lambda a: run_ui.ui(a),
        "serve the read-only Memory UI and its /api/v1 JSON API over HTTP",
        json_output=False,
        many_namespaces=True,
    )
    ui.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind; anything but loopback requires a token (default: %(default)s)",
    )
    ui.add_argument("--port", type=port, default=8766, help="(default: %(default)s)")
    ui.add_argument(
        "--token",
        help=f"the bearer token every API request must carry (default: ${ENV_TOKEN} when set, "
        "else none; open the page as http://HOST:PORT/#token=TOKEN)",
    )
    ui.add_argument(
        "--rate-limit",
        type=non_negative,
        default=50,
        metavar="N",
        help="requests per second per client address, with bursts of 200; 0 disables "
        "(default: %(default)s)",
    )


HOOK_HELP = "capture turns and recall memory from an agent host's hooks (Claude Code)"
HOOK_COMMAND_HELP = (
    "run one Claude Code hook event (JSON on stdin): store the transcript's completed turns "
    "(Stop, SessionEnd, PreCompact), add what memory knows to the prompt (UserPromptSubmit) or "
    "the session's block context (SessionStart); exits 0 or 1, never 2"
)


def add_hook(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``stratagate hook claude-code | install claude-code | server`` (docs/AGENTS.md)."""
    hook = commands.add_parser("hook", help=HOOK_HELP, description=HOOK_HELP)
    hooks = hook.add_subparsers(
        dest="hook_command",
        required=True,
        metavar="HOOK",
        help="claude-code: run one hook event; install claude-code: write the hook into the "
        "host's settings; server: the process the hook starts",
    )
    run = hooks.add_parser(
        "claude-code", help="run one hook event (the host runs this)", description=HOOK_COMMAND_HELP
    )
    hook_options(run)
    run.set_defaults(handler=lambda a: run_hook.run(a))
    install = hooks.add_parser(
        "install",
        help="write the hook into the host's settings JSON (merged; idempotent)",
        description="write the hook into the host's settings JSON, merged with what is there "
        "(other hooks are kept; running it again changes nothing)",
    )
    install.add_argument("host", choices=("claude-code",), help="the agent host")
    where = install.add_mutually_exclusive_group()
    where.add_argument(
        "--project",
        metavar="DIR",
        help="the project's DIR/.claude/settings.json (default: this directory's)",
    )
    where.add_argument("--user", action="store_true", help="the user's ~/.claude/settings.json")
    install.add_argument("--print", action="store_true", help="print the snippet, write nothing")
    install.add_argument(
        "--command",
        dest="host_command",
        help="the command the host runs (default: this interpreter's stratagate)",
    )
    install.add_argument(
        "--models",
        choices=("offline", "none", "openai"),
        default="offline",
        help="the models the installed hook runs with, written into its command: offline (the "
        "bundled heuristics, so captured turns become events and elements with no model), none "
        "(raw turns and deterministic blocks only) or openai (default: %(default)s)",
    )
    hook_target_options(install)
    install.set_defaults(handler=lambda a: run_hook.install(a))
    server = hooks.add_parser(
        "server",
        help="serve hook commands of one database (the hook starts it; it exits when idle)",
        description="keep the memories of one database open for the hook commands (started by "
        "the first hook that finds none; exits after --idle seconds without a request)",
    )
    server.add_argument("--database", help=DATABASE_HOOK_HELP)
    server.add_argument("--first-request-on-stdin", action="store_true", help=argparse.SUPPRESS)
    hook_server_options(server)
    server.set_defaults(handler=lambda a: run_hook.server(a))


DATABASE_HOOK_HELP = (
    f"SQLite file path or SQLAlchemy URL (default: ${ENV_DATABASE} when set, else the per-user "
    "file $XDG_DATA_HOME/stratagate/memory.db)"
)


def hook_target_options(parser: argparse.ArgumentParser) -> None:
    """Where a hook event goes: ``--database``, ``--namespace`` or ``--namespace-mode``."""
    parser.add_argument("--database", help=DATABASE_HOOK_HELP)
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--namespace", help="every event into this namespace")
    names.add_argument(
        "--namespace-mode",
        choices=("project", "session", "global"),
        default="project",
        help="project: one namespace per project directory (claude-code/<name>-<digest>); "
        "session: one per session; global: one for all (default: %(default)s)",
    )
    parser.add_argument(
        "--redact",
        action="store_true",
        help="mask credentials (keys, tokens, passwords; docs/SECURITY.md) in captured text "
        "before it is stored (default: stored verbatim)",
    )


def hook_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``stratagate hook claude-code``."""
    hook_target_options(parser)
    parser.add_argument(
        "--budget",
        type=seconds,
        default=1.0,
        metavar="SECONDS",
        help="wait at most this long for the hook server; a capture then completes in the "
        "background, a recall adds nothing this time (default: %(default)s)",
    )
    parser.add_argument(
        "--token-budget",
        type=positive,
        default=900,
        metavar="TOKENS",
        help="UserPromptSubmit and SessionStart: the context added at most (default: %(default)s)",
    )
    parser.add_argument(
        "--raw-hits",
        type=non_negative,
        default=4,
        metavar="N",
        help="UserPromptSubmit: raw messages of other sessions added at most (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="do the work in this process (opens the memory each time: slow)",
    )
    hook_server_options(parser)


def hook_server_options(parser: argparse.ArgumentParser) -> None:
    """How the hook server opens memories (inline, always), and when it exits."""
    memory_options(parser, runtime_help=None)
    parser.add_argument(
        "--idle",
        type=seconds,
        default=900.0,
        metavar="SECONDS",
        help="the hook server closes its memories and exits after this long without a "
        "request (default: %(default)s)",
    )


def hook_parser() -> argparse.ArgumentParser:
    """The parser of ``stratagate hook claude-code`` alone, whose errors never exit 2."""
    parser = run_hook.NeverBlockingParser(
        prog="stratagate hook claude-code", description=HOOK_COMMAND_HELP
    )
    hook_options(parser)
    return parser


def memory_options(parser: argparse.ArgumentParser, *, runtime_help: str | None) -> None:
    """``--block-turn-size``, ``--models`` and (with a ``runtime_help``) ``--runtime``: how a
    command opens memories."""
    parser.add_argument(
        "--block-turn-size",
        type=positive,
        default=None,
        metavar="N",
        help="turns per sealed block (default: what the namespace recorded, 12 for a new one)",
    )
    parser.add_argument(
        "--models",
        choices=("offline", "none", "openai"),
        default="none",
        help="none: no model callbacks, as in the library (blocks seal with deterministic "
        "views, nothing is extracted; said on stderr); offline: the bundled heuristics; "
        "openai: the OpenAI-compatible endpoint of the STRATAGATE_MODEL_* variables "
        "(default: %(default)s)",
    )
    if runtime_help is not None:
        parser.add_argument(
            "--runtime",
            choices=("inline", "ray"),
            default="inline",
            help=f"{runtime_help} (default: %(default)s)",
        )
        parser.add_argument(
            "--ray-log-level",
            choices=("error", "warning", "info", "debug"),
            default="error",
            help="ray: the lowest level of Ray's own log lines on stderr (default: "
            "%(default)s, which keeps its start-up notices quiet)",
        )
        parser.add_argument(
            "--ray-address",
            metavar="ADDRESS",
            help="ray: the cluster to join, e.g. auto or HOST:6379 of a `ray start --head` "
            "(default: the running one, else a new local Ray, which takes seconds to start)",
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``stratagate`` command; returns its exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:2] == ["hook", "claude-code"]:  # a hook never exits 2: that blocks the prompt
        return int(run_hook.claude_code(hook_parser(), arguments[2:]))
    parser = build_parser()
    args = parser.parse_args(arguments)
    COMMAND.set(args.command)
    try:
        check_arguments(subcommand(parser, args.command), args)
        handler: Handler = args.handler
        return int(handler(args))
    except StrataGateError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"stratagate: error: {message}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("stratagate: interrupted (what was appended stays in)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader (say, `| head`) left early: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand."""
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = commands.choices[name]
    return found


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse what argparse lets through but no command can use: text that is not valid UTF-8
    (a shell passes such bytes as lone surrogates, which no database or JSON can hold) and an
    option whose only value was ``--`` (argparse drops it and leaves an empty list)."""
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        label = action.option_strings[0] if action.option_strings else action.dest.upper()
        repeatable = isinstance(action, argparse._AppendAction)  # a list of its values
        if action.nargs is None and isinstance(value, list) and not repeatable:
            raise InvalidInputError(f"argument {label}: expected one value")
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and not is_utf8(text):
                raise InvalidInputError(f"argument {label} is not valid UTF-8: {text!r}")
            if action.dest in NAME_OPTIONS and isinstance(text, str) and not text.strip():
                raise InvalidInputError(f"argument {label} must name a namespace, got {text!r}")


NAME_OPTIONS = frozenset({"namespace", "namespaces"})
"""Options naming a namespace: an empty one is refused, never read as the default."""


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (lone surrogates do not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def exit_code(exc: StrataGateError) -> int:
    """The documented exit status of an expected error."""
    return next(code for kind, code in EXIT_CODES if isinstance(exc, kind))
