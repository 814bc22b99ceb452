"""``stratagate serve``: the memory's tools over the Model Context Protocol (official ``mcp`` SDK,
low-level ``Server``), on stdio or streamable HTTP.

Each tool's input schema is its pydantic model's JSON schema plus an optional ``namespace``
(restricted to the server's allow-list). Calls run one at a time on a single worker thread that
owns the open memories (one per namespace, opened on first use), so the event loop never blocks
on the store. A failure is a tool error (``isError``) whose text starts with the typed error's
class: ``UnknownIdError: unknown event id 'evt_x'``. Nothing is sent anywhere else: the SDK's
OpenTelemetry middleware is removed.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import mcp_types as types
import orjson
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from stratagate import __version__
from stratagate.core.turn_input import IMPORT_THREAD_PREFIX
from stratagate.errors import AccessDeniedError, InvalidInputError, StrataGateError
from stratagate.integrations.http_guard import GuardSettings, HttpGuard, Origins, check_bind
from stratagate.integrations.tools import TOOLS, Tool, dump, find_tool
from stratagate.memory import StrataGate, check_namespace

R = TypeVar("R")
log = logging.getLogger("stratagate.mcp")

BROWSABLE = frozenset({"search_events", "search_elements", "search_raw_memory"})
"""The searches a read-only server answers from the memory's view (their batch is not logged)."""

NAMESPACE_PROPERTY = {
    "type": "string",
    "description": "The memory (namespace) to use; default: the server's. Only the namespaces "
    "the server allows are served.",
}
INSTRUCTIONS = (
    "Long-term memory of past conversations. Before answering a question that may depend on "
    "the past, call recall_context (or a search). Run the evidence gate: search, then "
    "assess_retrieval with the search's batch_id and the hit ids that answer the question; "
    "when the verdict is not 'sufficient', follow next_strategy. After answering, call "
    "record_memory_use with the ids used. Store each finished turn with append_turn."
)


@dataclass
class MemoryPool:
    """The open memories of a server's allowed namespaces, owned by one worker thread."""

    database: str
    namespace: str
    allowed: frozenset[str]
    options: Mapping[str, Any] = field(default_factory=dict)
    _memories: dict[str, StrataGate] = field(default_factory=dict, init=False)
    _worker: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        check_namespace(self.namespace)
        for name in self.allowed:
            check_namespace(name)
        if self.namespace not in self.allowed:
            raise InvalidInputError(
                f"the default namespace {self.namespace!r} must be one of --namespaces"
            )
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stratagate-memory")

    def resolve(self, namespace: object) -> str:
        """The namespace a call names (``None``: the default); refused outside the allow-list."""
        if namespace is None:
            return self.namespace
        if not isinstance(namespace, str) or namespace not in self.allowed:
            raise AccessDeniedError(
                f"namespace {namespace!r} is not served here (not in the server's allow-list)"
            )
        return namespace

    def memory(self, namespace: str) -> StrataGate:
        """The open memory of an allowed namespace, opened on its first call (worker thread
        only). Nothing is held that keeps other processes from writing it."""
        memory = self._memories.get(namespace)
        if memory is None:
            memory = StrataGate.open(self.database, namespace, **self.options)
            self._memories[namespace] = memory
        return memory

    def tool_target(self, memory: StrataGate, tool: Tool[Any]) -> StrataGate:
        """What a tool runs on: the memory, or on a read-only server, for the searches, its
        view (a search there logs no batch; the tools that write answer ``ReadOnlyError``)."""
        if self.options.get("read_only") and tool.name in BROWSABLE:
            return cast(StrataGate, memory.view())
        return memory

    def run(self, namespace: str, work: Callable[[StrataGate], R]) -> R:
        """Run ``work`` on the namespace's memory on the worker thread, and wait."""
        return self._worker.submit(lambda: work(self.memory(namespace))).result()

    async def arun(self, namespace: str, work: Callable[[StrataGate], R]) -> R:
        """``run`` without blocking the event loop."""
        future = self._worker.submit(lambda: work(self.memory(namespace)))
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Close every open memory (finishing background work) and stop the worker."""

        def close_all() -> None:
            while self._memories:
                _, memory = self._memories.popitem()
                memory.close()

        self._worker.submit(close_all).result()
        self._worker.shutdown()


def tool_schema(tool: Tool[Any]) -> dict[str, Any]:
    """A tool's MCP input schema: its input model's, plus the optional ``namespace``."""
    schema = tool.input_schema()
    schema["properties"] = {**schema["properties"], "namespace": NAMESPACE_PROPERTY}
    return schema


def mcp_tool(tool: Tool[Any]) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool_schema(tool),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=False,
            idempotent_hint=tool.read_only,
            open_world_hint=False,
        ),
    )


def error_text(exc: BaseException) -> str:
    """What a failed call tells the client: the error's class and its message."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def tool_error(exc: BaseException) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=error_text(exc))], is_error=True
    )


