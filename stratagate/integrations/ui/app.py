"""The Memory UI's web app (Starlette): the page, its assets and the ``/api/v1`` JSON API.

Only GET (and HEAD) is served; any other method is a 405 JSON error. In front of it, as for the
MCP server: Host and Origin checks (a loopback server answers only to loopback Host names, and a
request from another origin is refused, so no other site can read it; no CORS header is ever
sent), then ``HttpGuard`` (rate limit, and the bearer token on the API; the page and its assets
hold no data and load without one). Every string of every JSON answer, error messages
included, is passed through credential redaction on the way out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stratagate.core.redaction import redact_value
from stratagate.errors import InvalidInputError, StrataGateError, UnknownIdError
from stratagate.integrations.http_guard import (
    App,
    GuardSettings,
    HttpGuard,
    Origins,
    Receive,
    Scope,
    Send,
    host_allowed,
    origin_allowed,
)
from stratagate.integrations.ui import api
from stratagate.integrations.ui.catalog import Catalog

log = logging.getLogger("stratagate.ui")

API_PREFIX = "/api/v1"
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "index.html": "text/html; charset=utf-8",
}
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
MAX_UI_BODY_BYTES = 1024
"""The UI takes no bodies (GET only): anything larger is refused before it is read."""


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON answer with every string (keys too) redacted of credential patterns."""
    body = orjson.dumps(redact_value(value))
    return Response(body, status, {**SECURITY_HEADERS, **(headers or {})}, "application/json")


def error_response(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return json_response({"error": {"type": kind, "message": message}}, status, headers)


STATUS_OF: tuple[tuple[type[StrataGateError], int], ...] = (
    (InvalidInputError, 400),
    (UnknownIdError, 404),
)


def error_of(exc: StrataGateError) -> Response:
    """A typed error as JSON: 400 for bad input, 404 for unknown ids, else 500."""
    status = next((code for kind, code in STATUS_OF if isinstance(exc, kind)), 500)
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)  # no repr quotes
    message = " ".join(str(text).split())
    return error_response(status, type(exc).__name__, message)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no route) and 405 (not GET) as JSON."""
    assert isinstance(exc, HTTPException)
    kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
    return error_response(exc.status_code, kind, str(exc.detail), dict(exc.headers or {}))


def asset(name: str) -> Response:
    """One of the page's files, from the package."""
    text = resources.files("stratagate.integrations.ui").joinpath("static", name).read_bytes()
    return Response(text, 200, SECURITY_HEADERS, ASSETS[name])


def build_app(catalog: Catalog) -> Starlette:
    """The page and the JSON API over a catalogue (no security in front: see ``secure``)."""

    async def run(work: Callable[[Catalog], Any]) -> Response:
        try:
            return json_response(await catalog.arun(work))
        except StrataGateError as exc:
            return error_of(exc)
        except Exception:  # a bug: the client still gets a typed answer, the log the trace
            log.exception("the UI API failed")
            return error_response(500, "InternalError", "the server failed; see its log")

    async def page(request: Request) -> Response:
        return asset("index.html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            raise HTTPException(404, f"no asset {name!r}")
        return asset(name)

    async def namespaces(request: Request) -> Response:
        params = api.Params(request.query_params)
        return await run(lambda c: api.list_namespaces(c, params))

    async def namespace_view(request: Request) -> Response:
        ns, name = request.path_params["ns"], request.path_params.get("view", "")
        handler = api.NAMESPACE_ROUTES.get(name)
        if handler is None:
            raise HTTPException(404, f"no route {request.url.path!r}")
        params = api.Params(request.query_params)
        return await run(lambda c: handler(c.reader(ns), params))

    async def item_view(request: Request) -> Response:
        ns, name, item = (request.path_params[k] for k in ("ns", "view", "item"))
        handler = api.ITEM_ROUTES.get(name)
        if handler is None:
            raise HTTPException(404, f"no route {request.url.path!r}")
        params = api.Params(request.query_params)
        return await run(lambda c: handler(c.reader(ns), params, item))

    async def not_found(request: Request) -> Response:
        raise HTTPException(404, f"no route {request.url.path!r}")

    return Starlette(
        routes=[
            Route("/", page),
            Route("/static/{name}", static),
            Route(f"{API_PREFIX}/namespaces", namespaces),
            Route(f"{API_PREFIX}/namespaces/{{ns}}", namespace_view),
            Route(f"{API_PREFIX}/namespaces/{{ns}}/{{view}}", namespace_view),
            Route(f"{API_PREFIX}/namespaces/{{ns}}/{{view}}/{{item}}", item_view),
            Route(f"{API_PREFIX}/{{rest:path}}", not_found),
        ],
        exception_handlers={HTTPException: http_error},
    )


@dataclass(frozen=True)
class ByPath:
    """Requests under ``/api/`` to one app (token-guarded), everything else to the other."""

    api_app: App
    page_app: App

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        target = self.api_app if path.startswith("/api/") else self.page_app
        await target(scope, receive, send)


def secure(app: App, bind: str, guard: GuardSettings) -> App:
    """``app`` behind the Host/Origin checks and the guard: rate limit for everything, the
    bearer token for the API, no bodies."""
    limits = replace(guard, max_body_bytes=MAX_UI_BODY_BYTES)
    page_limits = replace(limits, token=None)
    return Origins(ByPath(HttpGuard(app, limits), HttpGuard(app, page_limits)), bind)


def ui_app(catalog: Catalog, bind: str, guard: GuardSettings) -> App:
    """The Memory UI, secured, for uvicorn."""
    return secure(build_app(catalog), bind, guard)


@dataclass(frozen=True)
class BesideMcp:
    """The MCP app at ``/mcp`` and the Memory UI everywhere else, on one server; lifespan
    events go to the MCP app (it runs its session manager), the UI needs none."""

    mcp_app: App
    ui: App

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp_app(scope, receive, send)
        else:
            await self.ui(scope, receive, send)


def run_ui(catalog: Catalog, host: str, port: int, guard: GuardSettings) -> None:
    """Serve the Memory UI until interrupted; the catalogue is closed afterwards."""
    import uvicorn

    config = uvicorn.Config(
        ui_app(catalog, host, guard), host=host, port=port, log_level="warning",
        access_log=False, server_header=False, date_header=False, lifespan="off",
    )  # fmt: skip
    try:
        uvicorn.Server(config).run()
    finally:
        catalog.close()


__all__ = [
    "API_PREFIX",
    "BesideMcp",
    "Origins",
    "build_app",
    "host_allowed",
    "json_response",
    "origin_allowed",
    "run_ui",
    "secure",
    "ui_app",
]
