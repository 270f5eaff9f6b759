"""Small things a visitor stumbles on, checked in the browser: the API docs linked from every
page, Swagger UI's texts as written.  Real server (``manage.py serve``), headless Chromium;
screenshots in /tmp."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

SHOTS = "/tmp/arena-polish"


def test_the_api_docs_are_linked_from_every_page_and_swagger_shows_the_texts_whole(arena, browser):  # noqa: F811
    page = new_page(browser)
    for path in ("/", "/history/", "/accounts/login/"):
        page.goto(arena.url + path)
        page.locator("footer").get_by_role("link", name="JSON API docs").click()
        expect(page).to_have_url(arena.url + "/api/docs")
    page.goto(arena.url + "/api/docs/swagger")
    description = page.locator(".info .description")
    # "<token>" is text, not a tag Swagger UI's Markdown drops ("Bearer , answers").
    expect(description).to_contain_text("Authorization: Bearer <token>, answers also carry")
    page.screenshot(path=f"{SHOTS}-swagger.png")
    assert page.errors == []
