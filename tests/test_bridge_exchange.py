"""Bridge matches in and out, and their analysis (issue 24): a match played by built-in bots
through a real server downloads as PBN and LIN that endplay reads back to the boards played,
opens in BBO's handviewer one board at a time, gets each board's double-dummy table and par
from the server's analysis worker, and is listed in the history and the API; PBN and LIN
files import into a replay and are analysed too, also by a worker started later (a restart);
the event loop stays free while the worker analyses; partners are rated as a team."""
from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from urllib.parse import unquote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from endplay.parsers import lin as endplay_lin, pbn as endplay_pbn
from endplay.types import Penalty

from games.arena import registry
from games.arena.models import Analysis, Match, Rating, RegisteredBot
from games.arena.play import analyses
from games.arena.play.analyses import Analyst
from games.bridge import analysis, files, rules
from tests.finished_matches import played
from tests.serverproc import start_arena, wait_until
from tests.test_bridge_analysis import SUITED, TOP_EW, from_pbn, longest_stall
from tests.test_bridge_files import STRAIN_OF, endplay_call, endplay_card


@pytest.fixture(scope="module", autouse=True)
def _stop_workers():
    yield
    analysis.shutdown()


def get(url: str) -> tuple[int, str, dict]:
    """``(status, body, headers)`` of a GET that follows no redirect."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None
    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=30) as resp:
            return resp.status, resp.read().decode(resp.headers.get_content_charset() or "utf-8"), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace"), dict(exc.headers)


@pytest.fixture(scope="module")
def finished():
    """A server and a finished match of two duplicate boards between built-in bots:
    ``(server, match id, its API detail)``."""
    server = start_arena(env={"ARENA_BUILTIN_DELAY": "0"})
    try:
        out = server.shell("from games.arena.play import tables\n"
                           "m = tables.create_table('bridge', {'scoring': 'duplicate', 'boards': 2},"
                           " ['builtin:rules', 'builtin:random', 'builtin:rules', 'builtin:random'], None)\n"
                           "print(m.pk)")
        match_id = int(out.split()[-1])
        detail = wait_until(lambda: (lambda d: d if d["status"] == "finished" else None)(
            json.loads(get(f"{server.url}/api/matches/{match_id}/?limit=5000")[1])), 60, "the bots' match")
        yield server, match_id, detail
    finally:
        server.stop()


def boards_played(detail: dict) -> list[list[str]]:
    """Each board's actions (calls then cards) from the API's event log, in order."""
    state = rules.new_state(detail["config"], int(detail["seed"]))
    boards, current = [], []
    for event in detail["events"]:
        current.append(event["action"])
        done = state.apply({event["seat"]: event["action"]})
        if any(h["type"] == "board_over" for h in done):
            boards.append(current)
            current = []
    return boards


def test_pbn_and_lin_downloads_read_back_with_endplay(finished):
    server, match_id, detail = finished
    played_boards = boards_played(detail)
    results = detail["result"]["boards"]
    names = [seat["name"] for seat in detail["seats"]]
    assert len(results) == len(played_boards) == 2

    status, text, headers = get(f"{server.url}/matches/{match_id}/export/pbn/")
    assert status == 200 and "iso-8859-1" in headers["Content-Type"]
    assert f'bridge-match{match_id}.pbn' in headers["Content-Disposition"]
    read = endplay_pbn.loads(text)
    assert len(read) == 2
    for board, result, actions in zip(read, results, played_boards):
        assert board.board_num == result["board"]
        assert [board.info[seat] for seat in ("North", "East", "South", "West")] == names
        calls = [endplay_call(b) for b in board.auction]
        assert calls + [endplay_card(c) for c in board.play] == actions
        assert board.info["Event"] == f"Contract bridge #{match_id}" and board.info["Score"] == f"NS {result['score']}"
        contract = board.contract
        if result["contract"] == "Pass":
            assert contract.is_passout()
            continue
        penalty = {Penalty.passed: "", Penalty.doubled: "X", Penalty.redoubled: "XX"}[contract.penalty]
        made = "=" if contract.result == 0 else f"{contract.result:+d}"
        assert f"{contract.level}{STRAIN_OF[contract.denom]}{penalty}{'NESW'[int(contract.declarer)]}{made}" \
            == result["result"]

    status, text, headers = get(f"{server.url}/matches/{match_id}/export/lin/")
    assert status == 200
    read = endplay_lin.loads(text)
    assert [[endplay_call(b) for b in board.auction] + [endplay_card(c) for c in board.play] for board in read] \
        == played_boards
    assert get(f"{server.url}/matches/{match_id}/export/xml/")[0] == 404


def test_each_board_opens_in_bbos_handviewer(finished):
    server, match_id, _ = finished
    page = get(f"{server.url}/matches/{match_id}/")[1]
    assert "Open in BBO&#x27;s handviewer" in page or "Open in BBO's handviewer" in page
    for board in (1, 2):
        status, _, headers = get(f"{server.url}/matches/{match_id}/elsewhere/?board={board}")
        assert status == 302 and headers["Location"].startswith(files.HANDVIEWER)
        assert f"ah|Board {board}|" in unquote(headers["Location"])  # the board's LIN, whatever the quoting
    assert get(f"{server.url}/matches/{match_id}/elsewhere/")[2]["Location"] == \
        get(f"{server.url}/matches/{match_id}/elsewhere/?board=1")[2]["Location"]
    for bad in ("3", "0", "x", "99999999999"):
        assert get(f"{server.url}/matches/{match_id}/elsewhere/?board={bad}")[0] == 404


def test_the_server_analyses_every_board_and_the_page_shows_it(finished):
    server, match_id, _ = finished

    def analysed():
        parts = json.loads(get(f"{server.url}/api/matches/{match_id}/")[1])["analysis"]
        return parts if parts and all(p["result"] for p in parts) else None
    parts = wait_until(analysed, 90, "the analysis of both boards")
    assert [p["part"] for p in parts] == [0, 1]
    for part in parts:
        subject = part["subject"]
        assert part["result"] == analysis.solve(subject["hands"], subject["dealer"], subject["vulnerability"])
    page = get(f"{server.url}/matches/{match_id}/")[1]
    assert page.count('data-testid="dd-table"') == 2
    assert "Not ready yet" not in page
    par = parts[0]["result"]["par"]
    assert f"Par: <b>N–S {par['score']:+d}</b> · {', '.join(par['contracts'])}" in page


def test_history_and_the_api_list_the_match(finished):
    server, match_id, _ = finished
    assert f'href="/matches/{match_id}/"' in get(f"{server.url}/history/?game=bridge")[1]
    listing = json.loads(get(f"{server.url}/api/matches/?game=bridge")[1])
    assert [m["id"] for m in listing["results"]] == [match_id]
    assert listing["results"][0]["result"]["boards"][0]["contract"]


# --- in this process: imports, the worker, ratings ------------------------------------------
def played_out(hands: list[list[str]], board: int, calls: list[str]) -> dict:
    """One board with ``hands``, these ``calls``, then each seat's first legal card: its record."""
    state = rules.new_state_from_deal(hands, board)
    for call in calls:
        state.apply({state.to_act()[0]: call})
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: state.legal_actions(seat)[0]})
    return state.board_records()[0]


