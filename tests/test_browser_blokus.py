"""Blokus in the browser.

1. The board script on its own (no server): views from the rules drawn in headless Chromium.
   The placements the page thinks legal (its preview, its tray) are exactly the rules' legal
   placements, in both variants; picking, rotating, flipping and clicking sends the action the
   person aimed at; on a phone a tap shows the preview and a second tap places it; spectators
   get the board, the pieces left and the last move, and no controls.
2. A whole game with the real server (``manage.py serve``): a person creates a table against
   the built-in heuristic bot and places every piece by clicking (picking, rotating and
   flipping with buttons and keys) while a guest watches on a phone and sees the same board;
   both pages show the end result, and the replay steps through the game.

Screenshots go to /tmp/shots (not into git).
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

from games.blokus import rules
from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parent.parent / "static"
SHOTS = Path("/tmp/shots")
NAMES = ["Ann <b>&amp;</b>", "Heuristic bot"]  # shown literally, never as markup

HARNESS = f"""<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{(STATIC / 'arena/arena.css').as_uri()}"></head>
<body><main><section class="table-area"><div id="board" class="board"></div><div id="actions" class="actions"></div>
<div id="log"></div></section></main>
<script src="{(STATIC / 'arena/match.js').as_uri()}"></script>
<script src="{(STATIC / 'games/blokus.js').as_uri()}"></script></body></html>"""

#: Draw a view as the match page would: ``[view, mySeat, request, replay, names, answers, happenings]``.
RENDER = """([view, mySeat, request, replay, names, answers, happenings]) => {
  const seats = names.map((name, index) => ({index, name, kind: index ? 'builtin' : 'human'}));
  Arena.data = {seats, my_seat: mySeat};
  window.__acted = [];
  window.__version = (window.__version || 0) + 1;  // each render a new request, as from the server
  if (request) request = {...request, version: window.__version};
  Arena.games.blokus.render(view, {seats, mySeat, request, replay, happenings: happenings || [], answers: answers || [], answered: null,
    board: document.getElementById('board'), actions: document.getElementById('actions'), step: replay ? 1 : undefined,
    act: (a) => window.__acted.push(a), name: (s) => names[s], forcedFor: () => [], othersCountdown: () => null});
}"""


def placed_cells(action) -> frozenset:
    """The board cells a ``["set", ...]`` action covers."""
    _, _, kind, rotation, flipped, x, y = action
    return frozenset(rules.piece_cells(kind, rotation, flipped, x, y))


def rules_placements(state: rules.BlokusState) -> set:
    """The rules' legal placements of the colour to move as ``(kind, cells)``."""
    seat = state.to_act()[0]
    return {(a[2], placed_cells(a)) for a in state.legal_actions(seat) if a[0] == "set"}


def page_placements(page, view) -> set:
    """The placements the page's script thinks legal for ``view``, as ``(kind, cells)``."""
    found = page.evaluate("(view) => Arena.games.blokus.placements(view)", view)
    return {(p["kind"], frozenset(map(tuple, p["cells"]))) for p in found}


