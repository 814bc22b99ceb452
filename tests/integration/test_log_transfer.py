"""Export and import of a namespace's log: the copy verifies and answers like the original, on
SQLite and PostgreSQL; an edited, truncated or forged file is refused by line, writing nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import orjson
import pytest

from stratagate import StrataGate
from stratagate.errors import (
    InvalidInputError,
    LogFileError,
    LogIntegrityError,
    MasterKeyError,
    StorageConflictError,
)
from stratagate.events.content_fields import ERASED
from stratagate.store import open_store
from stratagate.store.chain import row_hash
from stratagate.store.keys import MASTER_KEY_ENV, new_master_key
from stratagate.store.records import StoredEvent

SAMPLE = files("stratagate") / "sample" / "project_conversation.jsonl"
MODELS = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
QUERIES = ("pnpm", "Lin Wei", "offline sync", "Northridge", "deadline", "sqlite")
ERASED_WORD = "zebrafishdb"


def ingest(memory: StrataGate, *, turns: int | None = None) -> None:
    for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:turns]:
        turn = json.loads(line)
        memory.append_turn(
            turn["user"], turn["assistant"], created_at=turn["created_at"],
            thread_id=turn["thread_id"], receipt_id=turn["receipt_id"],
        )  # fmt: skip


def build_source(database: Path, namespace: str = "project") -> str:
    """A namespace with every stream written: the sample, an erased card, governance, usage."""
    with StrataGate.open(database, namespace, block_turn_size=6, **MODELS) as memory:
        ingest(memory)
        memory.append_turn(f"we decided the cache uses {ERASED_WORD}", "noted", thread_id="side")
        memory.append_turn("anything else?", "no", thread_id="side")
        events = memory.list_events()
        memory.pin_event(events[0].id)
        memory.forget_event(events[1].id)
        hits = memory.search_events("pnpm")
        memory.record_memory_use(event_ids=[hits[0].event.id], receipt_id="use-1")
        secret = memory.add_event(
            {
                "title": f"cache on {ERASED_WORD}",
                "summary": f"the cache runs on {ERASED_WORD}",
                "source_block_id": events[2].source_block_id,
                "source_message_ids": events[2].source_message_ids,
            }
        )
        memory.erase_event(secret.id, reason="test erasure")
        return secret.id


def answers(memory: StrataGate) -> dict[str, Any]:
    """What a reader gets from the namespace (reads first: searches log a batch each)."""
    found: dict[str, Any] = {
        "stats": memory.stats().model_dump(exclude={"namespace"}),
        "blocks": [block.model_dump(mode="json") for block in memory.list_blocks()],
        "events": [event.model_dump(mode="json") for event in memory.list_events()],
        "elements": [element.model_dump(mode="json") for element in memory.list_elements()],
        "jobs": [job.model_dump(mode="json") for job in memory.list_extraction_jobs()],
        "receipts": [r.model_dump(mode="json") for r in memory.list_usage_receipts()],
        "context": [entry.model_dump() for entry in memory.get_block_context()],
    }
    for query in QUERIES:
        found[f"events:{query}"] = [(h.event.id, h.score) for h in memory.search_events(query)]
        found[f"elements:{query}"] = [(h.id, h.score) for h in memory.search_elements(query)]
        found[f"raw:{query}"] = [
            (h.block_id, h.message.id, h.score) for h in memory.search_raw_memory(query)
        ]
        found[f"recall:{query}"] = memory.recall_context(query).model_dump(exclude={"batch_id"})
    return found


def history(memory: StrataGate, *, positions: bool = True) -> list[tuple[Any, ...]]:
    return [
        (h.position if positions else None, h.stream, h.stream_version, h.type, h.recorded_at,
         h.data)
        for h in memory.history()
    ]  # fmt: skip


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The original database, its export, and what the original answers after the export."""
    folder = tmp_path_factory.mktemp("source")
    database = folder / "source.db"
    erased_id = build_source(database)
    export = folder / "project.jsonl"
    with StrataGate.open(database, "project", **MODELS) as memory:
        report = memory.export_log(export)
        anchor = memory.checkpoint()
        seen = {"history": history(memory), "history_clear": history(memory, positions=False)}
        seen["answers"] = answers(memory)
    yield {
        "database": database,
        "export": export,
        "report": report,
        "anchor": anchor,
        "erased_id": erased_id,
        **seen,
    }


