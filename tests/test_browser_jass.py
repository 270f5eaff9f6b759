"""Jass in the browser.

1. The table script on its own (no server): views straight from the rules drawn in headless
   Chromium; the clickable cards are exactly the rules' legal cards, the trump choice offers
   Push only before a push, your seat is at the bottom, spectators see card backs only.
2. A whole game with the real server (``manage.py serve``) and a real HTTP bot service in
   this process: a person signs up, registers the bot service at /bots/ and tests the
   connection, creates a one-game table with three registered HTTP bots, plays
   the game by clicking while a guest watches on a phone and never sees a card of a hand,
   then steps through the replay and downloads the log with all four hands.
"""
from __future__ import annotations

import json
import random
import re
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import expect

from games.jass import rules
from tests.browser_util import DESKTOP, PHONE, browser, new_page, table_harness  # noqa: F401  (fixture)
from tests.human_client import Guest
from tests.jass_bot_service import BotService
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser

USER = "jo_tester"
PASSWORD = "not-a-secret-42"
SEAT_NAMES = ["Jo", "East bot", "South bot", "West bot"]

# --- 1. the table script on views from the rules ---------------------------------------------

HARNESS = table_harness("jass")

RENDER = """([view, mySeat, request, replay, names]) => {
  const seats = names.map((name, index) => ({index, name, kind: index ? 'protocol' : 'human'}));
  Arena.data = {seats, my_seat: mySeat};
  window.__acted = [];
  Arena.games.jass.render(view, {seats, mySeat, request, replay, happenings: [], answers: [], answered: null,
    board: document.getElementById('board'), actions: document.getElementById('actions'), step: replay ? 1 : undefined,
    act: (a) => window.__acted.push(a), name: (s) => names[s], forcedFor: () => [], othersCountdown: () => null});
}"""