def tool_result(value: dict[str, Any]) -> types.CallToolResult:
    """The result as one JSON text (no ``structuredContent``: the SDK's validation of a copy
    cost about 1.5 ms of CPU per call on the bench, and models read the text)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=orjson.dumps(value).decode())]
    )


async def call_tool(
    pool: MemoryPool, name: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """Run one tool call; every failure becomes a tool error that names its type."""
    try:
        tool = find_tool(name)
        given = dict(arguments or {})
        namespace = pool.resolve(given.pop("namespace", None))
        value = await pool.arun(
            namespace, lambda memory: tool.call(pool.tool_target(memory, tool), given)
        )
    except StrataGateError as exc:
        return tool_error(exc)
    except Exception as exc:  # a bug: the client still gets a typed answer, the log the trace
        log.exception("tool %s failed", name)
        return tool_error(exc)
    return tool_result(value)


# -- resources -------------------------------------------------------------------------------


def every_thread_context(memory: StrataGate) -> list[Any]:
    """The block context of every conversation thread, thread by thread (first sealed first;
    threads with only an open tail last): each entry names its thread."""
    threads = [b.thread_id for b in memory.list_blocks() if not is_import_thread(b.thread_id)]
    threads += [m.thread_id for m in memory.list_open_tail()]
    return [
        entry for thread in dict.fromkeys(threads) for entry in memory.get_block_context(thread)
    ]


def is_import_thread(thread_id: str | None) -> bool:
    """Whether a block holds imported documents (its pseudo-thread), not a conversation."""
    return thread_id is not None and thread_id.startswith(IMPORT_THREAD_PREFIX)


RESOURCES: dict[str, tuple[str, Callable[[StrataGate], Any]]] = {
    "context": (
        "The current block context of every thread: blocks at their decayed levels and the "
        "open tail, each entry with its thread_id",
        every_thread_context,
    ),
    "elements": (
        "Every element card (people, projects, tools, …) with its current state",
        lambda memory: memory.list_elements(),
    ),
}


def resource_uri(namespace: str, kind: str) -> str:
    return f"stratagate://{namespace}/{kind}"


def parse_resource_uri(uri: str) -> tuple[str, str]:
    """``stratagate://NAMESPACE/KIND`` → (namespace, kind); anything else is an input error."""
    rest = uri.removeprefix("stratagate://")
    namespace, _, kind = rest.rpartition("/")
    if rest == uri or not namespace or kind not in RESOURCES:
        raise InvalidInputError(f"unknown resource {uri!r}")
    return namespace, kind


# -- the server ------------------------------------------------------------------------------


