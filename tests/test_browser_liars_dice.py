"""A person plays Liar's Dice in the browser against two bots over TCP, while another guest
watches live; afterwards the person steps through the replay.

Real server (``manage.py serve``), real sockets, headless Chromium.  The person only clicks
what is on the screen; the checks are what people at the table would check: my dice are
shown and nobody else's, the bids appear for the spectator as they are made, the spectator
never sees a face of a current hand, every step of the replay shows every hand.
"""
from __future__ import annotations

import json
import random
import re
import time
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser_util import PHONE, browser, new_page  # noqa: F401  (fixture)
from tests.ld_bot import LDBot
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser

PERSON = "Ann <b>&amp;</b>"  # shown literally, never as markup
WATCHER = "Watcher"

#: In the spectator's page: remember every bid line ever drawn, and any face of a die drawn
#: in the players' area while the match is running (that would be a leak).
SPECTATOR_PROBE = """
window.__seenBids = JSON.parse(sessionStorage.getItem('seenBids') || '[]');  // kept across reloads
window.__leaks = JSON.parse(sessionStorage.getItem('leaks') || '[]');
new MutationObserver((records) => {
  const running = typeof Arena !== 'undefined' && Arena.data && Arena.data.status === 'running';
  for (const r of records) for (const node of r.addedNodes) {
    if (!(node instanceof Element)) continue;
    for (const li of node.matches('.bid-list li') ? [node] : node.querySelectorAll('.bid-list li')) {
      const bid = li.querySelector('[data-bid]');
      window.__seenBids.push({text: li.textContent, bid: bid && bid.dataset.bid});
    }
    if (running) for (const d of node.querySelectorAll('.players .dice .die[data-face]')) {
      window.__leaks.push(d.closest('.player').textContent);
    }
  }
  sessionStorage.setItem('seenBids', JSON.stringify(window.__seenBids));
  sessionStorage.setItem('leaks', JSON.stringify(window.__leaks));
}).observe(document, {childList: true, subtree: true});
"""


def bot_move(msg: dict, rng=random.Random(7)):
    """Raise by one until three dice are bid, then challenge; open with one die of a face we hold."""
    if msg["other_hands"][0][0] != 0:
        return "pass"
    face, count = msg["last_bid"]
    if count == 0:
        return [rng.choice(msg["your_hand"]), 1]
    if count >= 3:
        return "challenge"
    return [face, count + 1]


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def dice_on_table(page) -> int:
    """The dice counts the players' boxes show ("2 dice", "1 die", "out"), summed."""
    counts = page.locator(".players .player .count").all_text_contents()
    return sum(int(c.split()[0]) for c in counts if c[0].isdigit())


def faces_by_seat(page) -> dict[int, list[int]]:
    """The dice faces drawn per seat in the players' area (hidden dice are left out)."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.players .player')].map(
        (p) => [p.dataset.seat, [...p.querySelectorAll('.dice .die[data-face]')].map((d) => Number(d.dataset.face))]))""")


