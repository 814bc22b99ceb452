"""A separate OS process for the event-store process tests (run as a script, never collected).

``mixed``: after the go file appears, alternately append a small batch to the worker's own
stream (a conflict there is a bug: nobody else writes it) and one event to a shared stream
(conflicts expected: retry with a fresh version). Prints ``ready`` first and a JSON summary last.

``solo``: after the go file appears, append ``count`` small batches to the worker's own
namespace with exact expected versions (a conflict is a bug: nobody else writes there).

``big``: append one huge batch and print ``started`` from inside it — as the INSERT begins
(``--kill-at insert``) or just before COMMIT, then stall (``--kill-at commit``) — so the parent
can SIGKILL the process mid-append.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

from stratagate.errors import StorageConflictError
from stratagate.store.records import NewEvent
from stratagate.store.sql import SqlEventStore, open_event_store


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def tick(event_id: str, **data: Any) -> NewEvent:
    return NewEvent(event_id, "Ticked", 1, json.dumps(data, sort_keys=True, separators=(",", ":")))


def mixed(store: SqlEventStore, args: argparse.Namespace) -> dict[str, int]:
    say("ready")
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.005)
    own, own_version, retries = f"own-{args.worker}", 0, 0
    for i in range(args.count):
        size = 1 + i % 3
        batch = [
            tick(f"{args.worker}-own-{i}-{k}", worker=args.worker, i=i, k=k) for k in range(size)
        ]
        store.append(args.namespace, own, batch, own_version)  # a conflict here fails the worker
        own_version += size
        shared = tick(f"{args.worker}-shared-{i}", worker=args.worker, i=i)
        while True:
            try:
                store.append(
                    args.namespace,
                    "shared",
                    [shared],
                    store.stream_version(args.namespace, "shared"),
                )
                break
            except StorageConflictError:
                retries += 1
    return {"retries": retries}


def solo(store: SqlEventStore, args: argparse.Namespace) -> dict[str, int]:
    say("ready")
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.005)
    version = 0
    for i in range(args.count):
        size = 1 + i % 3
        batch = [tick(f"{args.namespace}-{i}-{k}", i=i, k=k) for k in range(size)]
        store.append(args.namespace, "log", batch, version)
        version += size
    return {"appended": version}


def big(store: SqlEventStore, args: argparse.Namespace) -> dict[str, int]:
    batch = [tick(f"big-{i}", i=i, text="x" * 100) for i in range(args.count)]
    if store.engine.dialect.name == "sqlite":  # appends run on the driver's own cursor

        @event.listens_for(store.engine, "checkout")
        def _trace(dbapi_connection: Any, *_: Any) -> None:
            dbapi_connection.set_trace_callback(_statement)

        def _statement(statement: str) -> None:
            if args.kill_at == "insert" and statement.startswith("INSERT INTO stratagate_events"):
                say("started")
            elif args.kill_at == "commit" and statement == "COMMIT":
                say("started")
                time.sleep(120)

    elif args.kill_at == "insert":

        @event.listens_for(store.engine, "before_cursor_execute")
        def _started(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
            if statement.startswith("INSERT INTO stratagate_events"):
                say("started")

    else:

        @event.listens_for(store.engine, "commit")
        def _stall(_conn: Any) -> None:
            say("started")
            time.sleep(120)

    store.append(args.namespace, "big", batch, 0)
    return {"appended": len(batch)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["mixed", "solo", "big"])
    parser.add_argument("--database", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--worker", default="w")
    parser.add_argument("--go", default="")
    parser.add_argument("--kill-at", choices=["insert", "commit"], default="insert")
    args = parser.parse_args()
    with open_event_store(args.database) as store:
        summary = {"mixed": mixed, "solo": solo, "big": big}[args.mode](store, args)
    say(json.dumps(summary))


if __name__ == "__main__":
    main()