def check_copy(copy: StrataGate, source: dict[str, Any], *, kept: bool) -> None:
    report = copy.verify()
    assert report.ok, report.detail
    assert history(copy, positions=kept) == source["history" if kept else "history_clear"]
    assert answers(copy) == source["answers"]
    expanded = copy.expand_event(source["erased_id"])
    assert expanded.event.title == ERASED
    if kept:
        assert copy.verify(source["anchor"]).ok  # the original's anchor holds for the copy


def test_export_writes_every_row_and_key(source: dict[str, Any]) -> None:
    lines = source["export"].read_bytes().splitlines()
    header = orjson.loads(lines[0])
    report = source["report"]
    assert header["format"] == "stratagate.log.v1" and header["namespace"] == "project"
    assert header["events"] == report.events == len(lines) - 1 - header["keys"]
    assert header["head_hash"] == report.head_hash == source["anchor"].head_hash
    assert report.erased_keys >= 1 and report.wrapped_by is None
    assert os.stat(source["export"]).st_mode & 0o777 == 0o600  # it holds the keys
    with open_store(str(source["database"])) as store:
        stored = store.read("project")[: header["events"]]  # the answers came later
    rows = [orjson.loads(line) for line in lines[1 + header["keys"] :]]
    assert [StoredEvent(**{k: v for k, v in row.items() if k != "kind"}) for row in rows] == stored
    assert ERASED_WORD.encode() not in source["export"].read_bytes()


