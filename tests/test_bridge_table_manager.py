"""The Blue Chip table manager (games/bridge/table_manager.py) over real sockets against
``manage.py serve``: scripted robots that read and write as BEN and WBridge5 do
(tests/bluechip_client.py) play whole matches; what a robot author would check on the wire,
and the match as the JSON API records it.

BEN itself is not run: it needs Python 3.12, TensorFlow and a DDS build for glibc 2.38, which
this machine lacks.
"""
from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

from tests.bluechip_client import SEATS, BenClient, WBridge5Client
from tests.serverproc import start_arena, wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored

WAIT = 60.0  # upper bound for a whole match (they take a few seconds)
#: North bids 1NT, East 2C alerted ("both majors"), South 3NT: North declares, East leads,
#: South is dummy.  The Closed room (East deals) is passed out.
SCRIPT = [["1NT", ("2C", "both majors", True), "3NT", "P", "P", "P"], ["P", "P", "P", "P"]]
TEAMS = ("Alpha", "Beta")


def scripted_call(client, board):
    return SCRIPT[len(client.boards) - 1][len(board.calls)]


def highest_card(client, board, seat, legal):
    return legal[-1]


def always_pass(client, board):
    return "P"


def bid_grand_slam(client, board):
    """Always legal, and the board is played rather than passed out."""
    return "P" if "7NT" in board.calls else "7NT"


def serve(arena_factory, **env):
    """A server whose automatic bridge tables play one board twice (instant replay)."""
    full = {"BRIDGE_AUTO_BOARDS": "1", "BRIDGE_AUTO_REPLAY": "1", "BRIDGE_BOT_DEADLINE": "5",
            "ARENA_ROUND_PAUSE": "0"}
    full.update({k: str(v) for k, v in env.items()})
    with sigint_not_ignored():
        return arena_factory(env=full)


def api(arena, path):
    with urllib.request.urlopen(arena.url + path, timeout=10) as resp:
        return json.load(resp)


def matches(arena, status="finished"):
    return [m for m in api(arena, "/api/matches/?game=bridge")["results"] if m["status"] == status]


def finished_match(arena, timeout=WAIT):
    """The one finished bridge match of a server, with its events."""
    try:
        [listed] = wait_until(lambda: matches(arena), timeout, "a finished bridge match")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the server's log ends:\n{arena.log()[-3000:]}") from None
    return api(arena, f"/api/matches/{listed['id']}/?limit=500")


def start(client, arena, errors):
    """Run ``client`` (join and play the session) in a thread; failures go to ``errors``."""
    def run():
        try:
            client.connect(("127.0.0.1", arena.table_manager_port))
            client.join()
            client.play_session()
        except BaseException as exc:  # reported by the test
            errors.append((client.team, client.seat, exc))
        finally:
            client.close()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def play(arena, clients, timeout=WAIT):
    """Run the clients to the end of their session; returns the failures."""
    errors: list = []
    threads = [start(c, arena, errors) for c in clients]
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a robot is still playing"
    return errors


def ben_table(call=scripted_call, card=highest_card, cls=BenClient):
    return [cls(TEAMS[s & 1], s, call, card) for s in range(4)]


def shell_table(arena, seats, config='{"scoring": "duplicate", "boards": 1, "replay": 1}'):
    """A table made as the create-table form makes it; its id."""
    out = arena.shell("from games.arena.play import tables\n"
                      f"print(tables.create_table('bridge', {config}, {seats!r}, None).pk)")
    return int(out.split()[-1])