def upload(client, name: str, data: bytes):
    return client.post("/import/bridge/", {"log": SimpleUploadedFile(name, data)})


async def run_worker_until_done(match_id: int) -> None:
    """Start a fresh worker (as a new arena process does) until ``match_id``'s parts are
    analysed."""
    analyst = Analyst()
    analyst.start()
    try:
        for _ in range(600):
            if not await Analysis.objects.filter(match_id=match_id, result__isnull=True).aexists():
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the worker did not analyse the imported match")
    finally:
        await analyst.stop()


@pytest.mark.django_db(transaction=True)
def test_pbn_and_lin_import_into_a_replay_analysed_by_a_worker_started_later(client):
    suited = played_out(SUITED, 1, ["7S", "P", "P", "P"])  # North deals
    top_ew = played_out(from_pbn(TOP_EW), 2, ["7NT", "P", "P", "P"])  # East deals
    # PBN in ISO 8859-1 (its standard's set), a name with a letter UTF-8 writes otherwise
    pbn = files.export_pbn([suited], ["Zoë", "East", "South", "West"]).encode(files.PBN_ENCODING)
    response = upload(client, "suited.pbn", pbn)
    assert response.status_code == 302
    pbn_match = Match.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    lin_match_id = int(upload(client, "top.lin", files.export_lin([top_ew]).encode())["Location"]
                       .rstrip("/").split("/")[-1])
    assert pbn_match.imported and pbn_match.seats.get(index=0).display_name == "Zoë"

    replay = client.get(f"/api/matches/{pbn_match.pk}/replay/").json()
    assert replay["total"] == len(suited["calls"]) + 52 + 1
    assert replay["frames"][-1]["view"]["results"][0]["result"] == suited["result"]

    page = client.get(f"/matches/{pbn_match.pk}/").content.decode()
    assert 'data-testid="analysis-pending"' in page and "Not ready yet" in page
    assert client.get(f"/api/matches/{pbn_match.pk}/").json()["analysis"][0]["result"] is None

    asyncio.run(run_worker_until_done(pbn_match.pk))
    asyncio.run(run_worker_until_done(lin_match_id))
    page = client.get(f"/matches/{pbn_match.pk}/").content.decode()
    assert "Not ready yet" not in page
    # each player holds one suit: 13 tricks in the side's own suits, none elsewhere
    assert re.search(r"<th scope=\"row\">North</th><td>0</td><td>13</td><td>0</td><td>13</td><td>0</td>", page)
    assert "Par: <b>N–S +1510</b> · 7SN=, 7SS=" in page
    top = client.get(f"/api/matches/{lin_match_id}/").json()["analysis"][0]["result"]
    assert top["tricks"] == [[0] * 5, [13] * 5, [0] * 5, [13] * 5]
    assert top["par"] == {"score": -1520, "contracts": ["7NTE=", "7NTW="]}


