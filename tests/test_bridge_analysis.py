"""Double-dummy analysis of bridge deals (games/bridge/analysis.py): tables and par of deals
whose outcome is plain, par checked against our own scoring, and the analysis kept off the
event loop."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time

import pytest

from games.bridge import analysis, rules, scoring

# Each player holds one whole suit: North spades, East hearts, South diamonds, West clubs.
SUITED = [[s + r for r in "AKQJT98765432"] for s in "SHDC"]
# East and West hold every card above the eight: they take all thirteen tricks in any strain.
TOP_EW = ["765.8765.876.765", "AKQJ.AKQ.AKQ.AKQ", "432.432.5432.432", "T98.JT9.JT9.JT98"]


def from_pbn(hands: list[str]) -> list[list[str]]:
    """Hands written ``spades.hearts.diamonds.clubs`` as card names (N, E, S, W)."""
    return [[suit + rank for suit, ranks in zip("SHDC", hand.split(".")) for rank in ranks] for hand in hands]


@pytest.fixture(scope="module", autouse=True)
def _stop_workers():
    yield
    analysis.shutdown()


def test_each_hand_holding_one_suit():
    result = analysis.solve(SUITED, 0, "None")
    # declarer's side takes all 13 in its own two suits as trumps, none in the others or
    # at no-trump (the opening leader runs a whole suit)
    assert result["tricks"] == [[0, 13, 0, 13, 0], [13, 0, 13, 0, 0], [0, 13, 0, 13, 0], [13, 0, 13, 0, 0]]
    assert result["par"] == {"score": 1510, "contracts": ["7SN=", "7SS="]}  # 7S outbids East-West's 7H
    assert analysis.solve(SUITED, 0, "Both")["par"]["score"] == 2210  # 210 + 1500 grand + 500 game
    assert json.loads(json.dumps(result)) == result


def test_east_west_holding_every_top_card():
    result = analysis.solve(from_pbn(TOP_EW), 0, "None")
    assert result["tricks"] == [[0] * 5, [13] * 5, [0] * 5, [13] * 5]
    assert result["par"] == {"score": -1520, "contracts": ["7NTE=", "7NTW="]}  # North-South's view
    assert result["solver"].startswith("DDS (endplay ")


PAR = re.compile(r"([1-7])(C|D|H|S|NT)(X?)([NESW])(=|[+-]\d+)")


@pytest.mark.parametrize("seed", [1, 2])
def test_par_agrees_with_the_table_and_our_own_scoring(seed):
    """Any deal: each par contract takes the tricks the table gives its declarer, and our
    duplicate score of it (North-South's sign) is the par score."""
    state = rules.new_state({"board": seed}, seed)
    hands = [rules.mask_to_names(h) for h in state.dealt]
    result = analysis.solve(hands, state.dealer, state.vulnerability)
    assert result["par"]["contracts"]
    for text in result["par"]["contracts"]:
        if text == "Pass":
            assert result["par"]["score"] == 0
            continue
        level, strain, doubled, seat, made = PAR.fullmatch(text).groups()
        level, strain, seat = int(level), scoring.STRAIN_NAMES.index(strain), "NESW".index(seat)
        tricks = 6 + level + (0 if made == "=" else int(made))
        assert result["tricks"][seat][strain] == tricks
        points = scoring.duplicate_score(level, strain, 1 if doubled else 0,
                                         rules.side_vulnerable(state.vulnerability, seat & 1), tricks)
        assert (points if seat & 1 == 0 else -points) == result["par"]["score"]


def test_a_bad_deal_is_refused_before_any_worker():
    with pytest.raises(ValueError, match="each of the 52 cards once"):
        asyncio.run(analysis.analyse([SUITED[0]] * 4, 0, "None"))
    with pytest.raises(ValueError, match="vulnerability"):
        analysis.solve(SUITED, 0, "All")


def test_importing_the_modules_does_not_import_endplay():
    code = ("import sys, games.bridge.analysis, games.bridge.files; "
            "sys.exit('endplay' in sys.modules or 'matplotlib' in sys.modules)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


async def longest_stall(work) -> tuple[object, float, float]:
    """``await work()`` with a ticker on the loop that asks to wake every millisecond: the
    work's result, the longest the ticker waited (seconds of wall time) and the most CPU time
    this process spent between two of its wake-ups (seconds).  A loop held by work of its own
    spends CPU through the whole wait; a loop that merely was not scheduled on a busy machine
    spends almost none.  The ticker is running before the work is created (tasks the work
    creates run after it)."""
    worst, worst_cpu, running = 0.0, 0.0, True

    async def ticker():
        nonlocal worst, worst_cpu
        last, last_cpu = time.perf_counter(), time.process_time()
        while running:
            await asyncio.sleep(0.001)
            now, cpu = time.perf_counter(), time.process_time()
            worst, worst_cpu = max(worst, now - last), max(worst_cpu, cpu - last_cpu)
            last, last_cpu = now, cpu

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.005)
    try:
        result = await work()
    finally:
        running = False
        await tick  # its last wake-up counts: a stall that ends with the work ends there
    return result, worst, worst_cpu


async def test_awaiting_the_analysis_keeps_the_event_loop_responsive():
    """Two seeded random deals analysed (the first call also starts the worker and its import of
    endplay) while a ticker runs on the loop.  One table costs 300-500 ms of CPU, so DDS on
    the loop would hold it that long, spending this process's CPU the whole time.  The check
    is on that CPU time between two wake-ups, not on the wall time of a stall, which a busy
    machine's scheduling alone stretches by a hundred milliseconds and more: it controls only
    that the work is off the loop.  The 5 ms target is benchmarks/bridge_analysis.py's."""
    todo = [([rules.mask_to_names(h) for h in s.dealt], s.dealer, s.vulnerability)
            for s in (rules.new_state({"board": b}, b) for b in (5, 11))]
    (first, second), worst, worst_cpu = await longest_stall(
        lambda: asyncio.gather(*(analysis.analyse_timed(*d) for d in todo)))
    assert min(first[1], second[1]) > 0.25  # deals that cost DDS real work (about 0.9 s each)
    assert first[0] == analysis.solve(*todo[0]) and second[0] == analysis.solve(*todo[1])
    assert worst_cpu < 0.1, (f"the event loop was held {worst_cpu * 1000:.0f} ms of CPU between two wake-ups "
                             f"(longest wall-time stall {worst * 1000:.0f} ms)")


async def test_a_full_queue_refuses_at_once(monkeypatch):
    monkeypatch.setattr(analysis, "MAX_QUEUED", 1)
    first = asyncio.create_task(analysis.analyse(SUITED, 0, "None"))
    await asyncio.sleep(0)  # the first is queued
    with pytest.raises(analysis.AnalysisBusy, match="1 deals are already waiting"):
        await analysis.analyse(SUITED, 1, "None")
    assert (await first)["par"]["score"] == 1510
    assert (await analysis.analyse(SUITED, 1, "None"))["tricks"][0] == [0, 13, 0, 13, 0]  # room again


def test_analysis_of_a_board_record():
    state = rules.new_state_from_deal(SUITED, board=1)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: state.legal_actions(seat)[0]})
    record = state.board_records()[0]
    assert asyncio.run(analysis.analyse_record(record)) == analysis.solve(SUITED, 0, "None")