def test_person_plays_a_whole_match_against_two_bots_while_a_guest_watches(arena_factory, browser):  # noqa: F811
    started = time.monotonic()
    arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "20", "ARENA_HUMAN_CHALLENGE_WINDOW": "5",
                               "ARENA_ROUND_PAUSE": "0.3"})
    page = new_page(browser, viewport=PHONE)  # the person plays on a phone, the guest watches on a desktop

    # --- the lobby and the create-table form ----------------------------------------------
    page.goto(arena.url + "/")
    page.locator("#game-liars_dice").get_by_role("link", name="Create a table").click()
    page.get_by_label("Your nickname").fill(PERSON)
    page.get_by_label("Players").fill("3")
    page.get_by_label("Dice per player").fill("2")
    assert page.locator(".seat-choice:visible").count() == 3, "one seat choice per player"
    page.get_by_label("Seat 1").select_option("me")
    page.get_by_label("Seat 2").select_option("open_bot")
    page.get_by_label("Seat 3").select_option("open_bot")
    page.get_by_role("button", name="Create table").click()

    # --- the waiting room: my seat, two bot seats, and where bots connect -----------------
    room = page.locator("#waiting-room")
    room.wait_for()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    assert room.locator("li.mine .name").text_content() == PERSON
    assert room.get_by_text("open for a bot").count() == 2
    assert str(arena.liars_dice_port) in room.locator(".bot-help").text_content()

    bots = [LDBot(arena.liars_dice_port, "bot-a", bot_move)]
    page.wait_for_function("document.querySelectorAll('#waiting-room .open').length === 1")
    bots.append(LDBot(arena.liars_dice_port, "bot-b", bot_move))
    page.locator(".board .players").wait_for()  # the page follows the table into the match

    # --- at the table: my two dice face up, the others' as counts only ---------------------
    me = page.locator(".player.me")
    assert me.locator(".name").text_content() == PERSON
    assert me.locator(".dice .die[data-face]").count() == 2
    assert page.locator(".player:not(.me) .dice .die[data-face]").count() == 0
    assert page.locator(".player:not(.me) .dice .die.hidden").count() == 4

    # --- a second guest watches on a phone, from the lobby's "Live" list -------------------
    watcher = new_page(browser, init_script=SPECTATOR_PROBE)
    watcher_frames = []  # everything the server sends the spectator's page
    watcher.on("websocket", lambda ws: ws.on("framereceived", lambda payload: watcher_frames.append(payload)))
    watcher.goto(arena.url + "/")
    watcher.get_by_label("Nickname").fill(WATCHER)
    watcher.get_by_role("button", name="Save").click()
    watcher.locator("#game-liars_dice").get_by_role("link", name="Watch").click()
    watcher.locator(".board .players").wait_for()
    assert "watching" in watcher.locator("#who-am-i").text_content()
    assert watcher.locator(".players .dice .die[data-face]").count() == 0
    assert watcher.locator(".players .dice .die.hidden").count() == dice_on_table(watcher) > 0
    assert watcher.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"

    # --- play the whole match by clicking ----------------------------------------------------
    done = {"bid": 0, "challenge": 0, "stand": 0, "window challenge": 0}
    my_bids = []
    windows = 0
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, f"the match did not end; moves so far: {done}"
        page.wait_for_selector("#actions .controls[data-kind], .status-line.done", timeout=30_000)
        if page.locator(".status-line.done").count():
            break
        controls = page.locator("#actions .controls[data-kind]")
        kind = controls.get_attribute("data-kind")
        # On the phone the answer panel leaves the table in view: at most a quarter of the
        # screen on a turn, a sixth in the challenge window.
        share = controls.bounding_box()["height"] / PHONE["height"]
        assert share <= (0.25 if kind == "turn" else 1 / 6), (kind, share)
        if kind == "challenge_window":
            windows += 1
            prompt = controls.locator(".prompt [data-bid]").get_attribute("data-bid")
            count = int(prompt.split("x")[0])
            if windows > 1 and count <= 2:  # the bot on turn will raise, so my challenge settles it
                controls.get_by_role("button", name="Challenge!").click()
                done["window challenge"] += 1
            else:
                controls.get_by_role("button", name="Let it stand").click()
                done["stand"] += 1
        else:
            assert kind == "turn"
            assert "Your turn" in page.locator(".status-line .turn").text_content()
            assert re.fullmatch(r"\d+ s", page.locator(".status-line .countdown").text_content())
            challenge = controls.locator("button.challenge")
            current = page.locator(".current-bid [data-bid]")
            current_count = int(current.get_attribute("data-bid").split("x")[0]) if current.count() else 0
            if challenge.count() and done["bid"] and current_count >= 2:
                challenge.click()
                done["challenge"] += 1
            else:
                mine = [int(f) for f in me.locator(".dice .die[data-face]").evaluate_all("ds => ds.map(d => d.dataset.face)")]
                if not current_count:  # opening a round: every face raises, so the picker starts on one I hold
                    chosen = int(controls.locator(".faces button.chosen").get_attribute("data-face"))
                    assert chosen in mine and mine.count(chosen) == max(mine.count(f) for f in mine), (chosen, mine)
                    if not done["bid"]:  # the count can be typed
                        controls.get_by_label("number of dice").fill("2")
                        assert controls.locator("button.bid [data-bid]").get_attribute("data-bid").startswith("2x")
                more = controls.get_by_role("button", name="more dice")
                if current_count and more.is_enabled():
                    more.click()
                for face in mine:  # bid on a face I hold, if that face is a raise
                    face_button = controls.locator(f".faces button[data-face='{face}']")
                    if face_button.is_enabled():
                        face_button.click()
                        break
                bid = controls.locator("button.bid [data-bid]").get_attribute("data-bid")
                controls.locator("button.bid").click()
                done["bid"] += 1
                my_bids.append(bid)
                # The spectator sees my bid appear, under my name, while the match goes on.
                watcher.wait_for_function(
                    """([name, bid]) => window.__seenBids.some((b) => b.bid === bid && b.text.startsWith(name))""",
                    arg=[PERSON, bid], timeout=5_000)
        # My answer is in: the controls say so (or the next request replaced them).
        # (An empty #actions, when my move ended the match or knocked me out, is never "visible",
        # so this is a condition on the page rather than a selector to wait for.)
        page.wait_for_function("""() => {
            const actions = document.querySelector('#actions');
            return !actions || !actions.children.length
                || actions.querySelector('.controls.sent, .controls[data-kind]') !== null;
        }""", timeout=5_000)

    print("moves:", done, "bids:", my_bids)
    assert done["bid"] >= 1 and done["stand"] >= 1 and done["challenge"] + done["window challenge"] >= 1, done
    for bot in bots:
        assert bot.closed.wait(10), "the server hangs up on the bots after the match"

    # --- the end: both pages turn into the finished match; the result is the server's ------
    result = get_json(f"{arena.url}/api/matches/{match_id}/")
    assert result["status"] == "finished"
    winner = result["result"]["winner"]
    frames = get_json(f"{arena.url}/api/matches/{match_id}/replay/")
    total = frames["total"] - 1
    pos = page.locator("#replay-pos")
    for p in (page, watcher):
        expect(p.locator("#replay-pos")).to_have_text(f"Step {total} of {total}", timeout=15_000)
    expect(page.locator(".status-line.done")).to_contain_text("You win!" if winner == 0 else "wins.")
    # A bot that connected without its key is marked once, in the page's head, not in every
    # sentence that names it.
    won = result["seats"][winner]
    expect(watcher.locator(".status-line.done")).to_contain_text(f"{won['name']} wins.")
    assert "unverified" not in watcher.locator(".status-line.done").inner_text()

    # The spectator never saw a face of a current hand, on the screen or on the wire.
    assert watcher.evaluate("window.__leaks") == []
    seen = watcher.evaluate("window.__seenBids")
    assert any(b["text"].startswith(PERSON) for b in seen) and len(seen) > len(my_bids)
    views = [m for m in map(json.loads, watcher_frames) if m.get("type") == "match.view"]
    assert views, "the spectator got live views"
    for m in views:
        assert m["audience"] == "public" and not m.get("request")
        assert "your_hand" not in m["view"], m
        assert m["view"]["terminal"] or not m["view"].get("hands"), "a current hand went to the spectator"

    # --- the replay: every step, every hand face up ------------------------------------------
    page.get_by_role("button", name="« First").click()
    expect(pos).to_have_text(f"Step 0 of {total}")
    for step in range(total + 1):
        if step:
            page.get_by_role("button", name="Next ›").click()
        expect(pos).to_have_text(f"Step {step} of {total}")
        view = frames["frames"][step]["view"]
        if view["terminal"]:
            assert "Match over" in page.locator(".status-line").text_content()
            continue
        assert page.locator(".players .dice .die.hidden").count() == 0
        shown = faces_by_seat(page)
        assert {int(s): f for s, f in shown.items()} == {s: h for s, h in enumerate(view["hands"])}, f"step {step}"
        if step:
            assert page.locator("[data-testid=step-moves] h4").text_content() == f"Step {step}"
    expect(page.get_by_role("button", name="Next ›")).to_be_disabled()
    page.get_by_role("button", name="‹ Back").click()
    expect(pos).to_have_text(f"Step {total - 1} of {total}")

    # --- and the history lists it ------------------------------------------------------------
    page.goto(arena.url + "/history/")
    row = page.locator("table.history tbody tr", has_text=f"#{match_id}")
    assert PERSON in row.text_content()
    assert row.locator(".seatname.won").count() == 1
    assert (PERSON in row.locator(".seatname.won").text_content()) == (winner == 0)

    assert page.errors == [] and watcher.errors == [], page.errors + watcher.errors
    assert time.monotonic() - started < 120