def build_server(pool: MemoryPool) -> Server[Any]:
    """The MCP server of a pool: the tools, and the context and elements of each namespace."""
    tools = [mcp_tool(tool) for tool in TOOLS]
    schemas = {tool.name: tool_schema(tool) for tool in TOOLS}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(pool, params.name, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=f"{namespace} {kind}",
                    uri=resource_uri(namespace, kind),
                    description=description,
                    mime_type="application/json",
                )
                for namespace in sorted(pool.allowed)
                for kind, (description, _) in RESOURCES.items()
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            namespace, kind = parse_resource_uri(uri)
            read = RESOURCES[kind][1]
            value = await pool.arun(pool.resolve(namespace), lambda memory: dump(read(memory)))
        except (InvalidInputError, AccessDeniedError) as exc:  # the client's mistake
            raise MCPError(types.INVALID_PARAMS, error_text(exc)) from exc
        except StrataGateError as exc:  # the memory's state: typed, no traceback
            raise MCPError(types.INTERNAL_ERROR, error_text(exc)) from exc
        except Exception as exc:  # a bug: the client a typed answer, the log the trace
            log.exception("resource %s failed", uri)
            raise MCPError(types.INTERNAL_ERROR, error_text(exc)) from exc
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=orjson.dumps(value).decode()
                )
            ]
        )

    server: Server[Any] = Server(
        "stratagate",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    server.middleware.clear()  # the SDK's OpenTelemetry spans: no telemetry
    return server


@dataclass(frozen=True)
class StdioWire:
    """The client's pipes, moved off file descriptors 0 and 1 (see ``claim_stdio``)."""

    incoming: int
    outgoing: int


def claim_stdio() -> StdioWire:
    """Take the client's pipes before any memory opens: fd 0 becomes the null device and fd 1
    stderr, so nothing else this process or its children (Ray's) write or read reaches the
    wire, and no child keeps the pipes open (the duplicates are not inheritable)."""
    wire = StdioWire(incoming=os.dup(0), outgoing=os.dup(1))
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire


async def serve_stdio(pool: MemoryPool, wire: StdioWire) -> None:
    """Serve one client on the claimed pipes until it closes its end."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(pool)
    incoming = io.TextIOWrapper(os.fdopen(wire.incoming, "rb"), encoding="utf-8", errors="replace")
    outgoing = io.TextIOWrapper(os.fdopen(wire.outgoing, "wb"), encoding="utf-8")
    streams = stdio_server(anyio.wrap_file(incoming), anyio.wrap_file(outgoing))
    async with streams as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(pool: MemoryPool, wire: StdioWire) -> None:
    """Serve over stdio; the pool is closed afterwards."""
    import anyio

    try:
        anyio.run(serve_stdio, pool, wire)
    finally:
        pool.close()


JSON_RPC_ID_TYPES = (str, int)


def bad_id(message: object) -> bool:
    """Whether a JSON-RPC message has an ``id`` that is neither a string, an integer nor null
    (the SDK reads such a request as a notification: 202 and no answer ever)."""
    if not isinstance(message, dict) or "id" not in message:
        return False
    value = message["id"]
    return value is not None and (
        isinstance(value, bool) or not isinstance(value, JSON_RPC_ID_TYPES)
    )


@dataclass(frozen=True)
class JsonRpcIds:
    """Answers a POST whose JSON-RPC ``id`` is an object, a list, a float or a boolean with a
    JSON-RPC error (``-32600``, id null, HTTP 400) instead of letting it vanish. Behind the
    guard, so the body is already whole and bounded."""

    app: Any

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        first = await receive()
        body = first.get("body", b"")
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = None  # the SDK answers a parse error itself
        messages = parsed if isinstance(parsed, list) else [parsed]
        if any(bad_id(message) for message in messages) or parsed == []:
            answer = orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": types.INVALID_REQUEST,
                        "message": "the id must be a string, an integer or null",
                    },
                }
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(answer)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": answer})
            return
        sent = False

        async def again() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return first
            return await receive()

        await self.app(scope, again, send)


def http_app(pool: MemoryPool, host: str, guard: GuardSettings) -> Origins:
    """The streamable HTTP app (``/mcp``, JSON responses) behind the Host and Origin checks
    (on every bind: the SDK's own only know 127.0.0.1, localhost and ::1) and the guard."""
    check_bind(host, guard.token)
    server = build_server(pool)
    app = server.streamable_http_app(
        host=host, json_response=True, max_request_body_size=guard.max_body_bytes
    )
    return Origins(HttpGuard(JsonRpcIds(app), guard), host)


def run_http(
    pool: MemoryPool,
    host: str,
    port: int,
    guard: GuardSettings,
    *,
    beside: Callable[[Origins], Any] | None = None,
) -> None:
    """Serve over streamable HTTP until interrupted; the pool is closed afterwards. ``beside``
    wraps the app to serve more next to ``/mcp`` (``serve --ui``: the Memory UI)."""
    import uvicorn

    check_bind(host, guard.token)
    app = http_app(pool, host, guard)
    config = uvicorn.Config(
        app if beside is None else beside(app), host=host, port=port, log_level="warning",
        access_log=False, server_header=False, date_header=False,
    )  # fmt: skip
    try:
        uvicorn.Server(config).run()
    finally:
        pool.close()


__all__ = [
    "INSTRUCTIONS",
    "MemoryPool",
    "build_server",
    "call_tool",
    "claim_stdio",
    "error_text",
    "http_app",
    "run_http",
    "run_stdio",
]
