"""Benchmark rebuilding read models from the log: replay rate, snapshot + tail, memory.

Writes a LoCoMo-made log of ``--events`` domain events (turns, seals, extractions with cards;
see ``corpus.py``) into one namespace of a fresh SQLite file, then measures, ``--repeat`` times:

- ``decode``: reading the namespace in pages and decoding every event (no read model);
- ``full replay``: every read model folded from position 0;
- ``replay + first search``: the same, then one event search: a replay leaves the event cards'
  postings (as it leaves the raw messages') to be built when first read, so this is what a
  replay costs a reader that then searches;
- ``snapshot + tail``: hydration from a snapshot taken ``--tail`` events before the end, plus
  that tail (what an actor or a re-opened memory does);

and, in a fresh child process, the resident memory the replayed state adds, per 100k events.

``--turns N`` (default 3,000; 0 skips it) then appends N LoCoMo turns one by one to a fresh
durable memory (no models, ``snapshot_every`` 1,000) and reports the per-turn latency of the
turns during which a snapshot was being saved — in the turn itself, or by the background
writer — against the others: the pause a periodic snapshot costs a turn.

    python scripts/bench_replay.py [--events 100000] [--tail 1000] [--repeat 3]
        [--turns 3000] [--encryption on,off] [--profile PATH] [--out PATH]

``--encryption on,off`` writes and replays two logs, content sealed (the default) and in clear
(``STRATAGATE_ENCRYPTION=off``), and reports encrypted / clear time per step.

``--profile PATH`` runs one more full replay under cProfile after the timed ones, writes its
stats to PATH (``pstats``; one file per encryption mode) and reports the shares of the replay
spent decoding and folding, and the functions that took the most time.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from benchkit import encryption_modes, print_table, rss_mb, summary_ms, write_report
from corpus import LogWriter, locomo_lines

from projections.replay import hydrate, iter_records, replay, save_snapshot
from projections.state import NamespaceState
from stratagate import StrataGate
from stratagate.core.filters import EventFilters
from stratagate.events import DomainEvent
from stratagate.events.codec import encode_all
from stratagate.store import EventStore
from stratagate.store.keys import ENCRYPTION_ENV, keys_for
from stratagate.store.sql import open_event_store

NAMESPACE = "bench"
BATCH = 500
QUERY = "When did Melanie paint a sunset?"
"""The first event search after a replay (it builds the event cards' postings)."""


def batches(events: Iterator[DomainEvent], limit: int) -> Iterator[tuple[str, list[DomainEvent]]]:
    """Runs of consecutive events of one stream, at most ``BATCH`` long, ``limit`` in all."""
    stream, run = "", []
    for count, event in enumerate(events):
        if count == limit:
            break
        if run and (event.stream != stream or len(run) == BATCH):
            yield stream, run
            run = []
        stream = event.stream
        run.append(event)
    if run:
        yield stream, run


def write_log(database: str, events: int) -> float:
    """Append ``events`` LoCoMo-made events to the namespace (content sealed unless
    ``STRATAGATE_ENCRYPTION=off``); returns seconds taken."""
    writer = LogWriter(locomo_lines())
    versions: dict[str, int] = {}
    start = time.perf_counter()
    with open_event_store(database) as store:
        keys = keys_for(store, NAMESPACE)
        stream_events = writer.turns(10**9)
        for n, (stream, run) in enumerate(batches(stream_events, events)):
            new = encode_all(run, [f"e{n}-{i}" for i in range(len(run))], keys)
            store.append(NAMESPACE, stream, new, versions.get(stream, 0))
            versions[stream] = versions.get(stream, 0) + len(run)
    return time.perf_counter() - start


class Timing(NamedTuple):
    """Wall seconds, and CPU seconds of this process (a shared machine stretches wall time with
    other load; CPU time is what the work itself costs)."""

    wall: float
    cpu: float


def timed(action: Callable[[], Any]) -> Timing:
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    action()
    return Timing(time.perf_counter() - start, time.process_time() - cpu)


def snapshot_before_tail(store: EventStore, position: int) -> float:
    """Save the snapshot ``bench`` of the state at ``position``; seconds the save took."""
    state = replay(store, NAMESPACE, until=max(0, position))
    return timed(lambda: save_snapshot(store, state, "bench")).wall


def first_search(state: NamespaceState) -> NamespaceState:
    """``state`` after one event search (which reads, so builds, the event postings)."""
    state.search.search_events(QUERY, limit=10, filters=EventFilters())
    return state


def measure_rss(database: str) -> dict[str, float]:
    """In this (fresh) process: resident memory before and after a full replay, and after a
    first event search on the replayed state."""
    with open_event_store(database) as store:
        list(iter_records(store, NAMESPACE, until=1))  # imports and connection paid first
        gc.collect()
        before = rss_mb()
        state = replay(store, NAMESPACE)
        gc.collect()
        after = rss_mb()
        first_search(state)
        gc.collect()
        searched = rss_mb()
        return {
            "before_mb": before,
            "after_mb": after,
            "after_search_mb": searched,
            "events": state.position,
        }


def child_rss(database: str, encryption: str) -> dict[str, float]:
    """``measure_rss`` in a fresh interpreter, so nothing measured before skews it."""
    done = subprocess.run(
        [sys.executable, __file__, "--rss-of", database],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
        env={**os.environ, ENCRYPTION_ENV: encryption},
    )
    return orjson.loads(done.stdout)


def turn_pauses(turns: int, every: int) -> dict[str, Any]:
    """Append ``turns`` LoCoMo turns one by one to a fresh durable memory (no models) and split
    the per-turn latencies by whether a snapshot save overlapped the turn."""
    lines = locomo_lines()
    saving: list[tuple[float, float]] = []  # (start, end) of each snapshot save
    took: list[tuple[float, float]] = []  # (start, end) of each turn
    with tempfile.TemporaryDirectory(prefix="bench-pauses-") as tmp:
        memory = StrataGate.open(os.path.join(tmp, "m.db"), NAMESPACE, snapshot_every=every)
        with memory:
            store = memory._runtime.store  # type: ignore[attr-defined]
            save = store.save_snapshot

            def timed_save(snapshot: Any) -> None:
                began = time.perf_counter()
                try:
                    save(snapshot)
                finally:
                    saving.append((began, time.perf_counter()))

            store.save_snapshot = timed_save  # observe where the saves fall (not the close's)
            for i in range(turns):
                user, assistant = lines[(2 * i) % len(lines)], lines[(2 * i + 1) % len(lines)]
                began = time.perf_counter()
                memory.append_turn(user.text, assistant.text)
                took.append((began, time.perf_counter()))
            live = memory._runtime.live  # type: ignore[attr-defined]
            if hasattr(live, "snapshots"):  # the background writer: its saves count too
                live.snapshots.join()
            saves = list(saving)
    # a save overlaps a turn when the store write ran during it: for a snapshot taken in the
    # turn, that turn also did the serialisation; a background writer's serialisation runs
    # before its write, beside other turns, so "all" (and turns over 20 ms) is what counts
    hit = [
        end - start
        for start, end in took
        if any(start <= s_end and s_start <= end for s_start, s_end in saves)
    ]
    rest = [
        end - start
        for start, end in took
        if not any(start <= s_end and s_start <= end for s_start, s_end in saves)
    ]
    return {
        "turns": turns,
        "snapshot_every": every,
        "snapshots_saved": len(saves),
        "all": summary_ms([end - start for start, end in took]),
        "turns_overlapping_a_save": {"n": len(hit), **(summary_ms(hit) if hit else {})},
        "other_turns": summary_ms(rest),
        "turns_over_20_ms": sum(1 for start, end in took if end - start > 0.020),
    }


PROFILED = {"read and decode": "iter_records", "fold": "apply_at"}
"""The replay's two halves, by the function of ``projections.replay`` that does each."""


def profile_replay(store: EventStore, path: str, top: int = 15) -> dict[str, Any]:
    """One full replay under cProfile: its stats written to ``path``; the shares of the replay's
    time spent in each of ``PROFILED`` and the ``top`` functions by own time."""
    profiler = cProfile.Profile()
    profiler.runcall(replay, store, NAMESPACE)
    profiler.dump_stats(path)
    stats: dict[tuple[str, int, str], Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    cumulative = {
        function: cum
        for (file, _, function), (_, _, _, cum, _) in stats.items()
        if Path(file).name == "replay.py"  # projections/replay.py
    }
    total = cumulative["replay"]
    ranked = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return {
        "path": path,
        "profiled_s": total,
        "shares": {half: cumulative[name] / total for half, name in PROFILED.items()},
        "top": [
            {
                "function": f"{Path(file).name}:{line}({function})",
                "calls": calls,
                "own_s": own,
                "cumulative_s": cum,
            }
            for (file, line, function), (_, calls, own, cum, _) in ranked
        ],
    }


@dataclass
class Measured:
    """One log's write time, step timings, sizes and memory."""

    wrote: float
    total: int
    saved: float
    snapshot_bytes: int
    runs: dict[str, list[float]]
    cpu: dict[str, list[float]]
    counts: dict[str, int]
    rss: dict[str, float]
    db_mb: float
    profile: dict[str, Any] | None


def measure(args: argparse.Namespace, encryption: str) -> Measured:
    """Write a log with content sealed (``on``) or in clear (``off``) and time its replays."""
    os.environ[ENCRYPTION_ENV] = encryption
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        database = os.path.join(tmp, "log.db")
        wrote = write_log(database, args.events)
        print(f"  wrote {args.events:,} events in {wrote:.1f} s ({encryption})", file=sys.stderr)
        with open_event_store(database) as store:
            total = store.count(NAMESPACE)
            saved = snapshot_before_tail(store, total - args.tail)
            snapshot = store.load_snapshot(NAMESPACE, "bench")
            assert snapshot is not None
            steps: dict[str, Callable[[], Any]] = {
                "decode": lambda: sum(1 for _ in iter_records(store, NAMESPACE)),
                "full replay": lambda: replay(store, NAMESPACE),
                "replay + first search": lambda: first_search(replay(store, NAMESPACE)),
                "snapshot + tail": lambda: hydrate(store, NAMESPACE, "bench"),
            }
            runs: dict[str, list[float]] = {name: [] for name in steps}
            cpu: dict[str, list[float]] = {name: [] for name in steps}
            for repeat in range(args.repeat):
                state, from_snapshot = hydrate(store, NAMESPACE, "bench")
                assert from_snapshot and state.position == total
                del state
                for name, step in steps.items():
                    timing = timed(step)
                    runs[name].append(timing.wall)
                    cpu[name].append(timing.cpu)
                print(f"  repeat {repeat + 1}/{args.repeat} done", file=sys.stderr)
            full = replay(store, NAMESPACE)
            hydrated, _ = hydrate(store, NAMESPACE, "bench")
            assert full.digests() == hydrated.digests(), "snapshot + tail must equal the replay"
            counts = {
                "blocks": len(full.blocks.blocks),
                "event_cards": len(full.events.records),
                "messages": len(full.search.raw),
            }
            profile = None
            if args.profile:
                stem, suffix = os.path.splitext(args.profile)
                path = args.profile if len(args.encryption) == 1 else f"{stem}-{encryption}{suffix}"
                profile = profile_replay(store, path)
        rss = child_rss(database, encryption)
        db_mb = sum(os.path.getsize(os.path.join(tmp, name)) for name in os.listdir(tmp)) / 2**20
    return Measured(
        wrote, total, saved, len(snapshot.payload), runs, cpu, counts, rss, db_mb, profile
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="log length")
    parser.add_argument("--tail", type=int, default=1000, help="events after the snapshot")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--encryption",
        type=encryption_modes,
        default=["on"],
        help="on, off, or on,off: one log each, and the cost of encryption as a ratio",
    )
    parser.add_argument("--turns", type=int, default=3000, help="turns for the pause check")
    parser.add_argument("--profile", help="write a cProfile of one full replay to this path")
    parser.add_argument("--out", default="bench-results/bench_replay.json")
    parser.add_argument("--rss-of", help=argparse.SUPPRESS)  # child mode: measure_rss(DATABASE)
    args = parser.parse_args()
    if args.rss_of:
        print(orjson.dumps(measure_rss(args.rss_of)).decode())
        return

    measured = {mode: measure(args, mode) for mode in args.encryption}
    pauses = turn_pauses(args.turns, 1000) if args.turns else None
    first = measured[args.encryption[0]]
    total, runs, counts, rss = first.total, first.runs, first.counts, first.rss
    rows = []
    for mode, m in measured.items():
        for name, values in m.runs.items():
            median = statistics.median(values)
            folded = args.tail if name == "snapshot + tail" else m.total
            rows.append(
                {
                    "encryption": mode,
                    "step": name,
                    "median_s": median,
                    "cpu_median_s": statistics.median(m.cpu[name]),
                    "events_per_s": folded / median,
                    "runs_s": ", ".join(f"{v:.2f}" for v in values),
                }
            )
    speedup = statistics.median(runs["full replay"]) / statistics.median(runs["snapshot + tail"])
    added = rss["after_mb"] - rss["before_mb"]
    memory = {
        "rss_before_mb": rss["before_mb"],
        "rss_after_mb": rss["after_mb"],
        "rss_added_mb": added,
        "rss_per_100k_events_mb": added * 100_000 / total,
        "rss_after_search_mb": rss["after_search_mb"],
        "rss_per_100k_events_searched_mb": (rss["after_search_mb"] - rss["before_mb"])
        * 100_000
        / total,
        "snapshot_payload_mb": first.snapshot_bytes / 2**20,
        "snapshot_save_s": first.saved,
        "database_mb": first.db_mb,
    }
    cost = cpu_cost = None
    if {"on", "off"} <= measured.keys():
        on, off = measured["on"], measured["off"]
        cost = {
            step: statistics.median(on.runs[step]) / statistics.median(off.runs[step])
            for step in on.runs
        }
        cost["write"] = on.wrote / off.wrote
        cpu_cost = {
            step: statistics.median(on.cpu[step]) / statistics.median(off.cpu[step])
            for step in on.cpu
        }
    out = write_report(
        "bench_replay",
        args.out,
        sizes={
            "events": total,
            "tail": args.tail,
            "repeat": args.repeat,
            "encryption": ",".join(args.encryption),
            **counts,
        },
        write_s=first.wrote,
        results=rows,
        hydrate_speedup=speedup,
        memory=memory,
        encrypted_over_clear=cost,
        encrypted_over_clear_cpu=cpu_cost,
        turn_pauses=pauses,
        replay_profile={mode: m.profile for mode, m in measured.items()} if args.profile else None,
    )
    print(f"log: {total:,} events ({counts}) in a {first.db_mb:.0f} MiB SQLite file")
    print_table(rows, ["encryption", "step", "median_s", "cpu_median_s", "events_per_s", "runs_s"])
    print(f"snapshot + tail is {speedup:.1f}x faster than a full replay")
    print(
        f"resident memory: {rss['before_mb']:.0f} -> {rss['after_mb']:.0f} MiB "
        f"({memory['rss_per_100k_events_mb']:.0f} MiB per 100k events; after a first event "
        f"search {memory['rss_per_100k_events_searched_mb']:.0f}); snapshot payload "
        f"{memory['snapshot_payload_mb']:.1f} MiB compressed, saved in {first.saved:.1f} s"
    )
    if cost is not None and cpu_cost is not None:
        print("encrypted / clear, wall: " + ", ".join(f"{k} {v:.3f}x" for k, v in cost.items()))
        print("encrypted / clear, CPU: " + ", ".join(f"{k} {v:.3f}x" for k, v in cpu_cost.items()))
    if pauses is not None:
        print_pauses(pauses)
    for mode, m in measured.items():
        if m.profile is not None:
            print_profile(mode, m.profile)
    print(f"wrote {out}")


def print_profile(mode: str, profile: dict[str, Any]) -> None:
    shares = ", ".join(f"{half} {share:.0%}" for half, share in profile["shares"].items())
    print(f"full replay under cProfile ({mode}): {shares}; stats in {profile['path']}")
    print_table(profile["top"], ["function", "calls", "own_s", "cumulative_s"])


def print_pauses(pauses: dict[str, Any]) -> None:
    print(
        f"{pauses['turns']:,} turns, snapshot_every {pauses['snapshot_every']:,}: "
        f"{pauses['snapshots_saved']} snapshots saved during the turns; "
        f"{pauses['turns_over_20_ms']} turns over 20 ms"
    )
    rows = [
        {"turns": name, **pauses[name]}
        for name in ("all", "turns_overlapping_a_save", "other_turns")
    ]
    print_table(rows, ["turns", "n", "p50_ms", "p95_ms", "mean_ms", "max_ms"])


if __name__ == "__main__":
    main()
