"""The JSON API answers today's requests as it did before it moved onto django-ninja.

Written against the hand-made API (``games/arena/web/api.py`` before the move) and recorded from
it: every endpoint with a representative set of parameters (valid filters, every kind of
invalid one, pages past the end, unknown matches, event pages and their bounds, replay
``start``/``count`` bounds), comparing status codes and whole JSON bodies.  Bodies are
compared by value *and* by JSON type (``1`` and ``1.0`` differ to a client in another
language), so a schema layer that coerced a float to an int would fail here.

Expectations are of two kinds: literal bodies for a small scripted Liar's Dice match, the
error bodies and the listings; and, for a match of every game played by built-in bots, bodies
rebuilt from the database rows (and :func:`games.arena.play.replay.frames`, which the API only
wraps), so that this test does not depend on how each game's bots play.

One deliberate change since the recording (issue 16), written into the expectations below:
each seat has two more keys, ``verified`` and ``bot_id`` (a client that reads the keys it
knows is not affected).  (A forced move's ``detail`` is now its owner's where the seat has
one, a person or a registered bot: ``tests/test_api_tokens.py``; these matches have none.)
"""
from __future__ import annotations

import asyncio
import datetime
import json
import re

import pytest

from games.arena import registry
from games.arena.models import Event, Match, Seat
from games.arena.play import replay, tables
from games.arena.play.eventlog import EventRow, write_rows
from games.arena.play.queries import detail_seats
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat
from games.liars_dice.rules import new_state as liars_dice_state

pytestmark = pytest.mark.django_db

UTC = datetime.timezone.utc


def at(day: int, hour: int = 12, minute: int = 0, second: int = 0, micro: int = 0, month: int = 3):
    return datetime.datetime(2026, month, day, hour, minute, second, micro, tzinfo=UTC)


