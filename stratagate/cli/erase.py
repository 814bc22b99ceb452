"""``stratagate erase …`` and ``stratagate namespaces drop``: irreversible erasure for operators.

Both refuse to run without ``--yes``. ``erase`` opens the namespace's memory and destroys data
keys (other processes writing the namespace meanwhile fold the erasure in and can no longer
write back what it erased); ``namespaces drop``
erases the whole namespace and, with ``--purge-rows``, then deletes every row of it, keeping
one audit record in ``stratagate_purges``.
"""

from __future__ import annotations

import argparse

from stratagate.cli.commands import emit, emit_json, existing_memory, log_summary, namespaces
from stratagate.cli.constants import EXIT_OK
from stratagate.errors import InvalidInputError
from stratagate.memory import StrataGate
from stratagate.results import ErasureReport


def confirm(args: argparse.Namespace, what: str) -> None:
    """Irreversible commands run only with ``--yes``."""
    if not args.yes:
        raise InvalidInputError(f"{what} is irreversible: pass --yes to confirm")


def erase(args: argparse.Namespace) -> int:
    """Erase a thread, an event card or the whole namespace by destroying its data keys."""
    if args.what != "namespace" and not args.id:
        raise InvalidInputError(f"erase {args.what} needs the {args.what} id")
    if args.what == "namespace" and args.id:
        raise InvalidInputError("erase namespace takes no id (it erases --namespace)")
    confirm(args, f"erasing {args.what} {args.id or args.namespace!r}")
    with existing_memory(args) as memory:
        if args.what == "thread":
            report = memory.erase_thread(args.id, reason=args.reason)
        elif args.what == "event":
            report = memory.erase_event(args.id, reason=args.reason)
        else:
            report = memory.erase_namespace(reason=args.reason)
    show(args, report)
    return EXIT_OK


def show(args: argparse.Namespace, report: ErasureReport) -> None:
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        target = f" {report.target}" if report.target else ""
        emit(
            [
                f"erased {report.kind}{target}: {report.keys_destroyed} data keys destroyed "
                f"(recorded at global position {report.position})",
                *(
                    [
                        "warning: another connection's read transaction kept the destroyed keys' "
                        "bytes in the database file; they go at the next checkpoint (erase again "
                        "once it closes)"
                    ]
                    if report.key_bytes_gone is False
                    else []
                ),
            ]
        )


def namespaces_command(args: argparse.Namespace) -> int:
    """``namespaces`` lists; ``namespaces drop NS --yes [--purge-rows]`` erases (and purges)."""
    if args.action is None:
        return namespaces(args)
    if not args.target:
        raise InvalidInputError("namespaces drop needs the namespace to drop")
    confirm(args, f"dropping namespace {args.target!r}")
    args.namespace = args.target
    log_summary(args.database, args.target)
    with existing_memory(args) as memory:
        report = memory.erase_namespace(reason=args.reason)
    purged = None
    if args.purge_rows:
        purged = StrataGate.purge_namespace(args.database, args.target, reason=args.reason)
    if args.json:
        emit_json(
            {
                "erasure": report.model_dump(mode="json"),
                "purged_rows": purged,
            }
        )
    else:
        show(args, report)
        if purged is not None:
            emit([f"purged {purged} rows of {args.target!r} (audit kept in stratagate_purges)"])
    return EXIT_OK


__all__ = ["erase", "namespaces_command"]
