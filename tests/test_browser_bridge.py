"""Contract bridge in the browser.

1. The table script on its own (no server): views straight from the rules drawn in headless
   Chromium: the bidding box offers exactly the rules' legal calls, the clickable cards (your
   hand, or dummy's when you are declarer and dummy's card is asked) are exactly the legal
   ones, your seat is at the bottom, dummy lies face up only after the opening lead, a
   spectator sees no other hand, a replay every hand.
2. A whole board with the real server (``manage.py serve``): a person at South of a table
   made with a given deal bids 7NT against three rule-based bots, plays it out as declarer,
   dummy's cards included, while a guest watches on a phone and never gets a hidden card
   on the wire or on the page; the result line, every hand after the end; screenshots
   desktop and phone in /tmp/bridge-shots/.  And "Play a bot now" starts a bridge table.
"""
from __future__ import annotations

import json
import random
import re
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from games.bridge import rules, scoring
from tests.browser_util import DESKTOP, PHONE, browser, new_page, table_harness  # noqa: F401  (fixture)
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/bridge-shots")
SEAT_NAMES = ["North bot", "East bot", "Sam", "West bot"]

# --- 1. the table script on views from the rules ---------------------------------------------

HARNESS = table_harness("bridge")

RENDER = """([view, mySeat, request, replay, names]) => {
  const seats = names.map((name, index) => ({index, name, kind: index === 2 ? 'human' : 'builtin'}));
  Arena.data = {seats, my_seat: mySeat};
  window.__acted = [];
  Arena.games.bridge.render(view, {seats, mySeat, request, replay, happenings: [], answers: [], answered: null,
    board: document.getElementById('board'), actions: document.getElementById('actions'), step: replay ? 1 : undefined,
    act: (a) => window.__acted.push(a), name: (s) => names[s], forcedFor: () => [], othersCountdown: () => null});
}"""

#: South holds every ace, king and queen and a jack: the rule-based bots pass, South bids
#: 7NT and declares, West leads, North is dummy (board 1: North deals).
STRONG_SOUTH = [
    ["ST", "S9", "S8", "S7", "HJ", "HT", "H9", "DJ", "DT", "D9", "CJ", "CT", "C9"],
    ["S6", "S5", "S4", "H8", "H7", "H6", "H5", "D8", "D7", "D6", "C8", "C7", "C6"],
    ["SA", "SK", "SQ", "SJ", "HA", "HK", "HQ", "DA", "DK", "DQ", "CA", "CK", "CQ"],
    ["S3", "S2", "H4", "H3", "H2", "D5", "D4", "D3", "D2", "C5", "C4", "C3", "C2"],
]


def shoot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def cards_in(locator) -> list[str]:
    return locator.evaluate_all("els => els.map(e => e.dataset.card)")


def offered_calls(page) -> list[str]:
    """Every call the bidding box lets one make: Pass/Double/Redouble, and each level's strains."""
    box = page.get_by_test_id("bidding-box")
    calls = box.locator(".others button:enabled").evaluate_all("els => els.map(e => e.dataset.call)")
    for level in box.locator(".levels button:enabled").evaluate_all("els => els.map(e => e.dataset.level)"):
        box.locator(f".levels button[data-level='{level}']").click()
        calls += box.locator(".strains button:enabled").evaluate_all("els => els.map(e => e.dataset.call)")
    return calls


def random_state(rng: random.Random, steps: int) -> rules.BridgeState:
    """A one-board state after ``steps`` moves: random calls (mostly passes, so that auctions
    end) with doubles and redoubles when allowed, then random legal cards."""
    state = rules.new_state({"boards": 1}, rng.randrange(10_000))
    for _ in range(steps):
        if state.is_terminal():
            break
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        if state.phase == 0:
            doubles = [c for c in legal if c in ("X", "XX")]
            pick = rng.random()
            move = doubles[0] if doubles and pick < 0.3 else "P" if pick < 0.6 else rng.choice(legal[:8])
        else:
            move = rng.choice(legal)
        state.apply({seat: move})
    return state


