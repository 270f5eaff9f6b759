"""Browser tests' setup: Debian's Chromium, headless, driven by Playwright for Python.

Import the fixtures into a test module (``from tests.browser_util import browser  # noqa``);
mark the tests ``@pytest.mark.browser``.  Nothing is downloaded: the browser is
``/usr/bin/chromium`` (``ARENA_CHROMIUM`` overrides), and the tests fail when it or Playwright
is missing (``./scripts/test.sh`` installs both; ``ARENA_ALLOW_SKIP=1`` skips them instead).

- ``browser``: one Chromium per test module;
- ``new_page(browser, viewport=DESKTOP)``: a page in a fresh context (its own cookies, so a
  second guest), which records JavaScript errors in ``page.errors``.

Outside a page (a bot's inbox, the API), poll with ``tests.serverproc.wait_until``; inside a
page, use Playwright's own waiting.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import needs

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
#: Flags for a quiet, headless Chromium in a container: no sandbox (we run as root), no GPU,
#: and none of the background traffic a fresh profile would otherwise start.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def launch(playwright):
    """Start Debian's Chromium headless with :data:`CHROMIUM_ARGS`."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for the test module (see :mod:`tests.needs` when it is missing)."""
    if not os.path.exists(CHROMIUM):
        needs.missing(f"Chromium at {CHROMIUM} (Debian's chromium package)")
    sync_api = needs.module("playwright.sync_api", "Playwright for Python")
    with sync_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


def new_page(browser, viewport: dict = DESKTOP, init_script: str | None = None):
    """A page in a fresh browser context (a new guest).  ``page.errors`` collects uncaught
    JavaScript errors; ``init_script`` runs in every document before the page's own scripts."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(10_000)
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


STATIC = Path(__file__).resolve().parent.parent / "static"


def table_harness(slug: str) -> str:
    """A page with only the match page's board and the game's table script (``static/games/
    <slug>.js``), for drawing views straight from the rules without a server."""
    return f"""<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{(STATIC / 'arena/arena.css').as_uri()}"></head>
<body><main><div id="board" class="board"></div><div id="actions" class="actions"></div><div id="log"></div></main>
<script src="{(STATIC / 'arena/match.js').as_uri()}"></script>
<script src="{(STATIC / f'games/{slug}.js').as_uri()}"></script></body></html>"""


def log_in(page, url: str, name: str, password: str | None = None) -> None:
    """Log in as ``name`` through the login form of the server at ``url`` (the tests' users
    have the password ``pw-<name>-123`` unless ``password`` says otherwise)."""
    page.goto(url + "/accounts/login/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(password or f"pw-{name}-123")
    page.get_by_role("button", name="Log in").click()
