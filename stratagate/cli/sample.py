"""``stratagate sample``: the bundled sample conversation as a JSONL turn file, to try the
commands the docs show (``stratagate sample --output conversation.jsonl``)."""

from __future__ import annotations

import argparse
import importlib.resources
import sys
from pathlib import Path

from stratagate.cli.constants import EXIT_OK
from stratagate.errors import InvalidInputError
from stratagate.formats.turn_files import jsonl_turns

SAMPLE = "sample/project_conversation.jsonl"


def sample_bytes() -> bytes:
    """The bundled sample conversation, as shipped (one JSON turn a line, receipt ids included)."""
    return (importlib.resources.files("stratagate") / SAMPLE).read_bytes()


def sample(args: argparse.Namespace) -> int:
    """Write the sample to ``--output`` (or stdout) and say on stderr what it holds."""
    data = sample_bytes()
    turns = jsonl_turns(data, name=Path(SAMPLE).name)
    threads = sorted({turn.thread_id or "" for turn in turns})
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return EXIT_OK
    try:
        Path(args.output).write_bytes(data)
    except OSError as exc:
        raise InvalidInputError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(
        f"wrote {len(turns)} turns (threads {', '.join(threads)}) to {args.output}; next: "
        f"stratagate ingest {args.output} --models offline --database memory.db",
        file=sys.stderr,
    )
    return EXIT_OK


__all__ = ["SAMPLE", "sample", "sample_bytes"]
