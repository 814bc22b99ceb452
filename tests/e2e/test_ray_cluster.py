"""Ray beyond one machine: a cluster of three nodes (simulated on this machine with
``ray.cluster_utils.Cluster``) ingesting several namespaces into one PostgreSQL database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(900)]
ROOT = Path(__file__).resolve().parents[2]


def test_namespaces_spread_over_nodes_and_every_turn_lands(postgres_schema_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.multinode_run", postgres_schema_url, "3", "3"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["nodes"] == 3
    tenants = report["namespaces"]
    assert len(tenants) == 3
    for tenant in tenants.values():
        assert tenant["turns"] == 6 and tenant["own_text_only"] and tenant["verified"]
    used = {node for tenant in tenants.values() for node in tenant["nodes"]}
    assert len(used) >= 2  # the namespaces' actors run on more than one node
