"""Liar's Dice as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

from django.conf import settings

from games.arena.registry import ConfigField, GameSpec, register
from games.arena.seats import Answer
from games.liars_dice import logs, rules
from games.liars_dice.bots import BUILTIN_BOTS

#: What a person's silence in the challenge window is recorded as (a pass, not forced).
WINDOW_RAN_OUT = "let the bid stand"


def human_auto_answer(state: rules.LiarsDiceState, seat: int) -> Answer | None:
    """A person not on turn has nothing to challenge before the round's first bid, and
    nothing to gain by challenging their own bid (whoever is right, they lose the die)."""
    if seat != state.on_turn:
        if state.last_bidder is None:
            return Answer(rules.PASS, reason="nothing to challenge yet")
        if state.last_bidder == seat:
            return Answer(rules.PASS, reason="own bid")
    return None


def human_prompt(state: rules.LiarsDiceState, seat: int) -> tuple[str, float]:
    """On turn: bid or challenge within the human deadline; otherwise a window to challenge."""
    if seat == state.on_turn:
        return "turn", settings.ARENA["HUMAN_DEADLINE"]
    return "challenge_window", settings.ARENA["HUMAN_CHALLENGE_WINDOW"]


def human_timeout_answer(state: rules.LiarsDiceState, seat: int, seconds: float) -> Answer:
    """Silence on turn loses the round, like a bot's; silence in the window is a pass."""
    if seat == state.on_turn:
        return Answer(None, True, f"no move within {seconds:g} s")
    return Answer(rules.PASS, False, WINDOW_RAN_OUT)


def late(reason: str) -> bool:
    """Whether an answer's recorded ``reason`` says its seat said nothing before the deadline:
    a bot's "no reply within N s" (transport.py), a person's "no move within N s" on turn, or a
    person's challenge window run out (:func:`human_timeout_answer`)."""
    return reason.startswith(("no reply within ", "no move within ")) or reason == WINDOW_RAN_OUT


def human_action_ok(state: rules.LiarsDiceState, seat: int, action) -> bool:
    """People get only sensible moves: a raising bid or a challenge on turn; pass or
    challenge otherwise (a bad click is refused, not punished)."""
    return action in state.legal_actions(seat)


#: Bound on a new table's length, so a match stays cheap to keep and replay:
#: ``games x (dice on the table)^2``.  A game
#: takes about (players x dice)^2 answers (6 x 6 dice: ~1,500; 6 x 20: ~15,000; 2 x 6: ~75,
#: measured with the probability bot), so this keeps a match near 150,000 answers at most
#: while allowing 1,000 games of two players with 6 dice.  It bounds the length of matches
#: played as the configuration expects, not of every match: bots that keep raising the count
#: (any count up to 2**31 - 1 raises, as for the reference) make a round as long as they like.
MATCH_BUDGET = 150_000


def limit_config(config) -> None:
    """Raises ``ValueError`` when ``games x (players x dice)^2`` exceeds :data:`MATCH_BUDGET`."""
    per_game = (config["players"] * config["dice"]) ** 2
    if config["games"] * per_game > MATCH_BUDGET:
        most = max(1, MATCH_BUDGET // per_game)
        raise ValueError(f"With {config['players']} players of {config['dice']} dice a match has at most "
                         f"{most} game{'s' if most != 1 else ''}: longer ones are too long to keep and replay.")


def auto_config() -> dict:
    cfg = settings.ARENA
    return {"players": cfg["LIARS_DICE_AUTO_PLAYERS"], "dice": cfg["LIARS_DICE_AUTO_DICE"],
            "games": cfg["LIARS_DICE_AUTO_GAMES"]}


def _export_jsonl(match, state, names, params) -> tuple[str, str, str]:
    """The match as JSON lines, one per move with every player's answer (logs.py)."""
    from games.arena import replay  # the event log's models: only once Django is set up

    lines = logs.export_lines(match.config, match.seed, replay.logged_steps(match.pk), names, late, match.pk)
    return f"liars-dice-match{match.pk}.jsonl", "application/x-ndjson", "".join(lines)


async def _start_listener(arena):
    from games.liars_dice.transport import start_listener

    return await start_listener(arena)


SPEC = register(GameSpec(
    slug="liars_dice",
    title="Liar's Dice",
    new_state=rules.new_state,
    normalize_config=rules.normalize_config,
    num_seats=lambda config: config["players"],
    describe_config=lambda c: [f"{c['players']} players", f"{c['dice']} {'die' if c['dice'] == 1 else 'dice'} each",
                               f"{c['games']} game{'s' if c['games'] != 1 else ''}"],
    config_fields=(
        ConfigField("players", "Players", rules.MIN_PLAYERS, rules.MAX_PLAYERS, 2),
        ConfigField("dice", "Dice per player", 1, rules.MAX_DICE, 6),
        ConfigField("games", "Games in the match", 1, rules.MAX_GAMES, 1),
    ),
    builtin_bots=BUILTIN_BOTS,
    human_auto_answer=human_auto_answer,
    human_prompt=human_prompt,
    human_timeout_answer=human_timeout_answer,
    human_action_ok=human_action_ok,
    auto_config=auto_config,
    limit_config=limit_config,
    exports={"jsonl": ("moves as JSON lines (every answer)", _export_jsonl)},
    start_listener=_start_listener,
    strongest_bot="probability",
    protocol_note="Bots: connect over TCP to port {port}, one JSON object per line. A bot takes the oldest "
                  "open bot seat, or waits at an automatic table.",
    seats_note='"Open" seats wait for a person who opens the table\'s page, or for the next bot '
               "that connects to the Liar's Dice port.",
))