def state_after(seed: int, steps: int) -> rules.JassState:
    """A one-game match after ``steps`` random legal moves."""
    state = rules.new_state({"max_deals": 1}, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    return state


def cards_in(locator) -> list[str]:
    return locator.evaluate_all("els => els.map(e => e.dataset.card)")


def test_the_table_script_draws_views_from_the_rules(browser, tmp_path):  # noqa: F811
    harness = tmp_path / "jass.html"
    harness.write_text(HARNESS)
    page = new_page(browser, viewport=PHONE)
    page.goto(harness.as_uri())
    rng = random.Random(3)
    checked = Counter()
    for seed in range(40):
        state = state_after(seed, rng.randrange(0, 38))
        if seed % 10 == 0:  # the forehand pushed: the partner must choose, no push back
            state = state_after(seed, 0)
            state.apply({state.to_act()[0]: rules.PUSH})
        if state.is_terminal():
            continue
        seat = state.to_act()[0]
        view = state.observation(seat)
        kind = "trump" if view["phase"] == "trump" else "card"
        page.evaluate(RENDER, [view, seat, {"kind": kind, "version": 1}, False, SEAT_NAMES])
        dock = page.locator(f"#actions .jass-dock[data-kind={kind}]")
        expect(dock).to_be_visible()
        # Your seat at the bottom, your partner opposite, the next player (counter-clockwise) on your right.
        for where, other in (("bottom", seat), ("top", (seat + 2) % 4), ("right", (seat + 3) % 4), ("left", (seat + 1) % 4)):
            assert page.locator(f".jass-seat.pos-{where}").get_attribute("data-seat") == str(other)
        hand = cards_in(dock.locator(".hand.mine .jcard.face"))
        assert sorted(hand) == sorted(view["hand"])
        if kind == "card":
            enabled = cards_in(dock.locator("button.jcard:enabled"))
            assert sorted(enabled) == sorted(state.legal_actions(seat)), (view["tricks"], view["trump"], view["hand"])
            dock.locator("button.jcard:enabled").first.click()
            assert page.evaluate("window.__acted") == [enabled[0]]
            checked["card"] += 1
        else:
            buttons = dock.locator(".trump-button").evaluate_all("els => els.map(e => e.dataset.trump)")
            assert buttons == ["0", "1", "2", "3", "4", "5"] + (["push"] if view["forehand"] == -1 else [])
            choice = "push" if view["forehand"] == -1 else "3"
            dock.locator(f".trump-button[data-trump='{choice}']").click()
            assert page.evaluate("window.__acted") == (["push"] if choice == "push" else [3])
            checked["push" if choice == "push" else "trump"] += 1
        # Someone else's turn: the hand is shown, nothing is clickable.
        other = (seat + 1) % 4
        page.evaluate(RENDER, [state.observation(other), other, None, False, SEAT_NAMES])
        assert page.locator("#actions button.jcard").count() == 0
        assert sorted(cards_in(page.locator("#actions .hand.mine .jcard.face"))) == sorted(state.observation(other)["hand"])

        # A spectator: backs for every hand, faces only on the table; North at the top.
        public = state.public_observation()
        page.evaluate(RENDER, [public, None, None, False, SEAT_NAMES])
        assert page.locator(".jass-seat.pos-top").get_attribute("data-seat") == "0"
        assert page.locator("#board .jcard.face").count() == page.locator("#board .cross .jcard.face").count()
        assert page.locator("#actions *").count() == 0
        for s in range(4):
            assert page.locator(f".jass-seat[data-seat='{s}'] .hand.backs .jcard.back").count() == public["hand_sizes"][s]
        # A replay: every hand face up.
        full = state.full_observation()
        page.evaluate(RENDER, [full, None, None, True, SEAT_NAMES])
        for s in range(4):
            assert sorted(cards_in(page.locator(f".jass-seat[data-seat='{s}'] .hand .jcard.face"))) == sorted(full["hands"][s])
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    assert checked["card"] >= 20 and checked["push"] >= 1 and checked["trump"] >= 1, checked
    assert page.errors == [], page.errors


def test_the_scoreboard_has_a_row_per_finished_game(browser, tmp_path):  # noqa: F811
    """Every finished game stays listed (trump, who declared, points, Match) while the
    next one is played, for the player, a spectator and in the replay."""
    harness = tmp_path / "jass.html"
    harness.write_text(HARNESS)
    page = new_page(browser, viewport=PHONE)
    page.goto(harness.as_uri())
    state = rules.new_state({"points_to_win": 100_000}, 8)
    rng = random.Random(8)
    while state.deal_number < 9 or state.phase != 1 or not state.trick:  # a card into game 9
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    seat = state.to_act()[0]
    records = state.deal_records()
    assert len(records) == 8
    for view, my_seat, replay in ((state.observation(seat), seat, False), (state.public_observation(), None, False),
                                  (state.full_observation(), None, True)):
        page.evaluate(RENDER, [view, my_seat, None, replay, SEAT_NAMES])
        board = page.get_by_test_id("scoreboard")
        expect(board).to_be_visible()
        # a long match shows its newest games; the button shows them all, newest last
        assert board.locator("tbody tr").count() == 6
        board.get_by_role("button", name="Show all 8 games").click()
        rows = board.locator("tbody tr")
        assert rows.evaluate_all("rs => rs.map(r => Number(r.dataset.deal))") == list(range(1, 9))
        for row, record in zip(rows.all(), records):
            cells = row.locator("td")
            assert cells.nth(0).locator("[data-trump]").get_attribute("data-trump") == str(record["trump"])
            declarer = "You" if record["declarer"] == my_seat else SEAT_NAMES[record["declarer"]]
            assert cells.nth(1).inner_text().startswith(declarer)
            assert [cells.nth(2 + t).inner_text().split("\n")[0] for t in (0, 1)] == [str(p) for p in record["points"]]
        board.get_by_role("button", name="Show the last games only").click()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    assert page.errors == [], page.errors


# --- 2. a whole game with the real server --------------------------------------------------

#: In the spectator's page: any card face drawn outside the table's trick (the middle) or the
#: list of played tricks before the match is over would be a hand leaking; trick cards are counted.
SPECTATOR_PROBE = """
window.__leaks = JSON.parse(sessionStorage.getItem('leaks') || '[]');
window.__trickCards = Number(sessionStorage.getItem('trickCards') || 0);
new MutationObserver((records) => {
  // (Arena is a top-level const of match.js: a global, but not a property of window.)
  const running = typeof Arena !== 'undefined' && Arena.data && Arena.data.status === 'running';
  const shown = running && Arena.games.jass && Arena.games.jass.shown();
  if (!running || (shown && shown.terminal)) return;  // over: every hand may be shown
  for (const r of records) for (const node of r.addedNodes) {
    if (!(node instanceof Element)) continue;
    const faces = node.matches('.jcard.face') ? [node] : [...node.querySelectorAll('.jcard.face')];
    for (const f of faces) {
      if (f.closest('.cross, .trick-list')) window.__trickCards += 1;
      else window.__leaks.push(f.dataset.card + ' in ' + (f.parentElement && f.parentElement.className));
    }
  }
  sessionStorage.setItem('leaks', JSON.stringify(window.__leaks));
  sessionStorage.setItem('trickCards', String(window.__trickCards));
}).observe(document, {childList: true, subtree: true});
"""


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def register_bot(page, name: str, url: str) -> None:
    page.get_by_label("Game").select_option("jass")
    page.get_by_label("Name:", exact=True).fill(name)
    page.get_by_label("Base URL").fill(url)
    page.get_by_label("Path style").select_option("kit")
    page.get_by_role("button", name="Register").click()
    expect(page.locator(".bot:target")).to_contain_text(name)


def test_a_person_plays_a_game_against_registered_bots_while_a_guest_watches(arena_factory, browser):  # noqa: F811
    started = time.monotonic()
    service = BotService()
    try:
        arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "30", "ARENA_ROUND_PAUSE": "0.2",
                                   "ARENA_BUILTIN_DELAY": "0.05", "JASS_BOT_DEADLINE": "5"})
        play_and_watch(arena, browser, service, started)
    finally:
        service.close()