def test_the_lobby_updates_by_itself_and_keeps_what_a_visitor_types(arena, browser):  # noqa: F811
    lobby = new_page(browser)
    lobby.goto(arena.url + "/")
    section = lobby.locator("#game-liars_dice")
    expect(section.locator(".matches").first).to_contain_text("No open tables")
    lobby.get_by_placeholder("how others see you").fill("half-typed")
    other = new_page(browser)
    other.goto(arena.url + "/tables/new/liars_dice/")
    other.get_by_label("Your nickname").fill("Bea")
    other.get_by_label("Seat 2").select_option("open_human")
    other.get_by_role("button", name="Create table").click()
    match_id = re.search(r"/matches/(\d+)/", other.url).group(1)
    # No reload: the lobby fetches itself every few seconds.
    expect(section.get_by_role("link", name=f"#{match_id}")).to_be_visible(timeout=15_000)
    expect(section).to_contain_text("Bea")
    assert lobby.get_by_placeholder("how others see you").input_value() == "half-typed"
    assert not lobby.errors and not other.errors


def test_the_replay_has_a_slider_and_jumps_to_the_start_of_a_round(arena, browser):  # noqa: F811
    """A finished match's replay moves to any step with a slider (mouse or keys) and
    jumps from round to round, not only one step at a time."""
    page = new_page(browser)
    page.goto(arena.url + "/tables/new/liars_dice/")
    page.get_by_label("Players").fill("3")
    page.get_by_label("Dice per player").fill("3")
    for seat in (1, 2, 3):
        page.get_by_label(f"Seat {seat}").select_option("builtin:random")
    page.get_by_label("Pace").select_option("0.0")  # the replay is tried here, not the live match
    page.get_by_role("button", name="Create table").click()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    wait_until(lambda: get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "finished", 20, "the match ends")
    frames = get_json(f"{arena.url}/api/matches/{match_id}/replay/")
    total = frames["total"] - 1
    # Where a round starts: the step whose happenings end the round before (it shows both).
    starts = [step for step, f in enumerate(frames["frames"])
              if any(h["type"] == "round_over" for h in f["happenings"]) and not f["view"]["terminal"]]
    assert len(starts) >= 2, starts
    pos = page.locator("#replay-pos")
    expect(pos).to_have_text(f"Step {total} of {total}", timeout=15_000)  # the page follows the match to its end

    slider = page.get_by_role("slider", name="Replay step")
    slider.fill("5")
    expect(pos).to_have_text(f"Step 5 of {total}")
    slider.press("ArrowLeft")
    expect(pos).to_have_text(f"Step 4 of {total}")
    slider.press("End")
    expect(pos).to_have_text(f"Step {total} of {total}")
    expect(page.get_by_role("button", name="Next round ›")).to_be_disabled()

    page.get_by_role("button", name="« First").click()
    expect(slider).to_have_value("0")
    for number, step in enumerate(starts[:2], start=2):
        page.get_by_role("button", name="Next round ›").click()
        expect(pos).to_have_text(f"Step {step} of {total}")
        expect(page.locator("#board")).to_contain_text(f"Round {number}")
        expect(slider).to_have_value(str(step))
    # Back: to the start of this round, then of the one before.
    page.get_by_role("button", name="Next ›").click()
    page.get_by_role("button", name="‹ Previous round").click()
    expect(pos).to_have_text(f"Step {starts[1]} of {total}")
    page.get_by_role("button", name="‹ Previous round").click()
    expect(pos).to_have_text(f"Step {starts[0]} of {total}")
    # Liar's Dice has no tricks or games to jump to in a one-game match.
    assert page.get_by_role("button", name=re.compile("trick")).count() == 0
    assert page.errors == [], page.errors


