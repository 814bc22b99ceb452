"""Sharing what many records of a read model hold alike, so that a namespace of many cards
stays small: pydantic keeps a set of field names per instance (about 0.7 KB), and a card's
initial weight is the same for every card added at one turn."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_ALL_SET: dict[type[BaseModel], set[str]] = {}


def share_fields_set(model: BaseModel) -> None:
    """Point ``model`` at one field-name set per class when every field of it is set (a
    converted card's are). The API models are frozen, so nothing adds to the set."""
    fields_set = model.__pydantic_fields_set__
    if len(fields_set) != len(type(model).model_fields):
        return
    shared = _ALL_SET.setdefault(type(model), fields_set)
    object.__setattr__(model, "__pydantic_fields_set__", shared)


class Pool(Generic[M]):
    """One instance per distinct value of a frozen model (a weight: changes are
    ``model_copy``)."""

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], M] = {}

    def get(self, value: M) -> M:
        """``value``, or the equal instance met before."""
        share_fields_set(value)
        key = (type(value), *value.__dict__.values())
        return self._items.setdefault(key, value)


__all__ = ["Pool", "share_fields_set"]
