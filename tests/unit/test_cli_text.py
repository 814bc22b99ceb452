"""The command line's text layout and formatting: widths, clipping, wrapping, tables, progress,
the time axes of events and gists of logged events."""

from __future__ import annotations

import io
import threading
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from stratagate.cli.formatting import happened, history_gist, validity
from stratagate.cli.progress import PLAIN_EVERY_S, Progress
from stratagate.cli.render import (
    clip,
    display_width,
    duration,
    one_line,
    progress_line,
    table,
    wrap,
)
from stratagate.models import ElementFact, EventTemporal

TEXT = st.text(alphabet=st.sampled_from([*"ab cd\nxy\t", "数", "据", "库", "é", "…"]), max_size=200)
T0 = datetime(2026, 3, 4, tzinfo=UTC)


def test_wide_characters_take_two_columns() -> None:
    assert display_width("abc") == 3
    assert display_width("数据库") == 6
    assert display_width("e\u0301") == 1  # a combining accent takes no column


@given(TEXT, st.integers(min_value=1, max_value=60))
def test_clip_fits_and_keeps_what_fits(text: str, width: int) -> None:
    clipped, flat = clip(text, width), one_line(text)
    assert display_width(clipped) <= width and "\n" not in clipped
    if display_width(flat) <= width:
        assert clipped == flat
    else:
        assert clipped.endswith("…") and flat.startswith(clipped[:-1])


def test_clip_keeps_alignment_spaces_but_joins_lines() -> None:
    assert clip("  L2 key points   turns 1-4", 100) == "  L2 key points   turns 1-4"
    assert clip("first line  \n   second", 100) == "first line second"
    assert clip("数据库数据库", 7) == "数据库…"


@given(TEXT, st.integers(min_value=10, max_value=50))
def test_wrap_fits_the_width_and_loses_no_text(text: str, width: int) -> None:
    lines = wrap(text, width, indent="  ")
    assert all(display_width(line) <= width for line in lines)
    assert "".join("".join(lines).split()) == "".join(text.split())


def test_wrap_preview_drops_blank_lines_and_marks_the_cut() -> None:
    text = "one two three\n\nfour five six\n\nseven"
    assert wrap(text, 20, indent="> ", max_lines=2) == ["> one two three", "> four five six …"]
    assert wrap(text, 20) == ["one two three", "", "four five six", "", "seven"]


def test_table_aligns_columns_and_clips_the_last() -> None:
    lines = table(["ID", "NAME"], [["a", "数据库"], ["bbbb", "x" * 200]], width=30)
    assert lines[0] == "ID    NAME"
    assert lines[1] == "a     数据库"
    assert lines[2].startswith("bbbb  xxx") and lines[2].endswith("…")
    assert display_width(lines[2]) == 30


def test_progress_line() -> None:
    assert progress_line(0, 4, 0.0, bar=4) == "[....] 0/4 turns · 0.0 turns/s"
    assert progress_line(20, 40, 4.0, bar=4) == "[##..] 20/40 turns · 5.0 turns/s · ETA 4s"
    assert progress_line(2, 40, 4.0, bar=4) == "[....]  2/40 turns · 0.5 turns/s · ETA 1m16s"
    assert progress_line(40, 40, 8.0, bar=4) == "[####] 40/40 turns · 5.0 turns/s"
    assert (
        progress_line(30, 40, 3.0, namespaces=(2, 12), bar=4)
        == "[###.] 30/40 turns ·  2/12 namespaces · 10.0 turns/s · ETA 1s"
    )


