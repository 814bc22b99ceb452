"""Benchmark adding event cards: ``add_event`` one by one as the namespace grows, and
``add_events`` in batches, on an in-memory namespace (no models).

One card per call is what an application importing its own memories does; its cost must not
grow with the cards already there. The table shows each window of calls (first and last) and
the batch figure; ``--out`` gets the JSON report.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchkit import print_table, summary_ms, write_report

from stratagate import StrataGate


def card(i: int, block_id: str) -> dict[str, Any]:
    return {
        "title": f"card {i}: the team chose option {i % 97} for service {i % 13}",
        "summary": f"decision {i} about service {i % 13}, recorded for the benchmark",
        "tags": [f"service{i % 13}"],
        "source_block_id": block_id,
    }


def seed(memory: StrataGate) -> str:
    """A sealed block for the cards to cite."""
    memory.append_turn("we compare options for every service", "noted")
    memory.append_turn("and record each decision", "ok")
    return memory.list_blocks()[0].id


def one_by_one(count: int, window: int) -> list[dict[str, Any]]:
    with StrataGate.in_memory(block_turn_size=2) as memory:
        block_id = seed(memory)
        durations: list[float] = []
        for i in range(count):
            started = time.perf_counter()
            memory.add_event(card(i, block_id))
            durations.append(time.perf_counter() - started)
    rows = []
    for name, part in (("first", durations[:window]), ("last", durations[-window:])):
        rows.append({"calls": f"add_event {name} {window:,}", **summary_ms(part)})
    total = sum(durations)
    rows.append({"calls": f"add_event all {count:,}", **summary_ms(durations), "total_s": total})
    return rows


def batched(count: int, batch: int) -> dict[str, Any]:
    with StrataGate.in_memory(block_turn_size=2) as memory:
        block_id = seed(memory)
        durations = []
        for start in range(0, count, batch):
            cards = [card(i, block_id) for i in range(start, min(start + batch, count))]
            began = time.perf_counter()
            memory.add_events(cards)
            durations.append((time.perf_counter() - began) / len(cards))
    return {
        "calls": f"add_events x{batch} (per card)",
        **summary_ms(durations),
        "total_s": sum(durations) * batch,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=1_000, help="calls per reported window")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--out", default="bench_cards.json")
    args = parser.parse_args()
    rows = one_by_one(args.cards, min(args.window, args.cards))
    rows.append(batched(args.cards, args.batch))
    print_table(rows, ["calls", "n", "p50_ms", "p95_ms", "mean_ms", "max_ms"])
    first, last = rows[0], rows[1]
    growth = last["p50_ms"] / first["p50_ms"]
    print(f"last / first window p50: {growth:.2f}x; wrote {args.out}")
    write_report("bench_cards", args.out, cards=args.cards, rows=rows, p50_growth=growth)


if __name__ == "__main__":
    main()
