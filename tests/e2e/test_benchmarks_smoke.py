"""Every benchmark script runs end to end at a tiny size and writes the report it documents.

Figures are not asserted (performance is measured, not tested); what is asserted is that each
script works from a fresh clone and that its JSON carries the fields docs/BENCHMARKS.md quotes.
"""

from __future__ import annotations

import pstats
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.slow  # seconds each: real processes or long property searches

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def bench(tmp_path: Path, script: str, *argv: str, timeout: float = 300) -> dict[str, Any]:
    out = tmp_path / f"{script}.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{script}.py"), *argv, "--out", str(out)],
        capture_output=True, text=True, timeout=timeout, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"wrote {out}" in done.stdout
    report = orjson.loads(out.read_bytes())
    assert report["benchmark"] == script and report["machine"]["cpus"]
    return report


def test_bench_search_reports_latency_and_growth(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_search", "--sizes", "600,1200", "--queries", "20", "--facade")
    rows = {(row["kind"], row["corpus"]): row for row in report["results"]}
    assert set(rows) == {("events", 600), ("events", 1200), ("raw", 600), ("raw", 1200)}
    for row in rows.values():
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"] and row["n"] == 20
        assert row["postings_p50"] > 0
    assert {(row["store"], row["kind"]) for row in report["facade"]} == {
        (store, kind) for store in ("durable", "memory") for kind in ("raw", "events")
    }
    assert {(g["kind"], g["from"], g["to"]) for g in report["growth"]} == {
        ("events", 600, 1200),
        ("raw", 600, 1200),
    }


def test_bench_replay_compares_snapshot_with_full_replay(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_replay", "--events", "3000", "--tail", "300", "--repeat", "1")
    steps = {row["step"]: row for row in report["results"]}
    assert set(steps) == {"decode", "full replay", "replay + first search", "snapshot + tail"}
    assert report["sizes"]["events"] == 3000 and report["sizes"]["messages"] > 0
    assert report["hydrate_speedup"] > 0
    assert report["memory"]["rss_after_mb"] > report["memory"]["rss_before_mb"] > 0
    assert report["memory"]["rss_after_search_mb"] > 0
    assert report["replay_profile"] is None


def test_bench_replay_profiles_a_full_replay(tmp_path: Path) -> None:
    stats = tmp_path / "replay.pstats"
    argv = ("--events", "1000", "--tail", "100", "--repeat", "1", "--turns", "0")
    report = bench(tmp_path, "bench_replay", *argv, "--profile", str(stats))
    profile = report["replay_profile"]["on"]
    assert profile["path"] == str(stats) and pstats.Stats(str(stats)).total_calls > 0
    shares = profile["shares"]
    assert set(shares) == {"read and decode", "fold"} and 0.5 < sum(shares.values()) <= 1.0
    assert all(share > 0 for share in shares.values()) and len(profile["top"]) == 15
    own = [row["own_s"] for row in profile["top"]]
    assert own == sorted(own, reverse=True) and all(row["calls"] > 0 for row in profile["top"])


def test_bench_ingest_ingests_and_verifies(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_ingest", "--conversations", "1")
    assert report["verified"] is True and report["sizes"]["turns"] > 100
    assert report["memory"]["blocks"] >= report["sizes"]["turns"] // 12
    assert [row["turns"] for row in report["results"]] == ["all", "first 10%", "last 10%"]
    assert set(report["last_over_first"]) == {"p50_ms", "p95_ms", "p99_ms", "mean_ms"}
    assert set(report["cpu_p50_us"]) == {"first 10%", "last 10%"}
    assert report["gc"]["collections"] >= 0 and report["results"][0]["p99_ms"] > 0
    assert report["gc"]["tracked_per_1000_turns"] > 0 and report["max_cpu_ms"] > 0
    assert 1 <= report["statements_per_turn"] < 20
    # the log is read at open (the hydration's tail, then once more on taking the writer
    # lease), never again per turn: the writer folds its own appends
    catch_up_reads = report["catch_up_reads_per_turn"] * report["sizes"]["turns"]
    assert round(catch_up_reads) <= 2


def test_bench_concurrency_loses_and_doubles_nothing(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_concurrency", "--processes", "1,2", "--backends", "sqlite",
                   "--turns", "12", "--block", "4")  # fmt: skip
    rows = report["rows"]
    assert [(r["backend"], r["processes"], r["turns"]) for r in rows] == [
        ("sqlite", 1, 12),
        ("sqlite", 2, 24),
    ]
    assert all(r["lost"] == r["doubled"] == 0 and r["verify"] == "ok" for r in rows)
    assert rows[0]["retries_max"] == 0  # one process never loses a race
    assert rows[1]["turns_per_s"] > 0 and rows[1]["p99_ms"] >= rows[1]["p50_ms"]


def test_bench_ingest_batches_per_conversation_in_memory(tmp_path: Path) -> None:
    report = bench(
        tmp_path, "bench_ingest", "--conversations", "2", "--layout", "per-conversation",
        "--store", "memory", "--batch", "32", "--models", "none", "--gc-freeze",
    )  # fmt: skip
    assert report["verified"] is True and report["sizes"]["batch"] == 32
    assert report["sizes"]["gc_freeze"] is True
    assert report["memory"]["revision"] > report["sizes"]["turns"]


@pytest.mark.ray
def test_bench_namespaces_loses_no_turn(tmp_path: Path) -> None:
    report = bench(
        tmp_path, "bench_namespaces",
        "--namespaces", "2", "--turns", "12", "--max-live", "1", "--workers", "1",
        "--models", "none", timeout=400,
    )  # fmt: skip
    ray_row, inline_row = report["results"]
    assert (ray_row["runtime"], inline_row["runtime"]) == ("ray", "inline")
    for row in (ray_row, inline_row):
        assert row["namespaces"] == row["completed"] == 2 and row["turns"] == 24
        assert row["all_turns_in_log"] and row["rss_series"] and row["turns_per_s"] > 0
    assert ray_row["peak_processes"] > 1 and ray_row["activation_p50_ms"] > 0
    assert ray_row["actors_started"] == 2  # one host per CPU (num_cpus=2), none per namespace
    [ratio] = report["ratios"]
    assert ratio["ray_over_inline"] > 0


@pytest.mark.ray
def test_bench_ray_plain_measures_both_runtimes_on_the_same_work(tmp_path: Path) -> None:
    report = bench(
        tmp_path, "bench_ray_plain",
        "--namespaces", "3", "--turns", "4", "--block-turn-size", "2", "--workers", "2",
        "--rounds", "1", "--models", "none", timeout=400,
    )  # fmt: skip
    rows = {(row["runtime"], row["pass"]): row for row in report["results"]}
    assert set(rows) == {(r, p) for r in ("inline", "ray") for p in ("cold", "warm")}
    assert report["same_work"] is True
    for row in rows.values():
        assert row["turns"] == row["log_TurnAppended"] == 12 and row["log_BlockSealed"] == 6
        assert row["cpu_ms_per_turn"] > 0 and row["peak_rss_mb"] > 0
    assert any(name.startswith("ray::") for name in rows["ray", "cold"]["cpu_s_by_process"])
    for ratio in report["ratios"].values():
        assert ratio["throughput_ray_over_inline"] > 0 and ratio["cpu_per_turn_ray_over_inline"] > 0


def test_bench_log_measures_every_metric_on_sqlite(tmp_path: Path) -> None:
    report = bench(
        tmp_path, "bench_log",
        "--backends", "sqlite", "--single", "20", "--batched", "200", "--repeat", "1",
    )  # fmt: skip
    metrics = {row["metric"] for row in report["results"] if row["backend"] == "sqlite"}
    assert metrics == {"append_single", "append_batch", "replay", "verify"}
    assert all(row["median"] > 0 for row in report["results"])


def test_bench_cards_reports_totals_memory_and_jobs_before_and_after(tmp_path: Path) -> None:
    checkout = str(SCRIPTS.parent)
    report = bench(
        tmp_path, "bench_cards", "--cards", "60", "--window", "20", "--repeat", "1",
        "--before", checkout,
    )  # fmt: skip
    rows = {(row["code"], row["calls"]): row for row in report["rows"]}
    assert set(rows) == {(c, m) for c in ("before", "after") for m in ("add_event", "add_events")}
    for (_, calls), row in rows.items():
        assert row["total_s"] > 0 and row["cpu_s"] > 0 and row["peak_rss_mib"] > 0
        assert row["search_cpu_s"] > 0
        assert row["runs"] == 1
        assert row["jobs"] == (60 if calls == "add_event" else 1)
    assert rows["after", "add_event"]["first_p50_ms"] > 0
    assert report["cards"] == 60 and report["before"] == checkout


def test_bench_mcp_times_tool_calls_over_stdio_and_http(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_mcp", "--turns", "40", "--calls", "5", "--warmup", "2")
    assert {(row["transport"], row["tool"]) for row in report["results"]} == {
        (transport, tool)
        for transport in ("in-process", "stdio", "http")
        for tool in ("search_events", "recall_context")
    }
    for row in report["results"]:
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"] and row["n"] == 5
        assert row["transport"] == "in-process" or row["server_cpu_ms"] >= 0  # 10 ms ticks
    assert report["sizes"]["turns"] == 40 and report["target"]["http_p50_ms_max"] == 10


def test_bench_inputs_refuses_or_answers_every_case_in_time(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_inputs", "--repeat", "1", "--budget", "5")
    assert {row["pass"] for row in report["cases"]} == {"yes"}
    assert any(row["expected"] == "InvalidInputError" for row in report["cases"])


def test_bench_export_times_export_check_and_imports(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_export", "--events", "600", "--repeat", "1")
    steps = {row["step"] for row in report["results"]}
    assert {"export", "check", "import sqlite", "import sqlite rebased"} <= steps
    assert "import postgres" in steps or report["notes"]
    assert all(row["events_per_s"] > 0 for row in report["results"])
    assert report["sizes"]["events"] == 600 and report["sizes"]["file_mb"] > 0


def test_bench_hooks_times_the_hook_process_per_event(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_hooks", "--sizes", "60", "--runs", "3")
    assert [result["turns"] for result in report["results"]] == [60]
    for result in report["results"]:
        assert set(result["samples"]) == {
            "UserPromptSubmit",
            "Stop (1 new turn)",
            "Stop (50 new turns)",
        }
        for stats in result["samples"].values():
            assert 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["max_ms"] and stats["n"] == 3
        assert set(result["server_ms"]) == {"UserPromptSubmit", "Stop"}
        assert result["stored_after"] == result["turns"] + 3 * 51  # nothing lost or doubled
        assert result["cold_start_ms"] > 0 and result["no_server_prompt_ms"] > 0
        assert result["breakdown"]["import_memory_ms"] > 0 and result["server_rss_mb"] > 0
        assert result["ignored_event_ms"]["n"] == 3
    assert report["goals_ms"] == {"UserPromptSubmit": 400.0, "Stop (1 new turn)": 500.0}


def test_bench_ui_times_every_kind_of_request(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_ui", "--events", "1500", "--requests", "5")
    rows = {row["request"]: row for row in report["results"]}
    assert set(rows) == {
        "overview", "namespace", "events page", "blocks page", "log page", "search events",
        "search raw", "state: slider", "state: jump",
    }  # fmt: skip
    for row in rows.values():
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"] and row["n"] >= 5
    assert report["sizes"]["events"] == 1500 and report["first_request_ms"] > 0
    assert report["server_rss_mb"] > 0


def test_bench_open_times_writable_and_read_only_opens(tmp_path: Path) -> None:
    report = bench(tmp_path, "bench_open", "--events", "300", "--repeat", "1")
    [row] = report["rows"]
    assert row["events"] == 300 and row["code"] == "after"
    assert row["open_ms"] > 0 and row["read_only_ms"] > 0 and row["chain_walk_ms"] > 0


def test_bad_inputs_finds_no_raw_error(tmp_path: Path) -> None:
    report = bench(tmp_path, "bad_inputs")
    assert report["raw"] == [] and sum(report["totals"].values()) >= 1500
