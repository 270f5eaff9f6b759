"""Blokus XML codec (games/blokus/protocol.py): golden bytes against the official server's own
serialisation tests and the seed, client messages, the 2027 form as socha 5.1 parses it, and
replay files both ways (our export, and files we wrote in the official 2021 server's format,
tests/data/blokus: no file written by that server is public, see its README)."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from lxml import etree

from games.base import ProtocolError
from games.blokus import protocol, rules
from games.blokus.bots import heuristic_bot, random_bot
from games.blokus.rules import COLORS, ROTATIONS, SHAPES

DATA = Path(__file__).parent / "data" / "blokus"
ALL_SHAPES_XML = "".join(f"\n    <shape>{s}</shape>" for s in SHAPES)


def element(text: str | bytes):
    """A client message as the transport hands it over: one parsed top-level element."""
    return etree.fromstring(text.encode() if isinstance(text, str) else text)


def played(variant: str, seed: int, moves: int | None = None, bot=random_bot):
    """``(state, steps)`` after ``moves`` moves (to the end if None) of a bot game."""
    state = rules.new_state({"variant": variant}, seed)
    rng = random.Random(seed)
    steps = []
    while not state.is_terminal() and (moves is None or len(steps) < moves):
        seat = state.to_act()[0]
        action = bot(state.public_observation(), state.legal_actions(seat), rng)
        state.apply({seat: action})
        steps.append((seat, action))
    return state, steps


def indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())


# --- golden bytes: server -> client ---------------------------------------------------------

def test_simple_messages_are_written_as_the_official_stream_does():
    # Each message starts on a new line, indented under <protocol>; nothing follows it.
    assert protocol.joined("R1") == b'\n  <joined roomId="R1"/>'
    assert protocol.left("R1") == b'\n  <left roomId="R1"/>'
    assert protocol.observed("R1") == b'\n  <observed roomId="R1"/>'
    assert protocol.joined_game_room("R1", 2) == b'\n  <joinedGameRoom roomId="R1" playerCount="2"/>'
    assert protocol.welcome("R1", 1) == (b'\n  <room roomId="R1">\n'
                                         b'    <data class="welcomeMessage" color="TWO"/>\n  </room>')
    assert protocol.move_request("R1", "2021") == (
        b'\n  <room roomId="R1">\n    <data class="sc.framework.plugins.protocol.MoveRequest"/>\n  </room>')
    assert protocol.move_request("R1", "2027") == b'\n  <room roomId="R1">\n    <data class="moveRequest"/>\n  </room>'
    assert protocol.paused("R1", False) == (b'\n  <room roomId="R1">\n'
                                            b'    <data class="paused" paused="false"/>\n  </room>')
    assert protocol.prepared("871f", ["RC1", "RC2"]) == (
        b'\n  <prepared roomId="871f">\n    <reservation>RC1</reservation>\n'
        b'    <reservation>RC2</reservation>\n  </prepared>')


def test_a_stream_is_one_document_laid_out_as_xstream_writes_it():
    # The layout of the official XStream stream test (<protocol>, 2 spaces per level, </protocol>).
    stream = protocol.PROTOCOL_OPEN + protocol.joined("R") + protocol.left("R") + protocol.PROTOCOL_CLOSE
    assert stream == b'<protocol>\n  <joined roomId="R"/>\n  <left roomId="R"/>\n</protocol>'
    assert [e.tag for e in etree.fromstring(stream)] == ["joined", "left"]


def test_errorpacket_echoes_the_refused_request():
    original = element('<joinPrepared reservationCode="nope"/>')
    assert protocol.errorpacket("Unknown reservation", original) == (
        b'\n  <errorpacket message="Unknown reservation">\n'
        b'    <originalRequest class="joinPrepared" reservationCode="nope"/>\n  </errorpacket>')
    assert protocol.errorpacket("bad XML") == b'\n  <errorpacket message="bad XML"/>'


def test_error_message_echoes_the_invalid_move_with_its_hints():
    msg = protocol.error("R", "Ungueltiger Zug von 'Bob'.\nFarbe BLUE ...",
                         ["set", "BLUE", "PENTO_V", "RIGHT", False, 17, 0], "2021", ["x<y"])
    assert msg.decode() == """
  <room roomId="R">
    <data class="error" message="Ungueltiger Zug von &apos;Bob&apos;.&#xa;Farbe BLUE ...">
      <originalMessage class="sc.plugin2021.SetMove">
        <piece color="BLUE" kind="PENTO_V" rotation="RIGHT" isFlipped="false">
          <position x="17" y="0"/>
        </piece>
        <hint content="x&lt;y"/>
      </originalMessage>
    </data>
  </room>"""
    skip = protocol.error("R", "m", ["skip", "RED"], "2027")
    assert b'<originalMessage class="sc.plugin2027.SkipMove">\n        <color>RED</color>' in skip


def test_escaping_follows_xstream_and_never_writes_what_xml_cannot_carry():
    names = ['A&B <"x"> \'y\'\ttab', "ctl\x01\x7f"]
    obs = rules.new_state({"variant": "2021", "start_piece": "PENTO_I"}, 0).public_observation()
    msg = protocol.memento("R", obs, names)
    assert b'<first displayName="A&amp;B &lt;&quot;x&quot;&gt; &apos;y&apos;&#x9;tab">' in msg
    parsed = etree.fromstring(protocol.PROTOCOL_OPEN + msg + protocol.PROTOCOL_CLOSE)
    assert parsed.find(".//first").get("displayName") == names[0]
    assert parsed.find(".//second").get("displayName") == "ctl\ufffd\x7f"


# The official 2021 server's serialisation test (plugin2021 xstream/ConverterTest.kt), inside
# a memento room as the stream carries it.
STATE_2021_START = f"""<state class="state" turn="0" round="1" startPiece="PENTO_I">
  <startTeam class="team">ONE</startTeam>
  <blueShapes>{ALL_SHAPES_XML}
  </blueShapes>
  <yellowShapes>{ALL_SHAPES_XML}
  </yellowShapes>
  <redShapes>{ALL_SHAPES_XML}
  </redShapes>
  <greenShapes>{ALL_SHAPES_XML}
  </greenShapes>
  <validColors>
    <color>BLUE</color>
    <color>YELLOW</color>
    <color>RED</color>
    <color>GREEN</color>
  </validColors>
  <first displayName="Bob">
    <color class="team">ONE</color>
  </first>
  <second displayName="Alice">
    <color class="team">TWO</color>
  </second>
  <board/>
  <lastMoveMono/>