def play_randomly(variant: str, seed: int, moves: int) -> rules.BlokusState:
    """A game after up to ``moves`` random legal moves (bigger pieces more likely)."""
    state = rules.new_state({"variant": variant}, seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        sets = [a for a in legal if a[0] == "set"]
        state.apply({seat: rng.choice(sets or legal)})
    return state


def pick_and_place(page, action, rng: random.Random, tap: bool = False) -> None:
    """Act only through the page: pick the piece in the tray, turn and flip it with the
    buttons or the keys until it has the action's orientation, then click (or tap twice)
    the board cell that holds the piece at the action's position."""
    _, _, kind, rotation, flipped, x, y = action
    want = set(rules.piece_cells(kind, rotation, flipped, 0, 0))
    selected = page.get_by_test_id("selected")
    if selected.get_attribute("data-shape") != kind:
        piece = page.locator(f"#actions .bk-tray-piece[data-shape='{kind}']")
        piece.tap() if tap else piece.click()
    expect(selected).to_have_attribute("data-shape", kind)
    keys = not tap and rng.random() < 0.5
    clockwise = rng.random() < 0.5  # one way round: four turns see every rotation
    for turn in range(8):
        if {tuple(c) for c in json.loads(selected.get_attribute("data-cells"))} == want:
            break
        before = selected.get_attribute("data-cells")
        if turn == 3:  # four turns seen: flip, then turn again
            page.keyboard.press("f") if keys else page.get_by_test_id("flip").click()
        elif keys:
            page.keyboard.press(rng.choice(["r", "e"] if clockwise else ["Shift+R", "q"]))
        else:
            page.get_by_test_id("rotate-right" if clockwise else "rotate-left").click()
        if turn != 3 and kind not in ("MONO", "TETRO_O", "PENTO_X"):  # a quarter turn changes them
            expect(selected).not_to_have_attribute("data-cells", before)
    else:
        raise AssertionError(f"never reached the orientation of {action}")
    gx, gy = map(int, selected.get_attribute("data-grab").split(","))
    cell = page.locator(f".bk-board .bk-cell[data-x='{x + gx}'][data-y='{y + gy}']")
    if tap:
        cell.tap()
        expect(page.locator(".bk-board .bk-pv-ok")).to_have_count(len(want))
        cell.tap()
    else:
        cell.hover()
        expect(page.locator(".bk-board .bk-pv-ok")).to_have_count(len(want))
        cell.click()


def board_on_page(page) -> list[str]:
    """The board as the page draws it: 20 strings, '.' or the colour's letter."""
    return page.evaluate("""() => { const rows = Array.from({length: 20}, () => Array(20).fill('.'));
      for (const c of document.querySelectorAll('.bk-board .bk-cell[data-c]')) rows[+c.dataset.y][+c.dataset.x] = c.dataset.c;
      return rows.map((r) => r.join('')); }""")


# --- 1. the board script on views from the rules -----------------------------------------------

@pytest.fixture
def harness(tmp_path):
    path = tmp_path / "blokus.html"
    path.write_text(HARNESS)
    return path.as_uri()


def test_the_page_knows_the_legal_placements_and_sends_what_was_aimed_at(browser, harness):  # noqa: F811
    page = new_page(browser)
    page.goto(harness)
    rng = random.Random(5)
    checked = 0
    for variant in ("2021", "2027"):
        for seed in range(6):
            state = play_randomly(variant, seed, rng.choice([0, 1, 4, 9, 17, 30, 45, 60]))
            if state.is_terminal():
                continue
            seat = state.to_act()[0]
            view = state.observation(seat)
            legal = state.legal_actions(seat)
            page.evaluate(RENDER, [view, seat, {"kind": "move", "version": 1}, False, NAMES, []])
            # The page's idea of legal is the rules' idea, move for move.
            assert page_placements(page, view) == rules_placements(state), (variant, seed, state.turn)
            # The tray: every unplaced piece of the colour to move, enabled where it fits.
            tray = page.locator("#actions .bk-tray-piece")
            color = view["current_color"]
            assert tray.evaluate_all("bs => bs.map(b => b.dataset.shape)") == view["shapes"][color]
            fits = {a[2] for a in legal if a[0] == "set"}
            assert set(page.locator("#actions .bk-tray-piece:enabled").evaluate_all("bs => bs.map(b => b.dataset.shape)")) == fits
            assert (page.get_by_test_id("skip").count() == 1) == (["skip", color] in legal)
            # The corners where the colour may play are marked, and every placement covers one.
            marked = set(map(tuple, page.locator(".bk-board .bk-corner").evaluate_all(
                "cs => cs.map(c => [+c.dataset.x, +c.dataset.y])")))
            assert marked and all(cells & marked for _, cells in rules_placements(state))
            # Aim at a placement through the page: it sends an action the rules accept, covering those cells.
            sets = [a for a in legal if a[0] == "set"]
            aim = rng.choice(sets)
            pick_and_place(page, aim, rng)
            acted = page.evaluate("window.__acted")
            assert len(acted) == 1 and acted[0][:3] == ["set", color, aim[2]], acted
            assert state.is_legal(seat, acted[0]) and placed_cells(acted[0]) == placed_cells(aim)
            checked += 1
    assert checked >= 8
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    assert page.errors == [], page.errors


def test_an_illegal_spot_shows_red_and_why_and_is_not_sent(browser, harness):  # noqa: F811
    page = new_page(browser)
    page.goto(harness)
    state = play_randomly("2021", 3, 8)  # round 3: every colour has a piece on the board
    seat = state.to_act()[0]
    view = state.observation(seat)
    page.evaluate(RENDER, [view, seat, {"kind": "move", "version": 1}, False, NAMES, []])
    kind = next(k for k in view["shapes"][view["current_color"]] if k != "MONO")
    page.locator(f"#actions .bk-tray-piece[data-shape='{kind}']").click()
    # The middle of the empty board touches nothing of the colour: red, with the reason.
    free = next((x, y) for y in range(7, 13) for x in range(7, 13)
                if all(view["board"][yy][xx] == "." for yy in range(y - 3, y + 4) for xx in range(x - 3, x + 4)))
    cell = page.locator(f".bk-board .bk-cell[data-x='{free[0]}'][data-y='{free[1]}']")
    cell.hover()
    expect(page.locator(".bk-board .bk-pv-bad")).to_have_count(len(rules.piece_cells(kind, "NONE", False, 0, 0)))
    expect(page.get_by_test_id("why")).to_contain_text("at a corner")
    expect(page.get_by_test_id("place")).to_be_disabled()
    cell.click()
    assert page.evaluate("window.__acted") == []
    # Esc puts the piece back.
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("selected")).not_to_have_attribute("data-shape", kind)
    assert page.errors == [], page.errors


