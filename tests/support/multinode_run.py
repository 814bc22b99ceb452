"""A Ray cluster of several nodes on this machine, ingesting several namespaces into PostgreSQL.

Run as ``python -m tests.support.multinode_run <postgres url> <nodes> <namespaces>`` (its own
process: it starts its own cluster with ``ray.cluster_utils.Cluster``). Prints one JSON line:
the nodes each namespace's actors ran on, the turns found in the log, and whether every
namespace verifies.
"""

from __future__ import annotations

import json
import sys

import ray
from ray.cluster_utils import Cluster

from stratagate import StrataGate
from tests.support.fakes import KeywordExtractor, TitleSummarizer, UsesProjector

TURNS = 6


def main(url: str, nodes: int, namespaces: int) -> None:
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, namespace="stratagate", log_to_driver=False)
    cluster.wait_for_nodes()
    from ray import cloudpickle

    import tests.support.fakes as fakes

    cloudpickle.register_pickle_by_value(fakes)
    options = {
        "runtime": "ray",
        "block_turn_size": 2,
        "max_live_namespaces": namespaces,
        "summarizer": TitleSummarizer(),
        "extractor": KeywordExtractor(),
        "element_projector": UsesProjector(),
    }
    report: dict[str, object] = {"nodes": len(ray.nodes()), "namespaces": {}}
    memories = [StrataGate.open(url, f"tenant-{n}", **options) for n in range(namespaces)]
    try:
        for n, memory in enumerate(memories):
            rows = [
                {"user": f"tenant {n} decided item {i}", "assistant": "ok", "receipt_id": f"r{i}"}
                for i in range(TURNS)
            ]
            memory.append_turns(rows, wait=False)
        for n, memory in enumerate(memories):
            memory.drain(timeout=300)
            handles = memory.handles
            placed = {
                role: ray.get(getattr(handles, role).node.remote())
                for role in ("sealer", "extractor", "projector", "weights")
            }
            texts = [m.content for b in memory.list_blocks() for m in b.l5_raw]
            report["namespaces"][f"tenant-{n}"] = {  # type: ignore[index]
                "nodes": sorted(set(placed.values())),
                "turns": memory.turn,
                "own_text_only": all(t == "ok" or t.startswith(f"tenant {n} ") for t in texts),
                "verified": memory.verify().ok,
            }
    finally:
        for memory in memories:
            memory.close()
        ray.shutdown()
        cluster.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