def play_and_watch(arena, browser, service, started):  # noqa: F811
    page = new_page(browser)

    # --- sign up; the lobby's Jass section points to the bots page and the log import ------
    page.goto(arena.url + "/accounts/signup/")
    page.locator("#id_username").fill(USER)
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    jass = page.locator("#game-jass")
    expect(jass.get_by_role("link", name="Import a log")).to_have_attribute("href", "/import/jass/")
    expect(jass.get_by_role("link", name=re.compile("Bots page"))).to_have_attribute("href", "/bots/")

    # --- register the bot service (kit style) and test the connection ---------------------
    page.locator("header nav").get_by_role("link", name="Bots").click()
    expect(page).to_have_url(arena.url + "/bots/")
    register_bot(page, "good-bot", service.url("good"))
    good = page.locator(".bot", has_text="good-bot")
    expect(good.locator(".untested")).to_be_visible()
    good.get_by_role("button", name="Test the connection").click()
    expect(good.locator(".check.ok")).to_contain_text("Works")
    expect(good.locator(".check.ok")).to_contain_text("OK: the bot chose Obe-Abe")
    assert any(path == "/good/action_trump" for path, _ in service.calls)
    register_bot(page, "pusher-bot", service.url("pusher"))  # pushes whenever it is forehand

    # --- a one-game table: me, my partner the pusher, the good bot on either side ----------
    page.goto(arena.url + "/")
    jass.get_by_role("link", name="Create a table").click()
    page.get_by_label("Stop after this many games").fill("1")
    page.get_by_label("North").select_option("me")
    page.get_by_label(re.compile(r"^East")).select_option(label=f"Registered bot: good-bot ({USER})")
    page.get_by_label(re.compile(r"^South")).select_option(label=f"Registered bot: pusher-bot ({USER})")
    page.get_by_label(re.compile(r"^West")).select_option(label=f"Registered bot: good-bot ({USER})")
    page.get_by_role("button", name="Create table").click()
    page.locator(".jass-table").wait_for()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    assert page.locator(".jass-seat.pos-bottom").get_attribute("data-seat") == "0", "my seat is at the bottom"
    assert page.locator(".jass-seat.pos-bottom .name").text_content() == USER

    # --- a guest watches on a phone, from the lobby's "Live" list ------------------------------
    watcher = new_page(browser, viewport=PHONE, init_script=SPECTATOR_PROBE)
    frames = []
    watcher.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    watcher.goto(arena.url + "/")
    watcher.get_by_label("Nickname").fill("Watcher")
    watcher.get_by_role("button", name="Save").click()
    watcher.locator("#game-jass").get_by_role("link", name="Watch").click()
    watcher.locator(".jass-table").wait_for()
    assert "watching" in watcher.locator("#who-am-i").text_content()
    assert watcher.locator(".jass-seat.pos-top").get_attribute("data-seat") == "0", "North at the top"
    backs = watcher.evaluate("""() => { const v = Arena.games.jass.shown();
      return [v.hand_sizes, [0, 1, 2, 3].map((s) => document.querySelectorAll(`.jass-seat[data-seat="${s}"] .hand.backs .jcard.back`).length)]; }""")
    assert backs[0] == backs[1] and sum(backs[1]) > 0, backs
    assert watcher.locator("#actions *").count() == 0
    assert watcher.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"

    # --- play the whole game by clicking -------------------------------------------------------
    rng = random.Random(11)
    done = Counter()
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, f"the game did not end; moves so far: {done}"
        page.wait_for_selector("#actions .jass-dock[data-kind=trump], #actions .jass-dock[data-kind=card], .status-line.done",
                               timeout=30_000)
        if page.locator(".status-line.done").count():
            break
        dock = page.locator("#actions .jass-dock")
        kind = dock.get_attribute("data-kind")
        assert re.fullmatch(r"\d+ s", dock.locator(".countdown").text_content())
        if kind == "trump":
            expect(page.locator(".status-line .turn")).to_have_text("Your turn: choose trump")
            push = dock.locator(".trump-button[data-trump=push]")
            if push.count():  # I am forehand: push, my partner must choose
                push.click()
                done["push"] += 1
            else:  # my partner pushed: the suit I hold most of
                hand = cards_in(dock.locator(".hand.mine .jcard.face"))
                suit = Counter(c[0] for c in hand).most_common(1)[0][0]
                dock.locator(f".trump-button[data-trump='{'DHSC'.index(suit)}']").click()
                done["trump"] += 1
        else:
            view = page.evaluate("Arena.games.jass.shown()")
            trick = view["tricks"][-1]["cards"] if view["tricks"] and "win" not in view["tricks"][-1] else []
            legal = rules.mask_to_names(rules.legal_cards(rules.names_to_mask(view["hand"]),
                                                          [rules.CARD_INDEX[c] for c in trick], view["trump"]))
            enabled = cards_in(dock.locator("button.jcard:enabled"))
            assert sorted(enabled) == sorted(legal), (view["hand"], trick, view["trump"])
            assert sorted(cards_in(dock.locator("button.jcard"))) == sorted(view["hand"])
            card = rng.choice(enabled)
            dock.locator(f"button.jcard[data-card='{card}']").click()
            done["card"] += 1
            # My card lands in my place on the table at once.
            expect(page.locator(".cross .slot.pos-bottom .jcard.face")).to_have_attribute("data-card", card)
            if done["card"] == 3 and page.locator("[data-testid=show-last-trick]").count():
                page.locator("[data-testid=show-last-trick]").click()
                expect(page.locator("[data-testid=last-trick] .jcard.face")).to_have_count(4)
                done["last trick shown"] += 1
        page.wait_for_selector("#actions .jass-dock.sent, #actions .jass-dock[data-kind], .status-line.done", timeout=5_000)

    print("moves:", dict(done))
    assert done["card"] == 9 or (done["card"] >= 8 and done["last trick shown"]), done
    assert done["last trick shown"] == 1, done

    # --- the end: both pages turn into the finished match ------------------------------------
    result = get_json(f"{arena.url}/api/matches/{match_id}/")
    assert result["status"] == "finished"
    replay = get_json(f"{arena.url}/api/matches/{match_id}/replay/")
    total = replay["total"] - 1
    for p in (page, watcher):
        expect(p.locator("#replay-pos")).to_have_text(f"Step {total} of {total}", timeout=15_000)
        expect(p.locator(".status-line.done")).to_contain_text("Match over")
    team_points = result["result"]["team_points"]
    expect(page.locator("[data-testid=match-points-0]")).to_have_text(str(team_points[0]))
    expect(page.locator("[data-testid=match-points-1]")).to_have_text(str(team_points[1]))

    # The spectator saw the trick cards and never a card of a hand, on the screen or on the wire.
    assert watcher.evaluate("window.__leaks") == []
    assert watcher.evaluate("window.__trickCards") >= 36
    views = [m for m in map(json.loads, frames) if m.get("type") == "match.view"]
    assert views, "the spectator got live views"
    for m in views:
        assert m["audience"] == "public" and not m.get("request")
        assert "hand" not in m["view"]
        assert m["view"]["terminal"] or not m["view"].get("hands"), "a current hand went to the spectator"

    # --- the replay: step through it, every hand face up ---------------------------------------
    pos = page.locator("#replay-pos")
    page.get_by_role("button", name="« First").click()
    expect(pos).to_have_text(f"Step 0 of {total}")
    for step in range(total + 1):
        if step:
            page.get_by_role("button", name="Next ›").click()
        expect(pos).to_have_text(f"Step {step} of {total}")
        view = replay["frames"][step]["view"]
        hands = view["dealt"] if view["terminal"] else view["hands"]
        shown = page.evaluate("""() => [0, 1, 2, 3].map((s) => [...document.querySelectorAll(
            `.jass-seat[data-seat="${s}"] .hand .jcard.face`)].map((c) => c.dataset.card).sort())""")
        assert shown == [sorted(h) for h in hands], f"step {step}"
        assert page.locator(".hand.backs").count() == 0
        if step:
            expect(page.locator("[data-testid=step-moves] h4")).to_have_text(f"Step {step}")
    expect(page.get_by_role("button", name="Next ›")).to_be_disabled()

    # --- the export: the seed log format with all four hands -----------------------------------
    exports = page.locator("[data-testid=exports]")
    expect(exports.get_by_role("link", name="kit JSON lines")).to_be_visible()
    with page.expect_download() as info:
        exports.get_by_role("link", name=re.compile("seed log format")).click()
    games = json.loads(Path(info.value.path()).read_text())
    assert isinstance(games, list) and len(games) == 1
    hands = [p["hand"] for p in games[0]["player"]]
    assert [len(h) for h in hands] == [9, 9, 9, 9] and len({c for h in hands for c in h}) == 36
    assert [sorted(h) for h in hands] == [sorted(h) for h in replay["frames"][0]["view"]["hands"]]

    assert page.errors == [] and watcher.errors == [], page.errors + watcher.errors
    elapsed = time.monotonic() - started
    print(f"whole test: {elapsed:.1f} s")
    assert elapsed < 120