def test_sqlite_to_sqlite_is_an_exact_copy(source: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "copy.db"
    imported = StrataGate.import_log(source["export"], target)
    assert imported.positions_kept and imported.head_hash == source["report"].head_hash
    assert imported.events == source["report"].events
    with StrataGate.open(target, "project", **MODELS) as copy:
        check_copy(copy, source, kept=True)


@pytest.mark.postgres
def test_sqlite_to_postgres(source: dict[str, Any], postgres_schema_url: str) -> None:
    imported = StrataGate.import_log(source["export"], postgres_schema_url)
    assert imported.positions_kept
    with StrataGate.open(postgres_schema_url, "project", **MODELS) as copy:
        check_copy(copy, source, kept=True)
        copy.append_turn("after the move", "still here")  # the sequence moved past the rows
        assert copy.verify().ok


@pytest.mark.postgres
def test_postgres_with_other_namespaces_rebases(
    source: dict[str, Any], postgres_schema_url: str
) -> None:
    with StrataGate.open(postgres_schema_url, "busy") as busy:
        for turn in range(3):
            busy.append_turn(f"turn {turn}", "ok")
    imported = StrataGate.import_log(source["export"], postgres_schema_url)
    assert not imported.positions_kept
    with StrataGate.open(postgres_schema_url, "project", **MODELS) as copy:
        check_copy(copy, source, kept=False)


def test_a_busy_database_or_new_name_rebases(source: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "busy.db"
    with StrataGate.open(target, "other", block_turn_size=2) as other:
        for turn in range(400):  # positions past the source's
            other.append_turn(f"turn {turn}", "ok")
    imported = StrataGate.import_log(source["export"], target)
    assert not imported.positions_kept and imported.head_hash != imported.source_head_hash
    with StrataGate.open(target, "project", **MODELS) as copy:
        check_copy(copy, source, kept=False)
        assert not copy.verify(source["anchor"]).ok  # the old anchor names old positions
    renamed = tmp_path / "renamed.db"
    StrataGate.import_log(source["export"], renamed, namespace="renamed")
    with StrataGate.open(renamed, "renamed", **MODELS) as copy:
        check_copy(copy, source, kept=False)


def nothing_written(database: Path) -> None:
    if not database.exists():
        return
    with open_store(str(database)) as store:
        assert store.namespaces() == [] and store.load_keys("project") == []


def edited(source: Path, tmp_path: Path, line: int, edit: Any) -> Path:
    lines = source.read_bytes().splitlines()
    value = orjson.loads(lines[line - 1])
    edit(value)
    lines[line - 1] = orjson.dumps(value)
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(b"\n".join(lines) + b"\n")
    return forged


def first_event_line(path: Path) -> int:
    return 2 + orjson.loads(path.read_bytes().splitlines()[0])["keys"]


def test_an_edited_line_is_refused_by_number(source: dict[str, Any], tmp_path: Path) -> None:
    line = first_event_line(source["export"]) + 10

    def forge(row: dict[str, Any]) -> None:
        row["recorded_at"] = "2020-01-01T00:00:00.000000Z"

    target = tmp_path / "target.db"
    with pytest.raises(LogFileError, match=f"line {line} of .*was edited") as caught:
        StrataGate.import_log(edited(source["export"], tmp_path, line, forge), target)
    assert caught.value.line == line
    nothing_written(target)


def test_a_rehashed_forgery_breaks_at_the_next_line(source: dict[str, Any], tmp_path: Path) -> None:
    line = first_event_line(source["export"]) + 3

    def forge(row: dict[str, Any]) -> None:
        row["recorded_at"] = "2020-01-01T00:00:00.000000Z"
        row["hash"] = row_hash(
            row["prev_hash"], StoredEvent(**{k: v for k, v in row.items() if k != "kind"})
        )

    target = tmp_path / "target.db"
    with pytest.raises(LogFileError, match=f"line {line + 1} of .*prev_hash") as caught:
        StrataGate.import_log(edited(source["export"], tmp_path, line, forge), target)
    assert caught.value.line == line + 1
    nothing_written(target)


def test_a_swapped_key_is_refused_where_it_is_used(source: dict[str, Any], tmp_path: Path) -> None:
    lines = source["export"].read_bytes().splitlines()
    live = [n for n, raw in enumerate(lines[1:], start=2) if b'"material":"' in raw]

    def forge(key: dict[str, Any]) -> None:
        key["material"] = orjson.loads(lines[live[1] - 1])["material"]

    target = tmp_path / "target.db"
    with pytest.raises(LogFileError, match="does not decrypt with the file's key") as caught:
        StrataGate.import_log(edited(source["export"], tmp_path, live[0], forge), target)
    assert caught.value.line is not None and caught.value.line >= first_event_line(source["export"])
    nothing_written(target)


def test_truncated_and_foreign_files_are_refused(source: dict[str, Any], tmp_path: Path) -> None:
    lines = source["export"].read_bytes().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines[:-5]) + b"\n")
    target = tmp_path / "target.db"
    with pytest.raises(LogFileError, match=f"line {len(lines) - 4} .*truncated"):
        StrataGate.import_log(cut, target)
    wrong_head = edited(source["export"], tmp_path, 1, lambda h: h.update(head_hash="0" * 64))
    with pytest.raises(LogFileError, match=r"line 1 .*not the header's head"):
        StrataGate.import_log(wrong_head, target)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"user": "hi", "assistant": "hello"}\n')
    with pytest.raises(LogFileError, match=r"line 1 .*not a stratagate\.log\.v1 header"):
        StrataGate.import_log(foreign, target)
    nothing_written(target)


