"""Jass bots over HTTP (specs/jass-http.*): the server calls each registered bot service.

Every request is a V0.2 body with only that bot's hand, POSTed to the bot's base URL plus the
path of its style (seed: ``/select_trump``, ``/play_card``, ``/game_info``; kit:
``/action_trump``, ``/action_play_card``, ``/game_info``).  No answer in time, an answer that
is not the expected JSON, an illegal trump or card: the server plays a random valid move for
the bot (seed, "Error Handling") and records it as forced with the reason.  ``game_info`` goes
to every bot after each game (deal); its answer is not needed.
"""
from __future__ import annotations

import asyncio
import logging
import random
import time

from django.conf import settings

from games.arena.bots import http_bots
from games.arena.play.seats import Answer, SeatEndpoint
from games.base import ProtocolError
from games.jass import protocol, rules

log = logging.getLogger("arena.jass")

#: Milliseconds of our own work per call (encode, HTTP client, decode), for the benchmark:
#: the call's wall time minus what the bot reported as its own time, when it reports one.
OVERHEAD_MS: list[float] | None = None

#: Seconds between the end of a game and seat 0's game_info call, and between seats' calls
#: (see ``_game_info``).
GAME_INFO_DELAY = 0.02


class JassHttpBot(SeatEndpoint):
    """A registered HTTP bot at a seat.  ``base_url`` is already checked; ``path_style`` is
    ``"seed"`` or ``"kit"``; ``deadline_s`` bounds each call (default ``JASS_BOT_DEADLINE``)."""

    kind = "protocol"

    def __init__(self, name: str, base_url: str, path_style: str, deadline_s: float | None = None):
        self.display_name = name
        self.base_url = base_url.rstrip("/")
        self.paths = protocol.PATHS[path_style]
        self.deadline_s = deadline_s if deadline_s is not None else settings.ARENA["JASS_BOT_DEADLINE"]
        self.rng = random.Random()
        self._pending: set[asyncio.Task] = set()

    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time replaces ``JASS_BOT_DEADLINE`` for this seat."""
        self.deadline_s = seconds

    def ask(self, state: rules.JassState, seat: int, version: int) -> "asyncio.Future[Answer]":
        obs = state.observation(seat)
        kind = protocol.request_kind(obs)
        body = protocol.request_body(obs)
        legal = state.legal_actions(seat)
        why_illegal = state.why_illegal  # the runner applies nothing before every answer is in
        fut = asyncio.get_running_loop().create_future()
        task = asyncio.get_running_loop().create_task(self._call(kind, body, legal, why_illegal, seat, fut))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return fut

    async def _call(self, kind, body, legal, why_illegal, seat, fut) -> None:
        """Call the bot for one trump or card and settle ``fut``.  A forced move gets a public
        ``reason`` (what everyone at the table may read: no card of any hand, nothing the
        bot's service wrote) and the full explanation as ``detail``, shown only once the match
        is over."""
        started = time.perf_counter()
        url = self.base_url + self.paths[kind]
        reason = detail = ""
        action = None
        try:
            reply = await http_bots.post_json(url, body, self.deadline_s)
            action = protocol.decode_trump(reply.text) if kind == "trump" else protocol.decode_card(reply.text)
            problem = why_illegal(seat, action)
            if problem:
                # why_illegal names the bot's hand ("you do not hold D6; your hand: ...", "you
                # hold Spades: follow suit"), and even which rule was broken tells what the
                # hand holds, so others learn only that the move was illegal.
                reason, detail = f"illegal {kind}", f"illegal {kind} {action!r}: {problem}"
            elif OVERHEAD_MS is not None and isinstance(reply.data, dict):
                bot_ms = reply.data.get("bot_ms")
                if isinstance(bot_ms, (int, float)):
                    OVERHEAD_MS.append((time.perf_counter() - started) * 1000 - bot_ms)
        except http_bots.BotCallError as exc:
            reason, detail = _public_call_failure(exc, self.deadline_s), str(exc)
        except ProtocolError as exc:
            reason, detail = f"answer is not a valid {kind} reply", str(exc)
        except Exception as exc:  # never let one bot's failure escape into the runner
            log.exception("jass bot %s: unexpected error", self.display_name)
            reason = detail = f"server error while calling the bot: {exc.__class__.__name__}"
        think = (time.perf_counter() - started) * 1000
        if reason:
            log.warning("jass bot %s (%s): %s; playing a random valid move", self.display_name, url, detail)
            answer = Answer(self.rng.choice(legal), True, reason, think, detail[:300])
        else:
            answer = Answer(action, False, "", think)
        if not fut.done():
            fut.set_result(answer)

    def notify(self, state: rules.JassState, seat: int, happenings: list[dict]) -> None:
        config = {"points_to_win": state.points_to_win, "max_deals": state.max_deals}
        for happening in happenings:
            if happening["type"] == "deal_over":
                body = protocol.game_info_body(happening, seat, config)
                task = asyncio.get_running_loop().create_task(self._game_info(body, GAME_INFO_DELAY * (seat + 1)))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)

    async def _game_info(self, body: dict, delay_s: float) -> None:
        # game_info only informs: the next game's first request (sent right after) goes
        # first, and the four seats' calls go one after another (staggered by seat) rather
        # than all at once in front of a move.
        await asyncio.sleep(delay_s)
        try:
            await http_bots.post_json(self.base_url + self.paths["info"], body, self.deadline_s, expect_json=False)
        except http_bots.BotCallError as exc:
            log.info("jass bot %s: game_info not taken: %s", self.display_name, exc)

    def close(self, result: dict | None) -> None:
        if result is None:  # aborted: nobody waits for the calls in flight
            for task in list(self._pending):
                task.cancel()


def _public_call_failure(exc: http_bots.BotCallError, deadline_s: float) -> str:
    """The public part of a failed call: the timeout or the HTTP status, never the text the
    bot's service answered (it may quote the request, i.e. the bot's hand)."""
    if str(exc).startswith("no answer within"):
        return f"no answer within {deadline_s:g} s"
    if exc.status is not None:
        return f"HTTP status {exc.status}"
    return "no valid answer"  # unreachable, refused, not JSON, too large or too deep


def endpoint_for(bot) -> JassHttpBot:
    """The seat endpoint for a :class:`games.arena.models.RegisteredBot`."""
    return JassHttpBot(bot.name, bot.base_url, bot.path_style)


def sample_request(seed: int = 1) -> tuple[rules.JassState, int, dict]:
    """A fresh deal's trump question for its forehand: (state, seat, V0.2 body)."""
    state = rules.new_state({}, seed)
    seat = state.to_act()[0]
    return state, seat, protocol.request_body(state.observation(seat))


