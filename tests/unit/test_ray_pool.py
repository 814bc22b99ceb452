"""The Ray pool's rules: which host serves a new namespace, and what the directory's process
imports (it starts inside a memory's first open on a fresh cluster)."""

from __future__ import annotations

from collections import Counter

from stratagate.actors.ray_pool import least_busy, pack, unpack
from stratagate.options import MemoryOptions
from tests.support.fresh_python import printed_by


def test_a_started_host_serves_before_an_idler_one_still_starting() -> None:
    assert least_busy(["a", "b"], {"b"}, Counter(a=5)) == "a"
    assert least_busy(["a", "b"], set(), Counter(a=5)) == "b"


def test_the_least_busy_started_host_then_the_first() -> None:
    assert least_busy(["a", "b", "c"], {"a"}, Counter(a=0, b=3, c=2)) == "c"
    assert least_busy(["a", "b", "c"], set(), Counter()) == "a"


def test_when_no_host_has_started_any_may_serve() -> None:
    assert least_busy(["a", "b"], {"a", "b"}, Counter(a=1)) == "b"


def test_options_reach_the_host_as_they_left_the_driver() -> None:
    options = MemoryOptions(block_turn_size=3, max_live_namespaces=2)
    assert unpack(pack(options)) == options


CODE = """
import sys
import stratagate.actors.ray_pool
heavy = ("stratagate.actors.hosted", "stratagate.actors.pipeline", "stratagate.messages",
         "stratagate.offline", "stratagate.actors.ray_runtime")
print(sorted(name for name in heavy if name in sys.modules))
"""


def test_the_directorys_module_loads_no_role_message_or_model() -> None:
    assert printed_by(CODE).split() == ["[]"]
