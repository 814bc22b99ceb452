"""A process the SIGKILL tests kill mid-callback: appends turns, printing each acknowledgement."""

from __future__ import annotations

import sys

from stratagate import StrataGate
from tests.support.fakes import HangOn, KeywordExtractor, TitleSummarizer, UsesProjector

NEEDLE = "HANG"


def main(database: str, role: str, announce: str) -> None:
    callbacks = {
        "summarizer": TitleSummarizer(),
        "extractor": KeywordExtractor(),
        "element_projector": UsesProjector(),
    }
    callbacks[role] = HangOn(callbacks[role], NEEDLE, announce)
    memory = StrataGate.open(database, "victim", block_turn_size=2, **callbacks)
    turns = [
        "we decided the app uses npm",
        "ok",
        "we decided the api uses postgres",
        "fine",
        f"we decided the site uses {NEEDLE}",
        "noted",
        "more",
        "and more",
        "last words",
        "really last",
    ]
    for i, text in enumerate(turns):
        memory.append_turn(text, f"reply {i}", receipt_id=f"turn-{i}")
        print(f"ack turn-{i}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