def test_the_keys_alone_place_the_start_piece_in_a_corner(browser, harness):  # noqa: F811
    """Arrows move the preview (kept on the board), Enter places it."""
    page = new_page(browser)
    page.goto(harness)
    state = rules.new_state({"variant": "2021"}, 12)
    view = state.observation(0)
    page.evaluate(RENDER, [view, 0, {"kind": "move", "version": 1}, False, NAMES, []])
    start = view["start_piece"]
    expect(page.get_by_test_id("selected")).to_have_attribute("data-shape", start)  # the only choice, in hand
    cells = rules.piece_cells(start, "NONE", False, 0, 0)
    w, h = max(x for x, _ in cells) + 1, max(y for _, y in cells) + 1
    # Pushed into a corner the piece lies flush with both sides; take a corner it then covers.
    for keys, (x, y), corner in ((("ArrowLeft", "ArrowUp"), (0, 0), (0, 0)), (("ArrowRight", "ArrowUp"), (20 - w, 0), (19, 0)),
                                 (("ArrowLeft", "ArrowDown"), (0, 20 - h), (0, 19)), (("ArrowRight", "ArrowDown"), (20 - w, 20 - h), (19, 19))):
        aim = ["set", "BLUE", start, "NONE", False, x, y]
        if corner in placed_cells(aim):
            break
    assert state.is_legal(0, aim)
    for key in keys:
        for _ in range(12):
            page.keyboard.press(key)
    expect(page.locator(".bk-board .bk-pv-ok")).to_have_count(5)
    page.keyboard.press("Enter")
    acted = page.evaluate("window.__acted")
    assert len(acted) == 1 and placed_cells(acted[0]) == placed_cells(aim), acted
    assert page.errors == [], page.errors


def test_on_a_phone_a_tap_shows_the_preview_and_a_second_tap_places(browser, harness):  # noqa: F811
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(harness)
    rng = random.Random(11)
    for seed, moves in ((1, 0), (2, 21), (4, 40)):
        state = play_randomly("2021", seed, moves)
        seat = state.to_act()[0]
        view = state.observation(seat)
        page.evaluate(RENDER, [view, seat, {"kind": "move", "version": 1}, False, NAMES, []])
        if moves == 0:  # the first move: only the start piece, already in hand, covering a corner
            expect(page.get_by_test_id("selected")).to_have_attribute("data-shape", view["start_piece"])
            assert page.locator("#actions .bk-tray-piece:enabled").count() == 1
            assert page.get_by_test_id("skip").count() == 0
            corners = page.locator(".bk-board .bk-corner").evaluate_all("cs => cs.map(c => [+c.dataset.x, +c.dataset.y])")
            assert sorted(corners) == [[0, 0], [0, 19], [19, 0], [19, 19]]
        sets = [a for a in state.legal_actions(seat) if a[0] == "set"]
        aim = max(sets, key=lambda a: (len(placed_cells(a)), rng.random()))
        pick_and_place(page, aim, rng, tap=True)
        acted = page.evaluate("window.__acted")
        assert len(acted) == 1 and placed_cells(acted[0]) == placed_cells(aim), (acted, aim)
        if seed == 4:
            SHOTS.mkdir(exist_ok=True)
            page.evaluate(RENDER, [view, seat, {"kind": "move", "version": 1}, False, NAMES, []])
            page.locator(f"#actions .bk-tray-piece[data-shape='{aim[2]}']").tap()
            page.locator(f".bk-board .bk-cell[data-x='{aim[5]}'][data-y='{aim[6]}']").tap()
            page.screenshot(path=str(SHOTS / "blokus-phone-player.png"), full_page=True)
    # The board fits the width, the buttons are big enough to tap, the tray scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    box = page.locator(".bk-board").bounding_box()
    assert box["width"] <= PHONE["width"] and box["width"] >= 0.85 * PHONE["width"]
    for name in ("rotate-left", "rotate-right", "flip", "place"):
        b = page.get_by_test_id(name).bounding_box()
        assert b["width"] >= 40 and b["height"] >= 40, name
    assert page.evaluate("(() => { const t = document.querySelector('.bk-tray'); return t.scrollWidth > t.clientWidth; })()")
    context.close()
    assert errors == [], errors