def test_the_table_script_draws_views_from_the_rules(browser, tmp_path):  # noqa: F811
    harness = tmp_path / "bridge.html"
    harness.write_text(HARNESS)
    page = new_page(browser, viewport=PHONE)
    page.goto(harness.as_uri())
    rng = random.Random(5)
    checked = {"call": 0, "card": 0, "dummy_card": 0, "doubles": 0}
    for _ in range(60):
        state = random_state(rng, rng.choice([rng.randrange(0, 8), rng.randrange(8, 40)]))
        if state.is_terminal():
            continue
        actor = state.to_act()[0]
        # The person is the actor; declarer on dummy's turn, asked for dummy's card.
        kind = "call" if state.phase == 0 else "dummy_card" if state.player != actor else "card"
        view = state.observation(actor)
        page.evaluate(RENDER, [view, actor, {"kind": kind, "version": 1}, False, SEAT_NAMES])
        expect(page.locator(f"#actions .bridge-dock[data-kind={kind}]")).to_be_visible()
        # Your seat at the bottom, your partner at the top, the next player (clockwise) on your left.
        for where, other in (("bottom", actor), ("top", (actor + 2) % 4), ("left", (actor + 1) % 4), ("right", (actor + 3) % 4)):
            assert page.locator(f".bseat.pos-{where}").get_attribute("data-seat") == str(other)
        hand = cards_in(page.locator("#actions [data-testid=my-hand] .jcard"))
        assert sorted(hand) == sorted(view["hand"])
        suits = [c[0] for c in hand]  # sorted by suit, red and black alternating
        assert suits == sorted(suits, key="SHCD".index)
        legal = state.legal_actions(actor)
        if kind == "call":
            assert sorted(offered_calls(page)) == sorted(legal), view["calls"]
            checked["doubles"] += any(c in legal for c in ("X", "XX"))
            assert page.locator("#board .bseat .jcard.face").count() == 0, "no hand face up during the auction"
        elif kind == "card":
            assert sorted(cards_in(page.locator("#actions button.jcard:enabled"))) == sorted(legal)
            assert page.locator("#board .bseat button.jcard").count() == 0
        else:
            assert page.locator("#actions button.jcard").count() == 0
            dummy = page.locator(f".bseat[data-seat='{state.dummy}'] [data-testid=dummy-hand]")
            assert sorted(cards_in(dummy.locator("button.jcard:enabled"))) == sorted(legal)
            dummy.locator("button.jcard:enabled").first.click()
            assert page.evaluate("window.__acted") == [cards_in(dummy.locator("button.jcard:enabled"))[0]]
        if not checked[kind]:
            shoot(page, f"phone-script-{kind}")
        checked[kind] += 1
        # Dummy lies face up from the opening lead on, at its seat, and no other hand does.
        faces = page.locator("#board .bseat .jcard.face")
        if view["dummy_hand"] is not None and actor != state.dummy:
            assert sorted(cards_in(faces)) == sorted(view["dummy_hand"])
        elif actor != state.dummy:
            assert faces.count() == 0

        # A spectator: the same, no hand but dummy's; South at the bottom.
        public = state.public_observation()
        page.evaluate(RENDER, [public, None, None, False, SEAT_NAMES])
        assert page.locator(".bseat.pos-bottom").get_attribute("data-seat") == "2"
        assert sorted(cards_in(page.locator("#board .bseat .jcard.face"))) == sorted(public["dummy_hand"] or [])
        assert page.locator("#actions *").count() == 0
        # The auction grid: W N E S, the dealer's first call in the dealer's column.
        cells = page.locator("[data-testid=auction] tbody td").evaluate_all(
            "tds => tds.map(td => td.dataset.seat === undefined ? null : Number(td.dataset.seat))")
        column = {3: 0, 0: 1, 1: 2, 2: 3}
        for i, seat in enumerate(cells):
            if seat is not None:
                assert column[seat] == i % 4
        # A replay: every hand face up.
        full = state.full_observation()
        page.evaluate(RENDER, [full, None, None, True, SEAT_NAMES])
        for s in range(4):
            assert sorted(cards_in(page.locator(f".bseat[data-seat='{s}'] .bhand .jcard.face"))) == sorted(full["hands"][s])
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    assert min(checked.values()) >= 3, checked
    assert page.errors == [], page.errors


# --- 2. a whole board with the real server ---------------------------------------------------

def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


#: Keys of a view that carry cards a spectator may not see while the board is played.
SECRET_KEYS = {"hand", "hands", "dealt", "board_hands"}


def spectator_frames(page) -> list[dict]:
    """Every match.view the page's WebSocket receives, kept in ``page.frames``."""
    page.frames_seen = []

    def on_socket(ws):
        ws.on("framereceived", lambda payload: page.frames_seen.append(json.loads(payload)))
    page.on("websocket", on_socket)
    return page.frames_seen


