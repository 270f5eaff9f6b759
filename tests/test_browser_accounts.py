"""A person's account and secrets in the browser: the one-time bot key and API token open
where the eye is, with a Copy button.  Real server (``manage.py serve``), headless Chromium,
desktop and phone; screenshots in /tmp."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

SHOTS = "/tmp/arena-accounts"
PASSWORD = "correct horse 9"


def make_user_with_bots(arena, username: str, bots: int) -> None:
    """An account with ``bots`` Jass bots already registered, so the bots page is long."""
    arena.shell("from django.contrib.auth.models import User\nfrom games.arena.models import RegisteredBot\n"
                f"u = User.objects.create_user({username!r}, password={PASSWORD!r})\n"
                f"for i in range({bots}):\n"
                f"    RegisteredBot.objects.create(owner=u, game='jass', name=f'{username}-jass-{{i}}', "
                "base_url='http://127.0.0.1:9/x')\n")


def logged_in_page(browser, arena, username: str, viewport: dict):  # noqa: F811
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(10_000)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=arena.url)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(arena.url + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(arena.url + "/")
    return page


def check_shown_once(page, box_testid: str, code_testid: str, prefix: str, shot: str) -> None:
    """The secret's box is on screen and focused, and Copy puts the secret on the clipboard."""
    box = page.get_by_test_id(box_testid)
    expect(box).to_be_in_viewport()
    expect(box).to_be_focused()
    secret = box.get_by_test_id(code_testid).text_content()
    assert secret.startswith(prefix)
    page.screenshot(path=shot)
    box.get_by_role("button", name="Copy").click()
    expect(box.get_by_role("button", name="Copied ✓")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == secret


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_new_bot_key_and_api_token_open_on_screen_with_a_copy_button(arena, browser, viewport):  # noqa: F811
    name = f"keyholder{viewport['width']}"
    make_user_with_bots(arena, name, 6)
    page = logged_in_page(browser, arena, name, viewport)
    page.goto(arena.url + "/bots/")
    form = page.locator("#register")
    form.get_by_label("Game").select_option("liars_dice")
    form.get_by_label("Name").fill(f"{name}-dice")
    form.get_by_role("button", name="Register").click()
    check_shown_once(page, "new-key", "bot-key", "arena-key-", f"{SHOTS}-key-{viewport['width']}.png")
    assert "#register" not in page.url  # a reload would not jump past the key to the form

    # The API token, made from its section far down the page, opens on screen too.
    page.get_by_role("button", name="Make a token").click()
    check_shown_once(page, "new-token", "api-token", "arena-token-", f"{SHOTS}-token-{viewport['width']}.png")
    assert page.errors == []
    page.context.close()