def test_spectators_see_the_board_pieces_left_last_move_and_the_ending(browser, harness):  # noqa: F811
    page = new_page(browser, viewport=PHONE)
    page.goto(harness)
    state = play_randomly("2021", 7, 36)
    seat = state.to_act()[0]
    move = next(a for a in state.legal_actions(seat) if a[0] == "set")
    happenings = state.apply({seat: move})
    view = state.public_observation()
    # A bot's move with two debug hints (the transport keeps them in the answer's detail).
    answers = [{"seat": seat, "action": move, "forced": False, "reason": "", "detail": 'hints: "depth 2" "<b>eval</b> \\"+3\\""'}]
    page.evaluate(RENDER, [view, None, None, False, NAMES, answers, happenings])
    hints = page.get_by_test_id("hints")
    expect(hints).to_contain_text(move[1].capitalize())
    assert hints.locator("li").all_text_contents() == ["depth 2", '<b>eval</b> "+3"']
    assert board_on_page(page) == view["board"]
    assert page.locator("#actions *").count() == 0, "no controls for a spectator"
    last = page.locator(".bk-board .bk-last").evaluate_all("cs => cs.map(c => [+c.dataset.x, +c.dataset.y])")
    assert sorted(last) == sorted(view["last_cells"]) and last
    for color in rules.COLORS:
        row = page.locator(f"[data-testid=pieces-left] .bk-left-row[data-color={color}]")
        assert row.locator(".bk-left-piece").evaluate_all("ps => ps.map(p => p.dataset.shape)") == view["shapes"][color]
    for seat in (0, 1):
        expect(page.get_by_test_id(f"team-points-{seat}")).to_have_text(str(view["team_points"][seat]))
    expect(page.locator(".bk-teams")).to_contain_text(NAMES[0])  # the name as text, not markup
    expect(page.get_by_test_id("status")).to_contain_text(view["current_color"].capitalize())
    # A forced ending, in words, with the reason.
    seat = state.to_act()[0]
    state.apply({seat: ["forfeit", "SOFT_TIMEOUT", "the move came after 2 s"]})
    final = state.full_observation()
    page.evaluate(RENDER, [final, None, None, False, NAMES, [{"seat": seat, "action": ["forfeit", "SOFT_TIMEOUT", "the move came after 2 s"],
                                                              "forced": True, "reason": "the move came after 2 s"}]])
    expect(page.get_by_test_id("status")).to_contain_text(f"Team {rules.TEAMS[1 - seat]}")
    expect(page.get_by_test_id("status")).to_contain_text("wins")
    expect(page.get_by_test_id("cause")).to_contain_text("moved too late")
    expect(page.get_by_test_id("cause")).to_contain_text("the move came after 2 s")
    assert page.errors == [], page.errors


