"""``stratagate ui``: the read-only Memory UI and its ``/api/v1`` JSON API (docs/UI.md).

Starlette and uvicorn come with the MCP SDK (``pip install 'stratagate[mcp]'``) and are imported
only here. Nothing is written: every namespace is opened read-only.
"""

from __future__ import annotations

import argparse
import os
import sys

from stratagate.cli.commands import NothingThereError, log_summary, require_database
from stratagate.cli.constants import ENV_TOKEN, EXIT_OK
from stratagate.cli.serve import MissingExtraError, stop_on_sigterm


def ui(args: argparse.Namespace) -> int:
    """Serve the Memory UI until interrupted."""
    try:
        from stratagate.integrations.ui.app import run_ui
        from stratagate.integrations.ui.catalog import Catalog
    except ImportError as exc:
        raise MissingExtraError(
            f"ui needs Starlette and uvicorn ({exc.name} is missing): pip install 'stratagate[mcp]'"
        ) from exc
    from stratagate.integrations.http_guard import GuardSettings, check_bind
    from stratagate.memory import check_namespace

    token = args.token or os.environ.get(ENV_TOKEN) or None
    check_bind(args.host, token)
    require_database(args.database)
    names = [check_namespace(n) for n in args.namespaces] if args.namespaces else None
    for name in names or []:
        log_summary(args.database, name)  # an unknown namespace is an error now, not a 404 later
    catalog = Catalog(args.database, names)
    if not catalog.run(lambda c: c.names()):
        catalog.close()
        raise NothingThereError(f"no namespace with events in {args.database}")
    guard = GuardSettings(token=token, rate=float(args.rate_limit))
    served = "every namespace" if names is None else ", ".join(names)
    print(
        f"stratagate: Memory UI of {served} in {args.database} on http://{args.host}:{args.port}/",
        file=sys.stderr,
        flush=True,
    )
    stop_on_sigterm()
    run_ui(catalog, args.host, args.port, guard)
    return EXIT_OK


__all__ = ["ui"]
