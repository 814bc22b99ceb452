"""The auditor: answers the log's own queries — revision, history, verify, time travel, anchors,
export.

It runs in the runtime itself (the caller's process) on the runtime's own store connection and
only reads: whatever the runtime, these answers come from the log, not from an actor's state.
``verify`` compares a full replay with the live read models the runtime reports
(``live_digests``); a signed anchor is logged by the weight keeper afterwards, as the pipeline
says.
"""

from __future__ import annotations

from collections.abc import Callable

from projections.replay import replay
from stratagate.actors.role import MessageHandler, handles
from stratagate.anchors import Anchor
from stratagate.audit import namespace_exists, read_history, take_anchor, verify_log
from stratagate.log_transfer import export_log
from stratagate.messages import (
    ExportLog,
    History,
    Revision,
    StateAt,
    SummarizeLog,
    TakeAnchor,
    Verify,
)
from stratagate.options import MemoryOptions
from stratagate.read.past import PastStates
from stratagate.read.view import MemoryView
from stratagate.results import HistoryRecord, LogExportReport, LogSummary, VerifyReport
from stratagate.store import EventStore

LiveDigests = Callable[[], list[tuple[int, dict[str, str]]]]
"""Each live state's position and the digest of each of its read models."""


class Auditor(MessageHandler):
    """Answers queries about the log itself; appends nothing."""

    name = "auditor"
    host = "runtime"

    def __init__(
        self, store: EventStore, namespace: str, options: MemoryOptions, live: LiveDigests
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.options = options
        self.live = live
        self.past = PastStates(store, namespace)

    @handles(Revision)
    def revision(self, _: Revision) -> int:
        return self.store.count(self.namespace)

    @handles(SummarizeLog)
    def summarize(self, _: SummarizeLog) -> LogSummary:
        store, namespace = self.store, self.namespace
        return LogSummary(
            namespace=namespace,
            present=namespace_exists(store, namespace),
            revision=store.count(namespace),
            last_position=store.head(namespace),
            log_position=store.global_head(),
        )

    @handles(History)
    def history(self, query: History) -> list[HistoryRecord]:
        return read_history(
            self.store,
            self.namespace,
            query.since,
            limit=query.limit,
            event_type=query.event_type,
        )

    @handles(Verify)
    def verify(self, query: Verify) -> VerifyReport:
        return verify_log(self.store, self.namespace, self.live(), anchor=query.anchor)

    @handles(StateAt)
    def state_at(self, query: StateAt) -> MemoryView:
        if not query.search:
            return self.past.view_at(query.position)
        return MemoryView(replay(self.store, self.namespace, until=query.position))

    @handles(ExportLog)
    def export_log(self, query: ExportLog) -> LogExportReport:
        return export_log(self.store, self.namespace, query.path)

    @handles(TakeAnchor)
    def take_anchor(self, _: TakeAnchor) -> Anchor:
        return take_anchor(self.store, self.namespace, self.options.now())


__all__ = ["Auditor", "LiveDigests"]
