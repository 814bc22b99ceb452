"""Run a snippet in a fresh interpreter of this checkout: what a new process imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def printed_by(code: str) -> str:
    """What ``code`` prints when run alone by this Python with the checkout on its path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


__all__ = ["ROOT", "printed_by"]