def test_an_occupied_namespace_or_database_is_refused(
    source: dict[str, Any], tmp_path: Path
) -> None:
    target = tmp_path / "target.db"
    with StrataGate.open(target, "project") as there:
        there.append_turn("already here", "yes")
        before = there.revision
    with pytest.raises(StorageConflictError, match="already holds a log"):
        StrataGate.import_log(source["export"], target)
    StrataGate.import_log(source["export"], target, namespace="second")
    with pytest.raises(StorageConflictError, match="in this database already"):
        StrataGate.import_log(source["export"], target, namespace="third")
    with StrataGate.open(target, "project") as there:
        assert there.revision == before
    with open_store(str(target)) as store:
        assert store.namespaces() == ["project", "second"]
    with pytest.raises(InvalidInputError, match="durable database"):
        StrataGate.import_log(source["export"], ":memory:")


def test_keys_travel_wrapped_under_the_master_key(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master = new_master_key()
    monkeypatch.setenv(MASTER_KEY_ENV, master)
    with StrataGate.open(source["database"], "project", read_only=True) as original:
        bare_in_db = original.export_log(tmp_path / "wrapped-on-export.jsonl")
    assert bare_in_db.wrapped_by is not None  # bare keys in the database, wrapped in the file
    first = tmp_path / "first.db"
    StrataGate.import_log(source["export"], first)  # a bare file, wrapped on the way in
    with open_store(str(first)) as store:
        assert all(key.wrapped for key in store.load_keys("project") if key.material)
    wrapped = tmp_path / "wrapped.jsonl"
    with StrataGate.open(first, "project", read_only=True) as copy:
        report = copy.export_log(wrapped)
    assert report.wrapped_by is not None and report.head_hash == source["report"].head_hash
    text = wrapped.read_bytes().splitlines()
    keys = [orjson.loads(line) for line in text[1 : 1 + report.keys]]
    assert all(k["wrapped"] == report.wrapped_by for k in keys if k["material"] is not None)
    monkeypatch.delenv(MASTER_KEY_ENV)
    target = tmp_path / "target.db"
    with pytest.raises(MasterKeyError, match="wrapped by master key"):
        StrataGate.import_log(wrapped, target)
    nothing_written(target)
    monkeypatch.setenv(MASTER_KEY_ENV, master)
    StrataGate.import_log(wrapped, target)
    with StrataGate.open(target, "project", **MODELS) as copy:
        check_copy(copy, source, kept=True)


def test_a_damaged_log_is_not_exported(tmp_path: Path) -> None:
    database = tmp_path / "damaged.db"
    with StrataGate.open(database, "ns", block_turn_size=2) as memory:
        for turn in range(4):
            memory.append_turn(f"turn {turn}", "ok")
    import sqlite3

    with sqlite3.connect(database) as conn:
        conn.execute(
            "UPDATE stratagate_events SET recorded_at = '2020-01-01T00:00:00.000000Z' "
            "WHERE global_position = 3"
        )
    out = tmp_path / "out.jsonl"
    with (
        pytest.raises(LogIntegrityError, match="global position 3"),
        StrataGate.open(database, "ns", read_only=True) as memory,
    ):
        memory.export_log(out)
    assert list(tmp_path.glob("*.jsonl*")) == [] and list(tmp_path.glob(".out*")) == []


def test_a_sealed_checkpoint_keeps_its_positions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATAGATE_CHECKPOINT_KEY", "a key for the test")
    database = tmp_path / "source.db"
    with StrataGate.open(database, "ns", block_turn_size=2) as memory:
        memory.append_turn("one", "ok")
        memory.checkpoint()
        memory.append_turn("two", "ok")
        out = tmp_path / "ns.jsonl"
        memory.export_log(out)
    StrataGate.import_log(out, tmp_path / "same.db")
    with StrataGate.open(tmp_path / "same.db", "ns") as copy:
        assert copy.verify().ok
    lines = out.read_bytes().splitlines()
    line = next(n for n, raw in enumerate(lines, 1) if b'"event_type":"LogCheckpointed"' in raw)
    with pytest.raises(LogFileError, match=f"line {line} .*sealed checkpoint"):
        StrataGate.import_log(out, tmp_path / "renamed.db", namespace="renamed")
    nothing_written(tmp_path / "renamed.db")