</state>"""

STATE_2021_LATE = """<state class="state" turn="70" round="18" startPiece="PENTO_L">
  <startTeam class="team">ONE</startTeam>
  <blueShapes/>
  <yellowShapes>
    <shape>MONO</shape>
  </yellowShapes>
  <redShapes>
    <shape>MONO</shape>
    <shape>DOMINO</shape>
  </redShapes>
  <greenShapes>
    <shape>MONO</shape>
    <shape>DOMINO</shape>
    <shape>TRIO_L</shape>
    <shape>TRIO_I</shape>
  </greenShapes>
  <validColors>
    <color>YELLOW</color>
    <color>RED</color>
    <color>GREEN</color>
  </validColors>
  <first displayName="">
    <color class="team">ONE</color>
  </first>
  <second displayName="">
    <color class="team">TWO</color>
  </second>
  <board>
    <field x="0" y="0" content="RED"/>
    <field x="1" y="3" content="GREEN"/>
    <field x="8" y="6" content="YELLOW"/>
    <field x="5" y="9" content="BLUE"/>
  </board>
  <lastMove class="sc.plugin2021.SetMove">
    <piece color="BLUE" kind="MONO" rotation="NONE" isFlipped="false">
      <position x="0" y="0"/>
    </piece>
  </lastMove>
  <lastMoveMono>
    <entry>
      <color>BLUE</color>
      <boolean>true</boolean>
    </entry>
  </lastMoveMono>
</state>"""

# The official 2027 test (plugin2027 xstream/ConverterTest.kt); lastMoveMono's entry key as
# socha 5.1 reads it (see the module docstring).
STATE_2027_LATE = """<state class="state" startTeam="ONE" turn="70" startPiece="PENTO_L" round="18">
  <lastMove class="sc.plugin2027.SetMove">
    <piece color="BLUE" kind="MONO" rotation="NONE" isFlipped="false">
      <position x="0" y="0"/>
    </piece>
  </lastMove>
  <board>
    <field x="0" y="0" content="RED"/>
    <field x="1" y="3" content="GREEN"/>
    <field x="8" y="6" content="YELLOW"/>
    <field x="5" y="9" content="BLUE"/>
  </board>
  <lastMoveMono>
    <entry>
      <sc.plugin2027.Color>BLUE</sc.plugin2027.Color>
      <boolean>true</boolean>
    </entry>
  </lastMoveMono>
  <blueShapes/>
  <yellowShapes>
    <shape>MONO</shape>
  </yellowShapes>
  <redShapes>
    <shape>MONO</shape>
    <shape>DOMINO</shape>
  </redShapes>
  <greenShapes>
    <shape>MONO</shape>
    <shape>DOMINO</shape>
    <shape>TRIO_L</shape>
    <shape>TRIO_I</shape>
  </greenShapes>
  <validColors>
    <color>YELLOW</color>
    <color>RED</color>
    <color>GREEN</color>
  </validColors>
</state>"""


def memento_bytes(state_xml: str, room: str = "R") -> bytes:
    return (f'\n  <room roomId="{room}">\n    <data class="memento">\n'
            f'{indent(state_xml, 6)}\n    </data>\n  </room>').encode()


def late_observation(variant: str) -> dict:
    """The ConverterTest's second state as a rules observation."""
    board = [["."] * 20 for _ in range(20)]
    for x, y, c in ((0, 0, "R"), (1, 3, "G"), (8, 6, "Y"), (5, 9, "B")):
        board[y][x] = c
    return {"variant": variant, "turn": 70, "round": 18, "start_piece": "PENTO_L", "start_team": "ONE",
            "shapes": {"BLUE": [], "YELLOW": ["MONO"], "RED": ["MONO", "DOMINO"],
                       "GREEN": ["MONO", "DOMINO", "TRIO_L", "TRIO_I"]},
            "valid_colors": ["YELLOW", "RED", "GREEN"], "board": ["".join(r) for r in board],
            "last_move": ["set", "BLUE", "MONO", "NONE", False, 0, 0], "last_move_mono": {"BLUE": True}}