# --- comparing ---------------------------------------------------------------------------------
def shape(value):
    """``value`` with every leaf replaced by its JSON type's name (ints and floats apart)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def same(actual, expected, what=""):
    assert actual == expected, what
    assert shape(actual) == shape(expected), what


def get(client, url, params=None):
    """``(status, parsed JSON body)`` of a GET; the body must be JSON."""
    resp = client.get(url, params or {})
    assert resp["Content-Type"].startswith("application/json"), (url, params, resp["Content-Type"])
    return resp.status_code, json.loads(resp.content)


# --- the data ------------------------------------------------------------------------------------
class Collect:
    """Stands in for the event writer: keeps the rows the runner appends."""

    def __init__(self):
        self.rows = []

    async def append(self, events):
        self.rows.extend(events)


async def _no_publish(group, message):
    pass


def stamp(match_id, created, started=None, finished=None):
    Match.objects.filter(pk=match_id).update(created_at=created, started_at=started, finished_at=finished)


def scripted_liars_dice() -> Match:
    """Two players, one die each, two games: the player on turn bids the lowest bid, the
    other passes (the first pass forced, as a bot that said nothing), then challenges."""
    config = {"players": 2, "dice": 1, "games": 2}
    match = tables.create_table("liars_dice", config, ["builtin:random", "builtin:probability"], None)
    Seat.objects.filter(match=match, index=0).update(display_name="Ann")
    Seat.objects.filter(match=match, index=1).update(display_name="bob")
    Match.objects.filter(pk=match.pk).update(seed=3, status=Match.Status.RUNNING)
    state, rows, step, seq = liars_dice_state(config, 3), [], 0, 0
    while not state.is_terminal():
        step += 1
        answers = {}
        for seat in state.to_act():
            legal = state.legal_actions(seat)
            answers[seat] = "challenge" if "challenge" in legal and "pass" not in legal else legal[0]
        for seat, action in answers.items():
            seq += 1
            forced = seq == 2
            rows.append(EventRow(match.pk, seq, step, seat, action, forced, "no answer within 3 s" if forced else "",
                                 None if forced else 12.5 + seq, "said nothing in 3 s" if forced else ""))
        state.apply(answers)
    write_rows(rows)
    replay.store_end(match.pk, [], state)
    tables.finish(match.pk, state.result())
    stamp(match.pk, at(4, 5), at(4, 5, 0, 1, 500000), at(4, 5, 6, 7, 891234))
    return Match.objects.get(pk=match.pk)


CONFIGS = {"liars_dice": {"players": 3, "dice": 2, "games": 1}, "jass": {"points_to_win": 100, "max_deals": 1},
           "blokus": {"variant": "2021"}, "hanabi": {"players": 2}}


def played(game: str, day: int) -> Match:
    """A match of ``game`` played to its end by random built-in bots with a real runner and
    stored as the arena stores it (events, snapshots every 5 steps, final view, result)."""
    spec = registry.get(game)
    config = spec.normalize_config(CONFIGS[game])
    seats = spec.num_seats(config)
    match = tables.create_table(game, CONFIGS[game], ["builtin:random"] * seats, None)
    Match.objects.filter(pk=match.pk).update(seed=day, status=Match.Status.RUNNING)
    endpoints = [BuiltinSeat("b", spec.builtin_bots["random"][1], seed=i) for i in range(seats)]
    writer = Collect()
    runner = MatchRunner(match.pk, spec, match.config, day, endpoints, writer, _no_publish, snapshot_every=5)
    asyncio.run(runner.run())
    write_rows([row._replace(match_id=match.pk, think_ms=float(row.seq % 7)) for row in writer.rows])
    replay.store_end(match.pk, runner.snapshots, runner.state)
    tables.finish(match.pk, runner.state.result())
    stamp(match.pk, at(day, 9), at(day, 9, 1), at(day, 10))
    return Match.objects.get(pk=match.pk)


def build():
    """The matches every test below reads: ``{"ld": the scripted match, <game>: a played
    match of each game, "aborted", "running", "open", "fillers": [22 finished matches]}``."""
    data = {"ld": scripted_liars_dice()}
    for day, game in enumerate(CONFIGS, start=1):
        data[game] = played(game, day)
    aborted = tables.create_table("liars_dice", {"players": 2, "dice": 1, "games": 1},
                                  ["builtin:random", "builtin:random"], None)
    Match.objects.filter(pk=aborted.pk).update(seed=99, status=Match.Status.RUNNING)
    write_rows([EventRow(aborted.pk, 1, 1, 0, ["bid", 2, 1], False, "", 3.0, ""),
                EventRow(aborted.pk, 2, 1, 1, None, True, "left", 0.0, "")])
    tables.abort(aborted.pk, "the server stopped during the match")
    stamp(aborted.pk, at(5, 8), at(5, 8, 1), at(5, 8, 2))
    data["aborted"] = aborted
    running = tables.create_table("liars_dice", {"players": 2, "dice": 1, "games": 1},
                                  ["builtin:random", "builtin:random"], None)
    Match.objects.filter(pk=running.pk).update(seed=98, status=Match.Status.RUNNING)
    write_rows([EventRow(running.pk, 1, 1, 0, ["bid", 2, 1], False, "", 3.0, "")])
    stamp(running.pk, at(6, 8), at(6, 8, 1))
    data["running"] = running
    data["open"] = tables.create_table("liars_dice", {"players": 2}, ["builtin:random", "open_human"], None)
    stamp(data["open"].pk, at(6, 9))
    fillers = []
    for i in range(22):  # February 1 to 21, two on the 21st (the newer id first)
        m = tables.create_table("liars_dice", {"players": 2, "dice": 1, "games": 1},
                                ["builtin:random", "builtin:probability"], None)
        Seat.objects.filter(match=m, index=0).update(display_name=f"filler{i}")
        tables.finish(m.pk, {"scores": [1, 0], "winner": 0})
        day = min(i + 1, 21)
        stamp(m.pk, at(day, 7, month=2), at(day, 7, 1, month=2), at(day, 7, 30, month=2))
        fillers.append(m)
    data["fillers"] = fillers
    return data


@pytest.fixture
def data():
    return build()


# --- bodies rebuilt from the database ---------------------------------------------------------
def when(value: datetime.datetime | None):
    """A timestamp as the API writes it: ISO 8601, milliseconds, ``Z``."""
    if value is None:
        return None
    text = value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds" if value.microsecond
                                                                  else "seconds")
    return text + "Z"


def summary(match: Match) -> dict:
    match = Match.objects.get(pk=match.pk)
    return {
        "id": match.pk, "game": match.game, "status": match.status, "config": match.config,
        "created_at": when(match.created_at), "started_at": when(match.started_at),
        "finished_at": when(match.finished_at), "result": match.result,
        "seats": [{"index": s.index, "name": s.display_name, "kind": s.kind, "builtin_bot": s.builtin_bot or None,
                   "occupied": s.occupied, "score": s.final_score,
                   "verified": s.occupied and (s.kind == "builtin" or s.registered_bot_id is not None
                                               or s.user_id is not None),
                   "bot_id": s.registered_bot_id} for s in match.seats.order_by("index")],
        "url": f"/matches/{match.pk}/", "api": f"/api/matches/{match.pk}/",
    }


def events(match: Match, after=0, limit=1000) -> list[dict]:
    return list(Event.objects.filter(match=match, seq__gt=after).order_by("seq")[:limit].values(
        "seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail"))


def detail(match: Match, after=0, limit=1000, next_after=None) -> dict:
    body = summary(match)
    body.update(seed=str(Match.objects.get(pk=match.pk).seed), steps=replay.total_steps(match.pk),
                replay=f"/api/matches/{match.pk}/replay/", events=events(match, after, limit),
                events_next=None if next_after is None else
                f"http://testserver/api/matches/{match.pk}/?after={next_after}&limit={limit}")
    return body


def frames(match: Match, start=0, count=500) -> dict:
    """The replay page as :func:`replay.frames` gives it to an anonymous request, through JSON
    (tuples become lists)."""
    match = Match.objects.get(pk=match.pk)
    return json.loads(json.dumps(replay.frames(match, start, count, details_for=detail_seats(match, None))))


# --- recorded: the scripted Liar's Dice match -----------------------------------------------------
def ld_summary(pk: int) -> dict:
    return LD_SUMMARY | {"id": pk, "url": f"/matches/{pk}/", "api": f"/api/matches/{pk}/"}


LD_SUMMARY = {
    "id": 1, "game": "liars_dice", "status": "finished", "config": {"players": 2, "dice": 1, "games": 2},
    "created_at": "2026-03-04T05:00:00Z", "started_at": "2026-03-04T05:00:01.500Z",
    "finished_at": "2026-03-04T05:06:07.891Z", "result": {"scores": [2, 0], "winner": 0},
    "seats": [{"index": 0, "name": "Ann", "kind": "builtin", "builtin_bot": "random", "occupied": True, "score": 2.0,
               "verified": True, "bot_id": None},
              {"index": 1, "name": "bob", "kind": "builtin", "builtin_bot": "probability", "occupied": True,
               "score": 0.0, "verified": True, "bot_id": None}],
    "url": "/matches/1/", "api": "/api/matches/1/",
}
LD_EVENTS = [
    {"seq": 1, "step": 1, "seat": 1, "action": ["bid", 1, 1], "forced": False, "reason": "", "think_ms": 13.5, "detail": ""},
    {"seq": 2, "step": 1, "seat": 0, "action": "pass", "forced": True, "reason": "no answer within 3 s", "think_ms": None,
     "detail": "said nothing in 3 s"},
    {"seq": 3, "step": 2, "seat": 0, "action": "challenge", "forced": False, "reason": "", "think_ms": 15.5, "detail": ""},
    {"seq": 4, "step": 2, "seat": 1, "action": "pass", "forced": False, "reason": "", "think_ms": 16.5, "detail": ""},
    {"seq": 5, "step": 3, "seat": 1, "action": ["bid", 1, 1], "forced": False, "reason": "", "think_ms": 17.5, "detail": ""},
    {"seq": 6, "step": 3, "seat": 0, "action": "pass", "forced": False, "reason": "", "think_ms": 18.5, "detail": ""},
    {"seq": 7, "step": 4, "seat": 0, "action": "challenge", "forced": False, "reason": "", "think_ms": 19.5, "detail": ""},
    {"seq": 8, "step": 4, "seat": 1, "action": "pass", "forced": False, "reason": "", "think_ms": 20.5, "detail": ""},
]
LD_STEPS = 4
_ROUND_1 = {"type": "round_over", "game_number": 1, "round_number": 1, "state": [[0, 1], [1, 0]], "round_loser": 1,
            "round_challenger": 0, "game_winner": 0, "reason": "challenge", "bid": [1, 1], "bidder": 1, "shown": 0,
            "hands": [[5], [5]]}
LD_FRAME_2 = {
    "step": 2,
    "answers": [{"seat": 0, "action": "challenge", "forced": False, "reason": "", "think_ms": 15.5, "detail": ""},
                {"seat": 1, "action": "pass", "forced": False, "reason": "", "think_ms": 16.5, "detail": ""}],
    "happenings": [_ROUND_1],
    "view": {"game_number": 2, "games": 2, "round_number": 1, "move_number": 1, "order": [1, 0], "dice_counts": [1, 1],
             "on_turn": 1, "to_act": [1, 0], "last_bid": None, "last_bidder": None, "bids": [], "bids_made": 0,
             "wins": [1, 0], "last_round": _ROUND_1, "terminal": False, "hands": [[3], [5]]},
}


def test_the_scripted_match_reads_as_recorded(client, data):
    ld = data["ld"]
    status, body = get(client, f"/api/matches/{ld.pk}/")
    same(status, 200)
    same(body, ld_summary(ld.pk) | {"seed": "3", "steps": LD_STEPS, "replay": f"/api/matches/{ld.pk}/replay/",
                                    "events": LD_EVENTS, "events_next": None})
    assert list(body) == list(ld_summary(ld.pk)) + ["seed", "steps", "replay", "events", "events_next"]
    status, body = get(client, f"/api/matches/{ld.pk}/replay/", {"start": 2, "count": 1})
    same((status, body), (200, {"frames": [LD_FRAME_2], "total": LD_STEPS + 1, "complete": True}))
    status, body = get(client, "/api/matches/", {"player": "ann"})
    same((status, body), (200, {"count": 1, "page": 1, "pages": 1, "results": [ld_summary(ld.pk)]}))


# --- /api/matches/ ---------------------------------------------------------------------------------
#: The finished and aborted matches, newest first (then the higher id first).
ORDER = ["aborted", "hanabi", "ld", "blokus", "jass", "liars_dice"] + [f"filler{i}" for i in (21, *range(20, -1, -1))]


def listed(data, keys, count=None, page=1, pages=1) -> dict:
    matches = {**{k: v for k, v in data.items() if k != "fillers"},
               **{f"filler{i}": m for i, m in enumerate(data["fillers"])}}
    return {"count": len(keys) if count is None else count, "page": page, "pages": pages,
            "results": [summary(matches[k]) for k in keys]}


PAGE_ERROR = "page must be a whole number from 1 to 1000000000, got "
GAME_ERROR = "game must be one of liars_dice, jass, blokus, hanabi, bridge, got "
DATE_ERROR = " must be a date like 2026-01-31, got "

LISTINGS = [  # (params, status, expected: a listing (keys, count, page, pages) or an error message)
    ({}, 200, (ORDER[:25], 28, 1, 2)),
    ({"page": "1"}, 200, (ORDER[:25], 28, 1, 2)),
    ({"page": ""}, 200, (ORDER[:25], 28, 1, 2)),
    ({"page": "2"}, 200, (ORDER[25:], 28, 2, 2)),
    ({"page": "3"}, 400, "page 3 does not exist: there are 2 pages"),
    ({"page": "1000000000"}, 400, "page 1000000000 does not exist: there are 2 pages"),
    ({"page": "1000000001"}, 400, PAGE_ERROR + "'1000000001'"),
    ({"page": "0"}, 400, PAGE_ERROR + "'0'"),
    ({"page": "-1"}, 400, PAGE_ERROR + "'-1'"),
    ({"page": "x"}, 400, PAGE_ERROR + "'x'"),
    ({"page": "1.0"}, 400, PAGE_ERROR + "'1.0'"),
    ({"page": " 1"}, 400, PAGE_ERROR + "' 1'"),
    ({"page": "9" * 5000}, 400, PAGE_ERROR + repr("9" * 40)),
    ({"game": "jass"}, 200, (["jass"], 1, 1, 1)),
    ({"game": "liars_dice"}, 200, ([k for k in ORDER if k not in ("hanabi", "blokus", "jass")], 25, 1, 1)),
    ({"game": ""}, 200, (ORDER[:25], 28, 1, 2)),
    ({"game": "chess"}, 400, GAME_ERROR + "'chess'"),
    ({"game": "JASS"}, 400, GAME_ERROR + "'JASS'"),
    ({"game": "x" * 100}, 400, GAME_ERROR + repr("x" * 40)),
    ({"status": "aborted"}, 200, (["aborted"], 1, 1, 1)),
    ({"status": "finished", "game": "liars_dice"}, 200, ([k for k in ORDER if k not in ("hanabi", "blokus", "jass",
                                                                                        "aborted")], 24, 1, 1)),
    ({"status": "running"}, 400, "status must be one of finished, aborted, got 'running'"),
    ({"player": "ann"}, 200, (["ld"], 1, 1, 1)),
    ({"player": "FILLER1"}, 200, (["filler19", "filler18", "filler17", "filler16", "filler15", "filler14", "filler13",
                                   "filler12", "filler11", "filler10", "filler1"], 11, 1, 1)),
    ({"player": "(N)"}, 200, (["jass"], 1, 1, 1)),
    ({"player": "nobody"}, 200, ([], 0, 1, 1)),
    ({"player": "nobody", "page": "2"}, 400, "page 2 does not exist: there is 1 page"),
    ({"player": "Ann" + "x" * 100}, 200, ([], 0, 1, 1)),
    ({"date_from": "2026-03-04", "date_to": "2026-03-04"}, 200, (["hanabi", "ld"], 2, 1, 1)),
    ({"date_from": "2026-03-05"}, 200, (["aborted"], 1, 1, 1)),
    ({"date_to": "2026-02-01"}, 200, (["filler0"], 1, 1, 1)),
    ({"date_from": "20260305"}, 200, (["aborted"], 1, 1, 1)),  # Python's ISO dates take the basic format too
    ({"date_from": "garbage"}, 400, "date_from" + DATE_ERROR + "'garbage'"),
    ({"date_to": "31.01.2026"}, 400, "date_to" + DATE_ERROR + "'31.01.2026'"),
    ({"date_to": "2026-02-30"}, 400, "date_to" + DATE_ERROR + "'2026-02-30'"),
    ({"date_from": "2026-03-05", "date_to": "2026-03-01"}, 400,
     "date_from (2026-03-05) is after date_to (2026-03-01): no match finished between them"),
    ({"game": "chess", "date_from": "x"}, 400, GAME_ERROR + "'chess'"),  # the first problem is said
    ({"date_from": "x", "date_to": "y"}, 400, "date_from" + DATE_ERROR + "'x'"),
    ({"game": "chess", "page": "x"}, 400, GAME_ERROR + "'chess'"),
    ({"game": "jass", "page": "2"}, 400, "page 2 does not exist: there is 1 page"),
    ({"game": "jass", "player": "random", "date_from": "2026-03-02", "date_to": "2026-03-02", "status": "finished",
      "page": "1"}, 200, (["jass"], 1, 1, 1)),
    ({"foo": "bar", "limit": "x", "after": "y"}, 200, (ORDER[:25], 28, 1, 2)),  # other parameters are ignored
]


def test_the_listing_answers_every_filter_and_page_as_recorded(client, data):
    for params, status, expected in LISTINGS:
        got_status, body = get(client, "/api/matches/", params)
        if isinstance(expected, str):
            same((got_status, body), (status, {"error": expected}), params)
        else:
            keys, count, page, pages = expected
            same((got_status, body), (status, listed(data, keys, count, page, pages)), params)
    # A repeated parameter: the last one counts.
    same(get(client, "/api/matches/?game=chess&game=jass"), (200, listed(data, ["jass"])))
    same(get(client, "/api/matches/?game=jass&game=chess"), (400, {"error": GAME_ERROR + "'chess'"}))


def test_the_listing_of_an_empty_history(client):
    same(get(client, "/api/matches/"), (200, {"count": 0, "page": 1, "pages": 1, "results": []}))
    same(get(client, "/api/matches/", {"page": "2"}), (400, {"error": "page 2 does not exist: there is 1 page"}))


# --- /api/matches/<id>/ ------------------------------------------------------------------------------
def test_a_match_of_every_game_reads_as_stored(client, data):
    for key in (*CONFIGS, "ld", "aborted"):
        match = data[key]
        same(get(client, f"/api/matches/{match.pk}/"), (200, detail(match)), key)
        same(get(client, f"/api/matches/{match.pk}/replay/"), (200, frames(match)), key)
    assert len(data["blokus"].events.all()) > 20  # long enough for snapshots and pages
    assert [m.game for m in Match.objects.filter(status=Match.Status.FINISHED)
            .exclude(pk__in=[m.pk for m in data["fillers"]]).order_by("game")] == \
        ["blokus", "hanabi", "jass", "liars_dice", "liars_dice"]


def test_a_match_that_is_not_over_keeps_its_seed_and_events(client, data):
    for key in ("running", "open"):
        match = data[key]
        expected = summary(match) | {"events": None}
        same(get(client, f"/api/matches/{match.pk}/"), (200, expected), key)
        # Event parameters are not read while the match runs.
        same(get(client, f"/api/matches/{match.pk}/", {"after": "abc", "limit": "0"}), (200, expected), key)
    running = summary(data["running"])
    assert running["status"] == "running" and running["started_at"] == "2026-03-06T08:01:00Z"
    assert summary(data["open"])["status"] == "open"


AFTER_ERROR = "after must be a whole number from 0 to 9223372036854775808, got "
LIMIT_ERROR = "limit must be a whole number from 1 to 5000, got "

EVENT_PAGES = [  # (params, status, expected: (first seq, last seq, next after or None) or an error message)
    ({}, 200, (1, 8, None)),
    ({"after": "", "limit": ""}, 200, (1, 8, None)),
    ({"limit": "3"}, 200, (1, 3, 3)),
    ({"after": "3", "limit": "3"}, 200, (4, 6, 6)),
    ({"after": "6", "limit": "3"}, 200, (7, 8, None)),
    ({"limit": "8"}, 200, (1, 8, None)),
    ({"limit": "7"}, 200, (1, 7, 7)),
    ({"limit": "1"}, 200, (1, 1, 1)),
    ({"limit": "5000"}, 200, (1, 8, None)),
    ({"limit": " 3 "}, 200, (1, 3, 3)),  # Python's int() takes spaces around the number
    ({"after": "8"}, 200, (9, 8, None)),
    ({"after": "100", "limit": "2"}, 200, (101, 100, None)),
    ({"after": str(2**63)}, 200, (2**63 + 1, 2**63, None)),
    ({"after": str(2**63 + 1)}, 400, AFTER_ERROR + repr(str(2**63 + 1))),
    ({"after": "-1"}, 400, AFTER_ERROR + "'-1'"),
    ({"after": "abc"}, 400, AFTER_ERROR + "'abc'"),
    ({"after": "1.5"}, 400, AFTER_ERROR + "'1.5'"),
    ({"after": "-1", "limit": "0"}, 400, AFTER_ERROR + "'-1'"),  # after is checked first
    ({"limit": "0"}, 400, LIMIT_ERROR + "'0'"),
    ({"limit": "5001"}, 400, LIMIT_ERROR + "'5001'"),
    ({"limit": "-3"}, 400, LIMIT_ERROR + "'-3'"),
    ({"limit": "x" * 100}, 400, LIMIT_ERROR + repr("x" * 40)),
]


def test_events_come_in_pages_as_recorded(client, data):
    ld = data["ld"]
    for params, status, expected in EVENT_PAGES:
        got = get(client, f"/api/matches/{ld.pk}/", params)
        if isinstance(expected, str):
            same(got, (status, {"error": expected}), params)
            continue
        first, last, next_after = expected
        limit = int(params.get("limit") or 1000)
        body = ld_summary(ld.pk) | {
            "seed": "3", "steps": LD_STEPS, "replay": f"/api/matches/{ld.pk}/replay/",
            "events": [e for e in LD_EVENTS if first <= e["seq"] <= last],
            "events_next": None if next_after is None else
            f"http://testserver/api/matches/{ld.pk}/?after={next_after}&limit={limit}"}
        same(got, (status, body), params)
    # Following events_next from the first page reads the whole log once.
    page, seen = get(client, f"/api/matches/{ld.pk}/", {"limit": "3"})[1], []
    while True:
        seen += page["events"]
        if not page["events_next"]:
            break
        page = get(client, page["events_next"])[1]
    same(seen, LD_EVENTS)
    # A played match's pages rebuilt from its rows.
    blokus = data["blokus"]
    same(get(client, f"/api/matches/{blokus.pk}/", {"after": "10", "limit": "20"}),
         (200, detail(blokus, after=10, limit=20, next_after=30)))


def test_unknown_matches_are_404_with_a_json_error(client, data):
    for match_id in (999999, 0, 10**30):
        for suffix, params in (("", {}), ("replay/", {}), ("", {"after": "x"}), ("replay/", {"start": "x"})):
            same(get(client, f"/api/matches/{match_id}/{suffix}", params),
                 (404, {"error": f"there is no match {match_id}"}), (match_id, suffix, params))
    # Addresses that are no match id at all are the site's own 404 page.
    for url in ("/api/matches/abc/", "/api/matches/-1/", "/api/matches/1.0/", "/api/matches/abc/replay/"):
        assert client.get(url).status_code == 404, url


# --- /api/matches/<id>/replay/ ---------------------------------------------------------------------
START_ERROR = "start must be a whole number from 0 to 1000000000, got "
COUNT_ERROR = "count must be a whole number from 1 to 500, got "

REPLAY_PAGES = [  # (params, status, expected: (start, count) of the page or an error message)
    ({}, 200, (0, 500)),
    ({"start": "", "count": ""}, 200, (0, 500)),
    ({"start": "0", "count": "2"}, 200, (0, 2)),
    ({"start": "2", "count": "1"}, 200, (2, 1)),
    ({"start": "3", "count": "500"}, 200, (3, 500)),
    ({"start": "4"}, 200, (4, 500)),
    ({"start": "5"}, 200, (5, 500)),  # past the last frame: none
    ({"start": "1000000000", "count": "1"}, 200, (10**9, 1)),
    ({"count": " 2"}, 200, (0, 2)),
    ({"start": "1000000001"}, 400, START_ERROR + "'1000000001'"),
    ({"start": "-1"}, 400, START_ERROR + "'-1'"),
    ({"start": "abc"}, 400, START_ERROR + "'abc'"),
    ({"start": "abc", "count": "0"}, 400, START_ERROR + "'abc'"),  # start is checked first
    ({"count": "0"}, 400, COUNT_ERROR + "'0'"),
    ({"count": "501"}, 400, COUNT_ERROR + "'501'"),
    ({"count": "1e3"}, 400, COUNT_ERROR + "'1e3'"),
]


def test_replay_pages_as_recorded(client, data):
    ld = data["ld"]
    for params, status, expected in REPLAY_PAGES:
        got = get(client, f"/api/matches/{ld.pk}/replay/", params)
        if isinstance(expected, str):
            same(got, (status, {"error": expected}), params)
        else:
            same(got, (status, frames(ld, *expected)), params)
    same(get(client, f"/api/matches/{ld.pk}/replay/", {"start": "2", "count": "1"})[1]["frames"], [LD_FRAME_2])
    assert get(client, f"/api/matches/{ld.pk}/replay/", {"start": "5"})[1] == {"frames": [], "total": 5,
                                                                              "complete": True}
    for key, params in (("blokus", {"start": "7", "count": "3"}), ("jass", {"start": "33", "count": "9"}),
                        ("hanabi", {"start": "1", "count": "1"})):
        match = data[key]
        same(get(client, f"/api/matches/{match.pk}/replay/", params),
             (200, frames(match, int(params["start"]), int(params["count"]))), key)


def test_the_replay_of_a_match_that_is_not_over_is_409(client, data):
    for key in ("running", "open"):
        for params in ({}, {"start": "abc"}, {"count": "0"}):
            same(get(client, f"/api/matches/{data[key].pk}/replay/", params),
                 (409, {"error": "The replay opens when the match is over."}), (key, params))


def test_addresses_without_the_trailing_slash_are_redirected(client, data):
    for url in ("/api/matches", f"/api/matches/{data['ld'].pk}", f"/api/matches/{data['ld'].pk}/replay"):
        resp = client.get(url, {"page": "1"})
        assert resp.status_code == 301 and resp["Location"] == url + "/?page=1", url


# --- the OpenAPI document and the docs pages (added with the move to django-ninja) --------------
def conforms(value, schema: dict, components: dict, where: str = "body") -> None:
    """Assert that the JSON ``value`` has the shape the OpenAPI ``schema`` describes (the
    subset of JSON Schema the document uses: $ref, anyOf, type, properties, required,
    items, enum, minimum/maximum)."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        assert name in components, f"{where}: unresolved {schema['$ref']}"
        return conforms(value, components[name], components, where)
    if "anyOf" in schema:
        failures = []
        for option in schema["anyOf"]:
            try:
                return conforms(value, option, components, where)
            except AssertionError as exc:
                failures.append(str(exc))
        raise AssertionError(f"{where}: none of anyOf fits: {failures}")
    kind = schema.get("type")
    checks = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    if kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {value!r} is no integer"
    elif kind == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: {value!r} is no number"
    elif kind is not None:
        assert isinstance(value, checks[kind]), f"{where}: {value!r} is no {kind}"
    if "enum" in schema:
        assert value in schema["enum"], where
    if "minimum" in schema:
        assert schema["minimum"] <= value <= schema["maximum"], where
    if kind == "object":
        for name in schema.get("required", []):
            assert name in value, f"{where}: {name} is missing"
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                conforms(value[name], sub, components, f"{where}.{name}")
        if schema.get("properties") and not schema.get("additionalProperties"):
            assert set(value) <= set(schema["properties"]), f"{where}: undocumented {set(value) - set(schema['properties'])}"
    if kind == "array":
        for i, item in enumerate(value):
            conforms(item, schema.get("items", {}), components, f"{where}[{i}]")


