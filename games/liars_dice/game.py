"""Liar's Dice as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

from django.conf import settings

from games.arena.play.seats import Answer
from games.arena.registry import ConfigField, Door, GameSpec, register
from games.liars_dice import logs, rules
from games.liars_dice.bots import BUILTIN_BOTS
from games.liars_dice.transport import start_listener

#: What a person's silence in the challenge window is recorded as (a pass, not forced).
WINDOW_RAN_OUT = "let the bid stand"


#: Bound on a new table's length, so a match stays cheap to keep and replay:
#: ``games x (dice on the table)^2``.  A game
#: takes about (players x dice)^2 answers (6 x 6 dice: ~1,500; 6 x 20: ~15,000; 2 x 6: ~75,
#: measured with the probability bot), so this keeps a match near 150,000 answers at most
#: while allowing 1,000 games of two players with 6 dice.  It bounds the length of matches
#: played as the configuration expects, not of every match: bots that keep raising the count
#: (any count up to 2**31 - 1 raises, as for the reference) make a round as long as they like.
MATCH_BUDGET = 150_000


def late(reason: str) -> bool:
    """Whether an answer's recorded ``reason`` says its seat said nothing before the deadline:
    a bot's "no reply within N s" (transport.py), a person's "no move within N s" on turn, or a
    person's challenge window run out (:meth:`LiarsDiceSpec.human_timeout_answer`)."""
    return reason.startswith(("no reply within ", "no move within ")) or reason == WINDOW_RAN_OUT


class LiarsDiceSpec(GameSpec):
    """Liar's Dice: 2 to 6 players, bots over TCP (one JSON object per line)."""

    # ---- Rules and configuration
    slug = "liars_dice"
    title = "Liar's Dice"
    config_fields = (
        ConfigField("players", "Players", rules.MIN_PLAYERS, rules.MAX_PLAYERS, 2),
        ConfigField("dice", "Dice per player", 1, rules.MAX_DICE, 6),
        ConfigField("games", "Games in the match", 1, rules.MAX_GAMES, 1),
    )
    builtin_bots = BUILTIN_BOTS

    new_state = staticmethod(rules.new_state)
    normalize_config = staticmethod(rules.normalize_config)

    def num_seats(self, config) -> int:
        return config["players"]

    def limit_config(self, config) -> None:
        """Raises ``ValueError`` when ``games x (players x dice)^2`` exceeds :data:`MATCH_BUDGET`."""
        per_game = (config["players"] * config["dice"]) ** 2
        if config["games"] * per_game > MATCH_BUDGET:
            most = max(1, MATCH_BUDGET // per_game)
            raise ValueError(f"With {config['players']} players of {config['dice']} dice a match has at most "
                             f"{most} game{'s' if most != 1 else ''}: longer ones are too long to keep and replay.")

    def auto_config(self) -> dict:
        """``LIARS_DICE_AUTO_PLAYERS``, ``_DICE`` and ``_GAMES``."""
        cfg = settings.ARENA
        return {"players": cfg["LIARS_DICE_AUTO_PLAYERS"], "dice": cfg["LIARS_DICE_AUTO_DICE"],
                "games": cfg["LIARS_DICE_AUTO_GAMES"]}

    # ---- People
    strongest_bot = "probability"

    def human_auto_answer(self, state: rules.LiarsDiceState, seat: int) -> Answer | None:
        """A person not on turn has nothing to challenge before the round's first bid, and
        nothing to gain by challenging their own bid (whoever is right, they lose the die)."""
        if seat != state.on_turn:
            if state.last_bidder is None:
                return Answer(rules.PASS, reason="nothing to challenge yet")
            if state.last_bidder == seat:
                return Answer(rules.PASS, reason="own bid")
        return None

    def human_prompt(self, state: rules.LiarsDiceState, seat: int) -> tuple[str, float]:
        """On turn: bid or challenge within the human deadline; otherwise a window to challenge."""
        if seat == state.on_turn:
            return "turn", settings.ARENA["HUMAN_DEADLINE"]
        return "challenge_window", settings.ARENA["HUMAN_CHALLENGE_WINDOW"]

    def human_timeout_answer(self, state: rules.LiarsDiceState, seat: int, seconds: float) -> Answer:
        """Silence on turn loses the round, like a bot's; silence in the window is a pass."""
        if seat == state.on_turn:
            return Answer(None, True, f"no move within {seconds:g} s")
        return Answer(rules.PASS, False, WINDOW_RAN_OUT)

    def human_action_ok(self, state: rules.LiarsDiceState, seat: int, action) -> bool:
        """People get only sensible moves: a raising bid or a challenge on turn; pass or
        challenge otherwise (a bad click is refused, not punished)."""
        return action in state.legal_actions(seat)

    # ---- Bot access
    doors = (Door("JSON lines over TCP", "tcp", "LIARS_DICE_HOST", "LIARS_DICE_PORT",
                  note="Bots: connect over TCP to port {port}, one JSON object per line. A bot takes the oldest "
                       "open bot seat, or waits at an automatic table.",
                  start=start_listener),)
    bot_deadline_setting = "LIARS_DICE_BOT_DEADLINE"
    # Course bots read one line per recv(); the reference server's pace gives them that.
    requests_read_apart = True
    key_note = 'Send it with your name, as the first line: {"name": "my-bot", "key": "arena-key-…"}.'

    # ---- Files
    exports = {"jsonl": "moves as JSON lines (every answer)"}

    def export(self, fmt, match, state, names, params, details_for=()) -> tuple[str, str, str]:
        """The match as JSON lines, one per move with every player's answer (logs.py); an
        answer's ``detail`` only at the seats in ``details_for``."""
        from games.arena.play import replay  # the event log's models: only once Django is set up

        lines = logs.export_lines(match.config, match.seed, replay.logged_steps(match.pk, details_for), names, late, match.pk)
        return f"liars-dice-match{match.pk}.jsonl", "application/x-ndjson", "".join(lines)

    # ---- Presentation
    seats_note = ('"Open" seats wait for a person who opens the table\'s page, or for the next bot '
                  "that connects to the Liar's Dice port.")

    def describe_config(self, config) -> list[str]:
        """Players, dice each and games, e.g. ``["2 players", "6 dice each", "1 game"]``."""
        c = config
        return [f"{c['players']} players", f"{c['dice']} {'die' if c['dice'] == 1 else 'dice'} each",
                f"{c['games']} game{'s' if c['games'] != 1 else ''}"]


SPEC = register(LiarsDiceSpec())