def test_2021_memento_of_a_new_game_matches_the_official_serialisation():
    obs = rules.new_state({"variant": "2021", "start_piece": "PENTO_I"}, 0).public_observation()
    assert protocol.memento("R", obs, ["Bob", "Alice"]) == memento_bytes(STATE_2021_START)


def test_2021_memento_late_in_a_game_matches_the_official_serialisation():
    assert protocol.memento("R", late_observation("2021"), ["", ""]) == memento_bytes(STATE_2021_LATE)


def test_2027_memento_matches_the_official_serialisation():
    assert protocol.memento("R", late_observation("2027"), ["x", "y"]) == memento_bytes(STATE_2027_LATE)


def test_a_skip_as_last_move():
    obs = dict(late_observation("2021"), last_move=["skip", "GREEN"])
    assert (b'        <lastMove class="sc.plugin2021.SkipMove">\n          <color>GREEN</color>\n'
            b'        </lastMove>') in protocol.memento("R", obs, ["", ""])


RESULT_DEFINITION_2021 = """<definition>
  <fragment name="Gewinner">
    <aggregation>SUM</aggregation>
    <relevantForRanking>true</relevantForRanking>
  </fragment>
  <fragment name="∅ Punkte">
    <aggregation>AVERAGE</aggregation>
    <relevantForRanking>true</relevantForRanking>
  </fragment>
</definition>"""


def result_dict(scores, win_points, winner, causes=("REGULAR", "REGULAR"), reasons=("", "")):
    return {"scores": list(scores), "win_points": list(win_points), "winner": winner,
            "causes": list(causes), "reasons": list(reasons), "points": {}}


def test_2021_result_of_a_win_as_the_seed_writes_it():
    msg = protocol.result("R", result_dict([130, 109], [2, 0], 0), ["Bob", "Alice"], "2021").decode()
    assert msg == f"""
  <room roomId="R">
    <data class="result">
{indent(RESULT_DEFINITION_2021, 6)}
      <score cause="REGULAR" reason="">
        <part>2</part>
        <part>130</part>
      </score>
      <score cause="REGULAR" reason="">
        <part>0</part>
        <part>109</part>
      </score>
      <winner displayName="Bob">
        <color class="team">ONE</color>
      </winner>
    </data>
  </room>"""


def test_2021_result_of_a_draw_names_both_winners_and_a_forfeit_its_cause():
    draw = protocol.result("R", result_dict([120, 120], [1, 1], None), ["Bob", "Alice"], "2021").decode()
    assert re.findall(r'<winner displayName="(\w+)">\s*<color class="team">(\w+)</color>', draw) == [
        ("Bob", "ONE"), ("Alice", "TWO")]
    timeout = result_dict([50, 40], [0, 2], 1, ("SOFT_TIMEOUT", "REGULAR"),
                          (protocol.OFFICIAL_REASONS["SOFT_TIMEOUT"], ""))
    msg = protocol.result("R", timeout, ["Bob", "Alice"], "2021").decode()
    assert ('<score cause="SOFT_TIMEOUT" reason="Der Spieler hat innerhalb von 2 Sekunden nach Aufforderung '
            'keinen Zug gesendet">\n        <part>0</part>\n        <part>50</part>') in msg
    assert re.findall(r'<winner displayName="(\w+)">', msg) == ["Alice"]


def result_2027(winner_line: str, parts) -> str:
    entries = "".join(f"""
        <entry>
          <player {player}/>
          <score>
            <part>{a}</part>
            <part>{b}</part>
          </score>
        </entry>""" for player, (a, b) in parts)
    return f"""
  <room roomId="R">
    <data class="result">
      <definition>
        <fragment name="Siegpunkte">
          <aggregation>SUM</aggregation>
          <relevantForRanking>true</relevantForRanking>
        </fragment>
        <fragment name="Punkte">
          <aggregation>AVERAGE</aggregation>
          <relevantForRanking>true</relevantForRanking>
        </fragment>
      </definition>
      <scores>{entries}
      </scores>
      {winner_line}
    </data>
  </room>"""


