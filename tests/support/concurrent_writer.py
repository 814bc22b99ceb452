"""One of several processes writing one namespace at once (tests/integration/test_many_writers.py,
scripts/bench_concurrency.py).

Waits for ``go`` to exist, appends ``turns`` turns to its own thread (receipt ``<thread>-<i>``),
printing ``ack <receipt> <seconds>`` after each acknowledgement, then touches ``done/<thread>``,
waits until ``expect`` writers are done, refreshes, and prints one JSON line ``result {...}``:
its revision, ``verify().ok`` and how many decisions it made again after a conflict.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from stratagate import StrataGate
from stratagate.actors import pipeline
from tests.support.fakes import HangOn, KeywordExtractor, TitleSummarizer, UsesProjector

WAIT_S = 300.0


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(0.01)


def options(models: str, hang: str | None) -> dict[str, object]:
    """``none``, ``offline`` (the bundled models, local) or ``callbacks`` (the test fakes: model
    calls with claims; ``hang`` makes the summarizer hang on a turn naming ``HANG``)."""
    if models == "none":
        return {}
    if models == "offline":
        return {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    summarizer: object = TitleSummarizer()
    if hang:
        summarizer = HangOn(summarizer, "HANG", hang)
    return {
        "summarizer": summarizer,
        "extractor": KeywordExtractor(),
        "element_projector": UsesProjector(),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("database")
    parser.add_argument("thread")
    parser.add_argument("--namespace", default="shared")
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--block", type=int, default=4)
    parser.add_argument("--models", default="none")
    parser.add_argument("--go", required=True)
    parser.add_argument("--done", required=True)
    parser.add_argument("--expect", type=int, default=1)
    parser.add_argument("--hang", default=None, help="announce file: hang in a summarizer call")
    args = parser.parse_args(argv)
    memory = StrataGate.open(
        args.database,
        args.namespace,
        block_turn_size=args.block,
        on_conflict="retry",
        **options(args.models, args.hang),  # type: ignore[arg-type]
    )
    go, done = Path(args.go), Path(args.done)
    print("ready", flush=True)
    wait_for(go.exists, "go")
    for i in range(args.turns):
        text = f"{args.thread} says {i}: we decided the app uses tool{i % 5}"
        if args.hang and i == args.turns // 2:
            text += " HANG"
        began = time.perf_counter()
        memory.append_turn(text, f"{args.thread} ok {i}", thread_id=args.thread,
                           receipt_id=f"{args.thread}-{i}")  # fmt: skip
        print(f"ack {args.thread}-{i} {time.perf_counter() - began:.6f}", flush=True)
    (done / args.thread).touch()
    wait_for(lambda: len(list(done.iterdir())) >= args.expect, "the other writers")
    memory.refresh()
    result = {
        "thread": args.thread,
        "revision": memory.revision,
        "verify": memory.verify().ok,
        "retries": dict(pipeline.RETRIES),
    }
    memory.close()
    print("result " + orjson.dumps(result).decode(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