#: Every row's height and every column's width on the page, in CSS pixels.
TRACKS = """() => { const at = (x, y) => document.querySelector(`.bk-board .bk-cell[data-x='${x}'][data-y='${y}']`).getBoundingClientRect();
  const rows = [], cols = [];
  for (let i = 0; i < 20; i++) { rows.push(at(0, i).height); cols.push(at(i, 0).width); }
  const board = document.querySelector('.bk-board').getBoundingClientRect();
  return {rows, cols, board: [board.width, board.height]}; }"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_squares_are_square_before_and_after_pieces_land(browser, harness, viewport):  # noqa: F811
    page = new_page(browser, viewport=viewport)
    page.goto(harness)
    seen = []
    for moves in (0, 6, 40):  # empty, a few pieces, a crowded board
        state = play_randomly("2021", 8, moves)
        seat = state.to_act()[0] if not state.is_terminal() else 0
        page.evaluate(RENDER, [state.observation(seat), seat, {"kind": "move", "version": 1}, False, NAMES, []])
        tracks = page.evaluate(TRACKS)
        sizes = tracks["rows"] + tracks["cols"]
        assert max(sizes) - min(sizes) < 0.6, (moves, tracks)
        width, height = tracks["board"]
        assert abs(width - height) < 0.6, (moves, tracks)
        seen.append((round(width, 1), round(sizes[0], 1)))
    assert len(set(seen)) == 1, f"the board keeps its shape as pieces land: {seen}"
    side = seen[0][1]
    assert side >= 15, seen
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"blokus-squares-{viewport['width']}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    assert page.errors == [], page.errors


def test_pieces_are_drawn_the_board_is_labelled_and_turns_count_from_1(browser, harness):  # noqa: F811
    page = new_page(browser)
    page.goto(harness)
    state = rules.new_state({"variant": "2021"}, 4)
    page.evaluate(RENDER, [state.observation(0), 0, {"kind": "move", "version": 1}, False, NAMES, []])
    expect(page.get_by_test_id("status")).to_contain_text("Round 1 · turn 1")
    labels = page.locator(".bk-cols span").all_text_contents(), page.locator(".bk-rows span").all_text_contents()
    assert labels == (list("ABCDEFGHIJKLMNOPQRST"), [str(n) for n in range(1, 21)])
    # Each label sits over (beside) its column (row) of squares.
    for x, y in ((0, 0), (13, 7), (19, 19)):
        cell = page.locator(f".bk-board .bk-cell[data-x='{x}'][data-y='{y}']").bounding_box()
        col = page.locator(".bk-cols span").nth(x).bounding_box()
        row = page.locator(".bk-rows span").nth(y).bounding_box()
        assert abs((col["x"] + col["width"] / 2) - (cell["x"] + cell["width"] / 2)) < 1
        assert abs((row["y"] + row["height"] / 2) - (cell["y"] + cell["height"] / 2)) < 1
    start = page.get_by_test_id("start-piece")
    assert start.locator(".bk-piece i").count() == len(rules.piece_cells(state.start_piece, "NONE", False, 0, 0))
    # The last move and a replay's step list: the piece drawn as it lies, the squares named as labelled.
    move = ["set", "BLUE", "PENTO_L", "RIGHT", False, 0, 0]
    state = rules.new_state({"variant": "2021", "start_piece": "PENTO_L"}, 4)
    happenings = state.apply({0: move})
    view = state.public_observation()
    page.evaluate(RENDER, [view, None, None, True, NAMES, [], happenings])
    for where in ("last-move", "step-moves"):
        text = page.get_by_test_id(where).inner_text()
        assert "PENTO" not in text and "on A1–D2" in text, (where, text)
        drawn = page.get_by_test_id(where).locator(".bk-piece[data-shape='PENTO_L'] i").evaluate_all(
            "is => is.map(i => [+i.style.gridColumnStart - 1, +i.style.gridRowStart - 1])")
        assert sorted(map(tuple, drawn)) == sorted(rules.piece_cells("PENTO_L", "RIGHT", False, 0, 0))
    expect(page.get_by_test_id("last-move").locator(".bk-piece")).to_have_attribute("title", "L pentomino (5 squares)")
    # Nowhere a wire name as text, nor as a tooltip.
    page.evaluate(RENDER, [state.observation(1), 1, {"kind": "move", "version": 1}, False, NAMES, []])
    body = page.locator("body").inner_text()
    titles = page.locator("[title]").evaluate_all("es => es.map(e => e.title).join(' ')")
    assert not re.search(r"\b(MONO|DOMINO|TRIO_|TETRO_|PENTO_)", body + titles), (body, titles)
    assert page.errors == [], page.errors


def test_a_refused_click_says_why_beside_the_board_keeps_the_preview_and_clears_on_the_next_aim(browser, harness):  # noqa: F811
    page = new_page(browser)
    page.goto(harness)
    state = play_randomly("2021", 3, 8)
    seat = state.to_act()[0]
    view = state.observation(seat)
    page.evaluate(RENDER, [view, seat, {"kind": "move", "version": 1}, False, NAMES, []])
    kind = next(k for k in view["shapes"][view["current_color"]] if k != "MONO")
    size = len(rules.piece_cells(kind, "NONE", False, 0, 0))
    page.locator(f"#actions .bk-tray-piece[data-shape='{kind}']").click()
    free = next((x, y) for y in range(7, 13) for x in range(7, 13)
                if all(view["board"][yy][xx] == "." for yy in range(y - 3, y + 4) for xx in range(x - 3, x + 4)))
    cell = page.locator(f".bk-board .bk-cell[data-x='{free[0]}'][data-y='{free[1]}']")
    cell.hover()
    cell.click()
    why = page.get_by_test_id("why")
    expect(why).to_contain_text("Not here: Must touch")
    assert page.evaluate("window.__acted") == []
    # The preview stays where the pointer is, and nothing lies over the board.
    expect(page.locator(".bk-board .bk-pv-bad")).to_have_count(size)
    board = page.locator(".bk-board").bounding_box()
    assert page.locator("#flash:visible").count() == 0
    b = why.bounding_box()
    assert b["y"] >= board["y"] + board["height"] or b["y"] + b["height"] <= board["y"], "the reason is not on the board"
    # The next aim answers it.
    page.locator(f".bk-board .bk-cell[data-x='{free[0] + 1}'][data-y='{free[1]}']").hover()
    expect(why).not_to_contain_text("Not here")
    expect(page.locator(".bk-board .bk-pv-bad")).to_have_count(size)
    assert page.errors == [], page.errors


# --- 2. a whole game with the real server ----------------------------------------------------

def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def choose(legal: list, rng: random.Random, skip_now: bool):
    """The person's plan: big pieces first (random among them); skip when told to or when
    nothing fits."""
    sets = [a for a in legal if a[0] == "set"]
    if not sets or (skip_now and ["skip", legal[-1][1]] in legal):
        return next(a for a in legal if a[0] == "skip")
    most = max(len(placed_cells(a)) for a in sets)
    return rng.choice([a for a in sets if len(placed_cells(a)) == most])


#: Whether the chosen option of a select shows whole: its text's width against the box's.
CHOICE_FITS = """(select) => { const style = getComputedStyle(select);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const text = ctx.measureText(select.options[select.selectedIndex].text).width;
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;  // 20: the arrow
  return [text, room]; }"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_rules_choice_shows_whole_and_the_first_turn_keeps_the_page_head_in_view(arena_factory, browser, viewport):  # noqa: F811
    arena = arena_factory(env={"ARENA_ROUND_PAUSE": "0", "ARENA_BUILTIN_DELAY": "0.05"})
    page = new_page(browser, viewport=viewport)
    page.goto(arena.url + "/tables/new/blokus/")
    rules_choice = page.get_by_label("Software-Challenge rules")
    for variant in ("2027", "2021"):
        rules_choice.select_option(variant)
        text, room = rules_choice.evaluate(CHOICE_FITS)
        assert text <= room, (variant, text, room)
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label(re.compile(r"^Team ONE")).select_option("me")
    page.get_by_label(re.compile(r"^Team TWO")).select_option("builtin:heuristic")
    page.get_by_role("button", name="Create table").click()
    page.locator("#actions .bk-tray-piece").first.wait_for()
    expect(page.get_by_test_id("status")).to_contain_text("turn 1")
    # Nothing scrolled: the title and Leave are in view, and the whole board above the dock.
    assert page.evaluate("window.scrollY") == 0
    expect(page.locator("h2").first).to_be_in_viewport(ratio=1)
    expect(page.locator("#leave-match")).to_be_in_viewport(ratio=1)
    board = page.locator(".bk-board").bounding_box()
    dock = page.locator("#actions .bk-dock").bounding_box()
    assert board["y"] + board["height"] <= dock["y"] + 1, (board, dock)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"blokus-first-turn-{viewport['width']}.png"))
    assert page.errors == [], page.errors


