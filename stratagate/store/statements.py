"""The hot statements of the SQL store as plain SQL text, one set per dialect.

Appends and catch-up reads run these with ``exec_driver_sql``: the text goes to the driver
as it is (its statement cache does the rest), with no SQLAlchemy expression to build, coerce
and cache-key per call — which is what an append cost before (about 20 statements a turn, their
building dominating). A durable append to a SQLite file goes further and runs them on the store's
own ``sqlite3`` writer connection (``SqlEventStore._append_on_driver``), the checks before it
in one statement (``before_append``). Everything else in the store (layout, snapshots, audits) stays in
SQLAlchemy Core, where clarity is worth more than microseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stratagate.store import schema

_EVENT_COLUMNS = (
    "global_position",
    "namespace",
    "stream",
    "stream_version",
    "event_id",
    "event_type",
    "schema_version",
    "recorded_at",
    "payload",
    "prev_hash",
    "hash",
)
"""The columns of ``stratagate_events`` in ``StoredEvent`` field order."""


@dataclass(frozen=True, slots=True)
class Statements:
    """The hot-path SQL of one dialect (parameters by name)."""

    head: str
    before_append: str
    """What an append checks, in one statement: the stream's version, the namespace's last
    row (position, hash), on SQLite the log's last position; then the namespace's heads row
    (position, hash, count: NULL when none) and the lease of ``lns`` (epoch, released)."""
    insert_events: str
    insert_head: str
    update_head: str
    read_namespace: str
    read_namespace_limit: str
    read_all: str
    read_all_limit: str
    namespace_lock: str | None
    next_positions: str | None
    fence: str
    """The first event of a fence's types past its position (``{types}``: quoted names)."""
    by_ids: str
    """Rows whose event id is one of ``{ids}`` (parameters ``id0``, ``id1`` …)."""
    placeholder: str
    """A parameter named ``{name}`` in this dialect."""

    def rows_by_ids(self, count: int) -> str:
        """``by_ids`` for ``count`` ids."""
        names = (self.placeholder.format(name=f"id{index}") for index in range(count))
        return self.by_ids.format(ids=", ".join(names))


def statements(dialect: str) -> Statements:
    """The statements for ``sqlite`` or ``postgresql``."""
    if dialect == "postgresql":
        return _build(
            lambda name: f"%({name})s",
            namespace_lock="SELECT pg_advisory_xact_lock(hashtextextended(%(ns)s, 0))",
            next_positions=(
                f"SELECT nextval('{schema.POSITION_SEQUENCE}') FROM generate_series(1, %(n)s)"
            ),
            with_global_max=False,
        )
    return _build(lambda name: f":{name}", namespace_lock=None, next_positions=None)


def _build(
    param: Callable[[str], str],
    *,
    namespace_lock: str | None,
    next_positions: str | None,
    with_global_max: bool = True,
) -> Statements:
    events, heads, leases = schema.events.name, schema.heads.name, schema.leases.name
    columns = ", ".join(_EVENT_COLUMNS)
    last_of_namespace = (
        f"SELECT {{col}} FROM {events} WHERE namespace = {param('ns')} "
        "ORDER BY global_position DESC LIMIT 1"
    )
    global_max = f", (SELECT max(global_position) FROM {events})" if with_global_max else ""
    state = (
        f"SELECT (SELECT max(stream_version) FROM {events} "
        f"WHERE namespace = {param('ns')} AND stream = {param('stream')}), "
        f"({last_of_namespace.format(col='global_position')}), "
        f"({last_of_namespace.format(col='hash')})"
        f"{global_max}"
    )
    ns, lns = param("ns"), param("lns")
    before_append = (
        f"SELECT {state.removeprefix('SELECT ')}, "
        "h.last_position, h.last_hash, h.event_count, "
        f"(SELECT epoch FROM {leases} WHERE namespace = {lns}), "
        f"(SELECT released FROM {leases} WHERE namespace = {lns}) "
        f"FROM (SELECT 1) AS one LEFT JOIN {heads} AS h ON h.namespace = {ns}"
    )
    read = f"SELECT {columns} FROM {events} WHERE global_position > {param('after')}"
    in_namespace = f"{read} AND namespace = {param('ns')} ORDER BY global_position"
    everything = f"{read} ORDER BY global_position"
    limit = f" LIMIT {param('limit')}"
    values = ", ".join(param(column) for column in _EVENT_COLUMNS)
    return Statements(
        head=(
            f"SELECT last_position, last_hash, event_count FROM {heads} "
            f"WHERE namespace = {param('ns')}"
        ),
        before_append=before_append,
        insert_events=f"INSERT INTO {events} ({columns}) VALUES ({values})",
        insert_head=(
            f"INSERT INTO {heads} (namespace, last_position, last_hash, event_count) "
            f"VALUES ({param('ns')}, {param('position')}, {param('hash')}, {param('count')})"
        ),
        update_head=(
            f"UPDATE {heads} SET last_position = {param('position')}, "
            f"last_hash = {param('hash')}, event_count = {param('count')} "
            f"WHERE namespace = {param('ns')}"
        ),
        read_namespace=in_namespace,
        read_namespace_limit=in_namespace + limit,
        read_all=everything,
        read_all_limit=everything + limit,
        namespace_lock=namespace_lock,
        next_positions=next_positions,
        fence=(
            f"SELECT event_type FROM {events} WHERE namespace = {param('ns')} "
            f"AND global_position > {param('after')} AND event_type IN ({{types}}) LIMIT 1"
        ),
        by_ids=f"SELECT {columns} FROM {events} WHERE event_id IN ({{ids}})",
        placeholder=param("{name}"),
    )


__all__ = ["Statements", "statements"]
