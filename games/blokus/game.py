"""Blokus (Software-Challenge 2021, and its 2027 variant) as the arena sees it: the
:class:`GameSpec` that plugs it in.

Seats are the contest's two players (teams): seat 0 is team ONE (blue and red), seat 1 team
TWO (yellow and green).  A person plays a team's two colours in turn.
"""
from __future__ import annotations

import random
import uuid

from django.conf import settings

from games.arena.play.seats import Answer
from games.arena.registry import ConfigField, Door, GameSpec, register
from games.blokus import protocol, rules
from games.blokus.bots import BUILTIN_BOTS
from games.blokus.transport import start_listener

#: The rule sets a table can play, as the create-table form offers them.
#: The form's choice; short enough to show whole in a select on a phone (390 px wide).
VARIANT_CHOICES = (
    ("2021", "2021: first piece in a corner"),
    ("2027", "2027: first piece on the border"),
)


def piece_name(kind: str) -> str:
    """What people call a piece (``PENTO_L`` -> "L pentomino"); the wire's names mean nothing
    at the table.  Unknown names are returned as they are."""
    if kind == "MONO":
        return "single square"
    if kind == "DOMINO":
        return "domino"
    family, _, letter = kind.partition("_")
    word = {"TRIO": "tromino", "TETRO": "tetromino", "PENTO": "pentomino"}.get(family)
    return f"{letter} {word}" if word and letter else kind


class BlokusSpec(GameSpec):
    """Blokus: two seats (teams of two colours), a public board, bots over the
    Software-Challenge XML protocol on a TCP port."""

    # ---- Rules and configuration
    slug = "blokus"
    title = "Blokus"
    config_fields = (
        ConfigField("variant", "Software-Challenge rules", 0, 0, "2021", kind="choice", choices=VARIANT_CHOICES),
    )
    builtin_bots = BUILTIN_BOTS
    # The board is public.
    hidden_information = False

    new_state = staticmethod(rules.new_state)
    normalize_config = staticmethod(rules.normalize_config)

    def num_seats(self, config) -> int:
        return 2

    def auto_config(self) -> dict:
        return {"variant": "2021"}

    def rating_ranks(self, config, result) -> list[int] | None:
        """By who won (``win_points``), not by points: a forfeit loses whatever the points."""
        points = result.get("win_points")
        if not isinstance(points, list) or len(points) != 2:
            return None
        return [1 + (other > mine) for mine, other in (points, points[::-1])]

    # ---- People
    standin = "heuristic"
    strongest_bot = "heuristic"

    def human_prompt(self, state: rules.BlokusState, seat: int) -> tuple[str, float]:
        """A person places a piece of the colour to move (or skips) within the Blokus deadline."""
        return "move", settings.ARENA["BLOKUS_HUMAN_DEADLINE"]

    def human_timeout_answer(self, state: rules.BlokusState, seat: int, seconds: float) -> Answer:
        """Silence skips the colour's turn; before its first piece, where skipping is not allowed,
        it places the start piece at a random legal spot.  Either way a forced move, not the lost
        game a silent bot gets (the contest's HARD_TIMEOUT): a person at our table should not lose
        the whole game to one distraction."""
        legal = state.legal_actions(seat)
        skips = [a for a in legal if a[0] == "skip"]
        if skips:
            return Answer(skips[0], True, f"no move within {seconds:g} s: skipped")
        return Answer(random.choice(legal), True, f"no move within {seconds:g} s: start piece placed at random")

    def human_action_ok(self, state: rules.BlokusState, seat: int, action) -> bool:
        """People may place or skip as the rules allow; a bad click is refused, not punished
        (forfeits are the server's to decide)."""
        return (isinstance(action, list) and bool(action) and action[0] in ("set", "skip")
                and state.is_legal(seat, action))

    # ---- Bot access
    doors = (Door("Software-Challenge XML", "tcp", "BLOKUS_HOST", "BLOKUS_PORT",
                  note="Bots: connect over TCP to port {port} with the Software-Challenge XML protocol (game "
                       "type swc_2021_blokus or swc_2027_blokus). A bot takes the oldest open bot seat of its "
                       "game type, or waits at an automatic table. Organisers prepare, observe, pause and step "
                       "games on the same port with the admin password.",
                  start=start_listener),)
    bot_deadline_setting = "BLOKUS_NO_TIMEOUT_HARD"
    key_note = 'Add it to your join as an attribute: <join gameType="swc_2021_blokus" key="arena-key-…"/> (or <joinRoom roomId="…" key="…"/>).'
    def listener_settings_problem(self) -> str | None:
        """The admin password is the public example one on an address other than loopback."""
        from games.blokus.transport import admin_password_problem

        return admin_password_problem(settings.ARENA["BLOKUS_HOST"], settings.ARENA["BLOKUS_ADMIN_PASSWORD"])

    # ---- Files
    exports = {"xml": "replay file (Software-Challenge XML)"}
    import_formats = ("a Software-Challenge replay file (XML: <protocol>, every memento, the result), of a 2021 "
                      "or 2027 game: one the official server wrote, or one downloaded from a finished match here.",)
    import_accept = ".xml,.txt,application/xml,text/xml"

    def export(self, fmt, match, state, names, params, details_for=()) -> tuple[str, str, str]:
        """The contest's replay file, from the event log."""
        # The room id a replay names: stable per match (an imported match's seed is 0 for all).
        room_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"arena:match:{match.pk}"))
        steps = [(seat, action) for seat, action in match.events.order_by("seq").values_list("seat", "action")]
        text = protocol.export_replay(match.config, match.seed, steps, names, room_id=room_id)
        return f"blokus-match{match.pk}.xml", "application/xml", text

    import_match = staticmethod(protocol.import_replay)

    # ---- Presentation
    seats_note = ("Each seat is a team of two colours: ONE plays blue and red, TWO yellow and green. \"Open\" "
                  "seats wait for a person who opens the table's page, or for the next Software-Challenge client "
                  "that joins on the Blokus port with this table's game type.")

    def seat_label(self, config, index: int) -> str:
        return ("Team ONE (blue, red)", "Team TWO (yellow, green)")[index]

    def seat_tag(self, config, index: int) -> str:
        return rules.TEAMS[index]

    def describe_config(self, config) -> list[str]:
        """The match header's phrases: the contest year's rules, and an imported game's start piece."""
        out = [f"Software-Challenge {config['variant']} rules"]
        if config.get("start_piece"):
            out.append(f"start piece: {piece_name(config['start_piece'])}")
        return out

    def pause_after(self, happenings) -> bool:
        """Never: every step is one move, there is no round to pause after."""
        return False


SPEC = register(BlokusSpec())