def test_two_people_one_leaves_the_rule_based_bot_plays_for_her_until_she_is_back(arena, browser):  # noqa: F811
    ann, bob = new_page(browser), new_page(browser, viewport=PHONE)
    ann.goto(arena.url + "/tables/new/jass/")
    ann.get_by_label("Your nickname").fill("Ann")
    ann.get_by_label(re.compile(r"^North")).select_option("me")
    ann.get_by_label(re.compile(r"^East")).select_option("builtin:random")
    ann.get_by_label(re.compile(r"^South")).select_option("open_human")
    ann.get_by_label(re.compile(r"^West")).select_option("builtin:random")
    ann.get_by_role("button", name="Create table").click()
    bob.goto(ann.url)
    bob.get_by_placeholder("your nickname").fill("Bob")
    bob.get_by_role("button", name="Take this seat").click()
    ann.locator("#leave-match").wait_for()
    ann.on("dialog", lambda dialog: dialog.accept())
    ann.locator("#leave-match").click()
    expect(ann.locator("#away-banner")).to_be_visible()
    expect(ann.locator("#leave-match")).to_be_hidden()
    # Bob's table names Ann's seat as played for her, and the match goes on.
    expect(bob.locator(".jass-seat[data-seat='0']")).to_contain_text("Ann (away)")
    ann.locator("#away-banner").get_by_role("button", name="Take my seat back").click()
    expect(ann.locator("#away-banner")).to_be_hidden()
    expect(bob.locator(".jass-seat[data-seat='0']")).not_to_contain_text("(away)")
    assert not ann.errors and not bob.errors


