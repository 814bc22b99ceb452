"""The Memory UI in a real Chromium (Debian's ``chromium``, driven by Playwright for Python with
``executable_path``; Playwright never downloads a browser here): the page loads with no console
error, search finds a stored fact, clicking an event shows its source message, the slider shows
an earlier state, the graph renders, a receipt shows its audit chain.

Skipped when no Chromium is installed, unless ``STRATAGATE_REQUIRE_BROWSER=1`` (CI), which makes
that a failure. With ``STRATAGATE_UI_SCREENSHOTS=DIR`` the tests save the main views there
(docs/ui/*.png are made so).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ui_server import UiServer, build_memory, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
VIEWPORT = {"width": 1400, "height": 900}


def chromium_path() -> str:
    """The system's Chromium (skip, or fail when the browser tests are required)."""
    found = os.environ.get("STRATAGATE_CHROMIUM") or shutil.which("chromium") or ""
    if not found or not Path(found).exists():
        message = "no Chromium installed (apt-get install chromium)"
        if os.environ.get("STRATAGATE_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    path = tmp_path_factory.mktemp("ui-browser") / "memory.db"
    build_memory(path)
    with running(UiServer(path, token="browser-token")) as started:
        yield started


class Page:
    """One browser tab on the UI, recording console errors, page errors and failed requests."""

    def __init__(self, browser: Any, server: UiServer) -> None:
        self.server = server
        self.page = browser.new_page(viewport=VIEWPORT)
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("response", self._response)
        self.page.goto(f"{server.url}/#token={server.token}")
        self.page.wait_for_selector("body[data-loaded=overview]")

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status} {response.url}")

    def tab(self, name: str) -> Any:
        self.page.click(f"#tabs button[data-tab={name}]")
        self.page.wait_for_selector(f"body[data-loaded={name}]")
        return self.page

    def shot(self, name: str) -> None:
        folder = os.environ.get("STRATAGATE_UI_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.wait_for_timeout(200)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.fixture
def page(browser: Any, server: UiServer) -> Iterator[Page]:
    opened = Page(browser, server)
    yield opened
    opened.page.close()


def test_every_view_loads_without_a_console_error(page: Page) -> None:
    assert page.page.locator(".card[data-ns=default]").count() == 1
    assert "healthy" in page.page.inner_text(".card[data-ns=default]")
    page.shot("overview")
    for name in ("search", "blocks", "timeline", "graph", "receipts", "log"):
        page.tab(name)
    assert page.page.evaluate("location.hash") == ""  # the token left the address bar
    assert page.problems == []


def test_search_finds_a_stored_fact(page: Page) -> None:
    tab = page.tab("search")
    tab.select_option("#search-kind", "elements")
    tab.fill("#q", "pnpm")
    tab.click("#search-form button")
    hit = tab.wait_for_selector(".fact-hit")
    assert "pnpm" in hit.inner_text().lower()
    hit.click()
    tab.wait_for_selector("#sources table.facts tr[data-fact]")
    assert "pnpm" in tab.inner_text("#sources .element-name").lower()
    page.shot("search")
    assert page.problems == []


def test_clicking_an_event_shows_its_source_message(page: Page, server: UiServer) -> None:
    tab = page.tab("timeline")
    group = tab.locator("#timeline svg g.event.status-active").first
    event_id = group.get_attribute("data-id")
    group.locator("circle").click()
    tab.wait_for_selector("#sources .message")
    [found] = server.get("/namespaces/default/sources", ids=event_id)["items"]
    shown = tab.locator("#sources .message .content").all_inner_texts()
    assert shown == [m["content"] for m in found["messages"]] and shown
    page.shot("timeline")
    tab = page.tab("search")
    tab.fill("#q", "pnpm lockfile")
    tab.click("#search-form button")
    hit = tab.wait_for_selector(".event-hit")
    event_id = hit.get_attribute("data-id")
    hit.click()
    tab.wait_for_selector(f"#sources .meta:has-text('{event_id}')")  # the pane has changed
    assert "pnpm" in tab.inner_text("#sources").lower()
    assert page.problems == []


def test_the_slider_shows_an_earlier_state(page: Page, server: UiServer) -> None:
    tab = page.tab("log")
    head = server.get("/namespaces/default")["head"]
    tab.wait_for_selector(f"#state-summary h3:has-text('position {head}')")
    now = tab.inner_text("#state-summary .state-counts")
    log = server.get("/namespaces/default/log", limit=500)["items"]
    early = [r["position"] for r in log if r["type"] == "ExtractionSucceeded"][1]
    tab.evaluate(
        "(p) => { const s = document.getElementById('log-slider'); s.value = String(p);"
        " s.dispatchEvent(new Event('input')); }",
        early,
    )
    tab.wait_for_selector(f"#state-summary h3:has-text('position {early}')")
    then = server.get("/namespaces/default/state", at=early)["stats"]
    counts = tab.inner_text("#state-summary .state-counts")
    assert counts.startswith(f"{then['turns']} turns") and counts != now
    assert f"{then['events']} events" in counts
    page.shot("log")
    assert page.problems == []


def test_the_graph_renders_and_opens_an_element(page: Page, server: UiServer) -> None:
    tab = page.tab("graph")
    elements = server.get("/namespaces/default/elements", limit=500)["total"]
    assert tab.locator("#graph svg g.node").count() == elements
    assert tab.locator("#graph svg line.edge").count() > 0
    tab.locator("#graph svg g.node circle").first.click()
    tab.wait_for_selector("#sources table.facts")
    page.shot("graph")
    tab.click("#sources table.facts tr[data-fact]")  # a fact → the messages it came from
    tab.wait_for_selector("#sources button.back")
    assert tab.locator("#sources .message").count() > 0
    assert page.problems == []


def test_blocks_show_their_ladder_and_a_receipt_its_chain(page: Page) -> None:
    tab = page.tab("blocks")
    block = tab.locator(".card.block").first
    assert block.locator(".ladder button").count() == 6
    assert block.locator(".ladder button.current").count() == 1
    block.locator(".ladder button[data-level='5']").click()
    assert "user:" in block.locator(".level-content").inner_text().lower()
    page.shot("blocks")
    tab = page.tab("receipts")
    tab.click(".receipt[data-id=answer-1]")
    chain = tab.wait_for_selector("#sources .chain")
    text = chain.inner_text()
    assert "pnpm lockfile" in text and "sufficient" in text and "reinforced" in text
    assert tab.locator("#sources .chain .memory .message").count() > 0
    page.shot("receipts")
    assert page.problems == []
