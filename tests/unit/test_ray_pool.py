"""The Ray pool's rules: which host serves a new namespace, and what the directory's process
imports (it starts inside a memory's first open on a fresh cluster)."""

from __future__ import annotations

from collections import Counter

from stratagate.actors.ray_pool import from_here, least_busy, pack, unpack
from stratagate.options import MemoryOptions
from tests.support.fresh_python import printed_by


def test_a_started_host_serves_before_an_idler_one_still_starting() -> None:
    assert least_busy(["a", "b"], {"b"}, Counter(a=1)) == "a"
    assert least_busy(["a", "b"], set(), Counter(a=5)) == "b"


def test_a_starting_host_is_waited_for_once_the_started_ones_are_more_than_one_busier() -> None:
    assert least_busy(["a", "b", "c"], {"b", "c"}, Counter(a=2)) == "b"
    assert least_busy(["a", "b", "c"], {"b", "c"}, Counter(a=5, b=4, c=4)) == "a"
    assert least_busy(["a", "b", "c"], {"b", "c"}, Counter(a=5, b=4, c=2)) == "c"
    assert least_busy(["a", "b"], {"b"}, Counter(a=2), imbalance=2) == "a"


def test_a_fresh_cluster_spreads_its_first_namespaces_while_hosts_start() -> None:
    """Namespaces opened one after another while only the first host has started (the
    three-node cluster's case): every host gets some, none two more than another."""
    hosts, load = ["a", "b", "c"], Counter[str]()
    for _ in range(6):
        load[least_busy(hosts, {"b", "c"}, load)] += 1
    assert max(load.values()) - min(load[host] for host in hosts) <= 2
    assert len(load) == 3


def test_the_least_busy_started_host_then_the_first() -> None:
    assert least_busy(["a", "b", "c"], {"a"}, Counter(a=1, b=3, c=2)) == "c"
    assert least_busy(["a", "b", "c"], set(), Counter()) == "a"


def test_when_no_host_has_started_any_may_serve() -> None:
    assert least_busy(["a", "b"], {"a", "b"}, Counter(a=1)) == "b"


def test_hosts_go_to_the_other_nodes_before_the_directorys_again() -> None:
    assert from_here(["n1", "n2", "n3"], "n2") == ["n2", "n3", "n1"]
    assert from_here(["n1", "n2"], "elsewhere") == ["n1", "n2"]


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