def test_2027_results_as_the_official_game_result_test_writes_them():
    # Layout of sc.plugin2025 GameResultTest.kt with Blokus' definition (plugin2027 GamePlugin).
    regular = protocol.result("R", result_dict([130, 109], [2, 0], 0), ["Alice", ""], "2027").decode()
    assert regular == result_2027('<winner team="ONE" regular="true" reason="Alice hat am meisten Punkte erzielt."/>',
                                  [('name="Alice" team="ONE"', (2, 130)), ('team="TWO"', (0, 109))])
    tie = protocol.result("R", result_dict([120, 120], [1, 1], None), ["", ""], "2027").decode()
    assert tie == result_2027('<winner regular="true" reason="Beide Spieler sind gleichauf"/>',
                              [('team="ONE"', (1, 120)), ('team="TWO"', (1, 120))])
    violation = result_dict([60, 70], [0, 2], 1, ("RULE_VIOLATION", "REGULAR"),
                            ("Farbe BLUE ist nicht an der Reihe", ""))
    msg = protocol.result("R", violation, ["Alice", "Bob"], "2027").decode()
    assert msg == result_2027(
        '<winner team="TWO" regular="false" reason="Regelverletzung von Alice: Farbe BLUE ist nicht an der Reihe"/>',
        [('name="Alice" team="ONE"', (0, 0)), ('name="Bob" team="TWO"', (2, 70))])


# --- client -> server ----------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_every_rotation_and_flip_round_trips_through_a_move_message(variant):
    for kind in SHAPES:
        for rotation in ROTATIONS:
            for flipped in (False, True):
                action = ["set", "GREEN", kind, rotation, flipped, 3, 17]
                msg = protocol.parse_message(element(protocol.move_message("R9", action, variant)))
                assert msg == {"type": "move", "room_id": "R9", "variant": variant, "action": action, "hints": []}


def test_the_seeds_move_examples_parse():
    setmove = """<room roomId="cb3b">
      <data class="sc.plugin2021.SetMove">
        <piece color="BLUE" kind="PENTO_V" rotation="RIGHT" isFlipped="false">
          <position x="17" y="0"/>
        </piece>
        <hint content="Dies ist ein Hint." />
        <hint content="noch ein Hint" />
      </data>
    </room>"""
    assert protocol.parse_message(element(setmove)) == {
        "type": "move", "room_id": "cb3b", "variant": "2021",
        "action": ["set", "BLUE", "PENTO_V", "RIGHT", False, 17, 0], "hints": ["Dies ist ein Hint.", "noch ein Hint"]}
    skip = '<room roomId="r"><data class="sc.plugin2021.SkipMove"><color>RED</color></data></room>'
    assert protocol.parse_message(element(skip))["action"] == ["skip", "RED"]


def test_skip_without_colour_is_left_for_the_transport_to_fill_in():
    msg = protocol.parse_message(element('<room roomId="r"><data class="sc.plugin2027.SkipMove"/></room>'))
    assert msg["action"] == ["skip", None] and msg["variant"] == "2027"
    assert protocol.move_message("r", ["skip", None], "2021") == (
        b'\n  <room roomId="r">\n    <data class="sc.plugin2021.SkipMove"/>\n  </room>')


def test_hints_are_bounded_in_number_and_length():
    hints = "".join(f'<hint content="{"h" * 500}{i}"/>' for i in range(30))
    msg = protocol.parse_message(element(
        f'<room roomId="r"><data class="sc.plugin2021.SkipMove"><color>RED</color>{hints}</data></room>'))
    assert len(msg["hints"]) == protocol.MAX_HINTS
    assert all(len(h) == protocol.MAX_HINT_LENGTH for h in msg["hints"])


def test_lobby_and_admin_messages():
    parse = lambda text: protocol.parse_message(element(text))  # noqa: E731
    assert parse('<join gameType="swc_2021_blokus"/>') == {"type": "join", "game_type": "swc_2021_blokus", "key": None}
    assert parse("<join/>") == {"type": "join", "game_type": None, "key": None}
    assert parse('<join key="arena-key-x"/>') == {"type": "join", "game_type": None, "key": "arena-key-x"}
    assert parse('<joinPrepared reservationCode="RC1"/>') == {"type": "joinPrepared", "code": "RC1"}
    assert parse('<joinRoom roomId="871f"/>') == {"type": "joinRoom", "room_id": "871f", "key": None}
    assert parse('<authenticate password="examplepassword"/>') == {"type": "authenticate",
                                                                   "password": "examplepassword"}
    assert parse('<observe roomId="871f"/>') == {"type": "observe", "room_id": "871f"}
    assert parse('<pause roomId="871f" pause="false"/>') == {"type": "pause", "room_id": "871f", "pause": False}
    assert parse('<step roomId="871f"/>') == {"type": "step", "room_id": "871f"}
    assert parse('<cancel roomId="871f"/>') == {"type": "cancel", "room_id": "871f"}
    assert parse("""<prepare gameType="swc_2021_blokus" pause="true">
        <slot displayName="p1" canTimeout="false" />
        <slot displayName="p2" canTimeout="false" reserved="false"/>
      </prepare>""") == {"type": "prepare", "game_type": "swc_2021_blokus", "pause": True, "slots": [
        {"name": "p1", "can_timeout": False, "reserved": True},
        {"name": "p2", "can_timeout": False, "reserved": False}]}
    defaults = parse('<prepare gameType="swc_2027_blokus"><slot/><slot displayName="b"/></prepare>')
    assert defaults["pause"] is False and defaults["slots"][0] == {"name": "", "can_timeout": True, "reserved": True}