@pytest.mark.django_db(transaction=True)
async def test_the_event_loop_stays_free_while_the_worker_analyses():
    """Two boards of a finished match analysed by the worker while a ticker runs on the loop
    (tests/test_bridge_analysis.py's measure: CPU time between two wake-ups, which DDS on the
    loop, 300-500 ms a table, would fill)."""
    state = rules.new_state({"boards": 2, "board": 5}, 5)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: state.legal_actions(seat)[0]})
    subjects = registry.get("bridge").analysis_subjects(state)
    match = await Match.objects.acreate(game="bridge", config={}, seed=5, status=Match.Status.FINISHED)
    await Analysis.objects.abulk_create(analyses.pending_rows(match.pk, subjects))
    _, worst, worst_cpu = await longest_stall(lambda: run_worker_until_done(match.pk))
    assert worst_cpu < 0.05, (f"the event loop was held {worst_cpu * 1000:.0f} ms of CPU between two wake-ups "
                              f"(longest wall-time stall {worst * 1000:.0f} ms)")


@pytest.mark.django_db(transaction=True)
async def test_a_busy_game_is_asked_again_and_a_failing_part_is_given_up(monkeypatch, client):
    match = await Match.objects.acreate(game="bridge", config={}, seed=1, status=Match.Status.FINISHED)
    row = await Analysis.objects.acreate(match=match, part=0, subject={"hands": SUITED, "dealer": 0,
                                                                      "vulnerability": "None", "heading": "Board 1"})
    spec = registry.get("bridge")

    async def busy(subject):
        raise registry.AnalysisBusy("full")
    monkeypatch.setattr(spec, "analyse", busy)
    assert await Analyst().analyse(row.pk, "bridge", row.subject) is False
    await row.arefresh_from_db()
    assert (row.result, row.tries) == (None, 0)  # still pending, no try counted

    async def broken(subject):
        raise RuntimeError("the analysis worker stopped; try again")
    monkeypatch.setattr(spec, "analyse", broken)
    for _ in range(analyses.MAX_TRIES):
        assert await Analyst().analyse(row.pk, "bridge", row.subject) is True
    await row.arefresh_from_db()
    assert row.tries == analyses.MAX_TRIES and "worker stopped" in row.error
    assert not await asyncio.to_thread(analyses.pending)
    assert (await asyncio.to_thread(analyses.of_match, match.pk))[0]["failed"]


@pytest.mark.django_db
def test_partners_are_rated_as_a_team(django_user_model):
    owner = django_user_model.objects.create_user("owner", password="pw-owner-1")
    north, east, south, west = (RegisteredBot.objects.create(owner=owner, game="bridge", name=n, key_hash=f"h-{n}")
                                for n in "NESW")
    played("bridge", {"boards": 1}, [north, east, south, west],
           {"scores": [420, 0, 420, 0], "winner": 0, "winners": [0, 2], "totals": [420, 0], "boards": []})
    rating = {r.subject: r for r in Rating.objects.filter(game="bridge")}
    n, e, s, w = (rating[f"bot:{b.pk}"] for b in (north, east, south, west))
    assert (n.mu, n.sigma) == (s.mu, s.sigma) and (e.mu, e.sigma) == (w.mu, w.sigma)
    assert n.mu > 25 > e.mu and n.wins == s.wins == 1 and e.wins == 0
