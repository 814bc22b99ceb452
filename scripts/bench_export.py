"""Benchmark exporting a namespace's log to a ``stratagate.log.v1`` file and importing it back.

Writes a LoCoMo-made log of ``--events`` domain events (content sealed, as by default; see
``corpus.py``) into one namespace of a fresh SQLite file, then measures, ``--repeat`` times:

- ``export``: the log and its keys to a JSONL file (rows read in pages, each chain-checked);
- ``check``: reading the file and checking it line by line (chain, and that each sealed payload
  opens with the file's keys), writing nothing — the part of an import that is not the store;
- ``import sqlite``: the whole import into a fresh SQLite file (positions and hashes kept);
- ``import sqlite rebased``: the same under another namespace name (every row chained anew);
- ``import postgres``: into a fresh PostgreSQL schema at ``--pg-url`` (skipped with a note when
  no server answers).

Each import is checked afterwards: the copy's head hash is the export's (rebased: the row count
matches and the chain verifies). Prints medians and events/s, writes JSON to ``--out``.

    PYTHONPATH=. python scripts/bench_export.py [--events 100000] [--repeat 3]
        [--pg-url postgresql+psycopg://postgres@127.0.0.1:5432/test] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_replay import NAMESPACE, write_log
from benchkit import fresh_database, print_table, write_report
from sqlalchemy.exc import SQLAlchemyError

from stratagate.log_transfer import check_log, export_log, import_log
from stratagate.store.sql import open_event_store

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="log length")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--pg-url", default=os.environ.get("STRATAGATE_TEST_PG_URL", DEFAULT_PG_URL)
    )
    parser.add_argument("--out", default="bench-results/bench_export.json")
    args = parser.parse_args()

    runs: dict[str, list[float]] = {}
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        source = os.path.join(tmp, "source.db")
        wrote = write_log(source, args.events)
        print(f"  wrote {args.events:,} events in {wrote:.1f} s", file=sys.stderr)
        path = Path(tmp) / "log.jsonl"
        with open_event_store(source, read_only=True) as store:
            total = store.count(NAMESPACE)
        for repeat in range(args.repeat):
            with open_event_store(source, read_only=True) as store:
                seconds, exported = timed(lambda store=store: export_log(store, NAMESPACE, path))
            runs.setdefault("export", []).append(seconds)
            seconds, checked = timed(lambda: check_log(path))
            assert checked == total
            runs.setdefault("check", []).append(seconds)
            for step, namespace in (("import sqlite", None), ("import sqlite rebased", "moved")):
                target = os.path.join(tmp, f"copy-{repeat}-{namespace}.db")
                with open_event_store(target) as store:
                    seconds, imported = timed(
                        lambda store=store, namespace=namespace: import_log(path, store, namespace)
                    )
                    assert imported.events == total and store.find_fault(imported.namespace) is None
                    assert imported.positions_kept == (namespace is None)
                    assert namespace or imported.head_hash == exported.head_hash
                runs.setdefault(step, []).append(seconds)
                os.remove(target)
            try:
                with fresh_database(args.pg_url) as url, open_event_store(url) as store:
                    seconds, imported = timed(lambda store=store: import_log(path, store))
                    assert imported.head_hash == exported.head_hash
                runs.setdefault("import postgres", []).append(seconds)
            except SQLAlchemyError as exc:
                notes.append(f"import postgres: no server at --pg-url ({type(exc).__name__})")
            print(f"  repeat {repeat + 1}/{args.repeat} done", file=sys.stderr)
        file_mb = path.stat().st_size / 2**20
        db_mb = os.path.getsize(source) / 2**20
    rows = [
        {
            "step": step,
            "median_s": statistics.median(values),
            "events_per_s": total / statistics.median(values),
            "runs_s": ", ".join(f"{v:.2f}" for v in values),
        }
        for step, values in runs.items()
    ]
    out = write_report(
        "bench_export",
        args.out,
        sizes={"events": total, "repeat": args.repeat, "file_mb": file_mb, "database_mb": db_mb},
        write_s=wrote,
        results=rows,
        notes=notes,
    )
    print(f"log: {total:,} events, {db_mb:.0f} MiB SQLite file, {file_mb:.0f} MiB export")
    print_table(rows, ["step", "median_s", "events_per_s", "runs_s"])
    for note in notes:
        print(f"note: {note}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
