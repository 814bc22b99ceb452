"""The helpers every benchmark shares (``scripts/benchkit.py``)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import benchkit


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=50))
def test_percentile_matches_the_inclusive_quantiles(values: list[float]) -> None:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    for q in (5, 50, 95):
        assert abs(benchkit.percentile(values, q) - cuts[q - 1]) <= 1e-6 * (1 + abs(cuts[q - 1]))
    assert benchkit.percentile(values, 0) == min(values)
    assert benchkit.percentile(values, 100) == max(values)


def test_the_process_tree_includes_children_and_their_memory() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in benchkit.descendants(os.getpid())
        alone = benchkit.rss_mb()
        total, processes = benchkit.tree_rss_mb()
        assert processes >= 2 and total > alone > 0
    finally:
        child.kill()
        child.wait()
    assert child.pid not in benchkit.descendants(os.getpid())
    assert benchkit.rss_mb(child.pid) == 0.0
