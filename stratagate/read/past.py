"""Browsing the past: the read models as of past log positions, fast enough to drag a slider.

``state_at(position)`` replays from position 0 and folds every model, search index included.
``state_at(position, search=False)`` comes from here: a past state folds only the models a view
of the past shows (no search index: the past is browsed, not searched) over the namespace's
decoded events, which are decoded once and kept (extended as the log grows, so catching up
costs what is new). The last few states asked for are kept; a later position folds forward
from the nearest one before it (a dragged slider folds only the events in between), an earlier
one folds from the start. The memory's auditor keeps one of these per open memory.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict

from projections.replay import apply_at, iter_records
from projections.state import NamespaceState
from stratagate.events import Recorded
from stratagate.read.view import MemoryView
from stratagate.store import EventStore
from stratagate.store.keys import keys_for

PAST_MODELS = ("blocks", "decay", "events", "weights", "jobs", "elements")
"""What a past state holds: everything a view shows but the search index."""
KEPT_STATES = 3


class PastStates:
    """The states of one namespace at past positions, for one thread at a time."""

    def __init__(self, store: EventStore, namespace: str, kept: int = KEPT_STATES) -> None:
        self.store = store
        self.namespace = namespace
        self.kept = kept
        self.records: list[Recorded] = []
        self.positions: list[int] = []
        self.states: OrderedDict[int, NamespaceState] = OrderedDict()

    def forget(self) -> None:
        """Drop every decoded event and state and the cached keys (after an erasure: no copy of
        erased text stays, and what is decoded again reads ``[erased]``)."""
        keys_for(self.store, self.namespace).forget()
        self.records.clear()
        self.positions.clear()
        self.states.clear()

    def view_at(self, position: int) -> MemoryView:
        """The namespace as of ``position`` (its last event at or before it). The view is valid
        until the next call, which may fold its state forward."""
        self._read_up_to(position)
        state = self.states.pop(position, None) or self._fold_to(position)
        self.states[position] = state  # kept by the position asked for (its events end before)
        while len(self.states) > self.kept:
            self.states.popitem(last=False)
        return MemoryView(state)

    def _read_up_to(self, position: int) -> None:
        """Decode what the log holds after the last decoded event, up to ``position``."""
        after = self.positions[-1] if self.positions else 0
        if position <= after:
            return
        for recorded in iter_records(self.store, self.namespace, after=after, until=position):
            self.records.append(recorded)
            self.positions.append(recorded.position)

    def _fold_to(self, position: int) -> NamespaceState:
        """A state at ``position``: the nearest kept one before it folded forward, or a new one."""
        earlier = [p for p in self.states if p < position]
        if earlier:
            state = self.states.pop(max(earlier))
        else:
            state = NamespaceState(self.namespace, PAST_MODELS)
        start = bisect.bisect_right(self.positions, state.position)
        stop = bisect.bisect_right(self.positions, position)
        for recorded in self.records[start:stop]:
            apply_at(state, recorded)
        return state


__all__ = ["PAST_MODELS", "PastStates"]
