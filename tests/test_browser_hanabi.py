"""Hanabi in the browser, with the real server (``manage.py serve``): a person on a phone
creates a table against a built-in convention bot and a bot over the Hanabi WebSocket port,
and plays the whole game by tapping (hints, plays, discards) while a guest watches on a
desktop; what each sees is read from the page: the person never sees a face of their own
unknown cards, the spectator never a face its owner does not know; the final score shows and
the finished game offers its hanab.live file."""
from __future__ import annotations

import json
import re
import time

import pytest

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)
from tests.hanabi_client import HanabiClient
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser
PERSON = "Hana"


def hands(page) -> list[dict]:
    """Every card on the page: seat, id, the face shown (or ""), what its holder knows."""
    return page.locator(".hseat .hcard").evaluate_all(
        """els => els.map(e => ({seat: Number(e.closest('.hseat').dataset.seat), id: Number(e.dataset.id),
                 color: e.dataset.color, number: e.dataset.number, knows: e.dataset.knows,
                 mine: e.classList.contains('mine')}))""")


def faces_match_knowledge(cards: list[dict], seats) -> None:
    """In ``seats``' hands a face is shown exactly as far as its holder knows it."""
    for card in cards:
        if card["seat"] in seats:
            known_color = bool(re.search(r"[RYGBW]", card["knows"]))
            known_number = bool(re.search(r"\d", card["knows"]))
            assert bool(card["color"]) == known_color and bool(card["number"]) == known_number, card


def moves_logged(page) -> int:
    return int(page.locator("[data-testid=log]").get_attribute("data-logged"))


def status_is_over(page) -> bool:
    return page.locator("[data-testid=status]").text_content().startswith("Game over")


def test_a_person_plays_a_whole_game_with_a_builtin_and_a_websocket_bot_while_a_guest_watches(arena_factory, browser):  # noqa: F811,E501
    arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "30", "ARENA_BUILTIN_DELAY": "0.05"})
    page = new_page(browser, viewport=PHONE)
    page.goto(arena.url + "/tables/new/hanabi/")
    page.get_by_label("Your nickname").fill(PERSON)
    page.get_by_label("Players").fill("3")
    page.get_by_label("Player 1").select_option("me")
    page.get_by_label("Player 2").select_option("builtin:convention")
    page.get_by_label("Player 3").select_option("open_bot")
    page.get_by_role("button", name="Create table").click()
    page.locator("#waiting-room").wait_for()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    bot = HanabiClient(arena.hanabi_port, "ws-bot")
    names = bot.wait_for("CONNECTION_RESPONSE")[0]["names"]
    assert names[-1] == "ws-bot"
    page.locator(".hseats").wait_for()
    start = bot.wait_for("GAME_START_RESPONSE")[0]["game_state"]
    assert [p["name"] for p in start["players"]][-1] == PERSON, "seat 0 (the person) moves first, listed last"

    watcher = new_page(browser, viewport=DESKTOP)
    watcher.goto(f"{arena.url}/matches/{match_id}/")
    watcher.locator(".hseats").wait_for()
    assert "watching" in watcher.locator("#who-am-i").text_content()

    moves = {"hint": 0, "play": 0, "discard": 0}
    shots = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        status = page.locator("[data-testid=status]").text_content()
        if status.startswith("Game over"):
            break
        if not status.startswith("Your turn"):
            page.wait_for_timeout(100)
            continue
        cards = hands(page)
        faces_match_knowledge(cards, {0})
        spectator_cards = hands(watcher)
        faces_match_knowledge(spectator_cards, {0, 1, 2})
        if shots < 2:
            page.screenshot(path=f"/tmp/hanabi-phone-{shots}.png", full_page=True)
            watcher.screenshot(path=f"/tmp/hanabi-desktop-{shots}.png", full_page=True)
            shots += 1
        logged = moves_logged(page)
        mine = [c for c in cards if c["mine"]]
        hints = int(page.locator("[data-hints]").get_attribute("data-hints"))
        known_playable = [c for c in mine if c["color"] and c["number"]]
        turn = sum(moves.values())
        if known_playable and turn % 3 == 2:
            kind = "play"
            page.locator(f".hcard.mine[data-id='{known_playable[0]['id']}']").click()
            page.get_by_role("button", name="Play", exact=True).click()
        elif hints and turn % 2 == 0:
            kind = "hint"
            page.locator(".hint-row").first.locator("[data-hint^='number:']").first.click()
        else:
            kind = "discard"
            page.locator(".hcard.mine").first.click()
            page.get_by_role("button", name="Discard").click()
        moves[kind] += 1
        # The bots answer at once: the next "Your turn" may come before a poll sees another
        # status, so the move is seen in the log (each move adds a line) instead.
        wait_until(lambda: moves_logged(page) > logged or status_is_over(page), 20,
                   f"the {kind} went through")
    else:
        pytest.fail(f"the game did not end; moves {moves}")
    assert moves["hint"] and moves["discard"], moves
    final = page.locator("[data-testid=status]").text_content()
    score = int(re.search(r"score (\d+)", final).group(1))
    assert bot.wait_for("GAME_OVER_RESPONSE", timeout=20)[0]["score"] == score
    watcher.locator("[data-testid=result]").wait_for(timeout=20_000) if watcher.locator(
        "[data-testid=result]").count() else None
    page.reload()
    link = page.get_by_role("link", name=re.compile("hanab.live"))
    assert link.count() >= 1
    with page.expect_download() as download:
        page.locator("[data-testid=exports] a[href$='/export/hanablive/']").click()
    game = json.loads(open(download.value.path()).read())
    assert game["players"][0] == PERSON and len(game["deck"]) == 50
    page.screenshot(path="/tmp/hanabi-phone-final.png", full_page=True)
    assert not page.errors and not watcher.errors, page.errors + watcher.errors
    bot.close()


