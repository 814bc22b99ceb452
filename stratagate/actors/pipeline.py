"""The four roles of a namespace and the order derived work flows through them.

``STAGES`` is the pipeline a turn sets off: seal → extract → project. Each stage is idempotent
("do whatever is ready"), so running the pipeline twice, or after a crash, is safe.
"""

from __future__ import annotations

from typing import Any, Literal

from stratagate.actors.extractor import Extractor
from stratagate.actors.projector import Projector
from stratagate.actors.role import Role
from stratagate.actors.sealer import Sealer
from stratagate.actors.weights import WeightKeeper

RoleName = Literal["sealer", "extractor", "projector", "weights"]
ROLE_CLASSES: dict[str, type[Role]] = {
    "sealer": Sealer,
    "extractor": Extractor,
    "projector": Projector,
    "weights": WeightKeeper,
}
STAGES: tuple[tuple[str, str], ...] = (
    ("sealer", "seal_ready"),
    ("extractor", "extract_ready"),
    ("projector", "run_pending"),
)
DOWNSTREAM: dict[str, str | None] = {
    "sealer": "extractor",
    "extractor": "projector",
    "projector": None,
}
WRITERS: tuple[str, ...] = ("sealer", "extractor", "projector")
"""Roles that may own running jobs, and so recover at hydration."""


def run_stage(role: Role, method: str, **kwargs: Any) -> list[Any]:
    """Run one stage of the pipeline on a role and return what it produced."""
    return list(getattr(role, method)(**kwargs))


__all__ = ["DOWNSTREAM", "ROLE_CLASSES", "STAGES", "WRITERS", "RoleName", "run_stage"]
