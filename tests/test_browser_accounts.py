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


def newest_mail(arena) -> str:
    """The newest mail the server wrote (embedded default: one file per mail under <data>/mail/)."""
    files = sorted((arena.data_dir / "mail").glob("*.log"), key=lambda f: f.stat().st_mtime)
    return files[-1].read_text() if files else ""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_sign_up_reset_a_forgotten_password_by_mail_change_it_and_delete_the_account(arena, browser, viewport):  # noqa: F811
    tag = viewport["width"]
    name = f"a-rather-long-username-of-{tag}"
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))

    # Sign up from the header, on a form styled like the site.
    page.goto(arena.url + "/")
    page.locator(".topbar").get_by_role("link", name="Sign up").click()
    page.screenshot(path=f"{SHOTS}-signup-{tag}.png", full_page=True)
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    account_link = page.locator(".topbar").get_by_test_id("account")
    expect(account_link).to_have_text(name)  # the whole name, on a phone too
    box = account_link.bounding_box()
    assert box["x"] + box["width"] <= viewport["width"], "the name runs off the screen"
    assert account_link.evaluate("a => a.scrollWidth <= a.clientWidth"), "the name is cut"
    page.screenshot(path=f"{SHOTS}-header-{tag}.png")

    # The account page: an email for resets, saved with the password.
    account_link.click()
    email = page.locator("#email-form")
    email.get_by_label("Email").fill(f"{tag}@example.org")
    email.get_by_label("Your password").fill(PASSWORD)
    email.get_by_role("button", name="Save the email").click()
    expect(page.locator(".messages")).to_contain_text("Your email was saved.")
    page.screenshot(path=f"{SHOTS}-account-{tag}.png", full_page=True)

    # Forgot it: log out, ask for a link, follow it from the mail the server wrote.
    page.get_by_role("button", name="Log out").click()
    page.locator(".topbar").get_by_role("link", name="Log in").click()
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill(f"{tag}@example.org")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your mail")).to_be_visible()
    mail = newest_mail(arena)
    assert f'"{name}"' in mail and PASSWORD not in mail
    link = next(word for word in mail.split() if "/accounts/password/reset/" in word)
    assert link.startswith(arena.url)
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("reset horse 5")
    page.get_by_label("New password confirmation").fill("reset horse 5")
    page.screenshot(path=f"{SHOTS}-reset-{tag}.png", full_page=True)
    page.get_by_role("button", name="Set the password").click()
    expect(page.get_by_role("heading", name="Password set")).to_be_visible()

    # Log in with it, change it again from the account page.
    page.locator("main").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill("reset horse 5")
    page.get_by_role("button", name="Log in").click()
    page.locator(".topbar").get_by_test_id("account").click()
    page.get_by_role("link", name="Change your password").click()
    page.get_by_label("Old password").fill("reset horse 5")
    page.get_by_label("New password", exact=True).fill("changed horse 6")
    page.get_by_label("New password confirmation").fill("changed horse 6")
    page.get_by_role("button", name="Change the password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()

    # Delete the account: with the password; the lobby follows, logged out.
    page.goto(arena.url + "/accounts/")
    danger = page.locator("#delete")
    danger.get_by_label("Your password").fill("changed horse 6")
    danger.get_by_role("button", name="Delete my account").click()
    expect(page.locator(".messages")).to_contain_text("Your account was deleted")
    expect(page.locator(".topbar").get_by_role("link", name="Log in")).to_be_visible()
    page.goto(arena.url + f"/people/{name}/")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    assert page.errors == []
    context.close()