def move_list(page) -> list[tuple[int, str]]:
    """The move list as shown: (number, line), top to bottom."""
    return [(int(n), t) for n, t in page.locator("[data-testid=moves] li").evaluate_all(
        "els => els.map(e => [e.value, e.textContent])")]


def test_the_move_list_is_numbered_in_play_order_and_survives_a_reload(arena_factory, browser):  # noqa: F811
    arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "60", "ARENA_BUILTIN_DELAY": "0.05"})
    page = new_page(browser, viewport=DESKTOP)
    page.goto(arena.url + "/tables/new/hanabi/")
    page.get_by_label("Your nickname").fill(PERSON)
    page.get_by_label("Players").fill("3")
    page.get_by_label("Player 1").select_option("me")
    page.get_by_label("Player 2").select_option("builtin:convention")
    page.get_by_label("Player 3").select_option("builtin:convention")
    page.get_by_role("button", name="Create table").click()
    for turn in range(3):  # discard three times; the bots move in between
        wait_until(lambda: page.locator("[data-testid=status]").text_content().startswith("Your turn"), 30,
                   "the person's turn")
        logged = moves_logged(page)
        page.locator(".hcard.mine").first.click()
        page.get_by_role("button", name="Discard").click()
        wait_until(lambda: moves_logged(page) > logged, 20, "the discard went through")
    wait_until(lambda: page.locator("[data-testid=status]").text_content().startswith("Your turn"), 30,
               "the person's turn")
    before = move_list(page)
    last = page.locator("[data-testid=last-action]").text_content()
    moves = int(re.search(r"move (\d+)", last).group(1))
    assert moves == 9, "three rounds of three players"
    assert [n for n, _ in before] == list(range(1, moves)), "every earlier move, numbered in play order"
    assert before[0][1].startswith("You discarded") and before[3][1].startswith("You discarded")
    page.reload()
    page.locator(".hseats").wait_for()
    assert move_list(page) == before, "the list is the same after a reload"
    assert page.locator("[data-testid=last-action]").text_content() == last
    assert not page.errors, page.errors