async def probe(base_url: str, path_style: str) -> dict:
    """"Test the connection": send a sample ``select_trump`` request and report what came
    back: ``{"ok", "url", "request", "status", "elapsed_ms", "answer", "verdict"}``.

    Goes through the probe pool (``http_bots.PROBE``), never the connections match calls
    use, so probing cannot starve matches; the answer may be an internal service's text, so
    the caller shows the result to the bot's owner only."""
    state, seat, body = sample_request()
    url = base_url.rstrip("/") + protocol.PATHS[path_style]["trump"]
    out = {"ok": False, "url": url, "request": body, "status": None, "elapsed_ms": None, "answer": None}
    try:
        reply = await http_bots.post_json(url, body, settings.ARENA["JASS_BOT_DEADLINE"], expect_json=False,
                                          pool=http_bots.PROBE)
    except http_bots.BotCallError as exc:
        out["status"] = exc.status
        hint = _status_hint(exc.status, path_style)
        out["verdict"] = f"{exc}. {hint}" if hint else str(exc)
        return out
    out.update(status=reply.status, elapsed_ms=round(reply.elapsed_ms, 1), answer=reply.text[:2000])
    try:
        action = protocol.decode_trump(reply.text)
    except ProtocolError as exc:
        out["verdict"] = str(exc)
        return out
    problem = state.why_illegal(seat, action)
    out["ok"] = problem is None
    out["verdict"] = problem or f"OK: the bot chose {rules.TRUMP_NAMES[action] if action != rules.PUSH else 'to push'}"
    return out


def _status_hint(status: int | None, path_style: str) -> str:
    """What to check when "test the connection" got ``status`` (404, 405, 400) instead of 200."""
    if status not in (400, 404, 405):
        return ""
    paths = protocol.PATHS[path_style]
    style = (f"This bot is registered in {path_style} style, so the server posts to BASE{paths['trump']}, "
             f"BASE{paths['card']} and BASE{paths['info']}")
    other = "seed" if path_style == "kit" else "kit"
    if status == 400 and path_style == "kit":
        return (f"{style}. The HSLU kit's service answers 400 \"player not found\" when the last part of the "
                "base URL is not the name the bot was added under (app.add_player(name, agent)).")
    what = "Nothing answers at that path" if status == 404 else "That path does not take POST requests"
    name = " and, in kit style, that the base URL ends with the bot's name in the service" if path_style == "kit" else ""
    return f"{what}: check the path style ({style}; is your service {other} style?){name}."
