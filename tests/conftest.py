"""Shared test fixtures: hypothesis profiles, the local Ray cluster, memory factories."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

RUNTIMES = ["inline", pytest.param("ray", marks=pytest.mark.ray)]
PG_URL = os.environ.get(
    "STRATAGATE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
"""The PostgreSQL server tests use; each test gets a fresh schema (``postgres_schema_url``)."""


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A real local Ray (num_cpus=2) for the whole session; test callbacks ship by value."""
    import ray
    from ray import cloudpickle

    import tests.support.fakes as fakes

    cloudpickle.register_pickle_by_value(fakes)
    ray.init(  # "local": a cluster of our own, never another test run's on this machine
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        namespace="stratagate",
    )
    yield
    ray.shutdown()


@pytest.fixture(params=RUNTIMES)
def runtime(request: pytest.FixtureRequest) -> str:
    """Each behaviour test runs once inline and once on Ray."""
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return request.param


@pytest.fixture
def open_memory(tmp_path: Path, runtime: str) -> Iterator[Callable[..., Any]]:
    """Open memories on a SQLite file under the test's runtime; all are closed afterwards."""
    from stratagate import StrataGate

    opened: list[Any] = []

    def factory(namespace: str = "test", database: str | None = None, **options: Any) -> Any:
        options.setdefault("runtime", runtime)
        if runtime == "ray":
            options.setdefault("max_live_namespaces", 2)
        memory = StrataGate.open(database or str(tmp_path / "memory.db"), namespace, **options)
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The server URL, after checking it answers (skip, or fail when it is required)."""
    engine = create_engine(PG_URL, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        message = f"PostgreSQL at {PG_URL} is unreachable: {exc}"
        if os.environ.get("STRATAGATE_REQUIRE_POSTGRES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    finally:
        engine.dispose()
    return PG_URL


@pytest.fixture
def postgres_schema_url(postgres_server: str) -> Iterator[str]:
    """A URL whose connections see only a fresh schema, dropped after the test."""
    name = f"sgtest_{uuid.uuid4().hex[:16]}"
    admin = create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{name}"'))
    url = make_url(postgres_server).update_query_dict({"options": f"-csearch_path={name}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()
