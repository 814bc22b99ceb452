"""Benchmark ingestion: the five LoCoMo conversations into one namespace on a SQLite file.

Every turn goes through ``StrataGate.append_turn`` (inline runtime, ``wait=True``), so a turn's
time includes the sealing, extraction and element projection it triggers. Reports turns/s over
the whole run and per-turn latency in the first and last 10% of turns: as history grows the
cost of a turn must stay flat (no work proportional to the log). ``--models offline`` (default)
uses the bundled heuristics; ``none`` seals with deterministic views and extracts nothing.

    python scripts/bench_ingest.py [--models offline|none] [--conversations 5] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from benchkit import peak_rss_mb, print_table, summary_ms, write_report

from stratagate import StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.formats.locomo import default_data_dir
from stratagate.formats.turn_files import FileTurn, read_turn_file


def locomo_turns(conversations: int) -> list[FileTurn]:
    """The first ``conversations`` samples as ``stratagate ingest`` reads them (a thread each)."""
    paths = sorted(default_data_dir().glob("*.json"))[:conversations]
    return [turn for path in paths for turn in read_turn_file(path).turns]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", choices=("offline", "none"), default="offline")
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--block-turn-size", type=int, default=12)
    parser.add_argument("--out", default="bench-results/bench_ingest.json")
    args = parser.parse_args()

    turns = locomo_turns(args.conversations)
    took: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        database = os.path.join(tmp, "memory.db")
        options = model_options(args.models)
        with StrataGate.open(
            database, "bench", block_turn_size=args.block_turn_size, **options
        ) as memory:
            start = time.perf_counter()
            for n, turn in enumerate(turns, start=1):
                began = time.perf_counter()
                memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
                took.append(time.perf_counter() - began)
                if n % 500 == 0:
                    print(f"  {n:,}/{len(turns):,} turns", file=sys.stderr)
            elapsed = time.perf_counter() - start
            stats = memory.stats()
            verified = memory.verify().ok

    tenth = max(1, len(took) // 10)
    parts = {"all": took, "first 10%": took[:tenth], "last 10%": took[-tenth:]}
    rows = [
        {"turns": name, **summary_ms(values), "turns_per_s": len(values) / sum(values)}
        for name, values in parts.items()
    ]
    first, last = rows[1], rows[2]
    ratios = {key: last[key] / first[key] for key in ("p50_ms", "p95_ms", "mean_ms")}
    out = write_report(
        "bench_ingest",
        args.out,
        sizes={
            "turns": len(turns),
            "conversations": args.conversations,
            "block_turn_size": args.block_turn_size,
            "models": args.models,
        },
        turns_per_s=len(turns) / elapsed,
        elapsed_s=elapsed,
        results=rows,
        last_over_first=ratios,
        memory={
            "revision": stats.revision,
            "blocks": stats.blocks,
            "events": stats.events,
            "elements": stats.elements,
        },
        verified=verified,
        peak_rss_mb=peak_rss_mb(),
    )
    print(
        f"{len(turns):,} turns in {elapsed:.1f} s: {len(turns) / elapsed:.1f} turns/s "
        f"(models {args.models}); log revision {stats.revision:,}, {stats.blocks} blocks, "
        f"{stats.events} events, {stats.elements} elements; verify {'ok' if verified else 'FAILED'}"
    )
    print_table(rows, ["turns", "n", "p50_ms", "p95_ms", "mean_ms", "max_ms", "turns_per_s"])
    print(
        "last 10% / first 10%: "
        + ", ".join(f"{key.removesuffix('_ms')} {value:.2f}x" for key, value in ratios.items())
    )
    print(f"median turn {statistics.median(took) * 1000:.1f} ms; wrote {out}")


if __name__ == "__main__":
    main()
