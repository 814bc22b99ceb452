"""Resumable ingestion for the command line, shared by ``ingest`` and ``demo``.

Turns go in by ``append_turns`` in chunks of ``TURNS_PER_CALL`` under their receipt ids, so
progress moves while a file is ingested and a second run skips what the first one appended
(after a kill too: a chunk is one commit). ``job_files`` reads and places the files of a job;
``run_job`` ingests them, several namespaces at once, one per worker thread, each namespace's
roles inline or on Ray.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratagate.cli.constants import DEFAULT_NAMESPACE
from stratagate.cli.progress import Progress
from stratagate.errors import InvalidInputError, ModelError, ReceiptConflictError
from stratagate.formats.turn_files import FileTurn, TurnFileError, read_turn_file
from stratagate.memory import StrataGate, check_namespace
from stratagate.providers import KINDS, PROVIDERS

MODEL_CHOICES: tuple[str, ...] = (*PROVIDERS, "none")
"""What ``--models`` takes: a provider name of ``stratagate.providers``, or ``none``."""

TURNS_PER_CALL = 64
"""Turns per ``append_turns`` call: one commit, then the progress bar moves."""


NO_MODELS_NOTICE = (
    "models: none (the default, as in the library): blocks are sealed with deterministic "
    "views, nothing is extracted and projection jobs wait for the manual API; pass --models "
    "offline (the bundled heuristics, no network) or --models openai to extract events and "
    "elements"
)
"""What a command that appends says on stderr when it runs without models."""


def model_options(models: str) -> dict[str, Any]:
    """The callback options of ``StrataGate.open`` for ``--models``: the provider's name for
    each model (the library resolves it), or none (blocks seal with deterministic views,
    nothing is extracted)."""
    if models == "none":
        return {}
    if models not in PROVIDERS:
        raise InvalidInputError(
            f"--models must be one of {', '.join(MODEL_CHOICES)}, got {models!r}"
        )
    return dict.fromkeys(KINDS, models)


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


def ingest_turns(
    memory: StrataGate,
    turns: Sequence[FileTurn],
    progress: Progress,
    *,
    stop: threading.Event | None = None,
) -> IngestReport:
    """Finish work a previous run left pending, then append the turns not yet in.

    A bad turn raises ``TurnFileError`` naming where it was read (the turns before it stay
    in); a model failure raises ``ModelError`` once the turns of its chunk are stored. Either
    way the next run resumes. When ``stop`` is set the run ends after its current chunk.
    """
    started = time.monotonic()
    before = Counts.of(memory)
    memory.resume_pending_work()
    appended = skipped = 0
    for chunk in chunks(turns, TURNS_PER_CALL):
        if stop is not None and stop.is_set():
            break
        duplicates = append_chunk(memory, chunk)
        appended += len(chunk) - duplicates
        skipped += duplicates
        progress.advance(len(chunk))
    return IngestReport(
        total=len(turns),
        appended=appended,
        skipped=skipped,
        before=before,
        after=Counts.of(memory),
        elapsed_s=time.monotonic() - started,
    )


def chunks(turns: Sequence[FileTurn], size: int) -> Iterator[Sequence[FileTurn]]:
    for start in range(0, len(turns), size):
        yield turns[start : start + size]


def append_chunk(memory: StrataGate, chunk: Sequence[FileTurn]) -> int:
    """Append a chunk in one call; returns how many of its turns were already in."""
    try:
        result = memory.append_turns(
            [{"user": t.user, "assistant": t.assistant, **t.append_kwargs()} for t in chunk]
        )
    except (InvalidInputError, ReceiptConflictError):
        # One turn is bad and nothing of the chunk went in: go turn by turn, so the turns
        # before it do and the error names its line.
        for turn in chunk:
            append_one(memory, turn)
        raise  # not reached unless append_turns refused what append_turn accepts
    except ModelError as exc:
        raise ModelError(
            f"{chunk[0].origin} to {chunk[-1].origin}: model call failed after these turns "
            f"were stored: {exc} (run the same ingest again to resume)"
        ) from exc
    return result.duplicates


def append_one(memory: StrataGate, turn: FileTurn) -> None:
    try:
        memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
    except InvalidInputError as exc:
        raise TurnFileError(f"{turn.origin}: {exc}") from exc
    except ReceiptConflictError as exc:
        raise ReceiptConflictError(f"{turn.origin}: {exc}") from exc
    except ModelError as exc:
        raise ModelError(
            f"{turn.origin}: model call failed after the turn was stored: {exc} "
            "(run the same ingest again to resume)"
        ) from exc


# -- a job of many files --------------------------------------------------------------------


@dataclass(frozen=True)
class JobFile:
    """One file of a job: where it was read, its kind, turns and target namespace."""

    path: str
    kind: str
    turns: list[FileTurn]
    namespace: str


@dataclass(frozen=True)
class FileResult:
    """A file's outcome in its namespace."""

    file: JobFile
    report: IngestReport

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file.path,
            "kind": self.file.kind,
            "namespace": self.file.namespace,
            **self.report.as_dict(),
        }


