"""Seating, starting and finishing in plain SQL (games/arena/play/tables.py), on SQLite and on
PostgreSQL alike: which open bot seat a connecting bot gets (its game variant, the oldest
table first and automatic tables last, a seat held for a verified bot, tables for verified
bots only), when a table counts as full, that only one caller starts it, and what finishing
records.  Each database runs the same script through ``manage.py shell`` in a fresh database."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import psycopg
import pytest

from tests.serverproc import ROOT

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"

SCRIPT = r'''
import json
from django.contrib.auth.models import User
from games.arena.models import Match, RegisteredBot, Seat
from games.arena.play import tables

OPEN = [tables.OPEN_BOT, tables.OPEN_BOT]
out = {}
auto21 = tables.create_table("blokus", {"variant": "2021"}, OPEN, None, auto=True)
old27 = tables.create_table("blokus", {"variant": "2027"}, OPEN, None)
new27 = tables.create_table("blokus", {"variant": "2027"}, OPEN, None)
Match.objects.filter(pk=new27.pk).update(created_at=old27.created_at.replace(year=old27.created_at.year + 1))
web21 = tables.create_table("blokus", {"variant": "2021"}, OPEN, None)
verified = tables.create_table("blokus", {"variant": "2021"}, OPEN, None, verified_only=True)
owner = User.objects.create(username="owner")
bot = RegisteredBot.objects.create(owner=owner, game="blokus", name="Mine", shared=True)
held = tables.create_table("blokus", {"variant": "2021"}, ["registered:%d" % bot.pk, tables.OPEN_BOT],
                           tables.Sitter("owner", owner.pk))

def claim(name, config=None, match_id=None, bot_id=None):
    seat = tables.claim_bot_seat("blokus", name, config, match_id, bot_id)
    return None if seat is None else [seat.match_id, seat.index, Seat.objects.get(pk=seat.pk).display_name]

out["2027 first"] = claim("a", {"variant": "2027"})
out["2027 second"] = claim("b", {"variant": "2027"})
out["2027 third"] = claim("c", {"variant": "2027"})
out["2021 by web table first"] = claim("d", {"variant": "2021"})
out["held for the bot"] = claim("e", {"variant": "2021"}, bot_id=bot.pk)
out["at that table"] = claim("f", None, match_id=verified.pk)
out["verified at that table"] = claim("g", None, match_id=verified.pk, bot_id=bot.pk)
out["no such variant"] = claim("h", {"variant": "1999"})
out["full before"] = tables.full_table(new27.pk)
out["last seat"] = claim("i", {"variant": "2027"})
full = tables.full_table(new27.pk)
out["full after"] = [full[0], sorted(kind for _, kind in full[1])]
started = tables.try_start(new27.pk)
out["started"] = [started.status, [s.display_name for s in started.started_seats]]
out["started again"] = tables.try_start(new27.pk)
tables.finish(new27.pk, {"scores": [7, 3], "winner": 0})
tables.set_final_view(new27.pk, {"board": ["..B", "R.."], "over": True, "note": "it's \"done\""})
finished = Match.objects.get(pk=new27.pk)
out["finished"] = [finished.status, finished.result, [s.final_score for s in finished.seats.order_by("index")]]
out["finished at"] = [finished.finished_at is not None and finished.finished_at >= finished.started_at,
                      finished.final_view]
seat0 = Seat.objects.get(match_id=web21.pk, index=0)
def fields(obj):
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}
read_match, read_seats = tables._table(new27.pk, with_bots=True)
out["read as the ORM reads"] = [fields(read_match) == fields(Match.objects.get(pk=new27.pk)),
                                [fields(s) for s in read_seats] == [fields(s) for s in Seat.objects.filter(
                                    match_id=new27.pk).order_by("index")],
                                type(read_match.config).__name__, read_match.finished_at.tzinfo is not None]
out["match of seat"] = [tables.match_of_seat(seat0.pk) == web21.pk, tables.match_of_seat(10 ** 9)]
out["ids"] = {"auto21": auto21.pk, "old27": old27.pk, "new27": new27.pk, "web21": web21.pk,
              "verified": verified.pk, "held": held.pk}
print("RESULT " + json.dumps(out))
'''


def run_script(env: dict, script: str = SCRIPT) -> dict:
    """Run ``script`` through ``manage.py shell`` in a freshly migrated database (``env``:
    ``database_env``); the JSON it printed on its ``RESULT`` line."""
    full_env = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, **env, "LOG_LEVEL": "WARNING"}
    for command in (["migrate", "--no-input", "-v", "0"], ["shell", "-c", script]):
        done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *command], cwd=ROOT, env=full_env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line[len("RESULT "):])


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def database_env(request, tmp_path):
    if request.param == "sqlite":
        yield {"ARENA_DATA_DIR": str(tmp_path)}
        return
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield {"ARENA_DATA_DIR": str(tmp_path), "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}"}
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_bots_take_the_seats_a_user_would_expect_and_tables_start_and_finish_once(database_env):
    out = run_script(database_env)
    ids = out["ids"]
    # The variant is honoured; the oldest table of it first, every seat of it before the next.
    assert out["2027 first"] == [ids["old27"], 0, "a"]
    assert out["2027 second"] == [ids["old27"], 1, "b"]
    assert out["2027 third"] == [ids["new27"], 0, "c"]
    # A table made on the web before the automatic one, though the automatic one is older.
    assert out["2021 by web table first"] == [ids["web21"], 0, "d"]
    # A verified bot gets the seat its owner held for it, not the first open one.
    assert out["held for the bot"] == [ids["held"], 0, "e"]
    # A table for verified bots only refuses a bot without a key and takes one with it.
    assert out["at that table"] is None
    assert out["verified at that table"] == [ids["verified"], 0, "g"]
    assert out["no such variant"] is None
    assert out["full before"] is None
    assert out["last seat"] == [ids["new27"], 1, "i"]
    assert out["full after"] == ["blokus", ["protocol", "protocol"]]
    assert out["started"] == ["running", ["c", "i"]]
    assert out["started again"] is None, "only one caller starts a table"
    assert out["finished"] == ["finished", {"scores": [7, 3], "winner": 0}, [7.0, 3.0]]
    assert out["finished at"] == [True, {"board": ["..B", "R.."], "over": True, "note": 'it\'s "done"'}]
    # the table read in plain SQL is the ORM's, field for field (JSON decoded, times aware)
    assert out["read as the ORM reads"] == [True, True, "dict", True]
    assert out["match of seat"] == [True, None]