def test_the_replay_jumps_from_trick_to_trick_and_game_to_game(arena, browser):  # noqa: F811
    """In a finished Jass match's replay, "Next trick" and "Next game" land where a
    trick or game ends (its cards still shown, the next one starting); "Previous" goes back."""
    page = new_page(browser)
    page.goto(arena.url + "/tables/new/jass/")
    page.locator("#id_max_deals").fill("2")  # games in the match
    for seat in ("North", "East", "South", "West"):
        page.get_by_label(re.compile("^" + seat)).select_option("builtin:random")
    page.get_by_label("Pace").select_option("0.0")  # the replay is tried here, not the live match
    page.get_by_role("button", name="Create table").click()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    wait_until(lambda: get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "finished", 30, "the match ends")
    frames = get_json(f"{arena.url}/api/matches/{match_id}/replay/")
    total = frames["total"] - 1
    ends = {kind: [step for step, f in enumerate(frames["frames"]) if any(h["type"] == kind for h in f["happenings"])]
            for kind in ("trick_over", "deal_over")}
    assert len(ends["trick_over"]) == 18 and len(ends["deal_over"]) == 2, ends
    pos = page.locator("#replay-pos")
    expect(pos).to_have_text(f"Step {total} of {total}", timeout=15_000)  # the page follows the match to its end
    page.get_by_role("button", name="« First").click()
    page.get_by_role("button", name="Next trick ›").click()
    expect(pos).to_have_text(f"Step {ends['trick_over'][0]} of {total}")
    expect(page.locator(".cross .jcard.face")).to_have_count(4)  # the first trick, complete
    page.get_by_role("button", name="Next game ›").click()
    expect(pos).to_have_text(f"Step {ends['deal_over'][0]} of {total}")
    page.get_by_role("button", name="Next trick ›").click()
    expect(pos).to_have_text(f"Step {ends['trick_over'][9]} of {total}")  # game 2, trick 1
    page.get_by_role("button", name="‹ Previous game").click()
    expect(pos).to_have_text(f"Step {ends['deal_over'][0]} of {total}")
    page.get_by_role("button", name="‹ Previous trick").click()
    expect(pos).to_have_text(f"Step {ends['trick_over'][7]} of {total}")
    assert page.get_by_role("button", name=re.compile("round")).count() == 0
    assert page.errors == [], page.errors


