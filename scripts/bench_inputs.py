"""Benchmark oversized and hostile inputs: each must be refused or answered in under a second.

Cases, each timed on a fresh in-memory memory with the offline models (one turn per block, so
every append seals, extracts and projects): a 10 MB message (refused by ``max_message_chars``),
the largest accepted message (65,536 characters), a block of 12 such turns, a 1 MB query
(refused), the longest accepted query (4,000 characters) against a memory of 200 turns, a query
of lone surrogates, a limit of 2**70 and a position of 2**70 (refused). A case passes when it
finishes under ``--budget`` seconds with the expected outcome (``ok`` or the typed error).
Prints a table and writes JSON to ``--out``; exits 1 if a case fails.

    PYTHONPATH=. python scripts/bench_inputs.py [--repeat 3] [--budget 1.0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from benchkit import print_table, write_report

from stratagate import InvalidInputError, StrataGate

SENTENCE = (
    "we decided to move hosting to Render on Tuesday. Marta reviews the designs, "
    "the beta ships in June with 42 testers; pnpm replaced npm"
)
WORDS = SENTENCE.split(" ")
OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}


def text(chars: int, seed: int = 7) -> str:
    """``chars`` characters of chat-like words with sentence ends."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < chars:
        word = rng.choice(WORDS)
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:chars]


def memory(block_turn_size: int = 1) -> StrataGate:
    return StrataGate.in_memory(block_turn_size=block_turn_size, **OFFLINE)


def filled() -> StrataGate:
    """A memory of 200 ordinary turns, processed."""
    mem = memory(block_turn_size=12)
    mem.append_turns([{"user": text(300, seed=i), "assistant": "ok"} for i in range(200)])
    return mem


def cases() -> list[tuple[str, Callable[[], StrataGate], Callable[[StrataGate], Any], str]]:
    """(name, setup, action, expected outcome)."""
    huge, largest, query, megabyte = text(10_000_000), text(65_536), text(4_000), text(10**6)
    return [
        ("append a 10 MB message", memory, lambda m: m.append_turn(huge, "ok"), "InvalidInputError"),
        ("append a 64 KiB message", memory, lambda m: m.append_turn(largest, "ok"), "ok"),
        (
            "a block of 12 x 64 KiB turns",
            lambda: memory(block_turn_size=12),
            lambda m: m.append_turns([{"user": largest, "assistant": "ok"}] * 12),
            "ok",
        ),
        ("search a 1 MB query", filled, lambda m: m.search_events(megabyte), "InvalidInputError"),
        ("search a 4,000-char query", filled, lambda m: m.search_events(query), "ok"),
        ("recall a 4,000-char query", filled, lambda m: m.recall_context(query), "ok"),
        ("search lone surrogates", filled, lambda m: m.search_raw_memory("\ud800" * 100), "InvalidInputError"),
        ("search limit 2**70", filled, lambda m: m.search_events("render", limit=2**70), "InvalidInputError"),
        ("history since 2**70", filled, lambda m: m.history(2**70), "InvalidInputError"),
        ("state_at 2**70", filled, lambda m: m.state_at(2**70), "InvalidInputError"),
    ]  # fmt: skip


def run_case(
    setup: Callable[[], StrataGate], action: Callable[[StrataGate], Any]
) -> tuple[float, str]:
    mem = setup()
    try:
        started = time.perf_counter()
        try:
            action(mem)
            outcome = "ok"
        except InvalidInputError:
            outcome = "InvalidInputError"
        return time.perf_counter() - started, outcome
    finally:
        mem.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=1.0, help="seconds a case may take")
    parser.add_argument("--out", default="bench-results/bench_inputs.json")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name, setup, action, expected in cases():
        runs = [run_case(setup, action) for _ in range(args.repeat)]
        seconds = [s for s, _ in runs]
        outcomes = {o for _, o in runs}
        passed = outcomes == {expected} and max(seconds) < args.budget
        rows.append(
            {
                "case": name,
                "expected": expected,
                "outcome": ",".join(sorted(outcomes)),
                "median_s": round(statistics.median(seconds), 4),
                "max_s": round(max(seconds), 4),
                "pass": "yes" if passed else "NO",
            }
        )
    print_table(rows, ["case", "expected", "outcome", "median_s", "max_s", "pass"])
    path = write_report(
        "bench_inputs", args.out, budget_s=args.budget, repeat=args.repeat, cases=rows
    )
    print(f"\nwrote {path}")
    return 0 if all(row["pass"] == "yes" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
