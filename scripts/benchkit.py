"""What every benchmark script shares: percentiles, resident memory, the JSON report, a table.

Scripts import it as a sibling module (``python scripts/bench_x.py`` puts ``scripts/`` on the
path); tests load it the same way.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import platform
import statistics
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max of durations given in seconds, as milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": statistics.fmean(ms),
        "max_ms": max(ms),
        "n": len(ms),
    }


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process in MiB (0.0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0.0


def peak_rss_mb() -> float:
    """This process's peak resident set size (``VmHWM``) in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def descendants(root: int) -> list[int]:
    """Pids of every living process below ``root`` (from ``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def tree_rss_mb(root: int | None = None) -> tuple[float, int]:
    """Total resident memory (MiB) of ``root`` (default: this process) and its descendants, and
    how many processes that is."""
    root = os.getpid() if root is None else root
    pids = [root, *descendants(root)]
    return sum(rss_mb(pid) for pid in pids), len(pids)


@contextmanager
def sampling(look: Callable[[], None], every: float) -> Iterator[None]:
    """Calls ``look`` now, every ``every`` seconds on a thread of its own while the block runs,
    and once more after it ends."""
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(every):
            look()

    look()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        look()


@contextmanager
def local_ray(enabled: bool = True) -> Iterator[None]:
    """A fresh local Ray of two CPUs for the block (nothing when ``enabled`` is false),
    shut down after it; Ray is imported only when used."""
    if not enabled:
        yield
        return
    import ray

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        namespace="stratagate",
    )
    try:
        yield
    finally:
        ray.shutdown()


def installed_bytecode(packages: Sequence[str] = ("stratagate", "projections")) -> str:
    """Compile the measured checkout's packages to bytecode, as ``pip install`` does, and say so.

    A process on this machine (``PYTHONDONTWRITEBYTECODE=1``) would otherwise compile every
    module of a source checkout from scratch on each import, which an installed package never
    does: a Ray host's imports take about a third more CPU that way (session 7's Ray
    subsection), and the Ray benchmarks start several such processes inside the timed pass.
    The bytecode goes where Python looks for it (``__pycache__``, ignored by git)."""
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"cannot find the package {package!r} to compile")
        for location in spec.submodule_search_locations:
            if not compileall.compile_dir(location, quiet=1):
                raise SystemExit(f"could not compile {location}")
    return "compiled before the run, as an installed package has it"


def machine() -> dict[str, Any]:
    """Where the figures come from (load average included: these machines are shared)."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def encryption_modes(text: str) -> list[str]:
    """``--encryption``: ``on``, ``off`` or both (``on,off``), each mode one full run."""
    modes = [mode.strip() for mode in text.split(",") if mode.strip()]
    if not modes or any(mode not in ("on", "off") for mode in modes):
        raise argparse.ArgumentTypeError("--encryption takes on, off or on,off")
    return modes


@contextmanager
def fresh_database(kind: str) -> Iterator[str]:
    """A new SQLite file, or a new schema on the PostgreSQL server ``kind`` names."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="bench-ns-") as tmp:
            yield os.path.join(tmp, "memory.db")
        return
    # imported here: SQLAlchemy is tens of MiB of a child's peak RSS, which the benchmarks of
    # in-memory namespaces measure and which a memory without a SQL store no longer imports
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(kind, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield (
            make_url(kind)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def write_report(name: str, out: str | Path, **sections: Any) -> Path:
    """Write the benchmark's JSON report (name, time, machine and the given sections)."""
    report = {
        "benchmark": name,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **sections,
    }
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    return path


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    """Rows as an aligned text table; floats get thousands separators and two decimals at most."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)

    text = [[cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in text)]) for i, c in enumerate(columns)]
    print(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(columns, widths, strict=True))
        )
    )
    for row in text:
        print(
            "  ".join(
                v.ljust(w) if i == 0 else v.rjust(w)
                for i, (v, w) in enumerate(zip(row, widths, strict=True))
            )
        )


__all__ = [
    "descendants",
    "encryption_modes",
    "fresh_database",
    "machine",
    "peak_rss_mb",
    "percentile",
    "print_table",
    "rss_mb",
    "summary_ms",
    "tree_rss_mb",
    "write_report",
]