def test_duration() -> None:
    assert [duration(s) for s in (0, 0.2, 59, 61, 3599.5, 7620)] == [
        "0s",
        "1s",
        "59s",
        "1m01s",
        "1h00m",
        "2h07m",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(text: str) -> list[str]:
    """What a terminal shows for ``text``: ``\\r`` returns to column 0 without erasing."""
    rows: list[str] = []
    for line in text.split("\n"):
        row: list[str] = []
        for part in line.split("\r"):
            row[: len(part)] = part
        rows.append("".join(row))
    return rows


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_redraws_one_line_on_a_terminal() -> None:
    stream, clock = Terminal(), Clock()
    with Progress(3, stream, clock=clock) as progress:
        for _ in range(3):
            clock.now += 1.0
            progress.advance(1)
    text = stream.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n")
    assert screen(text)[0].rstrip().endswith("] 3/3 turns · 1.0 turns/s")


def test_a_shorter_line_leaves_no_residue() -> None:
    """The last line drops its ETA and is shorter: the terminal must not keep the old end."""
    stream, clock = Terminal(), Clock()
    progress = Progress(40, stream, clock=clock)
    clock.now += 0.5
    progress.advance(5)  # 10.0 turns/s, ETA 4s
    clock.now += 9.5
    progress.advance(35)  # 4.0 turns/s, done: no ETA
    progress.finish()
    assert stream.getvalue().count("\r") == 2
    assert screen(stream.getvalue())[0].rstrip() == progress_line(40, 40, 10.0)


def test_progress_counts_namespaces_and_turns_from_many_threads() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(4000, stream, namespaces=4, clock=clock)

    def worker() -> None:
        for _ in range(1000):
            progress.advance(1)
        progress.advance(namespaces=1)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    progress.finish()
    assert (progress.done, progress.namespaces_done) == (4000, 4)
    assert (
        screen(stream.getvalue())[0]
        .rstrip()
        .startswith("[##############################] 4000/4000 turns · 4/4 namespaces")
    )


def test_progress_is_quiet_in_a_log_until_it_takes_a_while() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress(100, stream, clock=clock) as progress:
        for _ in range(49):
            progress.advance(1)
        assert stream.getvalue() == ""
        clock.now += PLAIN_EVERY_S
        progress.advance(1)
        progress.advance(50)
    assert stream.getvalue() == f"ingest: {progress_line(50, 100, PLAIN_EVERY_S)}\n"


def test_happened_reads_both_ends_precision_basis_and_wording() -> None:
    assert happened(None) == "unknown"
    ranged = EventTemporal(
        happened_start="2026-03-09",
        happened_end="2026-03-15",
        precision="range",
        basis="relative",
        original_text="next week",
    )
    assert happened(ranged) == '2026-03-09 → 2026-03-15 (range, relative, "next week")'
    day = EventTemporal(happened_start="2026-03-06T10:30:00Z", happened_end="2026-03-06T10:30:00Z")
    assert happened(day) == "2026-03-06 10:30"


def test_validity_of_open_and_closed_facts() -> None:
    fact = ElementFact(
        id="f",
        key="uses",
        mode="state",
        value="npm",
        valid_from=T0,
        source_event_ids=["e"],
        created_at=T0,
        updated_at=T0,
    )
    assert validity(fact) == "since 2026-03-04"
    closed = fact.model_copy(update={"valid_to": datetime(2026, 3, 9, tzinfo=UTC)})
    assert validity(closed) == "2026-03-04 → 2026-03-09"


def test_history_gist_names_turns_ids_and_a_snippet() -> None:
    turn = {
        "turn": 3,
        "thread_id": "alpha",
        "receipt_id": "r-3",
        "messages": [{"content": "Let's switch\nto pnpm"}],
    }
    assert history_gist(turn, 100) == 'turn 3 · thread alpha · "Let\'s switch to pnpm" · r-3'
    batch = {"query": "pnpm", "batch_id": "batch_1", "refs": ["a", "b"], "at": "x"}
    assert history_gist(batch, 100) == '"pnpm" · batch_1 · 2 refs'
    settings = {"at": "x", "type": "SettingsChanged", "block_turn_size": 12}
    assert history_gist(settings, 100) == "block_turn_size=12"