@pytest.mark.parametrize("tag", ["close", "sc.protocol.CloseConnection", "sc.protocol.responses.CloseConnection"])
def test_the_three_close_forms(tag):
    assert protocol.parse_message(element(f"<{tag}/>")) == {"type": "close"}


@pytest.mark.parametrize("text, complaint", [
    ("<hello/>", "unknown message <hello>"),
    ('<join gameType="swc_2020_hive"/>', "unknown gameType"),
    ("<joinPrepared/>", "reservationCode"),
    ("<joinRoom/>", "roomId"),
    ("<authenticate/>", "password"),
    ('<pause roomId="r"/>', "pause="),
    ('<pause roomId="r" pause="yes"/>', '"true" or "false"'),
    ('<prepare gameType="swc_2021_blokus"><slot/></prepare>', "exactly two <slot>"),
    ('<prepare gameType="swc_2021_blokus"><slot/><slot/><player/></prepare>', "only contain <slot>"),
    ('<room roomId="r"/>', "exactly one <data"),
    ('<room><data class="sc.plugin2021.SkipMove"/></room>', "roomId"),
    ('<room roomId="r"><data class="sc.plugin2021.PassMove"/></room>', "unknown move class"),
    ('<room roomId="r"><data class="welcomeMessage"/></room>', "unknown move class"),
    ('<room roomId="r"><data class="sc.plugin2021.SkipMove"><color>PURPLE</color></data></room>', "unknown color"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"/></room>', "needs a <piece"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="HEXO" rotation="NONE">'
     '<position x="0" y="0"/></piece></data></room>', "unknown kind"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="UP">'
     '<position x="0" y="0"/></piece></data></room>', "unknown rotation"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="blue" kind="MONO" rotation="NONE">'
     '<position x="0" y="0"/></piece></data></room>', "unknown color"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece kind="MONO" rotation="NONE">'
     '<position x="0" y="0"/></piece></data></room>', "color"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="NONE" '
     'isFlipped="maybe"><position x="0" y="0"/></piece></data></room>', '"true" or "false"'),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="NONE"/>'
     '</data></room>', "exactly one <position"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="NONE">'
     '<position x="1.5" y="0"/></piece></data></room>', "whole number"),
    ('<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="NONE">'
     '<position x="0" y="0"/></piece><extra/></data></room>', "unexpected <extra>"),
])
def test_protocol_errors_say_what_to_fix(text, complaint):
    with pytest.raises(ProtocolError, match=re.escape(complaint)):
        protocol.parse_message(element(text))


def test_a_room_of_one_year_refuses_the_other_years_moves():
    move = element(protocol.move_message("r", ["skip", "RED"], "2027"))
    assert protocol.parse_message(move, "2027")["action"] == ["skip", "RED"]
    with pytest.raises(ProtocolError, match="swc_2021_blokus"):
        protocol.parse_message(move, "2021")


def test_overlong_identifiers_are_refused():
    with pytest.raises(ProtocolError, match="longer than"):
        protocol.parse_message(element(f'<joinRoom roomId="{"x" * 5000}"/>'))


# --- the 2027 form as socha 5.1 reads it ---------------------------------------------------------

@pytest.fixture(scope="module")
def socha_parser():
    from socha.api.networking.xml_protocol_interface import XMLProtocolInterface

    class Offline(XMLProtocolInterface):
        """socha's own (de)serializer, without a socket."""

        def connect(self):
            pass

    return Offline("localhost", 0)


def socha_state_facts(gs) -> dict:
    from socha import _socha
    from socha.api.networking.utils import map_shape_to_string

    board = ["".join((gs.board.get_team(_socha.Coordinate(x, y)).name()[0]
                      if gs.board.get_team(_socha.Coordinate(x, y)) else ".") for x in range(20)) for y in range(20)]
    colors = {name: getattr(_socha.Color, name) for name in COLORS}
    last = gs.last_move
    piece = last.as_piece() if last is not None else None
    return {"turn": gs.turn, "round": gs.round(), "start_piece": map_shape_to_string(gs.start_piece), "board": board,
            "shapes": {n: sorted((map_shape_to_string(s) for s in gs.undeployed_piece_shapes(c)), key=SHAPES.index)
                       for n, c in colors.items()},
            "valid_colors": [n for n, c in colors.items() if gs.is_valid_color(c)],
            "points": {n: gs.get_points_for_color(c) for n, c in colors.items()},
            "last_move": None if last is None else (
                ["skip", last.get_color().name()] if piece is None else
                ["set", piece.color.name(), map_shape_to_string(piece.kind), piece.rotation.name(), piece.is_flipped,
                 piece.position.x, piece.position.y])}


def our_state_facts(obs: dict) -> dict:
    return {k: obs[k] for k in ("turn", "round", "start_piece", "board", "shapes", "valid_colors", "points",
                                "last_move")}