# --- whole matches ------------------------------------------------------------------------------
def test_four_ben_robots_play_an_instant_replay_match_to_the_end_of_session(arena_factory):
    arena = serve(arena_factory)
    clients = ben_table()
    assert play(arena, clients) == []
    for s, client in enumerate(clients):
        assert client.received[0] == f'{SEATS[s]} ("{TEAMS[s & 1]}") seated'
        assert client.received[1] == 'Teams : N/S : "Alpha" E/W : "Beta" Playing IMP'
        assert client.teams == ("Alpha", "Beta", "IMP")
        assert client.ended and client.received[-1] == "End of session"
        open_room, closed_room = client.boards
        assert (open_room.number, closed_room.number) == (1, 1)  # "Open", then "Closed"
        assert (open_room.dealer, closed_room.dealer) == (0, 1)  # the hands turned one seat
        assert open_room.calls == ["1NT", "2C", "3NT", "P", "P", "P"] and open_room.declarer == 0
        assert len(open_room.play) == 52 and open_room.play == clients[0].boards[0].play
        # the alert's explanation reaches East's opponents only; the partner gets the bare call
        assert open_room.explanations.get(1) == ((True, "both majors") if s in (0, 2) else None)
        # a passed-out board ends with the Timing line too (BEN reads exactly one line there)
        assert closed_room.calls == ["P"] * 4 and closed_room.declarer is None
        for board in client.boards:
            assert board.timing.startswith("Timing - N/S : this board ") and "E/W : this board " in board.timing
    # the Closed room holds the Open room's hands one seat on
    assert [c.boards[1].hand for c in clients] == [clients[3].boards[0].hand] + [c.boards[0].hand for c in clients[:3]]
    match = finished_match(arena)
    assert [s["name"] for s in match["seats"]] == ["Alpha (N)", "Beta (E)", "Alpha (S)", "Beta (W)"]
    assert not any(e["forced"] for e in match["events"])
    assert len(match["events"]) == 6 + 52 + 4
    assert [(b["contract"], b["declarer"]) for b in match["result"]["boards"]] == [("3NT", 0), ("Pass", None)]


def test_wbridge5_robots_take_any_seat_in_upper_case_with_doubled_spaces(arena_factory):
    arena = serve(arena_factory)
    errors: list = []
    clients, threads = [], []
    for i in range(4):  # one after another, so that each ANYPL is seated before the next comes
        client = WBridge5Client("Wbridge5", None, scripted_call, highest_card)
        clients.append(client)
        threads.append(start(client, arena, errors))
        wait_until(lambda: client.received or errors, 10, "the seated line")
    for t in threads:
        t.join(WAIT)
    assert errors == []
    assert sorted(c.seat for c in clients) == [0, 1, 2, 3]
    for client in clients:
        assert client.received[0] == f'{SEATS[client.seat]} ("Wbridge5") seated'
        assert client.teams == ("Wbridge5", "Wbridge5", "IMP")
        assert client.received[-1] == "End of session"
        assert client.sent[1] == f"{SEATS[client.seat].upper()}  ready for teams"
        assert [b.calls for b in client.boards] == [["1NT", "2C", "3NT", "P", "P", "P"], ["P"] * 4]
    match = finished_match(arena)
    assert not any(e["forced"] for e in match["events"])


def test_two_robots_and_two_builtin_bots_at_a_table_made_on_the_form(arena_factory):
    arena = serve(arena_factory)
    table = shell_table(arena, ["open_bot", "builtin:rules", "open_bot", "builtin:rules"])
    north, south = (BenClient("Alpha", s, always_pass, highest_card) for s in (0, 2))
    assert play(arena, [north, south]) == []
    ns, ew, scoring = north.teams
    assert (ns, scoring) == ("Alpha", "IMP") and ew.startswith("Rule-based bot")
    assert south.teams == north.teams
    assert north.received[-1] == south.received[-1] == "End of session"
    assert [b.number for b in north.boards] == [b.number for b in south.boards] and len(north.boards) == 2
    match = finished_match(arena)
    assert match["id"] == table and match["status"] == "finished"
    assert not any(e["forced"] for e in match["events"])