def test_a_person_declares_7nt_and_plays_dummy_while_a_guest_watches(arena_factory, browser):  # noqa: F811
    started = time.monotonic()
    arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "60", "ARENA_BUILTIN_DELAY": "0.05", "ARENA_ROUND_PAUSE": "0.2"})
    config = {"boards": 1, "deals": [{"hands": STRONG_SOUTH}]}
    match_id = int(arena.shell(
        "from games.arena.play import tables\n"
        f"print(tables.create_table('bridge', {config!r}, "
        "['builtin:rules', 'builtin:rules', 'open_human', 'builtin:rules'], None).pk)\n").split()[-1])
    url = f"{arena.url}/matches/{match_id}/"

    # The guest watches on a phone from before the first call.
    watcher = new_page(browser, viewport=PHONE)
    frames = spectator_frames(watcher)
    watcher.goto(url)
    expect(watcher.locator("#waiting-room")).to_be_visible()

    page = new_page(browser, viewport=DESKTOP)
    page.goto(url)
    page.get_by_placeholder("your nickname").fill("Sam")
    page.locator("li[data-seat='2']").get_by_role("button", name="Take this seat").click()
    dock = page.locator("#actions .bridge-dock")
    expect(dock).to_have_attribute("data-kind", "call", timeout=20_000)
    expect(watcher.locator(".bridge-table")).to_be_visible(timeout=20_000)

    # --- the auction: North and East passed; the box offers every call but X and XX ---------
    assert cards_in(page.locator("[data-testid=my-hand] .jcard")) == [
        "SA", "SK", "SQ", "SJ", "HA", "HK", "HQ", "CA", "CK", "CQ", "DA", "DK", "DQ"]
    ranks = page.locator("[data-testid=my-hand] .jcard .rank").all_inner_texts()
    assert ranks[:4] == ["A", "K", "Q", "J"]
    expect(page.locator("[data-testid=auction] tbody td[data-call]")).to_have_count(2)
    assert page.locator("#board .bseat .jcard.face").count() == 0, "no dummy before the opening lead"
    offered = offered_calls(page)
    assert sorted(offered) == sorted(["P"] + [f"{n}{s}" for n in range(1, 8) for s in ("C", "D", "H", "S", "NT")])
    expect(page.get_by_test_id("vulnerability")).to_contain_text("N–S not")
    shoot(page, "desktop-bidding")
    page.locator(".bidding-box .levels button[data-level='7']").click()
    page.locator(".bidding-box .strains button[data-call='7NT']").click()

    # --- the play: West leads, dummy goes down, the person plays both hands ------------------
    # The rule-based bots double a grand slam they cannot beat: then the box offers Pass and
    # Redouble only, and South redoubles.
    contract = page.get_by_test_id("contract")
    expect(contract.or_(page.locator("#actions .bridge-dock[data-kind=call]")).first).to_be_visible(timeout=20_000)
    expect(contract.filter(has_text="7NT").or_(page.locator("[data-testid=auction] td[data-call=X]"))).to_be_visible(timeout=20_000)
    doubled = page.locator("[data-testid=auction] td[data-call=X]").count()
    if doubled:
        expect(dock).to_have_attribute("data-kind", "call")
        assert sorted(offered_calls(page)) == ["P", "XX"]
        page.locator(".bidding-box button[data-call='XX']").click()
    expect(page.get_by_test_id("contract")).to_contain_text("by you")
    dummy = page.locator(".bseat.pos-top [data-testid=dummy-hand]")
    expect(dummy.locator(".jcard")).to_have_count(13)
    assert page.locator(".bseat.pos-top").get_attribute("data-seat") == "0"
    played = {"card": 0, "dummy_card": 0}
    shots = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if page.locator("[data-testid=status]").inner_text().startswith("Match over"):
            break
        # Read in one step: the dock may go between a count and a read (the match's end
        # removes it), and a read of a gone element waits for one to come.
        kind = page.evaluate("() => document.querySelector('#actions .bridge-dock')?.dataset.kind ?? null")
        if kind == "card":
            legal = page.locator("#actions button.jcard:enabled")
            if played["card"] == 1 and "card" not in shots:
                shots.add("card")
                shoot(page, "desktop-my-card")
            legal.first.click()
            played["card"] += 1
        elif kind == "dummy_card":
            assert page.locator("#actions button.jcard").count() == 0, "my own cards wait while dummy plays"
            if "dummy" not in shots:
                shots.add("dummy")
                shoot(page, "desktop-dummy-card")
                watcher.wait_for_timeout(100)
                shoot(watcher, "phone-spectator-play")
                spectator_faces = cards_in(watcher.locator("#board .bseat .jcard.face"))
                public_dummy = cards_in(watcher.locator(".bseat[data-seat='0'] [data-testid=dummy-hand] .jcard"))
                assert spectator_faces == public_dummy and len(public_dummy) >= 12, spectator_faces
            if played["dummy_card"] == 1:  # a trick is over: "Last trick" shows it on demand
                page.get_by_test_id("show-last-trick").click()
                expect(page.locator("[data-testid=last-trick] .jcard")).to_have_count(4)
                page.get_by_test_id("show-last-trick").click()
            dummy.locator("button.jcard:enabled").first.click()
            played["dummy_card"] += 1
        else:
            page.wait_for_timeout(50)
    assert played == {"card": 13, "dummy_card": 13}, played

    # --- the end: the result line, every hand as dealt ---------------------------------------
    score = scoring.duplicate_score(7, rules.NOTRUMP, 2 if doubled else 0, False, 13)
    expect(page.locator("[data-testid=status]")).to_contain_text(f"Your side wins, {score} to 0 points")
    expect(page.get_by_test_id("result")).to_contain_text("Sam", timeout=20_000)  # the page reloads into the replay
    board = page.locator("#board")
    expect(board.get_by_test_id("board-result")).to_contain_text(f"7NT{'XX' if doubled else ''} S =")
    for seat, hand in enumerate(STRONG_SOUTH):
        expect(board.locator(f".bseat[data-seat='{seat}'] .bhand .jcard.face")).to_have_count(13)
        assert sorted(cards_in(board.locator(f".bseat[data-seat='{seat}'] .bhand .jcard.face"))) == sorted(hand)
    shoot(page, "desktop-over")
    expect(watcher.locator(".bseat[data-seat='1'] .bhand .jcard.face")).to_have_count(13, timeout=20_000)
    shoot(watcher, "phone-spectator-over")

    # --- the spectator's wire: never a hidden card while the board ran ------------------------
    views = [f["view"] for f in frames if f.get("type") == "match.view"]
    running = [v for v in views if not v["terminal"]]
    assert len(running) > 30, len(running)
    for view in running:
        assert not SECRET_KEYS & view.keys(), sorted(view)
        if not view["tricks"] and not view["trick"]["cards"]:
            assert view["dummy_hand"] is None, "dummy before the opening lead"
    assert page.errors == [] and watcher.errors == [], (page.errors, watcher.errors)
    assert time.monotonic() - started < 150