#: Lets a test say the tab is hidden (document.hidden and a visibilitychange event, as when the
#: person switches to another tab) and counts the tones the page starts.
HIDDEN_TAB_PROBE = """
window.__hidden = false;
Object.defineProperty(Document.prototype, 'hidden', {configurable: true, get() { return window.__hidden; }});
Object.defineProperty(Document.prototype, 'visibilityState', {configurable: true,
  get() { return window.__hidden ? 'hidden' : 'visible'; }});
window.__setHidden = (hidden) => { window.__hidden = hidden; document.dispatchEvent(new Event('visibilitychange')); };
window.__tones = 0;
const realStart = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.__tones += 1; return realStart.apply(this, args); };
// Every title the page shows, in order: the bot may answer so fast that the plain title is
// back for only a moment before the next request marks it again.
window.__titles = [];
new MutationObserver(() => window.__titles.push(document.title))
  .observe(document, {subtree: true, childList: true, characterData: true});
"""


def test_your_turn_shows_in_the_title_and_beeps_while_the_tab_is_hidden(arena, browser):  # noqa: F811
    """A person in another tab learns it is their turn from the tab title and a short
    sound, which they can switch off (remembered); nothing while they look at the page."""
    page = new_page(browser, init_script=HIDDEN_TAB_PROBE)
    page.goto(arena.url + "/tables/new/liars_dice/")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label("Players").fill("2")
    page.get_by_label("Seat 1").select_option("me")
    page.get_by_label("Seat 2").select_option("builtin:random")
    page.get_by_role("button", name="Create table").click()
    title = page.title()
    your_turn = re.compile("^● Your turn – " + re.escape(title) + "$")
    turn = page.locator("#actions .controls[data-kind=turn]")

    def move():
        """Challenge the bid on the table, or open the round; the bot answers at once."""
        turn.wait_for()
        challenge = turn.locator("button.challenge")
        (challenge if challenge.count() else turn.locator("button.bid")).click()

    turn.wait_for()
    assert page.title() == title and page.evaluate("window.__tones") == 0, "nothing while the page is seen"
    page.evaluate("window.__setHidden(true)")
    expect(page).to_have_title(your_turn)
    shown = page.evaluate("window.__titles.length")
    move()
    page.wait_for_function("([from, plain]) => window.__titles.slice(from).includes(plain)",
                           arg=[shown, title])  # answered: the mark went, if only for a moment
    expect(page).to_have_title(your_turn, timeout=10_000)  # the next request, in the background
    page.wait_for_function("window.__tones > 0")
    page.evaluate("window.__setHidden(false)")
    expect(page).to_have_title(title)

    # Sound off: the title still tells, no tone; the choice is remembered.
    sound = page.locator("#sound-toggle")
    expect(sound).to_have_text("Sound on")
    sound.click()
    expect(sound).to_have_text("Sound off")
    tones = page.evaluate("window.__tones")
    page.evaluate("window.__setHidden(true)")
    move()
    expect(page).to_have_title(your_turn, timeout=10_000)
    assert page.evaluate("window.__tones") == tones
    page.reload()
    expect(page.locator("#sound-toggle")).to_have_text("Sound off")
    assert page.errors == [], page.errors