OVERLAP = """(sel) => { const a = document.querySelector(sel).getBoundingClientRect();
  const d = document.querySelector('#actions .jass-dock').getBoundingClientRect();
  return a.left < d.right && d.left < a.right && a.top < d.bottom && d.top < a.bottom; }"""


def test_a_person_sits_south_at_the_bottom_and_the_dock_leaves_the_score_in_view(arena, browser):  # noqa: F811
    """The form seats a person South, where the table draws its own player (it labelled the
    person N at the bottom); at 1280x800 the dock covers neither the score, the facts, the
    scoreboard beside the table nor the person's own seat."""
    page = new_page(browser, viewport=DESKTOP)
    page.goto(arena.url + "/tables/new/jass/")
    expect(page.get_by_label(re.compile("^South"))).to_have_value("me")
    expect(page.get_by_label(re.compile("^North"))).not_to_have_value("me")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_role("button", name="Create table").click()
    mine = page.locator(".jass-seat.me")
    expect(mine).to_have_class(re.compile(r"\bpos-bottom\b"))
    expect(mine.locator(".compass")).to_have_text("S")
    expect(page.get_by_test_id("turned")).to_have_count(0)
    prompt = page.locator("#actions .prompt", has_text=re.compile("a card|trump"))
    prompt.wait_for(timeout=20_000)
    if "trump" in prompt.inner_text():  # the deal made Ann forehand: trump first
        page.locator("#actions [data-trump]").first.click()
    expect(page.locator("#actions .prompt")).to_contain_text("a card", timeout=20_000)
    for part in (".jass-scores", ".jass-info .facts", ".jass-seat.me"):
        assert not page.evaluate(OVERLAP, part), f"the dock covers {part}"
    page.screenshot(path="/tmp/jass-south-a-card-1280.png")
    # Play the first game out: its scoreboard and summary join the side column, which the dock
    # (sticky at the bottom of the screen) covered at this size.
    scoreboard = page.get_by_test_id("scoreboard")
    deadline = time.monotonic() + 90
    while not scoreboard.count():
        assert time.monotonic() < deadline, "the first game did not end"
        card = page.locator("#actions button.jcard.legal")
        trump = page.locator("#actions [data-trump]")
        if card.count():
            card.first.click()
        elif trump.count():
            trump.first.click()
        page.wait_for_timeout(100)
    for part in ("[data-testid=scoreboard]", "[data-testid=deal-over]", ".jass-scores"):
        assert not page.evaluate(OVERLAP, part), f"the dock covers {part} after the first game"
    page.screenshot(path="/tmp/jass-south-game-2-1280.png")
    assert page.errors == [], page.errors