PARAMETERS = {
    "/api/matches/": {"game", "player", "date_from", "date_to", "status", "page"},
    "/api/matches/{match_id}/": {"match_id", "after", "limit"},
    "/api/matches/{match_id}/replay/": {"match_id", "start", "count"},
    "/api/leaderboard/{game}/": {"game", "who", "page"},
    "/api/bots/{bot_id}/": {"bot_id"},
    "/api/bots/{bot_id}/matches/": {"bot_id", "page"},
    "/api/bots/{bot_id}/forced/": {"bot_id", "page"},
    "/api/me/": set(),
    "/api/tournaments/": {"page"},
    "/api/tournaments/{tournament_id}": {"tournament_id"},
    "/api/tournaments/{tournament_id}/standings.csv": {"tournament_id"},
    "/api/tournaments/{tournament_id}/cancel": {"tournament_id"},
    "/api/tournaments/{tournament_id}/entrants": {"tournament_id"},
    "/api/tournaments/{tournament_id}/entrants/me": {"tournament_id"},
}
#: The endpoints that change something (POST or DELETE, with a personal API token); every other one is a GET.
WRITES = {"/api/tournaments/": ["get", "post"], "/api/tournaments/{tournament_id}/cancel": ["post"],
          "/api/tournaments/{tournament_id}/entrants": ["post"],
          "/api/tournaments/{tournament_id}/entrants/me": ["delete"]}


