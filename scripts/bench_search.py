"""Benchmark search latency as the corpus grows: events and raw messages at 10k and 100k.

The read models are folded from a LoCoMo-made log (``corpus.py``): ``--sizes`` event cards and
as many raw messages (turns sealed into blocks every 12 turns). At each size the LoCoMo
questions (``--queries`` of them, spread over the five samples) are asked once to warm up and
once timed, through ``MemoryView.search_events`` and ``search_raw`` (the façade's read path:
BM25, structured rankings, fusion, card lookup). Next to the latencies it reports how many
postings the queries touch, so growth can be read against the work done, not the corpus size.

``--facade`` adds what a caller of ``StrataGate`` waits for: one LoCoMo conversation ingested
into a memory on a SQLite file and into an in-memory one, and the same questions through
``search_raw_memory`` and ``search_events`` — each search logging its retrieval batch (on the
file, a commit that does not wait for the disk; see OPERATIONS.md).

    python scripts/bench_search.py [--sizes 10000,100000] [--queries 200] [--facade] [--out PATH]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from benchkit import peak_rss_mb, print_table, summary_ms, write_report
from corpus import Folder, LogWriter, added_cards, locomo_lines

from projections.inverted import InvertedIndex
from projections.state import NamespaceState
from stratagate import StrataGate
from stratagate.core.search_text import query_tokens
from stratagate.formats.locomo import default_data_dir, load_conversation
from stratagate.formats.turn_files import read_turn_file
from stratagate.read.view import MemoryView


def questions(count: int) -> list[str]:
    """``count`` LoCoMo questions taken evenly from all samples."""
    found = [
        qa.question
        for path in sorted(default_data_dir().glob("*.json"))
        for qa in load_conversation(path).qa
    ]
    step = max(1, len(found) // count)
    return found[::step][:count]


def postings_touched(index: InvertedIndex, query: str) -> int:
    """How many (term, document) pairs BM25 reads for this query."""
    return sum(len(index.postings[t][0]) for t in query_tokens(query) if t in index.postings)


def timed_queries(search: Callable[[str], Any], queries: list[str]) -> list[float]:
    for query in queries:  # warm-up: stemming and segmentation caches, code paths
        search(query)
    took = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        took.append(time.perf_counter() - start)
    return took


def grow(state: NamespaceState, folder: Folder, writer: LogWriter, size: int) -> float:
    """Fold turns and cards until the state holds ``size`` messages and cards; seconds taken."""
    start = time.perf_counter()
    turns = max(0, (size - writer.next_line) // 2)
    for event in writer.turns(turns):
        state.apply(folder.record(event))
    have = len(state.search.events)
    for event in added_cards(writer.lines, have, size - have):
        state.apply(folder.record(event))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes, ascending")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=6, help="hits per search (API default 6)")
    parser.add_argument("--facade", action="store_true", help="also time StrataGate searches")
    parser.add_argument("--out", default="bench-results/bench_search.json")
    args = parser.parse_args()

    sizes = sorted(int(s) for s in args.sizes.split(","))
    asked = questions(args.queries)
    writer = LogWriter(locomo_lines(), cards_per_block=0)  # cards come from added_cards
    state, folder = NamespaceState("bench", ["search"]), Folder("bench")
    view = MemoryView(state)
    rows: list[dict[str, Any]] = []
    for size in sizes:
        build = grow(state, folder, writer, size)
        print(f"  {size:,}: folded {folder.position:,} events in {build:.1f} s", file=sys.stderr)
        kinds = {
            "events": (lambda q: view.search_events(q, limit=args.limit), state.search.events),
            "raw": (lambda q: view.search_raw_memory(q, limit=args.limit), state.search.raw),
        }
        for kind, (search, index) in kinds.items():
            took = timed_queries(search, asked)
            touched = [postings_touched(index, q) for q in asked]
            per_posting = [t / max(1, p) * 1e6 for t, p in zip(took, touched, strict=True)]
            rows.append(
                {
                    "kind": kind,
                    "corpus": len(index),
                    **summary_ms(took),
                    "postings_p50": statistics.median(touched),
                    "us_per_posting_p50": statistics.median(per_posting),
                    "index_terms": len(index.postings),
                    "index_postings": index.posting_count(),
                    "log_events": folder.position,
                    "build_s": build,
                }
            )
    growth = []
    for kind in ("events", "raw"):
        mine = [row for row in rows if row["kind"] == kind]
        for small, large in itertools.pairwise(mine):
            growth.append(
                {
                    "kind": kind,
                    "from": small["corpus"],
                    "to": large["corpus"],
                    "corpus_x": large["corpus"] / small["corpus"],
                    "p50_x": large["p50_ms"] / small["p50_ms"],
                    "p95_x": large["p95_ms"] / small["p95_ms"],
                    "postings_x": large["postings_p50"] / max(1, small["postings_p50"]),
                }
            )
    facade = facade_rows(asked, args.limit) if args.facade else []
    out = write_report(
        "bench_search",
        args.out,
        sizes={"sizes": sizes, "queries": len(asked), "limit": args.limit},
        results=rows,
        growth=growth,
        facade=facade,
        peak_rss_mb=peak_rss_mb(),
    )
    columns = ["kind", "corpus", "p50_ms", "p95_ms", "mean_ms", "postings_p50"]
    print_table(rows, [*columns, "us_per_posting_p50"])
    if growth:
        print()
        print_table(growth, ["kind", "from", "to", "corpus_x", "p50_x", "p95_x", "postings_x"])
    if facade:
        print()
        print_table(facade, ["store", "kind", "corpus", "p50_ms", "p95_ms", "mean_ms"])
    print(f"wrote {out}")


def facade_rows(asked: list[str], limit: int) -> list[dict[str, Any]]:
    """Search latency through ``StrataGate`` (the batch is logged) on a file and in memory."""
    path = sorted(default_data_dir().glob("*.json"))[0]
    turns = read_turn_file(path).turns
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        for store in ("durable", "memory"):
            memory = (
                StrataGate.open(os.path.join(tmp, "memory.db"), "bench")
                if store == "durable"
                else StrataGate.in_memory("bench")
            )
            with memory:
                memory.append_turns(
                    [{"user": t.user, "assistant": t.assistant, **t.append_kwargs()} for t in turns]
                )
                corpus = len(turns) * 2
                searches = {"raw": memory.search_raw_memory, "events": memory.search_events}
                for kind, search in searches.items():
                    took = timed_queries(functools.partial(search, limit=limit), asked)
                    rows.append(
                        {"store": store, "kind": kind, "corpus": corpus, **summary_ms(took)}
                    )
    return rows


if __name__ == "__main__":
    main()