def test_robots_and_text_protocol_bots_play_at_one_table(arena_factory):
    """Bots of both doors at one table: two robots (North-South) and two clients of the text
    protocol (East-West, JOIN-M ANY takes the open bot seats of the robots' table)."""
    from tests.bridge_text_client import TextClient

    arena = serve(arena_factory)
    table = shell_table(arena, ["open_bot"] * 4)
    north, south = (BenClient("Alpha", s, bid_grand_slam, highest_card) for s in (0, 2))
    errors: list = []
    robots = [start(c, arena, errors) for c in (north, south)]
    wait_until(lambda: [s["name"] for s in api(arena, f"/api/matches/{table}/")["seats"] if s["name"]],
               WAIT, "the robots seated")
    texts = []
    for i, name in enumerate(("Eve", "Wes")):
        client = TextClient(arena.bridge_port, name, seed=i)
        client.wait_for(lambda line: line.startswith("GAMES"))
        client.send("JOIN-M ANY")
        client.wait_for(lambda line, n=name: line.startswith("JOINED") and line.endswith(" " + n))
        texts.append(client)
    for t in robots:
        t.join(WAIT)
    assert errors == []
    for client in texts:
        client.wait_closed(WAIT)
        assert not client.naks(), client.naks()
    assert north.teams == ("Alpha", "Eve", "IMP")  # E/W is named after its first seat's player
    match = finished_match(arena)
    assert match["id"] == table and [s["name"] for s in match["seats"]] == ["Alpha (N)", "Eve", "Alpha (S)", "Wes"]
    assert {c.game for c in texts} == {str(table)} and sorted(c.seat for c in texts) == [1, 3]
    assert not any(e["forced"] for e in match["events"])