def test_a_person_plays_a_whole_game_against_the_heuristic_bot_while_a_guest_watches(arena_factory, browser):  # noqa: F811
    started = time.monotonic()
    arena = arena_factory(env={"BLOKUS_HUMAN_DEADLINE": "30", "ARENA_ROUND_PAUSE": "0", "ARENA_BUILTIN_DELAY": "0.05"})
    SHOTS.mkdir(exist_ok=True)
    page = new_page(browser)
    page.goto(arena.url + "/tables/new/blokus/")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label("Software-Challenge rules").select_option("2021")
    page.get_by_label(re.compile(r"^Team ONE")).select_option("me")
    page.get_by_label(re.compile(r"^Team TWO")).select_option("builtin:heuristic")
    page.get_by_role("button", name="Create table").click()
    page.locator(".bk-board").wait_for()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))

    # --- a guest watches on a phone, from the lobby -----------------------------------------
    watcher = new_page(browser, viewport=PHONE)
    watcher.goto(arena.url + "/")
    watcher.get_by_label("Nickname").fill("Watcher")
    watcher.get_by_role("button", name="Save").click()
    watcher.locator("#game-blokus").get_by_role("link", name="Watch").first.click()
    watcher.locator(".bk-board").wait_for()
    assert "watching" in watcher.locator("#who-am-i").text_content()
    assert watcher.locator("#actions *").count() == 0

    # --- play every move by clicking ------------------------------------------------------------
    rng = random.Random(2021)
    done = {"set": 0, "skip": 0, "same board": 0}
    skipped = False
    turn = -1
    while True:
        page.wait_for_function("""(t) => { const v = Arena.lastMsg && Arena.lastMsg.view;
            return v && (v.terminal || (v.turn > t && document.querySelector('#actions .bk-dock[data-kind=move]'))); }""",
                               arg=turn, timeout=20_000)
        view = page.evaluate("Arena.lastMsg.view")
        if view["terminal"]:
            break
        turn = view["turn"]
        assert view["current_seat"] == 0
        state = rules.BlokusState.from_observation(view)
        legal = state.legal_actions(0)
        assert page_placements(page, view) == rules_placements(state)
        if done["set"] % 6 == 0:  # the spectator's board is the player's board
            watcher.wait_for_function("(t) => Arena.lastMsg && Arena.lastMsg.view.turn >= t", arg=turn)
            if watcher.evaluate("Arena.lastMsg.view.turn") == turn:
                assert board_on_page(watcher) == board_on_page(page) == view["board"]
                done["same board"] += 1
        action = choose(legal, rng, skip_now=not skipped and view["round"] >= 8)
        if action[0] == "skip":
            page.get_by_test_id("skip").click()
            skipped = True
            done["skip"] += 1
        else:
            pick_and_place(page, action, rng)
            done["set"] += 1
            if done["set"] == 12:
                page.screenshot(path=str(SHOTS / "blokus-desktop-player-sent.png"))
                watcher.screenshot(path=str(SHOTS / "blokus-phone-spectator.png"), full_page=True)
        # The move is in: the dock says so (or the next request is already there).
        page.wait_for_function("""(t) => { const v = Arena.lastMsg.view;
            return v.turn > t || document.querySelector('#actions .bk-dock[data-kind=wait]'); }""", arg=turn)
        if done["set"] == 10 and action[0] == "set":
            page.wait_for_function("(t) => Arena.lastMsg.view.turn > t", arg=turn)
            page.locator(f"#actions .bk-tray-piece:enabled").first.wait_for()
            page.locator("#actions .bk-tray-piece:enabled").first.click()
            page.locator(".bk-board .bk-corner").first.hover()
            page.screenshot(path=str(SHOTS / "blokus-desktop-player.png"))
            page.keyboard.press("Escape")
    print("moves:", done)
    assert done["set"] >= 15 and done["skip"] == 1 and done["same board"] >= 2, done

    # --- the end: both pages show the result, then turn into the replay -----------------------
    match = get_json(f"{arena.url}/api/matches/{match_id}/")
    replay = get_json(f"{arena.url}/api/matches/{match_id}/replay/")
    total = replay["total"] - 1
    result = replay["frames"][-1]["view"]["result"]
    winner = result["winner"]
    for p in (page, watcher):
        expect(p.locator("#replay-pos")).to_have_text(f"Step {total} of {total}", timeout=15_000)
        status = p.get_by_test_id("status")
        expect(status).to_contain_text("Game over")
        expect(status).to_contain_text(f"{result['scores'][0]} : {result['scores'][1]}" if winner in (0, None)
                                       else f"{result['scores'][1]} : {result['scores'][0]}")
        for seat in (0, 1):
            expect(p.get_by_test_id(f"team-points-{seat}")).to_have_text(str(result["scores"][seat]))
    assert match["status"] == "finished"
    expect(watcher.get_by_test_id("status")).to_contain_text(
        "draw" if winner is None else ("Team ONE (Ann) wins" if winner == 0 else "Team TWO (Heuristic bot) wins"))
    expect(page.get_by_test_id("status")).to_contain_text(
        "draw" if winner is None else ("You win" if winner == 0 else "Team TWO (Heuristic bot) wins"))
    watcher.screenshot(path=str(SHOTS / "blokus-phone-spectator-end.png"), full_page=True)
    page.screenshot(path=str(SHOTS / "blokus-desktop-end.png"))

    # --- the replay, step by step: the board of every step ----------------------------------------
    pos = page.locator("#replay-pos")
    page.get_by_role("button", name="« First").click()
    expect(pos).to_have_text(f"Step 0 of {total}")
    assert board_on_page(page) == ["." * 20] * 20
    for step in range(1, min(total, 12) + 1):
        page.get_by_role("button", name="Next ›").click()
        expect(pos).to_have_text(f"Step {step} of {total}")
        frame = replay["frames"][step]["view"]
        assert board_on_page(page) == frame["board"], f"step {step}"
        expect(page.get_by_test_id("step-moves").locator("h4")).to_have_text(f"Step {step}")
    # "Next round" lands where the second round starts.
    page.get_by_role("button", name="« First").click()
    page.get_by_role("button", name="Next round ›").click()
    second = next(i for i, f in enumerate(replay["frames"]) if f["view"]["round"] == 2)
    expect(pos).to_have_text(f"Step {second} of {total}")
    expect(page.get_by_test_id("status")).to_contain_text("Round 2")
    expect(page.get_by_test_id("exports").get_by_role("link", name=re.compile("replay file"))).to_be_visible()
    page.goto(arena.url + page.get_by_role("link", name="rules").get_attribute("href"))  # opens in a new tab
    expect(page.get_by_role("heading", name="Blokus: the rules played here")).to_be_visible()

    assert page.errors == [] and watcher.errors == [], page.errors + watcher.errors
    elapsed = time.monotonic() - started
    print(f"whole test: {elapsed:.1f} s")
    assert elapsed < 150


