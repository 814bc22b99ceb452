"""``stratagate export`` and ``stratagate import-log``: a namespace's log to a file and back.

The export reads the log without the namespace's writer lease (it runs next to an ingest); the
import writes into a namespace that must be empty, then verifies what it wrote, read-only.
"""

from __future__ import annotations

import argparse
import sys

from stratagate.audit import verify_log
from stratagate.cli.app import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.cli.commands import emit_json, log_head
from stratagate.events.keyring import MASTER_KEY_ENV
from stratagate.log_transfer import export_log
from stratagate.memory import StrataGate
from stratagate.store.sql import open_event_store


def export(args: argparse.Namespace) -> int:
    """Write the namespace's log, rows as stored and its data keys, to ``--output``."""
    log_head(args.database, args.namespace)
    with open_event_store(args.database, read_only=True) as store:
        report = export_log(store, args.namespace, args.output)
    if report.wrapped_by is None and report.keys > report.erased_keys:
        print(
            f"stratagate: warning: {report.path} holds the namespace's data keys in clear: "
            f"anyone who reads it reads the content (set {MASTER_KEY_ENV} to wrap them)",
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
    with open_event_store(args.database, read_only=True) as store:
        report = verify_log(store, imported.namespace)
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