def test_the_openapi_document_describes_every_endpoint_and_its_answers(client, data):
    resp = client.get("/api/openapi.json")
    assert resp.status_code == 200 and resp["Content-Type"].startswith("application/json")
    doc = resp.json()
    # The parts of OpenAPI 3 a reader needs (structure as the specification has it).
    assert doc["openapi"].startswith("3.") and doc["info"]["title"] and isinstance(doc["info"]["version"], str)
    components = doc["components"]["schemas"]
    assert set(doc["paths"]) == set(PARAMETERS)
    operation_ids = []
    for path, operations in doc["paths"].items():
        # HEAD is answered, but not listed twice
        assert list(operations) == WRITES.get(path, ["get"]), path
        for method, op in operations.items():
            operation_ids.append(op["operationId"])
            assert op["summary"] and op["description"], path
            names = {p["name"] for p in op.get("parameters", [])}
            assert names == (PARAMETERS[path] if method == "get" else PARAMETERS[path] - {"page"}), path
            for p in op.get("parameters", []):
                assert p["in"] in ("query", "path") and "schema" in p and p["description"], (path, p)
                if p["in"] == "path":
                    assert p["required"] is True and "{%s}" % p["name"] in path
            answered = "201" if method == "post" and "201" in op["responses"] else "200"
            assert answered in op["responses"] and "401" in op["responses"], path  # 401: a refused API token
            # Whatever takes a query parameter or a body says what it refuses.
            takes_input = any(p["in"] == "query" for p in op.get("parameters", [])) or "requestBody" in op
            assert "400" in op["responses"] or not takes_input, path
            assert op["security"] == [{"Asker": []}], path
            for status, response in op["responses"].items():
                assert response["description"], (path, status)
                if path.endswith(".csv") and status == "200":
                    assert list(response["content"]) == ["text/csv"]
                    continue
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref.removeprefix("#/components/schemas/") in components, (path, status)
                if status != answered:
                    assert ref.endswith("/Error"), (path, status)
    assert len(set(operation_ids)) == len(PARAMETERS) + 1  # the tournaments' list and create share a path
    assert doc["components"]["securitySchemes"]["Asker"] == {"type": "http", "scheme": "bearer"}
    params = {p["name"]: p["schema"] for p in doc["paths"]["/api/matches/"]["get"]["parameters"]}
    assert params["game"]["enum"] == ["liars_dice", "jass", "blokus", "hanabi", "bridge"]
    assert params["status"]["enum"] == ["finished", "aborted"]
    assert params["page"] | {"type": "integer", "minimum": 1, "maximum": 10**9} == params["page"]
    assert params["date_from"]["format"] == "date"
    detail_params = {p["name"]: p["schema"] for p in doc["paths"]["/api/matches/{match_id}/"]["get"]["parameters"]}
    assert (detail_params["limit"]["minimum"], detail_params["limit"]["maximum"], detail_params["limit"]["default"]) == \
        (1, 5000, 1000)
    # Every answer the compat tests read conforms to the schema the document gives for it.
    def check(url, params=None):
        resp = client.get(url, params or {})
        path = "/api/matches/" + ("" if url == "/api/matches/" else
                                  "{match_id}/" + ("replay/" if url.endswith("/replay/") else ""))
        schema = doc["paths"][path]["get"]["responses"][str(resp.status_code)]["content"]["application/json"]["schema"]
        conforms(resp.json(), schema, components, f"{url} {params}")

    for params, _, _ in LISTINGS:
        check("/api/matches/", params)
    for key in (*CONFIGS, "ld", "aborted", "running", "open"):
        check(f"/api/matches/{data[key].pk}/")
        check(f"/api/matches/{data[key].pk}/replay/")
    for params, _, _ in EVENT_PAGES:
        check(f"/api/matches/{data['ld'].pk}/", params)
    for params, _, _ in REPLAY_PAGES:
        check(f"/api/matches/{data['ld'].pk}/replay/", params)
    check("/api/matches/999999/")
    check("/api/matches/999999/replay/")