def test_at_1280x800_choosing_trump_leaves_ones_seat_and_the_score_in_view_and_names_every_trump(arena, browser):  # noqa: F811,E501
    """Seed 0 deals so that South chooses trump first (checked with the rules here)."""
    state = rules.new_state(rules.normalize_config({}), 0)
    assert state.to_act() == (2,) and state.observation(2)["phase"] == "trump"
    page = new_page(browser, viewport=DESKTOP)
    page.goto(arena.url + "/tables/new/jass/")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label(re.compile("^West")).select_option("open_human")  # the table waits: its seed is set
    page.get_by_role("button", name="Create table").click()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    arena.shell(f"from games.arena.models import Match; Match.objects.filter(pk={match_id}).update(seed=0)")
    Guest(arena.url, "Bob").join(match_id, 3)
    buttons = page.locator("#actions .trump-button")
    expect(buttons).to_have_count(7, timeout=20_000)  # six trumps and Push
    for part in (".jass-scores", ".jass-info .facts", ".jass-seat.me"):
        assert not page.evaluate(OVERLAP, part), f"the dock covers {part} while trump is chosen"
    cut = buttons.evaluate_all("bs => bs.filter(b => !b.classList.contains('push')).map(b => b.querySelector('.label'))"
                               ".filter(l => l.scrollWidth > l.clientWidth).map(l => l.textContent)")
    assert cut == [], f"trump names cut short: {cut}"
    page.screenshot(path="/tmp/jass-trump-1280.png")
    assert page.errors == [], page.errors


def test_a_person_who_chooses_north_is_drawn_at_the_bottom_and_told_the_table_is_turned(arena, browser):  # noqa: F811
    page = new_page(browser, viewport=PHONE)
    page.goto(arena.url + "/tables/new/jass/")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label(re.compile("^North")).select_option("me")
    page.get_by_label(re.compile("^South")).select_option("builtin:random")
    page.get_by_role("button", name="Create table").click()
    mine = page.locator(".jass-seat.me")
    expect(mine).to_have_class(re.compile(r"\bpos-bottom\b"))
    expect(mine.locator(".compass")).to_have_text("N")
    expect(page.get_by_test_id("turned")).to_have_text(
        "You sit North: the table is turned so that you are at the bottom.")
    page.screenshot(path="/tmp/jass-north-turned-phone.png")
    assert page.errors == [], page.errors
