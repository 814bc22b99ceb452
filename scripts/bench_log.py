"""Benchmark the event store: append and replay throughput on a SQLite file and on PostgreSQL.

Measures, per backend and repeat (each repeat in a fresh namespace of one fresh database):
``append_single`` (one event per commit), ``append_batch`` (``--batch-size`` events per commit),
``replay`` (read the namespace in pages and decode every payload) and ``verify`` (recompute the
namespace's hash chain). Prints a table of medians and writes JSON to ``--out``.

``--writers 1,2,4,8`` adds the concurrent case: that many OS processes, each appending
``--concurrent-events`` events one per commit to a namespace of its own, all started at once on
a fresh database; the aggregate appends/s is every event over the wall time from the start
signal until the last writer finishes. On PostgreSQL writers of different namespaces hold
different locks, so the aggregate grows with writers until the server's commit flush (or the
machine's cores) is the limit; on SQLite every writer queues on the one write lock.

    PYTHONPATH=. python scripts/bench_log.py [--single 2000] [--batched 20000] [--repeat 3]
        [--writers 1,2,4,8] [--concurrent-events 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import orjson
from benchkit import write_report
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from stratagate.errors import StorageError
from stratagate.store.engines import SQLITE_SYNCHRONOUS
from stratagate.store.records import NewEvent
from stratagate.store.sql import SqlEventStore, open_event_store

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def payload(i: int) -> str:
    """A turn-sized canonical JSON payload (about 400 bytes)."""
    body = {
        "turn": i,
        "thread_id": "main",
        "role": "user" if i % 2 else "assistant",
        "content": f"message {i}: " + "we talked about the release plan and the budget " * 6,
        "created_at": "2024-05-07T12:00:00.000000Z",
    }
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode()


def events(prefix: str, count: int) -> list[NewEvent]:
    return [NewEvent(f"{prefix}-{i}", "TurnAppended", 1, payload(i)) for i in range(count)]


def timed(action: Callable[[], int]) -> float:
    """Run ``action`` (which returns how many events it handled) and return events per second."""
    start = time.perf_counter()
    handled = action()
    return handled / (time.perf_counter() - start)


def one_repeat(store: SqlEventStore, args: argparse.Namespace) -> dict[str, float]:
    tag = uuid.uuid4().hex[:8]
    single, batched = events(f"s-{tag}", args.single), events(f"b-{tag}", args.batched)

    def append_single() -> int:
        for version, new in enumerate(single):
            store.append(f"single-{tag}", "ingest", [new], version)
        return len(single)

    def append_batch() -> int:
        for start in range(0, len(batched), args.batch_size):
            store.append(f"batch-{tag}", "ingest", batched[start : start + args.batch_size], start)
        return len(batched)

    def replay() -> int:
        after, decoded = 0, 0
        while page := store.read(f"batch-{tag}", after=after, limit=args.page_size):
            decoded += sum(1 for row in page if orjson.loads(row.payload) is not None)
            after = page[-1].global_position
        return decoded

    def verify() -> int:
        if store.verify_chain(f"batch-{tag}") is not None:
            raise SystemExit("the chain failed to verify during the benchmark")
        return store.count(f"batch-{tag}")

    return {
        "append_single": timed(append_single),
        "append_batch": timed(append_batch),
        "replay": timed(replay),
        "verify": timed(verify),
    }


@contextmanager
def sqlite_database(path: str | None) -> Iterator[str]:
    if path:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="bench-log-") as directory:
        yield str(Path(directory) / "log.db")


@contextmanager
def postgres_database(url: str) -> Iterator[str]:
    """A fresh schema on the server, dropped afterwards."""
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{name}"'))
    except SQLAlchemyError as exc:
        admin.dispose()
        raise StorageError(f"PostgreSQL at {url} is unavailable") from exc
    try:
        scoped = make_url(url).update_query_dict({"options": f"-csearch_path={name}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()


def database_for(backend: str, args: argparse.Namespace) -> AbstractContextManager[str]:
    if backend == "sqlite":
        return sqlite_database(args.sqlite_path)
    if backend == "postgres":
        return postgres_database(args.pg_url)
    raise SystemExit(f"unknown backend {backend!r} (use sqlite, postgres)")


def writer(database: str, namespace: str, count: int, go: str) -> None:
    """One concurrent writer (a separate process): wait for ``go``, append, print seconds."""
    with open_event_store(database) as store:
        batch = events(namespace, count)
        print("ready", flush=True)
        while not os.path.exists(go):
            time.sleep(0.001)
        start = time.perf_counter()
        for version, new in enumerate(batch):
            store.append(namespace, "ingest", [new], version)
        print(f"{time.perf_counter() - start:.6f}", flush=True)


def concurrent(database: str, writers: int, count: int) -> float:
    """Aggregate appends/s of ``writers`` processes, each on its own namespace."""
    with tempfile.TemporaryDirectory(prefix="bench-go-") as tmp:
        go = os.path.join(tmp, "go")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        command = [sys.executable, __file__, "--worker", database]
        children = [
            subprocess.Popen(
                [*command, f"w{i}-{uuid.uuid4().hex[:6]}", str(count), go],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for i in range(writers)
        ]
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        start = time.perf_counter()
        Path(go).touch()
        for child in children:
            child.communicate(timeout=600)
            if child.returncode != 0:
                raise SystemExit(f"a concurrent writer failed with status {child.returncode}")
        return writers * count / (time.perf_counter() - start)


def run_backend(name: str, database: str, args: argparse.Namespace) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {}
    with open_event_store(database) as store:
        for repeat in range(args.repeat):
            if args.single or args.batched:
                for metric, value in one_repeat(store, args).items():
                    runs.setdefault(metric, []).append(value)
            for writers in (int(w) for w in args.writers.split(",") if w):
                rate = concurrent(database, writers, args.concurrent_events)
                runs.setdefault(f"writers_{writers}", []).append(rate)
            print(f"  {name}: repeat {repeat + 1}/{args.repeat} done", file=sys.stderr)
    return runs


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        database, namespace, count, go = sys.argv[2:6]
        writer(database, namespace, int(count), go)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single", type=int, default=2000, help="events appended one per commit")
    parser.add_argument("--batched", type=int, default=20000, help="events appended in batches")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=1000, help="rows per read when replaying")
    parser.add_argument("--repeat", type=int, default=3, help="repeats; the table shows medians")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--sqlite-path", default=None, help="default: a temporary file")
    parser.add_argument(
        "--pg-url", default=os.environ.get("STRATAGATE_BENCH_PG_URL", DEFAULT_PG_URL)
    )
    parser.add_argument("--writers", default="", help="e.g. 1,2,4,8: the concurrent case")
    parser.add_argument("--concurrent-events", type=int, default=500, help="per writer")
    parser.add_argument("--out", default="bench-results/bench_log.json")
    args = parser.parse_args()

    results, skipped = [], {}
    for backend in args.backends.split(","):
        try:
            with database_for(backend, args) as database:
                runs = run_backend(backend, database, args)
        except StorageError as exc:
            skipped[backend] = f"{exc} ({exc.__cause__ or 'no cause'})".splitlines()[0]
            continue
        for metric, values in runs.items():
            results.append(
                {
                    "backend": backend,
                    "metric": metric,
                    "unit": "appends/s" if metric.startswith("writers_") else "events/s",
                    "median": statistics.median(values),
                    "runs": values,
                }
            )

    out = write_report(
        "bench_log",
        args.out,
        sizes={
            "single": args.single,
            "batched": args.batched,
            "batch_size": args.batch_size,
            "page_size": args.page_size,
            "repeat": args.repeat,
            "writers": args.writers,
            "concurrent_events": args.concurrent_events,
        },
        sqlite_synchronous=SQLITE_SYNCHRONOUS,
        results=results,
        skipped=skipped,
    )

    print(f"{'backend':<10} {'metric':<15} {'median events/s':>16}  runs")
    for row in results:
        runs_text = ", ".join(f"{value:,.0f}" for value in row["runs"])
        print(f"{row['backend']:<10} {row['metric']:<15} {row['median']:>16,.0f}  {runs_text}")
    for backend, reason in skipped.items():
        print(f"{backend:<10} skipped: {reason}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
