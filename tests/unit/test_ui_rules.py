"""The Memory UI's pure rules: Host and Origin checks, query parameters, pages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import InvalidInputError
from stratagate.integrations.http_guard import host_allowed, host_name, origin_allowed
from stratagate.integrations.ui.api import MAX_LIMIT, MAX_SEARCH, Params, page


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8766", True),
        ("localhost:8766", True),
        ("LOCALHOST", True),
        ("[::1]:8766", True),
        ("evil.example:8766", False),
        ("127.0.0.1.evil.example", False),
        ("localhost.evil.example:80", False),
        (None, False),
        ("", False),
    ],
)
def test_a_loopback_server_answers_only_to_loopback_names(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, "127.0.0.1") is allowed


def test_beyond_loopback_the_token_decides() -> None:
    assert host_allowed("memory.internal:8766", "0.0.0.0")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://127.0.0.1:8766", True),
        ("https://127.0.0.1:8766", True),
        ("http://127.0.0.1:9999", False),
        ("http://evil.example", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_only_this_servers_origin(origin: str | None, allowed: bool) -> None:
    assert origin_allowed(origin, "127.0.0.1:8766") is allowed


def test_host_name_strips_the_port() -> None:
    assert [host_name(h) for h in ("a:1", "[::1]:2", "::1", "b")] == ["a", "[::1]", "::1", "b"]


@pytest.mark.parametrize(
    "values",
    [{"limit": "0"}, {"limit": str(MAX_LIMIT + 1)}, {"limit": "x"}, {"offset": "-1"}],
)
def test_bad_windows_are_input_errors(values: dict[str, str]) -> None:
    with pytest.raises(InvalidInputError):
        Params(values).window()


def test_a_search_window_ends_by_its_last_hit() -> None:
    assert Params({"offset": "40", "limit": "30"}).window(search=True) == (40, MAX_SEARCH - 40)
    with pytest.raises(InvalidInputError):
        Params({"offset": str(MAX_SEARCH)}).window(search=True)


def test_ids_and_choices() -> None:
    assert Params({"ids": " a, b,,c "}).ids("ids") == ["a", "b", "c"]
    with pytest.raises(InvalidInputError):
        Params({"ids": ",".join(["x"] * 101)}).ids("ids")
    with pytest.raises(InvalidInputError):
        Params({"kind": "other"}).choice("kind", ("events",))
    assert Params({}).choice("kind", ("events",), "events") == "events"


@given(st.integers(0, 60), st.integers(0, 70), st.integers(1, 20))
def test_pages_cover_the_items_once(total: int, offset: int, limit: int) -> None:
    items = list(range(total))
    shown, at = [], offset
    while True:
        got = page(iter(items), total, at, limit, lambda i: i)
        shown += got["items"]
        assert len(got["items"]) <= limit
        if got["next"] is None:
            break
        at = got["next"]
    assert shown == items[offset:]


def test_a_non_canonical_loopback_bind_answers_to_its_own_address_and_loopback_names() -> None:
    assert host_allowed("127.0.0.2:8766", "127.0.0.2")
    assert host_allowed("localhost:8766", "127.0.0.2")
    assert not host_allowed("rebound.example:8766", "127.0.0.2")
    assert not host_allowed("127.0.0.3:8766", "127.0.0.2")