#: Where each colour starts in the 2021 rules: the board's four corners (rows 1 and 20).
CORNERS = [(0, 0), (19, 0), (0, 19), (19, 19)]
UNCOVERED = """([x, y]) => { const cell = document.querySelector(`.bk-cell[data-x="${x}"][data-y="${y}"]`);
  const r = cell.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return r.top >= 0 && r.bottom <= innerHeight && !!hit && hit.closest('.bk-cell') === cell; }"""


@pytest.mark.parametrize("height", [844, 700])
def test_on_a_phone_the_whole_board_with_its_four_start_corners_is_above_the_dock_on_ones_turn(arena_factory, browser,
                                                                                               height):  # noqa: F811
    """Rows 18-20 (two start corners) were under the move dock on a 390 px phone.  Where the
    page's head leaves room, nothing scrolls; where it does not (a shorter screen), the page
    scrolls just enough to lift the board above the dock, its column letters still in view."""
    arena = arena_factory(env={"ARENA_ROUND_PAUSE": "0", "ARENA_BUILTIN_DELAY": "0.05"})
    page = new_page(browser, viewport={"width": 390, "height": height})
    page.goto(arena.url + "/tables/new/blokus/")
    page.get_by_label("Your nickname").fill("Ann")
    page.get_by_label("Software-Challenge rules").select_option("2021")
    page.get_by_label(re.compile(r"^Team ONE")).select_option("me")
    page.get_by_label(re.compile(r"^Team TWO")).select_option("builtin:heuristic")
    page.get_by_role("button", name="Create table").click()
    page.locator("#actions .bk-tray-piece").first.wait_for()
    board = page.locator(".bk-board-wrap").bounding_box()
    dock = page.locator("#actions .bk-dock").bounding_box()
    assert board["y"] >= 0 and board["y"] + board["height"] <= dock["y"] + 1, (board, dock)
    for corner in CORNERS:
        assert page.evaluate(UNCOVERED, list(corner)), f"corner {corner} is hidden"
    if height == 844:
        assert page.evaluate("window.scrollY") == 0
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"blokus-phone-390x{height}-first-turn.png"))
    assert page.errors == [], page.errors