def test_socha_reads_our_2027_mementos_as_the_same_state(socha_parser):
    from socha.api.networking.utils import message_to_state

    compared = 0
    for seed in (1, 2):
        state = rules.new_state({"variant": "2027"}, seed)
        rng = random.Random(seed)
        while True:
            obs = state.public_observation()
            room = socha_parser._deserialize_object(protocol.memento("a-room", obs, ["A", "B"]).strip())
            assert room.room_id == "a-room"
            assert socha_state_facts(message_to_state(room)) == our_state_facts(obs)
            compared += 1
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            # Skip now and then, so that SkipMoves are lastMoves too.
            action = legal[-1] if rng.random() < 0.1 else heuristic_bot(obs, legal, rng)
            state.apply({seat: action})
    assert compared > 40


def test_socha_reads_last_move_mono(socha_parser):
    from socha import _socha
    from socha.api.networking.utils import message_to_state

    gs = message_to_state(socha_parser._deserialize_object(protocol.memento("R", late_observation("2027"), ["", ""])))
    assert gs.last_move_mono == {_socha.Color.BLUE: True}
    assert gs.get_points_for_color(_socha.Color.BLUE) == 109


def test_socha_reads_our_other_2027_messages(socha_parser):
    from socha import _socha
    from socha.api.protocol.protocol import (Error, Errorpacket, Joined, Left, MoveRequest, Observed, Prepared,
                                             Result, WelcomeMessage)

    def read(msg: bytes):
        return socha_parser._deserialize_object(msg.strip())

    assert read(protocol.welcome("R", 1)).data.class_binding == WelcomeMessage(_socha.TeamEnum.Two)
    assert isinstance(read(protocol.move_request("R", "2027")).data.class_binding, MoveRequest)
    assert read(protocol.joined("R")) == Joined(room_id="R")
    assert read(protocol.left("R")) == Left(room_id="R")
    assert read(protocol.observed("R")) == Observed(room_id="R")
    assert read(protocol.prepared("R", ["a", "b"])) == Prepared(room_id="R", reservation=["a", "b"])
    refused = read(protocol.errorpacket("nope", element('<joinPrepared reservationCode="x"/>')))
    assert isinstance(refused, Errorpacket) and refused.message == "nope"
    assert refused.original_request.reservation_code == "x"
    res = read(protocol.result("R", result_dict([130, 109], [2, 0], 0), ["Alice", "Bob"], "2027")).data.class_binding
    assert isinstance(res, Result)
    assert [(e.player.name, e.player.team, e.score.part) for e in res.scores.entry] == [
        ("Alice", "ONE", [2, 130]), ("Bob", "TWO", [0, 109])]
    assert (res.winner.team, res.winner.regular) == ("ONE", True)
    err = read(protocol.error("R", "m", ["set", "RED", "MONO", "LEFT", True, 1, 2], "2027")).data.class_binding
    assert isinstance(err, Error) and err.originalMessage.piece.kind == "MONO"


def test_socha_frames_our_stream_into_our_messages():
    from socha.api.networking.network_socket import NetworkSocket

    messages = [protocol.joined("R"), protocol.welcome("R", 0), protocol.move_request("R", "2027"),
                protocol.errorpacket("x", element('<joinRoom roomId="y"/>')), protocol.left("R")]
    sock = NetworkSocket()
    chunks = iter([protocol.PROTOCOL_OPEN + b"".join(messages) + protocol.PROTOCOL_CLOSE])

    class Fake:
        def recv(self, size):
            return next(chunks, b"")

    sock.socket = Fake()
    received = [sock.receive() for _ in messages]
    assert received == [m.strip() for m in messages]


