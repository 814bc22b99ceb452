"""``stratagate serve``: the memory's tools over MCP, on stdio or streamable HTTP (docs/AGENTS.md).

The MCP SDK is an extra (``pip install 'stratagate[mcp]'``) imported only here. The server opens
each namespace on its first call and holds nothing that keeps other processes (another server,
a hook, the CLI) from writing it: a lost race is decided again (``on_conflict="retry"``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from stratagate.cli.constants import ENV_TOKEN, EXIT_OK
from stratagate.cli.ingest_job import NO_MODELS_NOTICE, model_options
from stratagate.errors import InvalidInputError, StrataGateError
from stratagate.memory import StrataGate


class MissingExtraError(StrataGateError):
    """An optional dependency of the command is not installed."""


def allow_list(namespace: str, namespaces: str | None) -> frozenset[str]:
    """The namespaces a call may name: ``--namespaces`` (which must hold ``--namespace``)."""
    if namespaces is None:
        return frozenset({namespace})
    names = frozenset(name.strip() for name in namespaces.split(",") if name.strip())
    if not names:
        raise InvalidInputError("--namespaces lists no namespace")
    if namespace not in names:
        raise InvalidInputError(f"--namespace {namespace!r} must be one of --namespaces")
    return names


def stop_on_sigterm() -> None:
    """SIGTERM stops the server as Ctrl-C does: the open memories are closed (their snapshot
    taken) before the process exits with status 0."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(EXIT_OK)

    signal.signal(signal.SIGTERM, stop)


def serve(args: argparse.Namespace) -> int:
    """Serve until the client closes stdin (stdio) or the process is interrupted (http)."""
    try:
        from stratagate.integrations import mcp_server
    except ImportError as exc:
        raise MissingExtraError(
            f"serve needs the MCP SDK ({exc.name} is missing): pip install 'stratagate[mcp]'"
        ) from exc
    from stratagate.integrations.http_guard import GuardSettings, check_bind

    options: dict[str, Any] = {**model_options(args.models), "on_conflict": "retry"}
    if args.read_only:
        options = {"read_only": True}
    if args.block_turn_size is not None:
        options["block_turn_size"] = args.block_turn_size
    if args.ray_address is not None and args.runtime != "ray":
        raise InvalidInputError("--ray-address joins a Ray cluster: it needs --runtime ray")
    if args.runtime == "ray":
        options.update(
            runtime="ray", ray_address=args.ray_address, ray_log_level=args.ray_log_level
        )
    allowed = allow_list(args.namespace, args.namespaces)
    token = args.token or os.environ.get(ENV_TOKEN) or None
    if args.transport == "http":
        check_bind(args.host, token)
    elif args.ui:
        raise InvalidInputError("--ui needs --transport http (the UI is a web page)")
    wire = mcp_server.claim_stdio() if args.transport == "stdio" else None
    if not args.read_only:  # fail now on an unusable database, not at the first call
        StrataGate.prepare_database(args.database)
    pool = mcp_server.MemoryPool(args.database, args.namespace, allowed, options)
    stop_on_sigterm()
    if args.models == "none":
        print(f"stratagate: {NO_MODELS_NOTICE}", file=sys.stderr)
    served = ", ".join(sorted(allowed))
    if wire is not None:
        print(f"stratagate: serving {served} of {args.database} on stdio", file=sys.stderr)
        mcp_server.run_stdio(pool, wire)
        return EXIT_OK
    guard = GuardSettings(
        token=token, max_body_bytes=args.max_body_bytes, rate=float(args.rate_limit)
    )
    print(
        f"stratagate: serving {served} of {args.database} on http://{args.host}:{args.port}/mcp",
        file=sys.stderr,
        flush=True,
    )
    if not args.ui:
        mcp_server.run_http(pool, args.host, args.port, guard)
        return EXIT_OK
    from stratagate.integrations.ui.app import BesideMcp, ui_app
    from stratagate.integrations.ui.catalog import Catalog

    catalog = Catalog(args.database, sorted(allowed))
    print(f"stratagate: Memory UI on http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    try:
        mcp_server.run_http(
            pool, args.host, args.port, guard,
            beside=lambda mcp: BesideMcp(mcp, ui_app(catalog, args.host, guard)),
        )  # fmt: skip
    finally:
        catalog.close()
    return EXIT_OK


__all__ = ["MissingExtraError", "allow_list", "serve"]