def test_play_a_bot_now_starts_a_bridge_table(arena, browser):  # noqa: F811
    page = new_page(browser, viewport=PHONE)
    page.goto(arena.url + "/")
    page.locator("#game-bridge").get_by_role("button", name="Play a bot now").click()
    page.get_by_role("textbox", name="Nickname").fill("Pat")
    page.locator("form#nickname").get_by_role("button", name="Play").click()
    page.wait_for_url("**/matches/*/")
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    seats = get_json(f"{arena.url}/api/matches/{match_id}/")["seats"]
    assert (seats[2]["kind"], seats[2]["name"]) == ("human", "Pat")
    expect(page.locator(".bseat.pos-bottom.me")).to_have_attribute("data-seat", "2")
    expect(page.locator("[data-testid=my-hand] .jcard")).to_have_count(13, timeout=20_000)
    # Whatever the bots called, the person's call comes round: the bidding box, legal calls only.
    expect(page.locator("#actions .bridge-dock[data-kind=call]")).to_be_visible(timeout=20_000)
    calls = page.locator("[data-testid=auction] tbody td[data-call]").evaluate_all("tds => tds.map(td => td.dataset.call)")
    expect(page.get_by_test_id("bidding-box")).to_be_visible()
    page.locator(".bidding-box button[data-call='P']").click()
    shoot(page, "phone-play-a-bot")
    wait_until(lambda: get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "running", what="running")
    assert len(calls) <= 3
    assert page.errors == [], page.errors


def test_the_score_of_a_team_match_and_of_a_rubber(browser, tmp_path):  # noqa: F811
    """A team match shows each room's result and the IMPs so far; a rubber its sheet above
    and below the line."""
    harness = tmp_path / "bridge.html"
    harness.write_text(HARNESS)
    page = new_page(browser, viewport=PHONE)
    page.goto(harness.as_uri())
    rng = random.Random(11)
    for config, boards in (({"boards": 2, "replay": 1}, 3), ({"scoring": "rubber", "boards": 6}, 2)):
        state = rules.new_state(config, 4)
        while len(state.results) < boards:  # random calls (bids early), random cards
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            state.apply({seat: legal[1] if state.phase == 0 and not state.calls else rng.choice(legal[:3])})
        view = state.public_observation()
        page.evaluate(RENDER, [view, None, None, False, SEAT_NAMES])
        score = page.get_by_test_id("score")
        if config.get("replay"):
            rows = score.locator("tbody tr")
            assert rows.count() == 3
            assert rows.locator("td:nth-child(2)").all_inner_texts() == ["Open", "Closed", "Open"]
            expect(score.get_by_test_id("score-total")).to_have_text(f"IMPs so far: N–S {view['imps'][0]} · E–W {view['imps'][1]}")
            expect(page.locator("[data-testid=status] .where")).to_contain_text("Board 2 · Closed room")
            shoot(page, "phone-script-team-match")
        else:
            sheet = view["rubber"]
            above = score.locator("tr", has_text="Above the line").locator("td").all_inner_texts()
            below = score.locator("tr", has_text="Below the line").locator("td").all_inner_texts()
            assert (above, below) == ([str(x) for x in sheet["above"]], [str(x) for x in sheet["below"]])
            shoot(page, "phone-script-rubber")
    assert page.errors == [], page.errors
