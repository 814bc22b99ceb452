"""A namespace's read models folded together, in a fixed order, with one position and digest.

Models are applied in ``MODEL_ORDER`` so a model may read the ones before it (the search index
reads event statuses, element names and thread tails). A role that needs only some models asks
for a subset; dependencies are added automatically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, TypeVar

from projections.blocks import BlocksModel
from projections.cards import EventsModel
from projections.element_facts import ElementsModel
from projections.jobs import JobsModel
from projections.pointers import DecayModel
from projections.read_model import Handler, ReadModel
from projections.search_index import EventSearchIndex, SearchIndex
from projections.usage import WeightsModel
from stratagate.events import Recorded, canonical_json

MODEL_ORDER: tuple[type[ReadModel], ...] = (
    BlocksModel,
    DecayModel,
    EventsModel,
    WeightsModel,
    JobsModel,
    ElementsModel,
    SearchIndex,
    EventSearchIndex,
)
T = TypeVar("T", bound=ReadModel)
KNOWN_MODELS: frozenset[str] = frozenset(cls.name for cls in MODEL_ORDER)
ALL_MODELS: frozenset[str] = KNOWN_MODELS - {"event_search"}
"""The models a full state holds (``event_search`` is the extractor's part of ``search``)."""
DEPENDENCIES: dict[str, frozenset[str]] = {
    "elements": frozenset({"events"}),
    "search": frozenset({"blocks", "events", "elements"}),
    "event_search": frozenset({"events"}),
}


def resolve_components(names: Iterable[str] | None) -> tuple[str, ...]:
    """The requested model names plus their dependencies, in fold order."""
    wanted = set(ALL_MODELS if names is None else names)
    unknown = wanted - KNOWN_MODELS
    if unknown:
        raise ValueError(f"unknown read models: {sorted(unknown)}")
    for name in list(wanted):
        wanted |= DEPENDENCIES.get(name, frozenset())
    return tuple(cls.name for cls in MODEL_ORDER if cls.name in wanted)


def combined_digest(digests: dict[str, str]) -> str:
    """The state digest from its models' digests."""
    return hashlib.sha256(canonical_json(digests).encode()).hexdigest()


class NamespaceState:
    """The read models of one namespace and the log position they cover."""

    def __init__(self, namespace: str, components: Iterable[str] | None = None) -> None:
        self.namespace = namespace
        self.position = 0
        names = resolve_components(components)
        self.models: dict[str, ReadModel] = {
            cls.name: cls() for cls in MODEL_ORDER if cls.name in names
        }
        self._bind()

    def _bind(self) -> None:
        for model in self.models.values():
            model.bind(self.models)
        self._dispatch: dict[type, list[tuple[ReadModel, Handler]]] = {}
        """Per event type, each model's fold steps in model order (what ``ReadModel.apply``
        would look up, once per event instead of once per model and event)."""
        for model in self.models.values():
            for event_type, handlers in type(model)._handlers.items():
                steps = self._dispatch.setdefault(event_type, [])
                steps.extend((model, handler) for handler in handlers)

    @property
    def components(self) -> tuple[str, ...]:
        return tuple(self.models)

    @property
    def handled_types(self) -> frozenset[str]:
        """The event types some model of this state folds (others only move the position)."""
        return frozenset(
            event_type.__name__
            for model in self.models.values()
            for event_type in type(model)._handlers
        )

    def skip(self, position: int) -> None:
        """Move past an event no model here folds (it need not even be decoded)."""
        if position <= self.position:
            raise ValueError(f"position {position} is not after {self.position}")
        self.position = position

    def apply(self, recorded: Recorded) -> None:
        """Fold one event of this namespace; positions must increase."""
        if recorded.namespace != self.namespace:
            raise ValueError(f"event of namespace {recorded.namespace!r} fed to {self.namespace!r}")
        if recorded.position <= self.position:
            raise ValueError(f"position {recorded.position} is not after {self.position}")
        event = recorded.event
        for model, handler in self._dispatch.get(type(event), ()):
            handler(model, event, recorded)
        self.position = recorded.position

    def apply_all(self, records: Iterable[Recorded]) -> None:
        for recorded in records:
            self.apply(recorded)

    def digests(self) -> dict[str, str]:
        """Digest of each model."""
        return {name: model.digest() for name, model in self.models.items()}

    def digest(self) -> str:
        """One digest over every model's digest."""
        return combined_digest(self.digests())

    def snapshot(self) -> dict[str, Any]:
        """Every model's content with its version, and the position covered."""
        return {
            "namespace": self.namespace,
            "position": self.position,
            "models": {
                name: {"version": type(model).version, "data": model.snapshot()}
                for name, model in self.models.items()
            },
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> NamespaceState:
        """The state a snapshot was taken from; raises ``ValueError`` on a version mismatch.

        A model's ``data`` may also be a snapshot's stored sections (``projections.lazy``):
        each is then parsed when the model asks for it, at restore or on first use."""
        state = cls(data["namespace"], data["models"].keys())
        for model_cls in MODEL_ORDER:
            entry = data["models"].get(model_cls.name)
            if entry is None:
                continue
            if entry["version"] != model_cls.version:
                raise ValueError(f"snapshot of {model_cls.name} is v{entry['version']}")
            state.models[model_cls.name] = model_cls.restore(entry["data"])
        state.position = data["position"]
        state._bind()
        return state

    # -- typed access -----------------------------------------------------------------------

    @property
    def blocks(self) -> BlocksModel:
        return self._get("blocks", BlocksModel)

    @property
    def decay(self) -> DecayModel:
        return self._get("decay", DecayModel)

    @property
    def events(self) -> EventsModel:
        return self._get("events", EventsModel)

    @property
    def weights(self) -> WeightsModel:
        return self._get("weights", WeightsModel)

    @property
    def jobs(self) -> JobsModel:
        return self._get("jobs", JobsModel)

    @property
    def elements(self) -> ElementsModel:
        return self._get("elements", ElementsModel)

    @property
    def search(self) -> SearchIndex:
        return self._get("search", SearchIndex)

    @property
    def event_search(self) -> SearchIndex:
        """An index that can rank event cards: the full search index, or its event part."""
        model = self.models.get("search") or self.models.get("event_search")
        if not isinstance(model, SearchIndex):
            raise LookupError("no search index is part of this state")
        return model

    def _get(self, name: str, cls: type[T]) -> T:
        model = self.models.get(name)
        if not isinstance(model, cls):
            raise LookupError(f"read model {name!r} is not part of this state")
        return model


__all__ = ["ALL_MODELS", "MODEL_ORDER", "NamespaceState", "resolve_components"]
