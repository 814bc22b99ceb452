"""Resumable ingestion for the command line: turns go in one by one under their receipt ids,
so a second run skips what the first one appended. Shared by ``ingest`` and ``demo``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratagate.cli.progress import Progress
from stratagate.errors import InvalidInputError, ModelError
from stratagate.formats.turn_files import FileTurn, TurnFileError
from stratagate.memory import StrataGate

MODEL_CHOICES: tuple[str, ...] = ("offline", "none", "openai")


def model_options(models: str) -> dict[str, Any]:
    """The callback options of ``StrataGate.open`` for ``--models``.

    ``offline``: the bundled heuristics; ``none``: no callbacks (blocks seal with
    deterministic views, nothing is extracted); ``openai``: the OpenAI-compatible adapters
    configured from the environment (``ModelConfig.from_env()``).
    """
    if models == "offline":
        return {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
    if models == "none":
        return {}
    if models == "openai":
        from stratagate.adapters import (
            ModelConfig,
            ModelElementProjector,
            ModelExtractor,
            ModelSummarizer,
        )

        config = ModelConfig.from_env()
        return {
            "summarizer": ModelSummarizer(config),
            "extractor": ModelExtractor(config),
            "element_projector": ModelElementProjector(config),
        }
    raise InvalidInputError(f"--models must be one of {', '.join(MODEL_CHOICES)}, got {models!r}")


@dataclass(frozen=True)
class Counts:
    """What the namespace holds at one moment."""

    revision: int
    blocks: int
    events: int
    elements: int

    @classmethod
    def of(cls, memory: StrataGate) -> Counts:
        stats = memory.stats()
        return cls(stats.revision, stats.blocks, stats.events, stats.elements)


@dataclass(frozen=True)
class IngestReport:
    """The outcome of one ingest run: turns appended and skipped, totals before and after."""

    total: int
    appended: int
    skipped: int
    before: Counts
    after: Counts
    elapsed_s: float

    def as_dict(self) -> dict[str, Any]:
        after, before = self.after, self.before
        return {
            "turns": {"total": self.total, "appended": self.appended, "skipped": self.skipped},
            "blocks": {"total": after.blocks, "added": after.blocks - before.blocks},
            "events": {"total": after.events, "added": after.events - before.events},
            "elements": {"total": after.elements, "added": after.elements - before.elements},
            "revision": {"before": before.revision, "after": after.revision},
            "elapsed_s": round(self.elapsed_s, 3),
        }

    def summary_lines(self) -> list[str]:
        after, before = self.after, self.before
        rate = self.appended / self.elapsed_s if self.elapsed_s > 0 else 0.0
        return [
            f"  turns     {self.appended} appended, {self.skipped} skipped (already in)",
            f"  memory    {after.blocks} blocks (+{after.blocks - before.blocks}), "
            f"{after.events} events (+{after.events - before.events}), "
            f"{after.elements} elements (+{after.elements - before.elements})",
            f"  log       revision {before.revision} → {after.revision}",
            f"  elapsed   {self.elapsed_s:.1f} s ({rate:.1f} turns/s)",
        ]


def ingest_turns(memory: StrataGate, turns: Sequence[FileTurn], progress: Progress) -> IngestReport:
    """Finish work a previous run left pending, then append each turn not yet in.

    A bad turn raises ``TurnFileError`` naming where it was read; a model failure raises
    ``ModelError``. Either way every turn appended before it stays in, and the next run
    resumes after it.
    """
    started = time.monotonic()
    before = Counts.of(memory)
    memory.resume_pending_work()
    appended = skipped = 0
    try:
        for done, turn in enumerate(turns, start=1):
            try:
                result = memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
            except InvalidInputError as exc:
                raise TurnFileError(f"{turn.origin}: {exc}") from exc
            except ModelError as exc:
                raise ModelError(
                    f"{turn.origin}: model call failed after the turn was stored: {exc} "
                    "(run the same ingest again to resume)"
                ) from exc
            if result.duplicate:
                skipped += 1
            else:
                appended += 1
            progress.update(done)
    finally:
        progress.finish()
    return IngestReport(
        total=len(turns),
        appended=appended,
        skipped=skipped,
        before=before,
        after=Counts.of(memory),
        elapsed_s=time.monotonic() - started,
    )


__all__ = ["MODEL_CHOICES", "Counts", "IngestReport", "ingest_turns", "model_options"]