def test_socha_moves_parse_as_the_same_placements(socha_parser):
    # What socha sends (its own serializer over handle_move) reads as an action whose cells are
    # the cells socha's engine gives the piece.
    from socha import _socha
    from socha.api.networking.utils import handle_move, message_to_state
    from socha.api.protocol.protocol import Room

    state, _ = played("2027", 5, 9)
    memento = protocol.memento("R", state.public_observation(), ["", ""])
    moves = message_to_state(socha_parser._deserialize_object(memento)).possible_moves()
    assert moves
    for move in moves[:: max(1, len(moves) // 40)]:
        wire = socha_parser._serialize_object(Room(room_id="R", data=handle_move(move)))
        msg = protocol.parse_message(element(wire), "2027")
        after = message_to_state(socha_parser._deserialize_object(memento))
        _socha.GameRuleLogic.perform_move(after, move)
        placed = sorted((x, y) for y in range(20) for x in range(20)
                        if after.board.get_team(_socha.Coordinate(x, y)) is not None
                        and state.public_observation()["board"][y][x] == ".")
        assert sorted(rules.piece_cells(*msg["action"][2:])) == placed
        assert state.is_legal(state.to_act()[0], msg["action"])


# --- replay files ----------------------------------------------------------------------------

@pytest.mark.parametrize("variant, seed", [("2021", 3), ("2027", 4)])
def test_export_then_import_gives_the_same_game(variant, seed):
    state, steps = played(variant, seed, bot=heuristic_bot)
    text = protocol.export_replay({"variant": variant}, seed, steps, ["Ann", "Ben"])
    assert text.startswith("<protocol>\n<room roomId=") and text.endswith("</room>\n</protocol>")
    assert text.count('<data class="memento">') == len(steps) + 1
    imported = protocol.import_replay(text)
    assert imported["config"] == {"variant": variant, "start_piece": state.start_piece}
    assert imported["steps"] == steps
    assert imported["names"] == ["Ann", "Ben"]
    again = rules.new_state(imported["config"], 0)
    for seat, action in imported["steps"]:
        again.apply({seat: action})
    assert again.result() == state.result()


@pytest.mark.parametrize("variant, cause", [("2021", "RULE_VIOLATION"), ("2021", "HARD_TIMEOUT"),
                                            ("2027", "SOFT_TIMEOUT"), ("2027", "RULE_VIOLATION"), ("2027", "LEFT")])
def test_a_game_ended_by_a_forfeit_imports_with_the_forfeit(variant, cause):
    state, steps = played(variant, 8, 13)
    seat = state.to_act()[0]
    reason = protocol.OFFICIAL_REASONS.get(cause, "Farbe RED hat einen Stein auf einen anderen Stein gelegt")
    steps.append((seat, ["forfeit", cause, reason]))
    state.apply({seat: steps[-1][1]})
    text = protocol.export_replay({"variant": variant}, 8, steps, ["Ann", "Ben"])
    assert text.count('<data class="memento">') == 14  # the forfeit brings no new state
    imported = protocol.import_replay(text)
    assert imported["steps"] == steps
    again = rules.new_state(imported["config"], 0)
    for s, action in imported["steps"]:
        again.apply({s: action})
    assert again.result()["causes"] == state.result()["causes"]
    assert again.result()["win_points"] == state.result()["win_points"]


def test_only_leaving_ends_a_game_out_of_turn_in_an_imported_file():
    state, steps = played("2021", 8, 13)
    seat = 1 - state.to_act()[0]  # the team that is not to move
    steps.append((seat, ["forfeit", "LEFT", protocol.OFFICIAL_REASONS["LEFT"]]))
    state.apply({seat: steps[-1][1]})
    assert state.result()["winner"] == 1 - seat
    text = protocol.export_replay({"variant": "2021"}, 8, steps, ["Ann", "Ben"])
    assert protocol.import_replay(text)["steps"] == steps
    # a rule violation needs a move, so only the team to move can lose by one
    assert text.count('cause="LEFT"') == 1
    with pytest.raises(ValueError, match="was to move"):
        protocol.import_replay(text.replace('cause="LEFT"', 'cause="RULE_VIOLATION"'))


def test_our_synthetic_file_in_the_2021_server_format_with_a_violation_imports():
    imported = protocol.import_replay((DATA / "synthetic-2021-violation.xml").read_text())
    assert imported["config"]["variant"] == "2021"
    assert imported["names"] == ["Bob", "Alice"]
    assert len(imported["steps"]) == 23   # 22 moves (one memento repeated), then the forfeit
    seat, last = imported["steps"][-1]
    assert last[:2] == ["forfeit", "RULE_VIOLATION"] and "Ecke" in last[2]
    state = rules.new_state(imported["config"], 0)
    for s, action in imported["steps"]:
        state.apply({s: action})
    assert state.result()["win_points"] == [0, 2] and seat == 0


def test_our_synthetic_file_in_the_2021_server_format_imports_with_its_last_move_recovered():
    text = (DATA / "synthetic-2021-regular.xml").read_text()
    assert text.count('<data class="memento">') == 59   # no memento after the 59th move
    imported = protocol.import_replay(text)
    assert len(imported["steps"]) == 59
    state = rules.new_state(imported["config"], 0)
    for s, action in imported["steps"]:
        state.apply({s: action})
    assert state.is_terminal()
    scores = re.findall(r"<part>(\d+)</part>\s*<part>(\d+)</part>", text)
    assert state.result()["scores"] == [int(scores[0][1]), int(scores[1][1])]


def without_last_memento(text: str) -> str:
    last = list(re.finditer(r'<room roomId="[^"]+">\n  <data class="memento">.*?</room>\n', text, re.S))[-1]
    return text[:last.start()] + text[last.end():]


def test_a_missing_last_memento_is_recovered_only_when_one_move_fits():
    outcomes = {}
    for seed in range(20, 60):
        state, steps = played("2021", seed)
        before = rules.new_state({"variant": "2021"}, seed)
        for s, action in steps[:-1]:
            before.apply({s: action})
        unique = protocol.infer_last_move(before, state.team_points()) is not None
        if unique in outcomes:
            continue
        imported = protocol.import_replay(without_last_memento(
            protocol.export_replay({"variant": "2021"}, seed, steps, ["", ""])))
        # Recovered when only one legal move ends the game with the result's points; otherwise
        # the game is stored as far as the file shows it (incomplete).
        outcomes[unique] = imported["steps"] == (steps if unique else steps[:-1])
        if len(outcomes) == 2:
            break
    assert outcomes == {True: True, False: True}


def tampered(text: str, old: str, new: str, count: int = 1) -> str:
    assert old in text
    return text.replace(old, new, count)


def test_inconsistent_files_are_refused():
    state, steps = played("2021", 9, 12)
    text = protocol.export_replay({"variant": "2021"}, 9, steps, ["A", "B"])
    board = state.public_observation()["board"]
    x, y = next((x, y) for y in range(20) for x in range(20) if board[y][x] == ".")
    head, tail = text.rsplit("<board>", 1)   # the last memento's board gains a stone
    extra = head + f'<board>\n        <field x="{x}" y="{y}" content="RED"/>' + tail
    with pytest.raises(ValueError, match=rf"memento 13 \(turn {state.turn}\): the board differs .* x={x} y={y}"):
        protocol.import_replay(extra)
    with pytest.raises(ValueError, match="unknown startPiece"):
        protocol.import_replay(tampered(text, 'startPiece="', 'startPiece="X', 1))
    with pytest.raises(ValueError, match="unknown data class"):
        protocol.import_replay(tampered(text, '<data class="memento">', '<data class="bogus">'))
    with pytest.raises(ValueError, match="unknown shape"):
        protocol.import_replay(tampered(text, "<shape>MONO</shape>", "<shape>HEXO</shape>"))
    with pytest.raises(ValueError, match="validColors"):
        protocol.import_replay(tampered(text, "<color>BLUE</color>\n        <color>YELLOW</color>",
                                        "<color>YELLOW</color>"))


def test_a_result_that_disagrees_with_the_replay_is_refused():
    state, steps = played("2021", 6)
    text = protocol.export_replay({"variant": "2021"}, 6, steps, ["A", "B"])
    assert state.result()["winner"] is not None
    swapped = re.sub(r"(<score [^>]*>\s*<part>)(\d)(</part>)",
                     lambda m: m.group(1) + str(2 - int(m.group(2))) + m.group(3), text)
    with pytest.raises(ValueError, match="win points"):
        protocol.import_replay(swapped)


@pytest.mark.parametrize("text, complaint", [
    ("", "not well-formed"),
    ("<protocol><room", "not well-formed"),
    ("<replay/>", "starts with <protocol>"),
    ("<protocol/>", "no memento"),
    ("<protocol><joined roomId='x'/></protocol>", "expected <room>"),
    ('<!DOCTYPE protocol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
     '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><protocol>&c;</protocol>', "DOCTYPE"),
    ('<!DOCTYPE protocol [<!ENTITY x SYSTEM "file:///etc/passwd">]><protocol>&x;</protocol>', "DOCTYPE"),
    ("<protocol>" + "<a>" * 40 + "</a>" * 40 + "</protocol>", "nested deeper"),
])
def test_malformed_and_hostile_files_are_refused(text, complaint):
    with pytest.raises(ValueError, match=re.escape(complaint)):
        protocol.import_replay(text)


def test_oversized_files_are_refused_before_parsing():
    with pytest.raises(ValueError, match="larger than"):
        protocol.import_replay("<protocol>" + " " * (protocol.MAX_REPLAY_CHARS + 1) + "</protocol>")


def error_rooms(rooms: int, children: int) -> str:
    """A file of ``rooms`` error messages (skipped by the import) of ``children`` elements."""
    room = '<room roomId="r"><data class="error">' + "<x/>" * children + "</data></room>"
    return "<protocol>" + room * rooms + "</protocol>"


@pytest.mark.parametrize("text, complaint", [
    ("<protocol><room>" + "<x/>" * protocol.MAX_ROOM_ELEMENTS + "</room></protocol>",
     f"message 1 has more than {protocol.MAX_ROOM_ELEMENTS} elements"),
    (error_rooms(protocol.MAX_REPLAY_MESSAGES + 1, 0), f"more than {protocol.MAX_REPLAY_MESSAGES} messages"),
    (error_rooms(protocol.MAX_REPLAY_ELEMENTS // 900 + 1, 897), f"more than {protocol.MAX_REPLAY_ELEMENTS} elements"),
])
def test_files_past_a_real_replays_bounds_are_refused_while_read(text, complaint):
    """A real game has at most 109 mementos of at most about 500 elements: a message, a file
    of messages or of elements far past that is refused as soon as the bound is passed."""
    with pytest.raises(ValueError, match=re.escape(complaint)):
        protocol.import_replay(text)


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_a_long_game_is_well_within_the_replay_bounds(variant):
    """Our longest-playing bots' game: its file has room to spare under every bound."""
    state, steps = played(variant, 3)
    text = protocol.export_replay({"variant": variant}, 3, steps, ["A", "B"])
    rooms = etree.fromstring(text.encode())
    assert len(rooms) * 3 < protocol.MAX_REPLAY_MESSAGES
    assert sum(1 for _ in rooms.iter()) * 3 < protocol.MAX_REPLAY_ELEMENTS
    assert max(sum(1 for _ in room.iter()) for room in rooms) * 2 < protocol.MAX_ROOM_ELEMENTS
    assert protocol.import_replay(text)["steps"] == steps