def job_files(
    paths: Sequence[str], namespace: str | None, *, thread_id: str | None, limit: int | None
) -> list[JobFile]:
    """Every named file and every turn file of every named directory, read and checked, with
    its namespace: ``namespace`` when given; else ``default`` for a single file, one named by
    the file's stem for several files or a directory. Nothing is opened before all are read."""
    found = [file for path in paths for file in turn_files_at(Path(path))]
    single = len(paths) == 1 and len(found) == 1 and not Path(paths[0]).is_dir()
    files = []
    seen: dict[tuple[str, str], Path] = {}
    for path in found:
        target = namespace or (DEFAULT_NAMESPACE if single else path.stem)
        try:
            check_namespace(target)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{path}: {exc} (name one with --namespace)") from exc
        earlier = seen.setdefault((target, path.name), path)
        if earlier != path:  # their receipt ids (NAME:LINE) would collide: turns would be lost
            raise InvalidInputError(
                f"{earlier} and {path} would both go into namespace {target!r} under one "
                "file name; ingest them separately with --namespace"
            )
        turn_file = read_turn_file(path, thread_id=thread_id, limit=limit)
        files.append(JobFile(str(path), turn_file.kind, turn_file.turns, target))
    return files


TURN_FILE_SUFFIXES = (".jsonl", ".json")
"""The files a directory contributes to ``ingest``: JSONL turns and LoCoMo conversations."""


def turn_files_at(path: Path) -> list[Path]:
    """``path`` itself, or a directory's turn files (not hidden, not recursive) by name."""
    if not path.is_dir():
        return [path]
    found = sorted(
        child
        for child in path.iterdir()
        if child.is_file() and child.suffix in TURN_FILE_SUFFIXES and not child.name.startswith(".")
    )
    if not found:
        raise TurnFileError(f"{path}: no {' or '.join(TURN_FILE_SUFFIXES)} files in it")
    return found


def run_job(
    database: str,
    files: Sequence[JobFile],
    options: dict[str, Any],
    *,
    parallel: int,
    progress: Progress,
) -> list[FileResult]:
    """Ingest every file; the files of one namespace go in order on one worker thread.

    The first failure stops the job: the other workers finish their current chunk and end,
    then the failure is raised (everything appended stays in; a rerun resumes). Ctrl-C does
    the same.
    """
    by_namespace: dict[str, list[JobFile]] = {}
    for file in files:
        by_namespace.setdefault(file.namespace, []).append(file)
    stop = threading.Event()

    def ingest_namespace(namespace: str, group: list[JobFile]) -> list[FileResult]:
        results = []
        with StrataGate.open(database, namespace, **options) as memory:
            for file in group:
                report = ingest_turns(memory, file.turns, progress, stop=stop)
                results.append(FileResult(file, report))
        if not stop.is_set():  # a stopped namespace is not done
            progress.advance(namespaces=1)
        return results

    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="ingest") as pool:
        futures: list[Future[list[FileResult]]] = [
            pool.submit(ingest_namespace, namespace, group)
            for namespace, group in by_namespace.items()
        ]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        except BaseException:  # Ctrl-C while waiting
            _stop_all(stop, futures)
            raise
        if any(future.exception() is not None for future in done):
            _stop_all(stop, futures)
    failures = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
    if failures:
        raise failures[0]  # type: ignore[misc]
    return [result for future in futures for result in future.result()]


def _stop_all(stop: threading.Event, futures: Sequence[Future[Any]]) -> None:
    """Start no more namespaces; running ones end after their current chunk."""
    stop.set()
    for future in futures:
        future.cancel()


__all__ = [
    "MODEL_CHOICES",
    "NO_MODELS_NOTICE",
    "TURNS_PER_CALL",
    "TURN_FILE_SUFFIXES",
    "Counts",
    "FileResult",
    "IngestReport",
    "JobFile",
    "append_chunk",
    "ingest_turns",
    "job_files",
    "model_options",
    "run_job",
]