def local_only(html: str) -> list[str]:
    """The addresses that script, link and img tags load; asserts none is on another host."""
    tags = re.findall(r"<(?:script|link|img)\b[^>]*>", html, re.I)
    urls = [m for tag in tags for m in re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", tag, re.I)]
    assert not [u for u in urls if re.match(r"(?:https?:)?//", u, re.I)], urls
    assert not re.search(r"<(?:script|link|img)\b[^>]*https?://", html, re.I)
    return urls


def test_the_docs_page_names_every_endpoint_from_our_own_server(client):
    page = client.get("/api/docs")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    urls = local_only(html)
    assert "/static/arena/arena.css" in urls and 'class="topbar"' in html  # the site's layout
    assert "<script" not in html  # read without JavaScript
    for path, names in PARAMETERS.items():
        for method in WRITES.get(path, ["get"]):
            assert f"{method.upper()} {path}" in html, path
        for name in names:
            assert f"<code>{name}</code>" in html, (path, name)
    for field in ("events_next", "seats[].score", "frames[].view", "results[].finished_at", "error"):
        assert f"<code>{field}</code>" in html, field
    assert 'href="/api/openapi.json"' in html and 'href="/api/docs/swagger"' in html
    assert client.get("/api/docs/")["Location"] == "/api/docs"


def test_swagger_ui_is_served_from_our_static_files(client):
    from django.contrib.staticfiles import finders

    page = client.get("/api/docs/swagger")
    assert page.status_code == 200
    html = page.content.decode()
    urls = local_only(html)
    scripts = [u for u in urls if u.endswith(".js")]
    assert scripts and all(u.startswith("/static/") for u in urls), urls
    for url in urls:  # the files are there (the package ships them; nothing is copied into git)
        assert finders.find(url.removeprefix("/static/")), url
    assert '"url": "/api/openapi.json"' in html and '"validatorUrl": null' in html  # no online validator badge


def test_head_is_answered_and_other_methods_are_not_allowed(client, data):
    for url in ("/api/matches/", f"/api/matches/{data['ld'].pk}/", f"/api/matches/{data['ld'].pk}/replay/"):
        assert client.head(url).status_code == 200, url
        assert client.post(url).status_code == 405, url


def test_a_field_the_schema_does_not_declare_is_an_error_not_dropped(client, data, monkeypatch):
    """The response schemas are the answers' contract: a key added to an answer without being
    declared (and so documented) fails loudly."""
    import pydantic

    from games.arena.play import queries
    from games.arena.web import api

    monkeypatch.setattr(api, "seat_summary", lambda seat: {**queries.seat_summary(seat), "undeclared": 1})
    with pytest.raises(pydantic.ValidationError, match="undeclared"):
        client.get(f"/api/matches/{data['ld'].pk}/")


def test_the_documents_texts_are_commonmark_so_placeholders_show(client):
    """OpenAPI's descriptions are CommonMark, as Swagger UI renders them: a bare ``<token>``
    or ``<id>`` would be an HTML tag there and vanish (summaries are plain text, left as they
    are).  The docs page shows them as written."""
    doc = client.get("/api/openapi.json").json()
    texts = []

    def walk(node):
        if isinstance(node, dict):
            texts.extend(v for k, v in node.items() if k == "description" and isinstance(v, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    assert "Authorization: Bearer \\<token\\>, answers" in doc["info"]["description"]
    assert any("/api/bots/\\<id\\>/" in t for t in texts)
    assert not [t for t in texts if re.search(r"(?<!\\)[<>]", t)], "an unescaped < or > in the document's texts"
    html = client.get("/api/docs").content.decode()
    assert "Authorization: Bearer &lt;token&gt;, answers" in html and "\\&lt;" not in html