def test_a_version_18_robot_gets_its_lines_apart_and_the_match_still_finishes(arena_factory):
    arena = serve(arena_factory, BRIDGE_TABLE_MANAGER_PAUSE="0.05", BRIDGE_AUTO_REPLAY="0")
    arrivals: dict[int, list[float]] = {s: [] for s in range(4)}

    class Timed(BenClient):
        def read_line(self):
            line = super().read_line()
            arrivals[self.seat].append(time.monotonic())
            return line

        def connect_text(self):  # West speaks version 19: no pause for it
            version = 19 if self.seat == 3 else 18
            return f'Connecting "{self.team}" as {SEATS[self.seat]} using protocol version {version}'

    clients = ben_table(cls=Timed)
    assert play(arena, clients) == []
    # Measured where the robot reads: on a busy machine a late read shortens the gap after
    # it, so the median gap and the whole span are checked, not each gap.
    for s in range(3):
        gaps = sorted(b - a for a, b in zip(arrivals[s], arrivals[s][1:]))
        assert gaps[len(gaps) // 2] >= 0.045, f"{SEATS[s]}: lines a median {gaps[len(gaps) // 2]:.3f} s apart"
        assert sum(gaps) >= 0.045 * len(gaps), f"{SEATS[s]}: {len(gaps) + 1} lines in {sum(gaps):.2f} s"
    assert all(c.received[-1] == "End of session" for c in clients)
    assert finished_match(arena)["status"] == "finished"


# --- reconnecting, bad robots, crashes -------------------------------------------------------------
class Dropped(Exception):
    """The robot hangs up (a test's way to make it)."""


def test_a_robot_that_drops_mid_board_reconnects_and_continues_the_board(arena_factory):
    arena = serve(arena_factory)

    def drop_at_trick_two(client, board, seat, legal):
        if len(board.play) >= 4:
            client.sock.close()
            raise Dropped
        return legal[-1]

    clients = ben_table()
    clients[1] = BenClient("Beta", 1, scripted_call, drop_at_trick_two)
    errors: list = []
    threads = [start(c, arena, errors) for c in clients]
    threads[1].join(WAIT)
    assert [type(e) for _, _, e in errors] == [Dropped]
    seen_before = list(clients[1].boards[0].play)
    back = BenClient("Beta", 1, scripted_call, highest_card)
    threads.append(start(back, arena, errors))
    for t in threads:
        t.join(WAIT)
    assert [type(e) for _, _, e in errors] == [Dropped]
    assert back.received[0] == 'East ("Beta") seated' and back.teams == ("Alpha", "Beta", "IMP")
    board = back.boards[0]
    assert board.play[:len(seen_before)] == seen_before and len(board.play) == 52
    assert board.play == clients[0].boards[0].play and board.calls == clients[0].boards[0].calls
    assert board.explanations == {}  # its own alert, replayed, goes to nobody else
    assert back.received[-1] == "End of session" and len(back.boards) == 2
    match = finished_match(arena)
    assert not any(e["forced"] for e in match["events"])
    assert "reconnected to East" in arena.log()


def test_a_silent_robot_gets_forced_actions_recorded_with_the_reason(arena_factory):
    arena = serve(arena_factory, BRIDGE_BOT_DEADLINE="0.3")
    shell_table(arena, ["open_bot", "builtin:rules", "builtin:rules", "builtin:rules"],
                '{"scoring": "duplicate", "boards": 1}')
    with socket.create_connection(("127.0.0.1", arena.table_manager_port), timeout=WAIT) as sock:
        reader = sock.makefile("rb")
        sock.sendall(b'CONNECTING "Mute" AS NORTH USING PROTOCOL VERSION 18 and nothing else\r\n')
        assert reader.readline() == b'North ("Mute") seated\r\n'
        sock.sendall(b"North ready for teams\r\n")
        teams = reader.readline().decode()
        assert teams.startswith('Teams : N/S : "Mute" E/W : "Rule-based bot') and teams.endswith('"\r\n')
        sock.sendall(b"North ready to start\r\n")
        assert reader.readline() == b"Start of board\r\n"
        # silent from now on: the match goes on without it, and the session ends
        assert reader.readline() == b"End of session\r\n"
        assert reader.readline() == b""  # closed
    match = finished_match(arena)
    mine = [e for e in match["events"] if e["seat"] == 0]
    assert mine and all(e["forced"] for e in mine)
    assert {e["reason"] for e in mine} <= {"no call within 0.3 s: pass", "no card within 0.3 s: lowest legal card"}
    assert "no call within 0.3 s: pass" in {e["reason"] for e in mine}


def test_bad_huge_and_endless_lines_are_logged_and_the_dropped_seat_is_played_for(arena_factory):
    arena = serve(arena_factory, BRIDGE_BOT_DEADLINE="0.5", ARENA_MESSAGE_TIMEOUT="1")
    shell_table(arena, ["builtin:rules", "open_bot", "open_bot", "builtin:rules"],
                '{"scoring": "duplicate", "boards": 1}')
    errors: list = []
    # South plays on (a table whose last robot or person left would be abandoned) and
    # declares, so that East defends: it has cards to play once it is gone
    partner = BenClient("Noisy", 2, bid_grand_slam, highest_card)
    thread = start(partner, arena, errors)
    with socket.create_connection(("127.0.0.1", arena.table_manager_port), timeout=WAIT) as sock:
        reader = sock.makefile("rb")
        sock.sendall(b"hello there\r\n")  # before the connect line: logged, not fatal
        sock.sendall(b'Connecting "Noisy" as East using protocol version 18\n')  # LF alone
        assert reader.readline() == b'East ("Noisy") seated\r\n'
        sock.sendall(b"East ready for teams\r\n")
        assert reader.readline() == b'Teams : N/S : "Noisy" E/W : "Noisy"\r\n'
        sock.sendall(b"East ready to start\r\n")
        assert reader.readline() == b"Start of board\r\n"
        sock.sendall(b"East bids 1NT\r\n")  # out of turn: the deal comes first
        sock.sendall(b"East ready for " + b"x" * 5000 + b"\r\n")  # huge
        sock.sendall(b"EAST  ready FOR  deal\r\n")
        assert reader.readline().startswith(b"Board number 1. Dealer North.")
        sock.sendall(b"East ready for")  # endless: never finished
        assert reader.readline() == b""  # closed past the message deadline
    thread.join(WAIT)
    assert errors == [] and partner.received[-1] == "End of session"
    log = arena.log()
    assert "not a Blue Chip protocol line: 'hello there'" in log
    assert 'expected "East ready for deal"' in log
    assert "line longer than 601 bytes" in log
    assert "a message begun 1 s ago has not ended; closed" in log
    match = finished_match(arena)
    mine = [e for e in match["events"] if e["seat"] == 1]
    assert mine and all(e["forced"] for e in mine)
    assert mine[-1]["reason"] == "disconnected: lowest legal card"


def test_an_illegal_call_is_refused_then_forced_and_the_robot_reconnects_to_replay(arena_factory):
    arena = serve(arena_factory, BRIDGE_BOT_DEADLINE="0.5")
    shell_table(arena, ["open_bot", "builtin:rules", "open_bot", "builtin:rules"],
                '{"scoring": "duplicate", "boards": 1}')
    errors: list = []
    partner = BenClient("Rash", 2, bid_grand_slam, highest_card)
    thread = start(partner, arena, errors)

    def board_start(sock, reader):
        sock.sendall(b'Connecting "Rash" as North using protocol version 18\r\n')
        assert reader.readline() == b'North ("Rash") seated\r\n'
        for ask, answer in ((b"ready for teams", b"Teams : "), (b"ready to start", b"Start of board"),
                            (b"ready for deal", b"Board number 1. Dealer North."),
                            (b"ready for cards", b"North's cards : S ")):
            sock.sendall(b"North " + ask + b"\r\n")
            assert reader.readline().startswith(answer), arena.log()

    with socket.create_connection(("127.0.0.1", arena.table_manager_port), timeout=WAIT) as sock:
        reader = sock.makefile("rb")
        board_start(sock, reader)
        sock.sendall(b"North doubles\r\n")  # nothing to double: refused, then passed for it
        assert reader.readline() == b"", arena.log()  # out of step with the table: disconnected
    with socket.create_connection(("127.0.0.1", arena.table_manager_port), timeout=WAIT) as sock:
        reader = sock.makefile("rb")
        board_start(sock, reader)  # back in its seat: the board from its start
        sock.sendall(b"North passes\r\nNorth ready for East's bid\r\n")  # as the table has it
        assert reader.readline().startswith(b"East ")
    thread.join(WAIT)
    assert errors == [] and partner.received[-1] == "End of session"
    log = arena.log()
    assert "Rash (North): X refused: " in log
    assert "out of step (the table recorded call P where this robot has X)" in log
    assert "reconnected to North of match 1" in log
    match = finished_match(arena)
    north = [e for e in match["events"] if e["seat"] == 0]
    assert north[0]["action"] == "P" and north[0]["reason"] == "no call within 0.5 s: pass"
    assert match["result"]["boards"][0]["contract"].startswith("7NT")


def test_a_kill_9_mid_board_leaves_the_match_aborted_and_new_robots_play_after_the_restart(arena_factory):
    """Aborted once the killed arena's lease on it (ARENA_LEASE, 1 s here) ran out, by the next
    arena's sweep (docs/architecture.md, *Several arenas*)."""
    arena = serve(arena_factory, ARENA_LEASE=1)

    def slow_card(client, board, seat, legal):
        time.sleep(0.05)
        return legal[-1]

    clients = ben_table(card=slow_card)
    errors: list = []
    threads = [start(c, arena, errors) for c in clients]
    wait_until(lambda: clients[0].boards and len(clients[0].boards[0].play) >= 6, WAIT, "six cards played")
    arena.proc.kill()
    arena.proc.wait()
    for t in threads:
        t.join(10)
    assert len(errors) == 4 and not any(c.ended for c in clients)
    env = {k: v for k, v in arena.env.items() if not k.endswith("_PORT")}
    with sigint_not_ignored():
        again = start_arena(env=env, data_dir=arena.data_dir)
    try:
        [aborted] = wait_until(lambda: matches(again, "aborted"), 20, "the killed arena's match aborted")
        assert aborted["result"] == {"aborted": "the arena running it stopped (its lease expired)"}
        fresh = ben_table()
        assert play(again, fresh) == []
        assert all(c.received[-1] == "End of session" for c in fresh)
        wait_until(lambda: matches(again), 10, "the new match finished")
    finally:
        again.stop()


def test_a_robot_that_leaves_before_the_start_is_forgotten_with_its_table():
    """Robots that connect and leave again and again must not grow the manager's tables."""
    from games.bridge.table_manager import RobotSeat, TableManager

    manager = TableManager(arena=None, cfg={"BRIDGE_BOT_DEADLINE": 1, "BRIDGE_TABLE_MANAGER_PAUSE": 0,
                                            "MAX_BAD_LINES": 10})
    first, second = RobotSeat(manager, "A"), RobotSeat(manager, "B")
    for robot, index in ((first, 0), (second, 2)):
        robot.index, robot.table = index, manager.table(7)
        robot.table.robots[index] = robot
    manager.leave(first)
    assert list(manager.tables) == [7] and list(manager.tables[7].robots) == [2]
    manager.leave(second)
    assert manager.tables == {}
