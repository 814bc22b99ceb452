"""The ``stratagate`` command line: argument parsing, dispatch and exit statuses.

The subcommands live in ``stratagate.cli.commands`` and ``stratagate.cli.demo`` and are
imported only once the arguments parse, so ``--help`` and usage errors answer at once.
A ``StrataGateError`` becomes one ``stratagate: error: …`` line on stderr and its exit status
(see ``EXIT_CODES``); any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from stratagate.errors import (
    ChainVerificationError,
    InvalidInputError,
    ModelError,
    StrataGateError,
    UnknownIdError,
)

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_STORAGE = 4
EXIT_MODEL = 5
EXIT_INTERRUPTED = 130

EXIT_CODES: tuple[tuple[type[StrataGateError], int], ...] = (
    (ChainVerificationError, EXIT_VERIFY_FAILED),
    (InvalidInputError, EXIT_USAGE),
    (UnknownIdError, EXIT_NOT_FOUND),
    (ModelError, EXIT_MODEL),
    (StrataGateError, EXIT_STORAGE),
)
"""First match wins: every other ``StrataGateError`` (storage, conflicts, runtime) is 4."""

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


def positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand; each sets ``handler`` to ``module:function``."""
    parser = argparse.ArgumentParser(
        prog="stratagate",
        description="Long-term memory for AI agents: ingest, search, audit and replay.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(
        name: str, handler: str, help_text: str, *, demo: bool = False
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument(
            "--database",
            default="stratagate-demo.db" if demo else "stratagate.db",
            help="SQLite file path or SQLAlchemy URL (default: %(default)s)",
        )
        sub.add_argument("--namespace", default="default", help="(default: %(default)s)")
        if not demo:
            sub.add_argument("--json", action="store_true", help="print one JSON document")
        sub.set_defaults(handler=handler)
        return sub

    ingest = command("ingest", "commands:ingest", "append the turns of a JSONL or LoCoMo file")
    ingest.add_argument("file", help="JSONL turns, or a LoCoMo conversation (.json)")
    ingest.add_argument("--block-turn-size", type=positive, default=None, metavar="N")
    ingest.add_argument(
        "--models",
        choices=("offline", "none", "openai"),
        default="offline",
        help="offline heuristics, no callbacks, or the OpenAI-compatible endpoint "
        "configured by STRATAGATE_MODEL_* variables (default: %(default)s)",
    )
    ingest.add_argument("--thread", metavar="THREAD_ID", help="put every turn in this thread")
    ingest.add_argument("--limit", type=positive, metavar="N", help="only the first N turns")

    search = command("search", "commands:search", "search events, element facts or raw messages")
    search.add_argument("query")
    search.add_argument("--kind", choices=("events", "elements", "raw"), default="events")
    search.add_argument("--limit", type=positive, default=6, metavar="N")
    search.add_argument("--thread", metavar="THREAD_ID", help="raw search: only this thread")

    context = command("context", "commands:context", "print what recall_context packs")
    context.add_argument("query")
    context.add_argument("--thread", metavar="THREAD_ID")
    context.add_argument("--max-events", type=non_negative, default=4, metavar="N")
    context.add_argument("--max-elements", type=non_negative, default=4, metavar="N")
    context.add_argument("--budget", type=positive, default=900, metavar="TOKENS")

    expand = command("expand", "commands:expand", "expand a block, an event or an element")
    expand.add_argument("kind", choices=("block", "event", "element"))
    expand.add_argument("id")
    expand.add_argument("--level", metavar="L", help="block: 0-5, L0-L5 or next (default: next)")
    expand.add_argument("--at", metavar="TIME", help="element: its state as of this ISO time")

    history = command("history", "commands:history", "the namespace's log of domain events")
    history.add_argument("--since", type=non_negative, default=0, metavar="POSITION")
    history.add_argument("--limit", type=positive, metavar="N")
    history.add_argument("--type", metavar="TYPE", help="only events of this type")

    command("verify", "commands:verify", "check the hash chain and replay the log")

    replay = command("replay", "commands:replay", "what the memory knew as of a position")
    replay.add_argument("--until", type=non_negative, required=True, metavar="POSITION")

    command("stats", "commands:stats", "counts of everything in the namespace")
    command("namespaces", "commands:namespaces", "every namespace in the database")

    demo = command(
        "demo", "demo:demo", "ingest the bundled sample and show what it learned", demo=True
    )
    demo.add_argument("--fresh", action="store_true", help="delete the demo database first")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``stratagate`` command; returns its exit status."""
    args = build_parser().parse_args(argv)
    module_name, _, function = args.handler.partition(":")
    handler = getattr(importlib.import_module(f"stratagate.cli.{module_name}"), function)
    try:
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


def exit_code(exc: StrataGateError) -> int:
    """The documented exit status of an expected error."""
    return next(code for kind, code in EXIT_CODES if isinstance(exc, kind))
