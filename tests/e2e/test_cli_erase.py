"""``stratagate erase …`` and ``stratagate namespaces drop``: refused without --yes, then the
content is gone (search, history, the file) while verify still passes; a purge keeps an audit."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagate import StrataGate
from stratagate.cli.app import main
from stratagate.events.content_fields import ERASED
from stratagate.store.sql import open_event_store
from tests.support.cli import unwrap


@pytest.fixture
def database(tmp_path: Path) -> str:
    path = str(tmp_path / "m.db")
    with StrataGate.open(path, "ns", block_turn_size=2) as memory:
        for i in range(4):
            memory.append_turn(f"the okapi password is {i}", "noted", thread_id="secret")
            memory.append_turn(f"the heron count is {i}", "ok", thread_id="public")
    with StrataGate.open(path, "other", block_turn_size=2) as memory:
        memory.append_turn("tenant leaving soon", "bye")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_erase_thread_needs_yes_then_erases(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--database", database, "--namespace", "ns"]
    code, _, err = run(capsys, "erase", "thread", "secret", *where)
    assert code == 2 and "--yes" in err
    code, out, _ = run(capsys, "erase", "thread", "secret", *where, "--yes", "--reason", "t-9")
    assert code == 0 and "erased thread secret" in out
    code, out, _ = run(capsys, "history", *where, "--json")
    records = unwrap(out, "history")
    contents = [
        m["content"] for r in records if r["type"] == "TurnAppended" for m in r["data"]["messages"]
    ]
    assert ERASED in contents and not any("okapi" in c for c in contents)
    assert any("heron" in c for c in contents)
    assert [r["data"]["reason"] for r in records if r["type"] == "ThreadErased"] == ["t-9"]
    assert run(capsys, "verify", *where)[0] == 0
    assert b"okapi" not in Path(database).read_bytes()


def test_namespaces_drop_with_purge_keeps_an_audit_record(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "namespaces", "drop", "other", "--database", database)
    assert code == 2 and "--yes" in err
    code, out, _ = run(
        capsys, "namespaces", "drop", "other", "--database", database, "--yes", "--purge-rows"
    )
    assert code == 0 and "purged" in out
    code, out, _ = run(capsys, "namespaces", "--database", database, "--json")
    assert [n["namespace"] for n in unwrap(out, "namespaces")] == ["ns"]
    with open_event_store(database, create=False) as store:
        [record] = store.purges()
        assert record.namespace == "other" and record.rows >= 2
        assert store.load_keys("other") == []
        assert store.verify_chain("ns") is None
    code, _, err = run(capsys, "namespaces", "drop", "other", "--database", database, "--yes")
    assert code == 3


def test_expand_of_an_erased_event_says_what_stays(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with StrataGate.open(database, "ns") as memory:
        block = memory.list_blocks("public")[0]
        card = memory.add_event(
            {"title": "heron census", "summary": "the heron count", "source_block_id": block.id}
        )
    where = ["--database", database, "--namespace", "ns"]
    code, out, _ = run(capsys, "expand", "event", card.id, *where)
    assert code == 0 and "erased" not in out
    assert run(capsys, "erase", "event", card.id, *where, "--yes")[0] == 0
    code, out, _ = run(capsys, "expand", "event", card.id, *where)
    assert code == 0 and "heron census" not in out
    out = " ".join(out.split())  # the note is wrapped to the terminal width
    assert f"erased: this card (and the facts drawn from it) reads {ERASED}" in out
    assert "its source messages belong to thread public" in out
    assert "stratagate erase thread public" in out
    assert "heron count" in out  # the source message itself is still there, as said
    shown = unwrap(run(capsys, "expand", "event", card.id, *where, "--json")[1], "expand")
    assert shown["erased"] is True
