"""``stratagate export`` and ``stratagate import-log``: a namespace's log to a file and back.

The export reads the log without the namespace's writer lease (it runs next to an ingest); the
import writes into a namespace that must be empty, then verifies what it wrote, read-only.
"""

from __future__ import annotations

import argparse
import sys

from stratagate.cli.commands import emit_json, read_only_memory
from stratagate.cli.constants import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.memory import StrataGate


def export(args: argparse.Namespace) -> int:
    """Write the namespace's log, rows as stored and its data keys, to ``--output``."""
    with read_only_memory(args.database, args.namespace) as memory:
        report = memory.export_log(args.output)
    if report.wrapped_by is None and report.keys > report.erased_keys:
        print(
            f"stratagate: warning: {report.path} holds the namespace's data keys in clear: "
            "anyone who reads it reads the content (set STRATAGATE_MASTER_KEY to wrap them)",
            file=sys.stderr,
        )
    if args.json:
        emit_json(report)
        return EXIT_OK
    print(
        f"exported {report.events} events and {report.keys} keys of namespace "
        f"{report.namespace!r} to {report.path}"
    )
    print(f"head      global position {report.head_position}, hash {report.head_hash}")
    if report.wrapped_by is not None:
        keys = f"wrapped under master key {report.wrapped_by} (import needs it)"
    else:
        keys = "in clear"
    print(f"keys      {keys}; {report.erased_keys} erased (their content stays erased)")
    return EXIT_OK


def import_log(args: argparse.Namespace) -> int:
    """Check an exported log line by line, write it into ``--database``, then verify it."""
    imported = StrataGate.import_log(args.path, args.database, args.namespace)
    with StrataGate.open(args.database, imported.namespace, read_only=True) as memory:
        report = memory.verify()
    status = EXIT_OK if report.ok else EXIT_VERIFY_FAILED
    if args.json:
        emit_json({"import": imported, "verify": report})
        return status
    print(
        f"imported {imported.events} events and {imported.keys} keys into namespace "
        f"{imported.namespace!r} of {args.database}"
    )
    if imported.positions_kept:
        copy = f"exact: positions and hashes kept (head hash {imported.head_hash})"
    else:
        copy = (
            f"chained anew up to global position {imported.head_position} (head hash "
            f"{imported.head_hash}; the export's was {imported.source_head_hash})"
        )
    print(f"copy      {copy}")
    if report.ok:
        print(f"verify    ok ({report.events_checked} events, chain and replay verified)")
    else:
        print(f"verify    FAILED at global position {report.first_bad_position}: {report.detail}")
    return status
