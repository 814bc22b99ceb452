"""The ``stratagate.log.v1`` reader: any edit of any event line is refused at that line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate.errors import LogFileError
from stratagate.log_file import LogHeader, LogReader, event_line, header_line, key_line
from stratagate.store.chain import CHAINED_COLUMNS, seal_batch
from stratagate.store.records import GENESIS_HASH, DataKey, NewEvent, StoredEvent

KEYS = [DataKey("ns", "thread:t@1", b"k" * 32, None, "2026-01-01T00:00:00.000000Z")]


def log_rows(count: int) -> list[StoredEvent]:
    rows: list[StoredEvent] = []
    versions: dict[str, int] = {}
    for number in range(count):
        new = NewEvent(f"e{number}", "Noted", 1, orjson.dumps({"n": number}).decode())
        stream = "ingest" if number % 3 else "weights"
        versions[stream] = versions.get(stream, 0) + 1
        rows += seal_batch(
            [new],
            namespace="ns",
            stream=stream,
            first_version=versions[stream],
            recorded_at=f"2026-01-01T00:00:{number:02d}.000000Z",
            prev_hash=rows[-1].hash if rows else GENESIS_HASH,
            first_position=2 * number + 1,  # gaps: other namespaces' rows
        )
    return rows


def write(path: Path, rows: list[StoredEvent], **header: Any) -> Path:
    fields: dict[str, Any] = {
        "namespace": "ns",
        "keys": len(KEYS),
        "events": len(rows),
        "first_position": rows[0].global_position,
        "head_position": rows[-1].global_position,
        "head_hash": rows[-1].hash,
        "exported_at": "2026-01-02T00:00:00.000000Z",
        "exported_by": "test",
        **header,
    }
    lines = [header_line(LogHeader(**fields)), *map(key_line, KEYS), *map(event_line, rows)]
    path.write_bytes(b"".join(lines))
    return path


def read_all(path: Path) -> list[StoredEvent]:
    with LogReader(path) as reader:
        return [checked.row for checked in reader.rows()]


def test_a_written_log_reads_back(tmp_path: Path) -> None:
    rows = log_rows(12)
    path = write(tmp_path / "log.jsonl", rows)
    assert read_all(path) == rows
    with LogReader(path) as reader:
        assert [key.data_key("ns") for key in reader.keys] == KEYS


EDITS = st.sampled_from(
    [
        *[(column, "text") for column in CHAINED_COLUMNS if column != "global_position"],
        ("global_position", "number"),
        ("stream_version", "number"),
        ("schema_version", "number"),
        ("prev_hash", "text"),
        ("hash", "text"),
    ]
)


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, 11), edit=EDITS, value=st.text(min_size=1, max_size=5))
def test_any_edit_of_an_event_line_is_refused_at_that_line(
    tmp_path: Path, index: int, edit: tuple[str, str], value: str
) -> None:
    rows = log_rows(12)
    path = write(tmp_path / "log.jsonl", rows)
    lines = path.read_bytes().splitlines()
    number = 1 + len(KEYS) + 1 + index
    line = orjson.loads(lines[number - 1])
    column, kind = edit
    original = line[column]
    if kind == "number":
        line[column] = original + 1 + len(value)
    elif column in ("namespace", "stream", "event_id", "event_type", "recorded_at"):
        line[column] = original + value
    elif column == "payload":
        line[column] = orjson.dumps({"n": -1, "x": value}).decode()
    else:
        line[column] = "f" * 64 if original != "f" * 64 else "e" * 64
    if line[column] == original:
        return
    lines[number - 1] = orjson.dumps(line)
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(LogFileError) as caught:
        read_all(path)
    assert caught.value.line == number, str(caught.value)


def test_truncation_extra_lines_and_bad_headers(tmp_path: Path) -> None:
    rows = log_rows(5)
    path = write(tmp_path / "log.jsonl", rows)
    lines = path.read_bytes().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_bytes(b"".join(lines[:-1]))
    with pytest.raises(LogFileError, match=r"line 7 .*truncated") as caught:
        read_all(tmp_path / "cut.jsonl")
    assert caught.value.line == 7
    (tmp_path / "more.jsonl").write_bytes(b"".join([*lines, lines[-1]]))
    with pytest.raises(LogFileError, match=r"line 8 .*more lines follow"):
        read_all(tmp_path / "more.jsonl")
    (tmp_path / "v2.jsonl").write_bytes(
        lines[0].replace(b"log.v1", b"log.v2") + b"".join(lines[1:])
    )
    with pytest.raises(LogFileError, match=r"line 1 .*not a stratagate.log.v1 header"):
        read_all(tmp_path / "v2.jsonl")
    with pytest.raises(LogFileError, match=r"line 1 .*header's head"):
        read_all(write(tmp_path / "head.jsonl", rows, head_hash="0" * 64))
    with pytest.raises(LogFileError, match="cannot read"):
        read_all(tmp_path / "missing.jsonl")
